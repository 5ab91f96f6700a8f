// resize2d (NCHW f32) to an explicit output size on the graph's Resize kernel: nearest =
// asymmetric + floor, bilinear = half_pixel or align_corners (docs/tracing.md); om::interpolate
// resizes by scale factors, which the tracer lowers to Resize with `scales`.
#include <cmath>

#include "onemodel/core/tensor_internal.h"
#include "onemodel/ops/conv_internal.h"
#include "onemodel/ops/conv_ops.h"
#include "onemodel/ops/record.h"

namespace om {
namespace ops {

namespace {
Result<Tensor> resize(const Tensor& x, int64_t out_h, int64_t out_w, Interpolation mode, bool align_corners, float scale_h, float scale_w,
                      const char* call) {
  OM_TRY(check_input(x, call));
  if (x.dtype() != DType::f32 || x.dim() != 4)
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": input must be a 4-D f32 tensor [N, C, H, W], got ", x.to_string()));
  if (out_h < 1 || out_w < 1 || x.shape()[2] < 1 || x.shape()[3] < 1)
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": the output size (", out_h, ", ", out_w, ") and the input's spatial size ",
                                                         shape_str(x.shape()), " must be >= 1"));
  if (align_corners && mode != Interpolation::Bilinear)
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": align_corners applies to bilinear resizing only"));
  const Shape ys{x.shape()[0], x.shape()[1], out_h, out_w};
  OM_TRY(check_shape(call, ys));
  Resize2dAttrs a{out_h, out_w, mode == Interpolation::Bilinear, align_corners, scale_h, scale_w};
  OM_ASSIGN_OR_RETURN(Tensor xd, detail::dense(x));
  OM_ASSIGN_OR_RETURN(Tensor y, detail::make_tensor(ys, DType::f32, false, call));
  const kernels::ResizeGeom g = conv_detail::resize_geom(x.shape(), a);
  std::vector<float> scratch(kernels::resize2d_scratch_floats(g));
  kernels::f32_resize2d(g, detail::raw_as<float>(xd), detail::raw_as<float>(y), scratch.data());
  OM_TRY(record<OpId::Resize2d>({x}, y, a));
  return y;
}
}  // namespace

Result<Tensor> resize2d(const Tensor& x, int64_t out_h, int64_t out_w, Interpolation mode, bool align_corners) {
  return resize(x, out_h, out_w, mode, align_corners, 0, 0, "om::resize2d");
}

Result<Tensor> interpolate(const Tensor& x, double scale_h, double scale_w, Interpolation mode, bool align_corners) {
  const char* call = "om::interpolate";
  OM_TRY(check_input(x, call));
  // The scales are stored as f32 (ONNX's `scales`), so eager and graph use the same value.
  const float sh = float(scale_h), sw = float(scale_w);
  if (!(sh > 0) || !(sw > 0) || sh > 1e6f || sw > 1e6f)
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": scale factors (", scale_h, ", ", scale_w, ") must be in (0, 1e6]"));
  if (x.dim() != 4)
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": input must be a 4-D f32 tensor [N, C, H, W], got ", x.to_string()));
  const int64_t out_h = int64_t(std::floor(double(x.shape()[2]) * double(sh)));
  const int64_t out_w = int64_t(std::floor(double(x.shape()[3]) * double(sw)));
  return resize(x, out_h, out_w, mode, align_corners, sh, sw, call);
}

}  // namespace ops

Tensor resize2d(const Tensor& x, int64_t out_h, int64_t out_w, Interpolation mode, bool align_corners) {
  return unwrap(ops::resize2d(x, out_h, out_w, mode, align_corners));
}

Tensor interpolate(const Tensor& x, double scale_factor, Interpolation mode, bool align_corners) {
  return unwrap(ops::interpolate(x, scale_factor, scale_factor, mode, align_corners));
}

Tensor interpolate(const Tensor& x, double scale_h, double scale_w, Interpolation mode, bool align_corners) {
  return unwrap(ops::interpolate(x, scale_h, scale_w, mode, align_corners));
}

}  // namespace om
