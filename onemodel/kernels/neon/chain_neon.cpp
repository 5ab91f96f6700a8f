// f32_chain on 4 lanes (kernels/elementwise_chain.h).
#include "onemodel/kernels/elementwise_chain.h"
#include "onemodel/kernels/neon/lanes_neon.h"

namespace om::kernels::neon {

void f32_chain__neon(const ChainProgram& p, const float* x, float* y, size_t n) { chain::run<Lanes, Io>(p, x, y, n); }

}  // namespace om::kernels::neon
