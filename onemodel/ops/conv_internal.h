// Geometry shared by the eager convolutional operators and their gradients (internal): the
// kernels' ConvGeom / ResizeGeom from the record's shapes and attribute structs.
#pragma once
#include <utility>

#include "onemodel/kernels/conv.h"
#include "onemodel/ops/op_attrs.h"

namespace om::ops::conv_detail {

// A sliding window over x [N, C, H, W] into y [N, M, OH, OW], as the convolutions and the pools
// both describe it; the braces follow ConvGeom's field order.
inline kernels::ConvGeom window_geom(const Shape& x, const Shape& y, int64_t M, int64_t group, int64_t kH, int64_t kW,
                                     const std::array<int64_t, 2>& stride, const std::array<int64_t, 2>& dilation,
                                     const std::array<int64_t, 4>& pads) {
  return kernels::ConvGeom{x[0], x[1], x[2], x[3], M, y[2], y[3], group, kH, kW, stride[0], stride[1], dilation[0], dilation[1],
                           pads[0], pads[1]};
}

// Conv2d: x [N, C, H, W], w [M, C/g, kH, kW], y [N, M, OH, OW]. ConvTranspose2d: w [C, M/g, kH, kW].
inline kernels::ConvGeom conv_geom(const Shape& x, const Shape& w, const Conv2dAttrs& a, const Shape& y) {
  return window_geom(x, y, y[1], a.groups, w[2], w[3], a.stride, a.dilation, a.pads);
}

// The convolution that maps y back to x (a transposed convolution's adjoint and the reverse):
// input and output swapped, same kernel, strides, dilations, pads and groups.
inline kernels::ConvGeom swapped(const kernels::ConvGeom& f) {
  kernels::ConvGeom g = f;
  std::swap(g.C, g.M);
  std::swap(g.H, g.OH);
  std::swap(g.W, g.OW);
  return g;
}

// A pool keeps the channels (M = C) and has no groups.
inline kernels::ConvGeom pool_geom(const Shape& x, const Pool2dAttrs& a, const Shape& y) {
  return window_geom(x, y, x[1], 1, a.kernel[0], a.kernel[1], a.stride, a.dilation, a.pads);
}

// Nearest: asymmetric + floor; bilinear: half_pixel (PyTorch's align_corners=False, negative
// source coordinates clamped to 0) or align_corners.
inline kernels::ResizeGeom resize_geom(const Shape& x, const Resize2dAttrs& a) {
  kernels::ResizeGeom g;
  g.NC = x[0] * x[1];
  g.H = x[2];
  g.W = x[3];
  g.OH = a.out_h;
  g.OW = a.out_w;
  g.scale_h = double(a.out_h) / double(x[2]);
  g.scale_w = double(a.out_w) / double(x[3]);
  if (a.scale_h > 0) {  // scale-based: the transform ONNX Resize applies with `scales`
    g.scale_h = double(a.scale_h);
    g.scale_w = double(a.scale_w);
    g.from_scales = true;
  }
  if (a.bilinear) {
    g.mode = kernels::ResizeMode::Linear;
    g.coord = a.align_corners ? kernels::ResizeCoord::AlignCorners : kernels::ResizeCoord::HalfPixel;
  } else {
    g.mode = kernels::ResizeMode::Nearest;
    g.coord = kernels::ResizeCoord::Asymmetric;
    g.nearest = kernels::ResizeNearest::Floor;
  }
  return g;
}

}  // namespace om::ops::conv_detail
