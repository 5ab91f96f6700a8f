// Eager convolutional operators over NCHW f32 tensors (included by onemodel/onemodel.h). The
// public functions throw om::Error; each has a Status-returning twin in om::ops. Convolutions
// and pools run the graph's kernels (onemodel/kernels/conv.h), so a traced model's Exact
// session reproduces the eager bits (docs/exactness.md).
#pragma once
#include <cstdint>

#include "onemodel/core/tensor.h"

namespace om {

// An (h, w) pair; one value means both.
struct Size2d {
  int64_t h = 1, w = 1;
  Size2d(int64_t v = 1) : h(v), w(v) {}  // NOLINT: implicit from one value
  Size2d(int64_t h_, int64_t w_) : h(h_), w(w_) {}
};

// Padding of the two spatial axes: one value (all sides), (h, w) (symmetric), or
// (top, left, bottom, right) (asymmetric, as ONNX's pads).
struct Pad2d {
  int64_t top = 0, left = 0, bottom = 0, right = 0;
  Pad2d(int64_t p = 0) : top(p), left(p), bottom(p), right(p) {}  // NOLINT: implicit from one value
  Pad2d(int64_t ph, int64_t pw) : top(ph), left(pw), bottom(ph), right(pw) {}
  Pad2d(int64_t t, int64_t l, int64_t b, int64_t r) : top(t), left(l), bottom(b), right(r) {}
};

enum class Interpolation { Nearest, Bilinear };

// x [N, C, H, W], weight [M, C/groups, kH, kW], bias [M] or undefined -> [N, M, OH, OW].
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(), Size2d stride = 1, Pad2d padding = 0,
              Size2d dilation = 1, int64_t groups = 1);
// x [N, C, H, W], weight [C, M/groups, kH, kW] -> [N, M, (H-1)*s - pads + d*(k-1) + 1 + output_padding, ...].
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(), Size2d stride = 1,
                        Pad2d padding = 0, Size2d output_padding = 0, int64_t groups = 1, Size2d dilation = 1);
// Training: normalises with the batch statistics and updates the running buffers in place
// (running = (1 - momentum) * running + momentum * batch value; the running variance takes the
// unbiased batch variance), as PyTorch. Evaluation: the running statistics,
// y = (x - mean) * (weight / sqrt(var + eps)) + bias.
Tensor batch_norm2d(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                    const Tensor& bias, bool training, double momentum = 0.1, double eps = 1e-5);
// stride 0 means the kernel size (PyTorch's default). Padding at most half the kernel.
Tensor max_pool2d(const Tensor& x, Size2d kernel, Size2d stride = 0, Pad2d padding = 0, Size2d dilation = 1,
                  bool ceil_mode = false);
Tensor avg_pool2d(const Tensor& x, Size2d kernel, Size2d stride = 0, Pad2d padding = 0, bool ceil_mode = false,
                  bool count_include_pad = true);
// [N, C, H, W] -> [N, C, 1, 1], the mean of each plane.
Tensor global_avg_pool2d(const Tensor& x);
// To an explicit output size. Nearest: source index floor(o * in / out) (asymmetric, floor);
// bilinear: half-pixel centres, or align_corners.
Tensor resize2d(const Tensor& x, int64_t out_h, int64_t out_w, Interpolation mode = Interpolation::Nearest,
                bool align_corners = false);
// By scale factors (PyTorch's F.interpolate(x, scale_factor=...)): output floor(in * scale), the
// coordinate transform using the scale (as ONNX Resize with `scales`; the same as resize2d for
// integer scales). Traced with a symbolic height or width, it follows them.
Tensor interpolate(const Tensor& x, double scale_factor, Interpolation mode = Interpolation::Nearest, bool align_corners = false);
Tensor interpolate(const Tensor& x, double scale_h, double scale_w, Interpolation mode, bool align_corners = false);

namespace ops {
Result<Tensor> conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, Size2d stride, Pad2d padding, Size2d dilation,
                      int64_t groups);
Result<Tensor> conv_transpose2d(const Tensor& x, const Tensor& weight, const Tensor& bias, Size2d stride, Pad2d padding,
                                Size2d output_padding, int64_t groups, Size2d dilation);
Result<Tensor> batch_norm2d(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                            const Tensor& bias, bool training, double momentum, double eps);
Result<Tensor> max_pool2d(const Tensor& x, Size2d kernel, Size2d stride, Pad2d padding, Size2d dilation, bool ceil_mode);
Result<Tensor> avg_pool2d(const Tensor& x, Size2d kernel, Size2d stride, Pad2d padding, bool ceil_mode, bool count_include_pad);
Result<Tensor> global_avg_pool2d(const Tensor& x);
Result<Tensor> resize2d(const Tensor& x, int64_t out_h, int64_t out_w, Interpolation mode, bool align_corners);
Result<Tensor> interpolate(const Tensor& x, double scale_h, double scale_w, Interpolation mode, bool align_corners);
}  // namespace ops

}  // namespace om
