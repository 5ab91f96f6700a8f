// f32_recurrent_step (kernels.h): the active ISA's form of kernels/recurrent_step.h, and the
// one-lane form every ISA's tails use (the reference: the scalar table's ISA runs it throughout).
#include "onemodel/kernels/kernels_internal.h"
#include "onemodel/kernels/recurrent_step.h"

namespace om::kernels {

#if defined(ONEMODEL_HAVE_AVX2)
namespace avx2 {
void f32_recurrent_step__avx2(const RecurrentStep& s);
}
#endif
#if defined(ONEMODEL_HAVE_AVX512)
namespace avx512 {
void f32_recurrent_step__avx512(const RecurrentStep& s);
}
#endif
#if defined(ONEMODEL_HAVE_NEON)
namespace neon {
void f32_recurrent_step__neon(const RecurrentStep& s);
}
#endif

namespace recurrent {
void tail(const RecurrentStep& s, size_t j0, size_t j1) {
  if (s.fast) range<exact::ScalarLanes, exact::ScalarIo, FastGateMaps<exact::ScalarLanes, exact::ScalarIo>>(s, j0, j1);
  else range<exact::ScalarLanes, exact::ScalarIo, exact::MathImpl<exact::ScalarLanes>>(s, j0, j1);
}
}  // namespace recurrent

void f32_recurrent_step(const RecurrentStep& s) {
  switch (active_isa()) {
#if defined(ONEMODEL_HAVE_AVX2)
    case Isa::Avx2: return avx2::f32_recurrent_step__avx2(s);
#endif
#if defined(ONEMODEL_HAVE_AVX512)
    case Isa::Avx512: return avx512::f32_recurrent_step__avx512(s);
#endif
#if defined(ONEMODEL_HAVE_NEON)
    case Isa::Neon: return neon::f32_recurrent_step__neon(s);
#endif
    default: return recurrent::tail(s, 0, s.n);  // the one-lane form throughout: one copy of it
  }
}

}  // namespace om::kernels
