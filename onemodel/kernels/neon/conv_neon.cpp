// The convolution's copies (conv_panels.h) and Winograd transforms (winograd_transforms.h)
// compiled for NEON: the eight-float vectors become pairs of 128-bit registers, the transforms
// take eight tiles at a time (sixteen would spill).
#include "onemodel/kernels/conv_panels.h"
#include "onemodel/kernels/winograd_transforms.h"

namespace om::kernels::neon {

void f32_conv_pack_panels__neon(const ConvImage& s, size_t k0, size_t kc, size_t j0, size_t nc, size_t nr, float* dst) {
  panels::pack(s, k0, kc, j0, nc, nr, dst);
}
void f32_conv_fill_padded__neon(const ConvGeom& g, const float* plane, float* pad) { panels::fill_padded(g, plane, pad); }
void f32_winograd_input__neon(const WinogradInput& in) { winograd::block_in<false>(in); }
void f32_winograd_output__neon(const float* m, size_t ms, int64_t n, float bias, bool relu, float* top, float* bottom) {
  winograd::output_transform<false>(m, ms, n, bias, relu, top, bottom);
}

}  // namespace om::kernels::neon
