// sum mean (all or one axis, keepdim) and softmax / log_softmax along any dim.
#include <cmath>

#include "onemodel/ops/record.h"
#include "onemodel/core/mode.h"
#include "onemodel/core/tensor_internal.h"
#include "onemodel/kernels/kernels.h"
#include "onemodel/ops/ops.h"

namespace om {
namespace ops {
namespace {

Status expect_f32(const Tensor& x, const char* call) {
  OM_TRY(check_input(x, call));
  if (x.dtype() != DType::f32) return Status::error(ErrorKind::DTypeMismatch, msg(call, ": expects f32, got ", x.to_string()));
  return Status::ok();
}

// Splits x around `axis` as [outer, n, inner].
void split_at(const Shape& s, int64_t axis, int64_t* outer, int64_t* n, int64_t* inner) {
  *outer = 1;
  *inner = 1;
  for (int64_t k = 0; k < axis; ++k) *outer *= s[k];
  *n = s[axis];
  for (size_t k = size_t(axis) + 1; k < s.size(); ++k) *inner *= s[k];
}

Result<Tensor> reduce_all(OpId id, const Tensor& x, bool mean) {
  OM_TRY(expect_f32(x, op_name(id)));
  OM_ASSIGN_OR_RETURN(Tensor dx, detail::dense(x));
  OM_ASSIGN_OR_RETURN(Tensor out, detail::make_tensor({}, DType::f32));
  float s = kernels::f32_sum(detail::raw_as<float>(dx), size_t(x.numel()), current_arithmetic_mode());
  if (mean) s = x.numel() ? s / float(x.numel()) : NAN;
  *detail::raw_as<float>(out) = s;
  OM_TRY(record_op(id, {x}, out, ReduceAttrs{true, 0, false}));
  return out;
}

Result<Tensor> reduce_axis(OpId id, const Tensor& x, int64_t dim, bool keepdim, bool mean) {
  const char* call = op_name(id);
  OM_TRY(expect_f32(x, call));
  int64_t axis;
  if (!normalize_axis(dim, x.dim(), &axis))
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": dim ", dim, " is out of range for ", x.to_string()));
  int64_t outer, n, inner;
  split_at(x.shape(), axis, &outer, &n, &inner);
  Shape shape = x.shape();
  if (keepdim) shape[size_t(axis)] = 1;
  else shape.erase(shape.begin() + axis);
  OM_ASSIGN_OR_RETURN(Tensor dx, detail::dense(x));
  OM_ASSIGN_OR_RETURN(Tensor out, detail::make_tensor(shape, DType::f32));
  float* y = detail::raw_as<float>(out);
  kernels::f32_reduce_sum(detail::raw_as<float>(dx), size_t(outer), size_t(n), size_t(inner), y, current_arithmetic_mode());
  if (mean) {
    const float inv = float(n);
    for (int64_t i = 0; i < outer * inner; ++i) y[i] = y[i] / inv;
  }
  OM_TRY(record_op(id, {x}, out, ReduceAttrs{false, axis, keepdim}));
  return out;
}

}  // namespace

Result<Tensor> sum_all(const Tensor& x) { return reduce_all(OpId::Sum, x, false); }
Result<Tensor> mean_all(const Tensor& x) { return reduce_all(OpId::Mean, x, true); }
Result<Tensor> sum(const Tensor& x, int64_t dim, bool keepdim) { return reduce_axis(OpId::Sum, x, dim, keepdim, false); }
Result<Tensor> mean(const Tensor& x, int64_t dim, bool keepdim) { return reduce_axis(OpId::Mean, x, dim, keepdim, true); }

// Eager softmax rows accumulate in double (docs/exactness.md); exp is the library's own.
Result<Tensor> softmax(const Tensor& x, int64_t dim, bool log) {
  const OpId id = log ? OpId::LogSoftmax : OpId::Softmax;
  const char* call = op_name(id);
  OM_TRY(expect_f32(x, call));
  int64_t axis;
  if (x.dim() == 0 || !normalize_axis(dim, x.dim(), &axis))
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": dim ", dim, " is out of range for ", x.to_string()));
  int64_t outer, n, inner;
  split_at(x.shape(), axis, &outer, &n, &inner);
  OM_ASSIGN_OR_RETURN(Tensor dx, detail::dense(x));
  OM_ASSIGN_OR_RETURN(Tensor out, detail::make_tensor(x.shape(), DType::f32));
  const float* px = detail::raw_as<float>(dx);
  float* py = detail::raw_as<float>(out);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const float* row = px + o * n * inner + i;
      float* yrow = py + o * n * inner + i;
      float m = -INFINITY;
      for (int64_t k = 0; k < n; ++k) m = row[k * inner] > m ? row[k * inner] : m;
      double s = 0;
      for (int64_t k = 0; k < n; ++k) s += double(kernels::exp_f32(row[k * inner] - m));
      if (log) {
        const double ls = std::log(s);
        for (int64_t k = 0; k < n; ++k) yrow[k * inner] = float(double(row[k * inner] - m) - ls);
      } else {
        for (int64_t k = 0; k < n; ++k) yrow[k * inner] = float(double(kernels::exp_f32(row[k * inner] - m)) / s);
      }
    }
  }
  Tensor saved = detail::make_view(out, out.shape(), out.strides(), 0);
  OM_TRY(record_op(id, {x}, out, SoftmaxAttrs{axis}, saved));
  return out;
}

}  // namespace ops

Tensor sum(const Tensor& x) { return unwrap(ops::sum_all(x)); }
Tensor sum(const Tensor& x, int64_t dim, bool keepdim) { return unwrap(ops::sum(x, dim, keepdim)); }
Tensor mean(const Tensor& x) { return unwrap(ops::mean_all(x)); }
Tensor mean(const Tensor& x, int64_t dim, bool keepdim) { return unwrap(ops::mean(x, dim, keepdim)); }
Tensor softmax(const Tensor& x, int64_t dim) { return unwrap(ops::softmax(x, dim, false)); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return unwrap(ops::softmax(x, dim, true)); }

}  // namespace om
