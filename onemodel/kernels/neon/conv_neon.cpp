// The convolution's copies (conv_panels.h) and Winograd transforms (winograd_transforms.h)
// compiled for NEON: the eight-float vectors become pairs of 128-bit registers, the transforms
// take eight tiles at a time (sixteen would spill).
#include "onemodel/kernels/conv_entries.h"

namespace om::kernels::neon {

OM_CONV_ENTRIES(neon, false)

}  // namespace om::kernels::neon
