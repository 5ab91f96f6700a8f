// AVX2+FMA kernel table. TEMPORARY: forwards to the scalar kernels until the vector ones land.
#include "onemodel/kernels/kernels_internal.h"

namespace om::kernels {

const KernelTable& avx2_table() {
  static const KernelTable t = [] {
    KernelTable k = scalar_table();
    k.isa = Isa::Avx2;
    return k;
  }();
  return t;
}

}  // namespace om::kernels
