// The Resize forms kernels::f32_resize2d (shared with the eager resize2d) does not cover: cubic
// interpolation (cubic_coeff_a, exclude_outside) and the tf_half_pixel_for_nn and
// tf_crop_and_resize coordinate transforms (roi, extrapolation_value), for nearest, linear and
// cubic. Separable: each output row and column gets up to four source taps with weights, built
// on the stack for tiles of output rows and columns (so calls over different planes share no
// memory); an output element is then the weighted sum over the taps of the column sums, in tap
// order. The coordinates and weights are computed in float64 with basic operations only and the
// sums in f32 in a fixed order, so one function serves both modes (docs/exactness.md). Linear
// taps and their sum order are those of f32_resize2d.
#pragma once
#include <cstddef>
#include <cstdint>

#include "onemodel/kernels/conv.h"

namespace om::graph::ops {

// How source coordinates are computed: one of kernels::ResizeCoord, or a TF transform.
enum class TapCoord { Kernel, TfHalfPixelForNN, TfCropAndResize };

struct TapGeom {
  kernels::ResizeGeom base;  // sizes, scales, nearest or linear, the kernel coordinate mode
  bool cubic = false;        // overrides base.mode
  double cubic_a = -0.75;
  bool exclude_outside = false;
  TapCoord coord = TapCoord::Kernel;
  double roi_start[2] = {0, 0}, roi_end[2] = {1, 1};  // H, W (tf_crop_and_resize)
  float extrapolation = 0;                             // outside the roi's source range
};

// Planes [plane_begin, plane_end) of the [NC, OH, OW] output y from x [NC, H, W].
void resize_taps_f32(const TapGeom& g, const float* x, float* y, int64_t plane_begin, int64_t plane_end);

}  // namespace om::graph::ops
