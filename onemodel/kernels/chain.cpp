// f32_chain (kernels.h): the active ISA's form of kernels/elementwise_chain.h, and the one-lane
// form every ISA's tails use (the reference: the scalar table's ISA runs it throughout).
#include "onemodel/kernels/elementwise_chain.h"
#include "onemodel/kernels/kernels_internal.h"

namespace om::kernels {

#if defined(ONEMODEL_HAVE_AVX2)
namespace avx2 {
void f32_chain__avx2(const ChainProgram& p, const float* x, float* y, size_t n);
}
#endif
#if defined(ONEMODEL_HAVE_AVX512)
namespace avx512 {
void f32_chain__avx512(const ChainProgram& p, const float* x, float* y, size_t n);
}
#endif
#if defined(ONEMODEL_HAVE_NEON)
namespace neon {
void f32_chain__neon(const ChainProgram& p, const float* x, float* y, size_t n);
}
#endif

namespace chain {
void tail_step(const ChainStep& st, const float* a, const float* b, float* d, size_t i0, size_t i1) {
  step<exact::ScalarLanes, ScalarIo>(st, a, b, d, i0, i1);
}
}  // namespace chain

void f32_chain(const ChainProgram& p, const float* x, float* y, size_t n) {
  switch (active_isa()) {
#if defined(ONEMODEL_HAVE_AVX2)
    case Isa::Avx2: return avx2::f32_chain__avx2(p, x, y, n);
#endif
#if defined(ONEMODEL_HAVE_AVX512)
    case Isa::Avx512: return avx512::f32_chain__avx512(p, x, y, n);
#endif
#if defined(ONEMODEL_HAVE_NEON)
    case Isa::Neon: return neon::f32_chain__neon(p, x, y, n);
#endif
    default: return chain::run<exact::ScalarLanes, chain::ScalarIo>(p, x, y, n);
  }
}

}  // namespace om::kernels
