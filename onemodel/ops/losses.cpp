// Losses with PyTorch's definitions (docs/training.md): cross_entropy (weights, ignore_index,
// label smoothing), mse, l1, smooth_l1 / huber, binary_cross_entropy_with_logits (pos_weight).
// CTC is in ops/ctc.cpp. Every one records a training-only operator the tracer refuses.
#include "onemodel/ops/losses.h"
#include "onemodel/ops/loss_internal.h"

#include <cmath>

#include "onemodel/core/mode.h"
#include "onemodel/core/tensor_internal.h"
#include "onemodel/kernels/kernels.h"
#include "onemodel/ops/ops.h"
#include "onemodel/ops/record.h"

namespace om {
namespace ops {

// Reduces per-element losses (float) as PyTorch does: None keeps them, Sum adds, Mean divides
// the sum by the element count. Sums accumulate in double.
Result<Tensor> reduce_loss(const Tensor& per, Reduction reduction, const char* call) {
  if (reduction == Reduction::None) return per;
  const float* p = detail::raw_as<float>(per);
  double total = 0;
  for (int64_t i = 0; i < per.numel(); ++i) total += p[i];
  OM_ASSIGN_OR_RETURN(Tensor out, detail::make_tensor({}, DType::f32, false, call));
  *detail::raw_as<float>(out) = float(reduction == Reduction::Sum ? total : (per.numel() ? total / double(per.numel()) : NAN));
  return out;
}

namespace {

Status need(const Tensor& x, DType dtype, const char* call, const char* what) {
  OM_TRY(check_input(x, call));
  if (x.dtype() != dtype)
    return Status::error(ErrorKind::DTypeMismatch, msg(call, ": ", what, " must be ", dtype_name(dtype), ", got ", x.to_string()));
  return Status::ok();
}

// prediction and target broadcast against each other (PyTorch allows it); both dense.
Result<BroadcastPair> pair(const Tensor& a, const Tensor& b, const char* call) {
  OM_TRY(need(a, DType::f32, call, "the prediction"));
  OM_TRY(need(b, DType::f32, call, "the target"));
  return broadcast_pair(a, b, call);
}

}  // namespace

namespace loss_detail {
Result<Flattened> flatten_k_dim(const Tensor& scores, const Tensor& target, const char* call, const char* what) {
  OM_TRY(check_input(scores, call));
  OM_TRY(check_input(target, call));
  Shape want = scores.shape();
  want.erase(want.begin() + 1);
  if (target.shape() != want)
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": ", what, " ", scores.to_string(), " are [N, C, d1, ...], so the target must be i64 ",
                                                         shape_str(want), " class indices, got ", target.to_string()));
  std::vector<int64_t> perm{0};
  for (int64_t k = 2; k < scores.dim(); ++k) perm.push_back(k);
  perm.push_back(1);
  OM_ASSIGN_OR_RETURN(Tensor moved, ops::permute(scores, perm));
  Flattened f;
  OM_ASSIGN_OR_RETURN(f.scores, ops::reshape(moved, {-1, scores.shape()[1]}));
  OM_ASSIGN_OR_RETURN(f.target, ops::reshape(target, {-1}));
  f.per_element = want;
  return f;
}
}  // namespace loss_detail

