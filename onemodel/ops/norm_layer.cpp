// layer_norm: statistics per row accumulated in double (docs/exactness.md: eager norms and
// softmax-type rows accumulate in double), saved for the gradient as [rows, 2] (mean, 1/std).
#include <cmath>

#include "onemodel/core/tensor_internal.h"
#include "onemodel/ops/ops.h"
#include "onemodel/ops/record.h"
#include "onemodel/ops/transformer.h"

namespace om {
namespace ops {

Result<Tensor> layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias, double eps) {
  const char* call = "om::layer_norm";
  OM_TRY(check_input(x, call));
  if (x.dtype() != DType::f32) return Status::error(ErrorKind::DTypeMismatch, msg(call, ": expects f32, got ", x.to_string()));
  const int64_t k = int64_t(normalized_shape.size());
  if (k == 0 || k > x.dim())
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": normalized_shape ", shape_str(normalized_shape), " must name 1 to ",
                                                         x.dim(), " trailing axes of ", x.to_string()));
  for (int64_t i = 0; i < k; ++i)
    if (x.shape()[size_t(x.dim() - k + i)] != normalized_shape[size_t(i)])
      return Status::error(ErrorKind::ShapeMismatch, msg(call, ": normalized_shape ", shape_str(normalized_shape),
                                                         " must equal the trailing axes of ", x.to_string()));
  if (!(eps >= 0)) return Status::error(ErrorKind::InvalidArgument, msg(call, ": eps ", eps, " must be >= 0"));
  int64_t n = 1, rows = 1;
  if (!checked_numel(normalized_shape, &n))
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": normalized_shape ", shape_str(normalized_shape), " is too large"));
  rows = n == 0 ? 0 : x.numel() / n;
  for (const Tensor* p : {&weight, &bias}) {
    if (!p->defined()) continue;
    OM_TRY(check_input(*p, call));
    if (p->dtype() != DType::f32 || p->shape() != normalized_shape)
      return Status::error(ErrorKind::ShapeMismatch, msg(call, ": weight and bias must be f32 ", shape_str(normalized_shape), ", got ",
                                                         p->to_string()));
  }
  OM_ASSIGN_OR_RETURN(Tensor dx, detail::dense(x));
  OM_ASSIGN_OR_RETURN(Tensor out, detail::make_tensor(x.shape(), DType::f32, false, call));
  OM_ASSIGN_OR_RETURN(Tensor stats, detail::make_tensor({rows, 2}, DType::f32, false, call));
  Tensor dw, db;
  if (weight.defined()) { OM_ASSIGN_OR_RETURN(dw, detail::dense(weight)); }
  if (bias.defined()) { OM_ASSIGN_OR_RETURN(db, detail::dense(bias)); }
  const float* px = detail::raw_as<float>(dx);
  const float* pw = weight.defined() ? detail::raw_as<float>(dw) : nullptr;
  const float* pb = bias.defined() ? detail::raw_as<float>(db) : nullptr;
  float* py = detail::raw_as<float>(out);
  float* ps = detail::raw_as<float>(stats);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = px + r * n;
    double m = 0, v = 0;
    for (int64_t i = 0; i < n; ++i) m += double(xr[i]);
    m /= double(n);
    for (int64_t i = 0; i < n; ++i) v += (double(xr[i]) - m) * (double(xr[i]) - m);
    v /= double(n);
    const double inv = 1.0 / std::sqrt(v + eps);
    for (int64_t i = 0; i < n; ++i) {
      double t = (double(xr[i]) - m) * inv;
      if (pw) t *= double(pw[i]);
      if (pb) t += double(pb[i]);
      py[r * n + i] = float(t);
    }
    ps[2 * r] = float(m);
    ps[2 * r + 1] = float(inv);
  }
  // The record always holds a weight (ones when none was given: the graph operator needs a
  // Scale) and the bias only when there is one.
  Tensor w = weight;
  if (!w.defined()) {
    OM_ASSIGN_OR_RETURN(w, detail::make_tensor(normalized_shape, DType::f32, false, call));
    float* p1 = detail::raw_as<float>(w);
    for (int64_t i = 0; i < n; ++i) p1[i] = 1.0f;
  }
  std::vector<Tensor> inputs = {x, w};
  if (bias.defined()) inputs.push_back(bias);
  OM_TRY(record<OpId::LayerNorm>(std::move(inputs), out, LayerNormAttrs{k, eps}, stats));
  return out;
}

}  // namespace ops

Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias, double eps) {
  return unwrap(ops::layer_norm(x, normalized_shape, weight, bias, eps));
}

}  // namespace om
