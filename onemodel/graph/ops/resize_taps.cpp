// Resize by per-axis taps: cubic, tf_half_pixel_for_nn, tf_crop_and_resize (resize_taps.h).
#include "onemodel/graph/ops/resize_taps.h"

#include <algorithm>
#include <cmath>

namespace om::graph::ops {
namespace {

struct Taps {
  int64_t idx[4];
  float w[4];
  int n;         // 1 nearest, 2 linear, 4 cubic
  bool outside;  // tf_crop_and_resize source outside [0, in - 1]: the extrapolation value
};

// The cubic convolution kernel with parameter a at distance d in [0, 2]: (a+2)d^3 - (a+3)d^2 + 1
// up to 1, a d^3 - 5a d^2 + 8a d - 4a beyond (Keys' kernel, the ONNX definition), in Horner form.
double cubic_weight(double d, double a) {
  if (d <= 1.0) return ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0;
  return ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a;
}

double source_coord(const TapGeom& g, bool height, int64_t o, bool* outside) {
  const kernels::ResizeGeom& b = g.base;
  const int64_t in = height ? b.H : b.W, out = height ? b.OH : b.OW;
  const double scale = height ? b.scale_h : b.scale_w;
  *outside = false;
  switch (g.coord) {
    case TapCoord::TfHalfPixelForNN: return (double(o) + 0.5) / scale;
    case TapCoord::TfCropAndResize: {
      const double s = g.roi_start[height ? 0 : 1], e = g.roi_end[height ? 0 : 1];
      const double v = out > 1 ? s * double(in - 1) + double(o) * (e - s) * double(in - 1) / double(out - 1)
                               : 0.5 * (s + e) * double(in - 1);
      *outside = !(v >= 0.0 && v <= double(in - 1));
      return v;
    }
    default: return kernels::resize_source_coord(b.coord, o, scale, in, kernels::resized_length(b, height));
  }
}

Taps taps_of(const TapGeom& g, bool height, int64_t o) {
  const int64_t in = height ? g.base.H : g.base.W;
  Taps t{};
  const double v = source_coord(g, height, o, &t.outside);
  if (t.outside) return t;
  if (g.cubic) {
    // Taps floor(v) - 1 .. floor(v) + 2 at distances 1 + f, f, 1 - f, 2 - f; indices outside
    // the axis read its edge element, or with exclude_outside weigh 0 and the rest is rescaled
    // to sum 1.
    const double fl = std::floor(v), f = v - fl;
    const double dist[4] = {1.0 + f, f, 1.0 - f, 2.0 - f};
    double w[4], sum = 0;
    for (int j = 0; j < 4; ++j) {
      const int64_t i = int64_t(fl) - 1 + j;
      const bool in_axis = i >= 0 && i < in;
      w[j] = g.exclude_outside && !in_axis ? 0.0 : cubic_weight(dist[j], g.cubic_a);
      sum = sum + w[j];
      t.idx[j] = i < 0 ? 0 : (i >= in ? in - 1 : i);
    }
    for (int j = 0; j < 4; ++j) t.w[j] = float(g.exclude_outside ? w[j] / sum : w[j]);
    t.n = 4;
  } else if (g.base.mode == kernels::ResizeMode::Linear) {
    kernels::resize_linear_taps(v, in, &t.idx[0], &t.idx[1], &t.w[0], &t.w[1]);
    t.n = 2;
  } else {
    t.idx[0] = kernels::resize_nearest_index(g.base.nearest, v, in);
    t.w[0] = 1.0f;
    t.n = 1;
  }
  return t;
}

}  // namespace

void resize_taps_f32(const TapGeom& g, const float* x, float* y, int64_t plane_begin, int64_t plane_end) {
  const kernels::ResizeGeom& b = g.base;
  // The taps of a tile of output rows and columns, on the stack (8 KB): each row's and column's
  // taps are built once per tile for all of the call's planes.
  constexpr int64_t kColumns = 128, kRows = 16;
  Taps tw[kColumns], th[kRows];
  const int64_t HW = b.H * b.W, OP = b.OH * b.OW;
  for (int64_t ow0 = 0; ow0 < b.OW; ow0 += kColumns) {
    const int64_t cols = std::min(kColumns, b.OW - ow0);
    for (int64_t j = 0; j < cols; ++j) tw[j] = taps_of(g, false, ow0 + j);
    for (int64_t oh0 = 0; oh0 < b.OH; oh0 += kRows) {
      const int64_t rows = std::min(kRows, b.OH - oh0);
      for (int64_t i = 0; i < rows; ++i) th[i] = taps_of(g, true, oh0 + i);
      for (int64_t nc = plane_begin; nc < plane_end; ++nc) {
        const float* p = x + nc * HW;
        for (int64_t i = 0; i < rows; ++i) {
          const Taps& h = th[i];
          float* yr = y + nc * OP + (oh0 + i) * b.OW + ow0;
          for (int64_t j = 0; j < cols; ++j) {
            const Taps& w = tw[j];
            if (h.outside || w.outside) {
              yr[j] = g.extrapolation;
            } else if (h.n == 1) {
              yr[j] = p[h.idx[0] * b.W + w.idx[0]];  // nearest: a copy
            } else {
              float acc = 0;
              for (int r = 0; r < h.n; ++r) {
                const float* row = p + h.idx[r] * b.W;
                float s = w.w[0] * row[w.idx[0]];
                for (int c = 1; c < w.n; ++c) s = s + w.w[c] * row[w.idx[c]];
                acc = r == 0 ? h.w[0] * s : acc + h.w[r] * s;
              }
              yr[j] = acc;
            }
          }
        }
      }
    }
  }
}

}  // namespace om::graph::ops