Result<Tensor> cross_entropy(const Tensor& logits, const Tensor& target, const CrossEntropyOptions& o) {
  const char* call = "om::cross_entropy";
  if (logits.defined() && logits.dim() > 2) {
    OM_ASSIGN_OR_RETURN(loss_detail::Flattened f, loss_detail::flatten_k_dim(logits, target, call, "logits"));
    OM_ASSIGN_OR_RETURN(Tensor loss, ops::cross_entropy(f.scores, f.target, o));
    if (o.reduction != Reduction::None) return loss;
    return ops::reshape(loss, f.per_element);
  }
  OM_TRY(need(logits, DType::f32, call, "the logits"));
  OM_TRY(need(target, DType::i64, call, "the target"));
  if (logits.dim() != 2)
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": logits must be [batch, classes], got ", logits.to_string()));
  const int64_t n = logits.shape()[0], c = logits.shape()[1];
  if (target.shape() != Shape{n})
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": target must be i64 [", n, "] class indices, got ", target.to_string()));
  if (!(o.label_smoothing >= 0 && o.label_smoothing <= 1))
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": label_smoothing ", o.label_smoothing, " must lie in [0, 1]"));
  CrossEntropyAttrs attrs;
  attrs.reduction = o.reduction;
  attrs.ignore_index = o.ignore_index;
  attrs.label_smoothing = o.label_smoothing;
  if (o.weight.defined()) {
    OM_TRY(need(o.weight, DType::f32, call, "weight"));
    if (o.weight.shape() != Shape{c})
      return Status::error(ErrorKind::InvalidArgument, msg(call, ": weight must be f32 [", c, "] (one per class), got ", o.weight.to_string()));
    OM_ASSIGN_OR_RETURN(Tensor dw, detail::dense(o.weight));
    attrs.weight.assign(detail::raw_as<float>(dw), detail::raw_as<float>(dw) + c);
  }
  // log-probabilities with the kernel om::log_softmax uses
  OM_ASSIGN_OR_RETURN(Tensor dx, detail::dense(logits));
  OM_ASSIGN_OR_RETURN(Tensor logp, detail::make_tensor(logits.shape(), DType::f32, false, call));
  kernels::f32_softmax_rows(detail::raw_as<float>(dx), detail::raw_as<float>(logp), size_t(n), size_t(c), true, current_arithmetic_mode());
  OM_ASSIGN_OR_RETURN(Tensor tg, detail::dense(target));
  const float* p = detail::raw_as<float>(logp);
  const int64_t* t = detail::raw_as<int64_t>(tg);
  const std::vector<float>& w = attrs.weight;
  const double eps = o.label_smoothing;
  OM_ASSIGN_OR_RETURN(Tensor per, detail::make_tensor({n}, DType::f32, false, call));
  float* y = detail::raw_as<float>(per);
  double nll_total = 0, smooth_total = 0, weight_sum = 0;
  int64_t counted = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (t[i] == o.ignore_index) {
      y[i] = 0;
      continue;
    }
    if (t[i] < 0 || t[i] >= c)
      return Status::error(ErrorKind::InvalidArgument, msg(call, ": target[", i, "] = ", t[i], " is not a class index in [0, ", c, ")"));
    const float nll = w.empty() ? -p[i * c + t[i]] : float(-double(w[size_t(t[i])]) * p[i * c + t[i]]);
    double smooth = 0;
    if (eps != 0)
      for (int64_t k = 0; k < c; ++k) smooth -= (w.empty() ? 1.0 : double(w[size_t(k)])) * p[i * c + k];
    y[i] = eps == 0 ? nll : float((1 - eps) * nll + eps / double(c) * smooth);
    nll_total += nll;
    smooth_total += smooth;
    weight_sum += w.empty() ? 1.0 : double(w[size_t(t[i])]);
    ++counted;
  }
  attrs.divisor = w.empty() ? double(counted) : weight_sum;
  // PyTorch: the smoothing term's mean divides by the row count without weights (ignored rows
  // included), by the targets' weight sum with them.
  attrs.smooth_divisor = w.empty() ? double(n) : weight_sum;
  Tensor out = per;
  if (o.reduction != Reduction::None) {
    OM_ASSIGN_OR_RETURN(out, detail::make_tensor({}, DType::f32, false, call));
    double v;
    if (o.reduction == Reduction::Sum) v = (1 - eps) * nll_total + eps / double(c) * smooth_total;
    else if (counted == 0) v = 0;  // every target ignored (as om::nll_loss)
    else v = eps == 0 ? nll_total / attrs.divisor : (1 - eps) * nll_total / attrs.divisor + eps / double(c) * smooth_total / attrs.smooth_divisor;
    *detail::raw_as<float>(out) = float(v);
  }
  OM_TRY(record<OpId::CrossEntropy>({logits, target}, out, std::move(attrs), logp));
  return out;
}

Result<Tensor> mse_loss(const Tensor& a, const Tensor& b, Reduction reduction) {
  const char* call = "om::mse_loss";
  OM_ASSIGN_OR_RETURN(BroadcastPair pr, pair(a, b, call));
  OM_ASSIGN_OR_RETURN(Tensor per, detail::make_tensor(pr.shape, DType::f32, false, call));
  const size_t n = size_t(per.numel());
  float* y = detail::raw_as<float>(per);
  kernels::f32_binary(kernels::BinaryOp::Sub, detail::raw_as<float>(pr.a), 1, detail::raw_as<float>(pr.b), 1, y, n);
  kernels::f32_binary(kernels::BinaryOp::Mul, y, 1, y, 1, y, n);
  Tensor out = per;
  if (reduction != Reduction::None) {
    // the kernel sum om::mean uses, so training bits equal those of sub, mul and mean
    OM_ASSIGN_OR_RETURN(out, detail::make_tensor({}, DType::f32, false, call));
    float s = kernels::f32_sum(y, n, current_arithmetic_mode());
    if (reduction == Reduction::Mean) s = n ? s / float(n) : NAN;
    *detail::raw_as<float>(out) = s;
  }
  OM_TRY(record<OpId::MseLoss>({a, b}, out, LossAttrs{reduction}));
  return out;
}

