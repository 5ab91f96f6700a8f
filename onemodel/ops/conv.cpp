// conv2d and conv_transpose2d (NCHW f32) on the graph's convolution kernels
// (kernels::f32_conv2d / f32_conv_transpose2d), so Exact mode gives the graph's bits.
#include <vector>

#include "onemodel/core/mode.h"
#include "onemodel/core/tensor_internal.h"
#include "onemodel/ops/conv_internal.h"
#include "onemodel/ops/conv_ops.h"
#include "onemodel/ops/record.h"

namespace om {
namespace ops {
namespace {

Status expect_f32(const Tensor& t, const char* call, const char* what, size_t rank) {
  OM_TRY(check_input(t, call));
  if (t.dtype() != DType::f32 || size_t(t.dim()) != rank)
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": ", what, " must be a ", rank, "-D f32 tensor, got ", t.to_string()));
  return Status::ok();
}

Status check_common(const char* call, Size2d stride, Pad2d pad, Size2d dilation, int64_t groups) {
  if (stride.h < 1 || stride.w < 1 || dilation.h < 1 || dilation.w < 1 || groups < 1)
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": stride (", stride.h, ", ", stride.w, "), dilation (", dilation.h, ", ",
                                                         dilation.w, ") and groups (", groups, ") must be >= 1"));
  if (pad.top < 0 || pad.left < 0 || pad.bottom < 0 || pad.right < 0)
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": padding (", pad.top, ", ", pad.left, ", ", pad.bottom, ", ", pad.right,
                                                         ") must be >= 0"));
  const int64_t lim = int64_t(1) << 31;
  if (stride.h > lim || stride.w > lim || dilation.h > lim || dilation.w > lim || pad.top > lim || pad.left > lim ||
      pad.bottom > lim || pad.right > lim)
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": stride, dilation or padding above 2^31"));
  return Status::ok();
}

Conv2dAttrs attrs_of(Size2d stride, Pad2d pad, Size2d dilation, int64_t groups, Size2d output_padding) {
  Conv2dAttrs a;
  a.stride = {{stride.h, stride.w}};
  a.dilation = {{dilation.h, dilation.w}};
  a.pads = {{pad.top, pad.left, pad.bottom, pad.right}};
  a.output_padding = {{output_padding.h, output_padding.w}};
  a.groups = groups;
  return a;
}

// The dense operands, the output and the geometry both convolutions run on.
struct ConvRun {
  Tensor x, w, b, y;
  kernels::ConvGeom g;
  const float* bias() const { return b.defined() ? detail::raw_as<float>(b) : nullptr; }
};

Result<ConvRun> conv_run(const Tensor& x, const Tensor& w, const Tensor& b, const Conv2dAttrs& a, const Shape& y_shape, const char* call) {
  ConvRun r;
  OM_ASSIGN_OR_RETURN(r.x, detail::dense(x));
  OM_ASSIGN_OR_RETURN(r.w, detail::dense(w));
  if (b.defined()) {
    OM_ASSIGN_OR_RETURN(r.b, detail::dense(b));
  }
  OM_ASSIGN_OR_RETURN(r.y, detail::make_tensor(y_shape, DType::f32, false, call));
  r.g = conv_detail::conv_geom(x.shape(), w.shape(), a, y_shape);
  return r;
}

// Records the user's tensors (not their dense copies); the bias only when given.
template <OpId id>
Status record_conv(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y, const Conv2dAttrs& a) {
  std::vector<Tensor> inputs{x, w};
  if (b.defined()) inputs.push_back(b);
  return record<id>(std::move(inputs), y, a);
}

}  // namespace

Result<Tensor> conv2d(const Tensor& x, const Tensor& w, const Tensor& b, Size2d stride, Pad2d pad, Size2d dilation, int64_t groups) {
  const char* call = "om::conv2d";
  OM_TRY(expect_f32(x, call, "input", 4));
  OM_TRY(expect_f32(w, call, "weight", 4));
  OM_TRY(check_common(call, stride, pad, dilation, groups));
  const int64_t C = x.shape()[1], M = w.shape()[0];
  if (C % groups != 0 || w.shape()[1] * groups != C || M % groups != 0)
    return Status::error(ErrorKind::ShapeMismatch, msg(call, ": input ", shape_str(x.shape()), " and weight ", shape_str(w.shape()),
                                                       " do not fit groups = ", groups, " (weight must be [M, C/groups, kH, kW] with groups dividing C and M)"));
  if (b.defined()) {
    OM_TRY(expect_f32(b, call, "bias", 1));
    if (b.shape()[0] != M)
      return Status::error(ErrorKind::ShapeMismatch, msg(call, ": bias must be [", M, "], got ", shape_str(b.shape())));
  }
  const int64_t OH = kernels::conv_out_extent(x.shape()[2], w.shape()[2], stride.h, dilation.h, pad.top, pad.bottom, false);
  const int64_t OW = kernels::conv_out_extent(x.shape()[3], w.shape()[3], stride.w, dilation.w, pad.left, pad.right, false);
  if (OH < 1 || OW < 1)
    return Status::error(ErrorKind::ShapeMismatch, msg(call, ": the kernel ", shape_str(w.shape()), " (dilation ", dilation.h, ", ", dilation.w,
                                                       ") is larger than the padded input ", shape_str(x.shape())));
  const Shape y_shape{x.shape()[0], M, OH, OW};
  OM_TRY(check_shape(call, y_shape));
  const Conv2dAttrs a = attrs_of(stride, pad, dilation, groups, 0);
  OM_ASSIGN_OR_RETURN(ConvRun r, conv_run(x, w, b, a, y_shape, call));
  std::vector<float> scratch(kernels::conv_scratch_floats(r.g));
  kernels::f32_conv2d(r.g, detail::raw_as<float>(r.x), detail::raw_as<float>(r.w), r.bias(), kernels::UnaryOp::Identity,
                      detail::raw_as<float>(r.y), scratch.data(), nullptr, current_arithmetic_mode());
  OM_TRY(record_conv<OpId::Conv2d>(x, w, b, r.y, a));
  return r.y;
}

