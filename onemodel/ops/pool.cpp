// max_pool2d, avg_pool2d and global_avg_pool2d (NCHW f32) on the graph's pooling kernels, so
// both layers give the same bits.
#include <vector>

#include "onemodel/core/mode.h"
#include "onemodel/core/tensor_internal.h"
#include "onemodel/ops/conv_internal.h"
#include "onemodel/ops/conv_ops.h"
#include "onemodel/ops/record.h"

namespace om {
namespace ops {
namespace {

Result<Pool2dAttrs> pool_attrs(const char* call, const Tensor& x, Size2d kernel, Size2d stride, Pad2d pad, Size2d dilation,
                               bool ceil_mode, bool count_include_pad, Shape* y_shape) {
  OM_TRY(check_input(x, call));
  if (x.dtype() != DType::f32 || x.dim() != 4)
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": input must be a 4-D f32 tensor [N, C, H, W], got ", x.to_string()));
  if (stride.h == 0 && stride.w == 0) stride = kernel;
  const int64_t lim = int64_t(1) << 31;
  if (kernel.h < 1 || kernel.w < 1 || stride.h < 1 || stride.w < 1 || dilation.h < 1 || dilation.w < 1 || kernel.h > lim ||
      kernel.w > lim || stride.h > lim || stride.w > lim || dilation.h > lim || dilation.w > lim)
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": kernel (", kernel.h, ", ", kernel.w, "), stride (", stride.h, ", ",
                                                         stride.w, ") and dilation must be in [1, 2^31]"));
  if (pad.top < 0 || pad.left < 0 || pad.bottom < 0 || pad.right < 0 || 2 * pad.top > kernel.h || 2 * pad.bottom > kernel.h ||
      2 * pad.left > kernel.w || 2 * pad.right > kernel.w)
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": padding (", pad.top, ", ", pad.left, ", ", pad.bottom, ", ", pad.right,
                                                         ") must be >= 0 and at most half the kernel (", kernel.h, ", ", kernel.w, ")"));
  Pool2dAttrs a;
  a.kernel = {{kernel.h, kernel.w}};
  a.stride = {{stride.h, stride.w}};
  a.dilation = {{dilation.h, dilation.w}};
  a.pads = {{pad.top, pad.left, pad.bottom, pad.right}};
  a.ceil_mode = ceil_mode;
  a.count_include_pad = count_include_pad;
  const int64_t OH = kernels::conv_out_extent(x.shape()[2], kernel.h, stride.h, dilation.h, pad.top, pad.bottom, ceil_mode);
  const int64_t OW = kernels::conv_out_extent(x.shape()[3], kernel.w, stride.w, dilation.w, pad.left, pad.right, ceil_mode);
  if (OH < 1 || OW < 1)
    return Status::error(ErrorKind::ShapeMismatch, msg(call, ": the window (", kernel.h, ", ", kernel.w, ") with dilation (", dilation.h, ", ",
                                                       dilation.w, ") is larger than the padded input ", shape_str(x.shape())));
  *y_shape = {x.shape()[0], x.shape()[1], OH, OW};
  return a;
}

}  // namespace

Result<Tensor> max_pool2d(const Tensor& x, Size2d kernel, Size2d stride, Pad2d pad, Size2d dilation, bool ceil_mode) {
  const char* call = "om::max_pool2d";
  Shape ys;
  OM_ASSIGN_OR_RETURN(Pool2dAttrs a, pool_attrs(call, x, kernel, stride, pad, dilation, ceil_mode, false, &ys));
  OM_ASSIGN_OR_RETURN(Tensor xd, detail::dense(x));
  OM_ASSIGN_OR_RETURN(Tensor y, detail::make_tensor(ys, DType::f32, false, call));
  OM_ASSIGN_OR_RETURN(Tensor arg, detail::make_tensor(ys, DType::i64, false, call));
  kernels::f32_max_pool2d(conv_detail::pool_geom(x.shape(), a, ys), detail::raw_as<float>(xd), detail::raw_as<float>(y),
                          detail::raw_as<int64_t>(arg));
  OM_TRY(record<OpId::MaxPool2d>({x}, y, a, arg));
  return y;
}

Result<Tensor> avg_pool2d(const Tensor& x, Size2d kernel, Size2d stride, Pad2d pad, bool ceil_mode, bool count_include_pad) {
  const char* call = "om::avg_pool2d";
  Shape ys;
  OM_ASSIGN_OR_RETURN(Pool2dAttrs a, pool_attrs(call, x, kernel, stride, pad, 1, ceil_mode, count_include_pad, &ys));
  OM_ASSIGN_OR_RETURN(Tensor xd, detail::dense(x));
  OM_ASSIGN_OR_RETURN(Tensor y, detail::make_tensor(ys, DType::f32, false, call));
  kernels::f32_avg_pool2d(conv_detail::pool_geom(x.shape(), a, ys), pad.bottom, pad.right, count_include_pad, detail::raw_as<float>(xd),
                          detail::raw_as<float>(y));
  OM_TRY(record<OpId::AvgPool2d>({x}, y, a));
  return y;
}

Result<Tensor> global_avg_pool2d(const Tensor& x) {
  const char* call = "om::global_avg_pool2d";
  OM_TRY(check_input(x, call));
  if (x.dtype() != DType::f32 || x.dim() != 4)
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": input must be a 4-D f32 tensor [N, C, H, W], got ", x.to_string()));
  OM_ASSIGN_OR_RETURN(Tensor xd, detail::dense(x));
  OM_ASSIGN_OR_RETURN(Tensor y, detail::make_tensor({x.shape()[0], x.shape()[1], 1, 1}, DType::f32, false, call));
  const int64_t planes = x.shape()[0] * x.shape()[1], n = x.shape()[2] * x.shape()[3];
  const float* px = detail::raw_as<float>(xd);
  float* py = detail::raw_as<float>(y);
  const ArithmeticMode mode = current_arithmetic_mode();
  // As the graph's GlobalAveragePool: the kernels' sum of each plane, then one division.
  for (int64_t p = 0; p < planes; ++p) py[p] = kernels::f32_sum(px + p * n, size_t(n), mode) / float(n);
  OM_TRY(record<OpId::GlobalAvgPool2d>({x}, y));
  return y;
}

}  // namespace ops

Tensor max_pool2d(const Tensor& x, Size2d kernel, Size2d stride, Pad2d padding, Size2d dilation, bool ceil_mode) {
  return unwrap(ops::max_pool2d(x, kernel, stride, padding, dilation, ceil_mode));
}
Tensor avg_pool2d(const Tensor& x, Size2d kernel, Size2d stride, Pad2d padding, bool ceil_mode, bool count_include_pad) {
  return unwrap(ops::avg_pool2d(x, kernel, stride, padding, ceil_mode, count_include_pad));
}
Tensor global_avg_pool2d(const Tensor& x) { return unwrap(ops::global_avg_pool2d(x)); }

}  // namespace om
