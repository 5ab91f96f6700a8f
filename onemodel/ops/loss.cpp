// Losses. nll_loss is a training operator: the tracer refuses it (docs/tracing.md, "The operator mapping").
#include "onemodel/ops/record.h"
#include "onemodel/core/tensor_internal.h"
#include "onemodel/ops/ops.h"
#include "onemodel/ops/loss_internal.h"
#include <vector>

namespace om {
namespace ops {

Result<Tensor> nll_loss(const Tensor& logp, const Tensor& target, Reduction reduction, int64_t ignore_index, const Tensor& weight) {
  const char* call = "om::nll_loss";
  OM_TRY(check_input(logp, call));
  OM_TRY(check_input(target, call));
  if (logp.dim() > 2) {
    OM_ASSIGN_OR_RETURN(loss_detail::Flattened f, loss_detail::flatten_k_dim(logp, target, call, "log-probabilities"));
    OM_ASSIGN_OR_RETURN(Tensor loss, ops::nll_loss(f.scores, f.target, reduction, ignore_index, weight));
    if (reduction != Reduction::None) return loss;
    return ops::reshape(loss, f.per_element);
  }
  if (logp.dtype() != DType::f32 || logp.dim() != 2)
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": log-probabilities must be f32 [batch, classes], got ", logp.to_string()));
  if (target.dtype() != DType::i64 || target.dim() != 1 || target.shape()[0] != logp.shape()[0])
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": target must be i64 [", logp.shape()[0], "] class indices, got ", target.to_string()));
  const int64_t n = logp.shape()[0], c = logp.shape()[1];
  std::vector<float> w;
  if (weight.defined()) {
    OM_TRY(check_input(weight, call));
    if (weight.dtype() != DType::f32 || weight.shape() != Shape{c})
      return Status::error(ErrorKind::InvalidArgument, msg(call, ": weight must be f32 [", c, "] (one per class), got ", weight.to_string()));
    OM_ASSIGN_OR_RETURN(Tensor dw, detail::dense(weight));
    w.assign(detail::raw_as<float>(dw), detail::raw_as<float>(dw) + c);
  }
  double weight_sum = 0;
  OM_ASSIGN_OR_RETURN(Tensor lp, detail::dense(logp));
  OM_ASSIGN_OR_RETURN(Tensor tg, detail::dense(target));
  const float* p = detail::raw_as<float>(lp);
  const int64_t* t = detail::raw_as<int64_t>(tg);
  OM_ASSIGN_OR_RETURN(Tensor per, detail::make_tensor({n}, DType::f32));
  float* y = detail::raw_as<float>(per);
  double total = 0;
  int64_t counted = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (t[i] == ignore_index) {
      y[i] = 0;
      continue;
    }
    if (t[i] < 0 || t[i] >= c)
      return Status::error(ErrorKind::InvalidArgument, msg(call, ": target[", i, "] = ", t[i], " is not a class index in [0, ", c, ")"));
    if (w.empty()) {
      y[i] = -p[i * c + t[i]];
    } else {
      y[i] = float(-double(w[size_t(t[i])]) * p[i * c + t[i]]);
      weight_sum += w[size_t(t[i])];
    }
    total += y[i];
    ++counted;
  }
  Tensor out = per;
  if (reduction != Reduction::None) {
    OM_ASSIGN_OR_RETURN(out, detail::make_tensor({}, DType::f32));
    const double divisor = w.empty() ? double(counted) : weight_sum;
    *detail::raw_as<float>(out) = float(reduction == Reduction::Sum ? total : (counted ? total / divisor : 0.0));
  }
  OM_TRY(record<OpId::NllLoss>({logp, target}, out, NllLossAttrs{reduction, ignore_index, counted, std::move(w), weight_sum}));
  return out;
}

}  // namespace ops

Tensor nll_loss(const Tensor& log_probs, const Tensor& target, Reduction reduction, int64_t ignore_index, const Tensor& weight) {
  return unwrap(ops::nll_loss(log_probs, target, reduction, ignore_index, weight));
}
// cross_entropy with options and mse_loss: ops/losses.cpp.

}  // namespace om