Result<Tensor> conv_transpose2d(const Tensor& x, const Tensor& w, const Tensor& b, Size2d stride, Pad2d pad, Size2d output_padding,
                                int64_t groups, Size2d dilation) {
  const char* call = "om::conv_transpose2d";
  OM_TRY(expect_f32(x, call, "input", 4));
  OM_TRY(expect_f32(w, call, "weight", 4));
  OM_TRY(check_common(call, stride, pad, dilation, groups));
  const int64_t C = x.shape()[1];
  if (C % groups != 0 || w.shape()[0] != C)
    return Status::error(ErrorKind::ShapeMismatch, msg(call, ": input ", shape_str(x.shape()), " and weight ", shape_str(w.shape()),
                                                       " do not fit groups = ", groups, " (weight must be [C, M/groups, kH, kW] with groups dividing C)"));
  int64_t M;
  if (!checked_mul(w.shape()[1], groups, &M)) return Status::error(ErrorKind::InvalidArgument, msg(call, ": output channels overflow"));
  if (output_padding.h < 0 || output_padding.w < 0 || output_padding.h >= std::max(stride.h, dilation.h) ||
      output_padding.w >= std::max(stride.w, dilation.w))
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": output_padding (", output_padding.h, ", ", output_padding.w,
                                                         ") must be >= 0 and smaller than the stride or the dilation"));
  if (b.defined()) {
    OM_TRY(expect_f32(b, call, "bias", 1));
    if (b.shape()[0] != M)
      return Status::error(ErrorKind::ShapeMismatch, msg(call, ": bias must be [", M, "], got ", shape_str(b.shape())));
  }
  auto extent = [](int64_t in, int64_t k, int64_t s, int64_t d, int64_t op, int64_t pb, int64_t pe) -> int64_t {
    int64_t a, e;
    if (in < 1 || !checked_mul(in - 1, s, &a) || !checked_mul(k - 1, d, &e) || a + e > kMaxNumel) return -1;
    return a + e + 1 + op - pb - pe;
  };
  const int64_t OH = extent(x.shape()[2], w.shape()[2], stride.h, dilation.h, output_padding.h, pad.top, pad.bottom);
  const int64_t OW = extent(x.shape()[3], w.shape()[3], stride.w, dilation.w, output_padding.w, pad.left, pad.right);
  if (OH < 1 || OW < 1 || x.shape()[2] < 1 || x.shape()[3] < 1)
    return Status::error(ErrorKind::ShapeMismatch, msg(call, ": the padding removes the whole output (input ", shape_str(x.shape()),
                                                       ", weight ", shape_str(w.shape()), ")"));
  const Shape y_shape{x.shape()[0], M, OH, OW};
  OM_TRY(check_shape(call, y_shape));
  const Conv2dAttrs a = attrs_of(stride, pad, dilation, groups, output_padding);
  OM_ASSIGN_OR_RETURN(ConvRun r, conv_run(x, w, b, a, y_shape, call));
  std::vector<float> scratch(kernels::conv_transpose_scratch_floats(r.g));
  kernels::f32_conv_transpose2d(r.g, detail::raw_as<float>(r.x), detail::raw_as<float>(r.w), r.bias(), detail::raw_as<float>(r.y),
                                scratch.data(), nullptr, current_arithmetic_mode());
  OM_TRY(record_conv<OpId::ConvTranspose2d>(x, w, b, r.y, a));
  return r.y;
}

}  // namespace ops

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, Size2d stride, Pad2d padding, Size2d dilation, int64_t groups) {
  return unwrap(ops::conv2d(x, weight, bias, stride, padding, dilation, groups));
}
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const Tensor& bias, Size2d stride, Pad2d padding, Size2d output_padding,
                        int64_t groups, Size2d dilation) {
  return unwrap(ops::conv_transpose2d(x, weight, bias, stride, padding, output_padding, groups, dilation));
}

}  // namespace om
