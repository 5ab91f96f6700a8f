// The convolution's copies (conv_panels.h) and Winograd transforms (winograd_transforms.h)
// compiled for AVX-512: 512-bit moves, and the transforms sixteen tiles at a time (the 32
// registers hold the 16 sums of 16 lanes).
#include "onemodel/kernels/conv_entries.h"

namespace om::kernels::avx512 {

OM_CONV_ENTRIES(avx512, true)

}  // namespace om::kernels::avx512
