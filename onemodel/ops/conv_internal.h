// Geometry shared by the eager convolutional operators and their gradients (internal): the
// kernels' ConvGeom / ResizeGeom from the record's shapes and attribute structs.
#pragma once
#include "onemodel/kernels/conv.h"
#include "onemodel/ops/op_attrs.h"

namespace om::ops::conv_detail {

// Conv2d: x [N, C, H, W], w [M, C/g, kH, kW], y [N, M, OH, OW]. ConvTranspose2d: w [C, M/g, kH, kW].
inline kernels::ConvGeom conv_geom(const Shape& x, const Shape& w, const Conv2dAttrs& a, const Shape& y) {
  kernels::ConvGeom g;
  g.N = x[0];
  g.C = x[1];
  g.H = x[2];
  g.W = x[3];
  g.M = y[1];
  g.OH = y[2];
  g.OW = y[3];
  g.group = a.groups;
  g.kH = w[2];
  g.kW = w[3];
  g.sH = a.stride[0];
  g.sW = a.stride[1];
  g.dH = a.dilation[0];
  g.dW = a.dilation[1];
  g.pad_t = a.pads[0];
  g.pad_l = a.pads[1];
  return g;
}

// The convolution that maps y back to x (a transposed convolution's adjoint and the reverse):
// input and output swapped, same kernel, strides, dilations, pads and groups.
inline kernels::ConvGeom swapped(const kernels::ConvGeom& f) {
  kernels::ConvGeom g = f;
  g.C = f.M;
  g.H = f.OH;
  g.W = f.OW;
  g.M = f.C;
  g.OH = f.H;
  g.OW = f.W;
  return g;
}

inline kernels::ConvGeom pool_geom(const Shape& x, const Pool2dAttrs& a, const Shape& y) {
  kernels::ConvGeom g;
  g.N = x[0];
  g.C = x[1];
  g.M = x[1];
  g.H = x[2];
  g.W = x[3];
  g.OH = y[2];
  g.OW = y[3];
  g.kH = a.kernel[0];
  g.kW = a.kernel[1];
  g.sH = a.stride[0];
  g.sW = a.stride[1];
  g.dH = a.dilation[0];
  g.dW = a.dilation[1];
  g.pad_t = a.pads[0];
  g.pad_l = a.pads[1];
  return g;
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
