// The convolution's copies (conv_panels.h) and Winograd transforms (winograd_transforms.h)
// compiled for AVX2: 256-bit moves and vectors. The transforms take eight tiles at a time
// (sixteen would spill the sums out of the 16 registers).
#include "onemodel/kernels/conv_entries.h"

namespace om::kernels::avx2 {

OM_CONV_ENTRIES(avx2, false)

}  // namespace om::kernels::avx2
