// f32_chain on 8 lanes (kernels/elementwise_chain.h).
#include "onemodel/kernels/avx2/lanes_avx2.h"
#include "onemodel/kernels/elementwise_chain.h"

namespace om::kernels::avx2 {

void f32_chain__avx2(const ChainProgram& p, const float* x, float* y, size_t n) { chain::run<Lanes, Io>(p, x, y, n); }

}  // namespace om::kernels::avx2