Result<Tensor> elementwise_loss(OpId op, const Tensor& a, const Tensor& b, Reduction reduction, double beta) {
  const char* call = op_name(op);
  if (beta < 0) return Status::error(ErrorKind::InvalidArgument, msg(call, ": ", op == OpId::HuberLoss ? "delta " : "beta ", beta, " must not be negative"));
  if (op == OpId::HuberLoss && beta == 0) return Status::error(ErrorKind::InvalidArgument, msg(call, ": delta must be positive"));
  OM_ASSIGN_OR_RETURN(BroadcastPair pr, pair(a, b, call));
  OM_ASSIGN_OR_RETURN(Tensor per, detail::make_tensor(pr.shape, DType::f32, false, call));
  const float* pa = detail::raw_as<float>(pr.a);
  const float* pb = detail::raw_as<float>(pr.b);
  float* y = detail::raw_as<float>(per);
  for (int64_t i = 0; i < per.numel(); ++i) {
    const double d = double(pa[i]) - double(pb[i]), ad = std::fabs(d);
    double v = ad;
    if (op == OpId::SmoothL1Loss && ad < beta) v = 0.5 * d * d / beta;
    if (op == OpId::SmoothL1Loss && ad >= beta) v = ad - 0.5 * beta;
    if (op == OpId::HuberLoss) v = ad < beta ? 0.5 * d * d : beta * (ad - 0.5 * beta);
    y[i] = float(v);
  }
  OM_ASSIGN_OR_RETURN(Tensor out, reduce_loss(per, reduction, call));
  if (op == OpId::L1Loss) OM_TRY(record<OpId::L1Loss>({a, b}, out, LossAttrs{reduction}));
  else OM_TRY(record_op(op, {a, b}, out, SmoothL1Attrs{reduction, beta}));
  return out;
}

// log(1 + exp(x)) without overflow.
double softplus(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

Result<Tensor> bce_with_logits(const Tensor& x, const Tensor& target, Reduction reduction, const Tensor& pos_weight) {
  const char* call = "om::binary_cross_entropy_with_logits";
  OM_TRY(need(x, DType::f32, call, "the logits"));
  OM_TRY(need(target, DType::f32, call, "the target"));
  if (target.shape() != x.shape())
    return Status::error(ErrorKind::ShapeMismatch, msg(call, ": target ", target.to_string(), " must have the logits' shape ", shape_str(x.shape())));
  OM_ASSIGN_OR_RETURN(Tensor dx, detail::dense(x));
  OM_ASSIGN_OR_RETURN(Tensor dt, detail::dense(target));
  Tensor pw;
  if (pos_weight.defined()) {
    OM_TRY(need(pos_weight, DType::f32, call, "pos_weight"));
    OM_ASSIGN_OR_RETURN(Shape s, broadcast_shapes(x.shape(), pos_weight.shape(), call));
    if (s != x.shape())
      return Status::error(ErrorKind::ShapeMismatch, msg(call, ": pos_weight ", pos_weight.to_string(), " must broadcast to the logits' shape ",
                                                         shape_str(x.shape()), " (usually [classes])"));
    OM_ASSIGN_OR_RETURN(pw, broadcast_dense(pos_weight, x.shape()));
  }
  OM_ASSIGN_OR_RETURN(Tensor per, detail::make_tensor(x.shape(), DType::f32, false, call));
  const float* px = detail::raw_as<float>(dx);
  const float* pt = detail::raw_as<float>(dt);
  const float* pp = pw.defined() ? detail::raw_as<float>(pw) : nullptr;
  float* y = detail::raw_as<float>(per);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double p = pp ? pp[i] : 1.0, t = pt[i];
    y[i] = float(p * t * softplus(-double(px[i])) + (1 - t) * softplus(double(px[i])));
  }
  OM_ASSIGN_OR_RETURN(Tensor out, reduce_loss(per, reduction, call));
  OM_TRY(record<OpId::BceWithLogits>({x, target, pos_weight}, out, BceAttrs{reduction}));
  return out;
}

}  // namespace ops

Tensor cross_entropy(const Tensor& logits, const Tensor& target, const CrossEntropyOptions& options) {
  return unwrap(ops::cross_entropy(logits, target, options));
}
Tensor cross_entropy(const Tensor& logits, const Tensor& target, Reduction reduction) {
  CrossEntropyOptions o;
  o.reduction = reduction;
  return cross_entropy(logits, target, o);
}
Tensor mse_loss(const Tensor& prediction, const Tensor& target, Reduction reduction) {
  return unwrap(ops::mse_loss(prediction, target, reduction));
}
Tensor l1_loss(const Tensor& a, const Tensor& b, Reduction reduction) { return unwrap(ops::elementwise_loss(OpId::L1Loss, a, b, reduction, 0)); }
Tensor smooth_l1_loss(const Tensor& a, const Tensor& b, Reduction reduction, double beta) {
  return unwrap(ops::elementwise_loss(OpId::SmoothL1Loss, a, b, reduction, beta));
}
Tensor huber_loss(const Tensor& a, const Tensor& b, Reduction reduction, double delta) {
  return unwrap(ops::elementwise_loss(OpId::HuberLoss, a, b, reduction, delta));
}
Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& target, Reduction reduction, const Tensor& pos_weight) {
  return unwrap(ops::bce_with_logits(logits, target, reduction, pos_weight));
}

}  // namespace om
