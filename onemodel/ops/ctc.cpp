// ctc_loss: the forward-backward algorithm in log space (docs/training.md). The record keeps the
// gradient of each batch entry's loss with respect to log_probs (computed with the loss), so the
// backward pass only scales it by the incoming gradient and the reduction.
#include <cmath>
#include <limits>

#include "onemodel/core/tensor_internal.h"
#include "onemodel/ops/losses.h"
#include "onemodel/ops/record.h"

namespace om {
namespace ops {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

double log_add(double a, double b) {
  if (a == kNegInf) return b;
  if (b == kNegInf) return a;
  const double m = a > b ? a : b;
  return m + std::log1p(std::exp(-std::fabs(a - b)));
}

}  // namespace

Result<Tensor> ctc_loss(const Tensor& log_probs, const Tensor& targets, const std::vector<int64_t>& input_lengths,
                        const std::vector<int64_t>& target_lengths, const CtcOptions& o) {
  const char* call = "om::ctc_loss";
  OM_TRY(check_input(log_probs, call));
  OM_TRY(check_input(targets, call));
  if (log_probs.dtype() != DType::f32 || log_probs.dim() != 3)
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": log_probs must be f32 [time, batch, classes], got ", log_probs.to_string()));
  const int64_t T = log_probs.shape()[0], N = log_probs.shape()[1], C = log_probs.shape()[2];
  if (o.blank < 0 || o.blank >= C)
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": blank ", o.blank, " is not a class index in [0, ", C, ")"));
  if (int64_t(input_lengths.size()) != N || int64_t(target_lengths.size()) != N)
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": give one input length and one target length per batch entry (", N, "); got ",
                                                         input_lengths.size(), " and ", target_lengths.size()));
  if (targets.dtype() != DType::i64 || (targets.dim() != 1 && !(targets.dim() == 2 && targets.shape()[0] == N)))
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": targets must be i64 [", N, ", max_target_length] or the concatenation "
                                                         "[sum(target_lengths)], got ", targets.to_string()));
  int64_t total_targets = 0;
  for (int64_t b = 0; b < N; ++b) {
    if (input_lengths[size_t(b)] < 0 || input_lengths[size_t(b)] > T)
      return Status::error(ErrorKind::InvalidArgument, msg(call, ": input_lengths[", b, "] = ", input_lengths[size_t(b)], " is not in [0, ", T, "]"));
    const int64_t max_s = targets.dim() == 2 ? targets.shape()[1] : targets.numel();
    if (target_lengths[size_t(b)] < 0 || target_lengths[size_t(b)] > max_s)
      return Status::error(ErrorKind::InvalidArgument, msg(call, ": target_lengths[", b, "] = ", target_lengths[size_t(b)], " is not in [0, ", max_s, "]"));
    total_targets += target_lengths[size_t(b)];
  }
  if (targets.dim() == 1 && total_targets > targets.numel())
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": the target lengths add up to ", total_targets, " but targets has ", targets.numel(), " labels"));

  OM_ASSIGN_OR_RETURN(Tensor dlp, detail::dense(log_probs));
  OM_ASSIGN_OR_RETURN(Tensor dtg, detail::dense(targets));
  OM_ASSIGN_OR_RETURN(Tensor per, detail::make_tensor({N}, DType::f32, false, call));
  OM_ASSIGN_OR_RETURN(Tensor grad, detail::make_tensor(log_probs.shape(), DType::f32, true, call));
  const float* lp = detail::raw_as<float>(dlp);
  const int64_t* tg = detail::raw_as<int64_t>(dtg);
  float* loss = detail::raw_as<float>(per);
  float* gr = detail::raw_as<float>(grad);
  auto at = [&](int64_t t, int64_t b, int64_t c) { return size_t((t * N + b) * C + c); };
  int64_t offset = 0;
  std::vector<double> alpha, beta, occ;
  for (int64_t b = 0; b < N; ++b) {
    const int64_t Tb = input_lengths[size_t(b)], S = target_lengths[size_t(b)];
    const int64_t* label = targets.dim() == 2 ? tg + b * targets.shape()[1] : tg + offset;
    offset += S;
    for (int64_t s = 0; s < S; ++s)
      if (label[s] < 0 || label[s] >= C || label[s] == o.blank)
        return Status::error(ErrorKind::InvalidArgument, msg(call, ": target label ", label[s], " of batch entry ", b, " is not a class in [0, ", C,
                                                             ") other than the blank ", o.blank));
    const int64_t L = 2 * S + 1;  // S <= the targets' numel (<= 2^48): no overflow
    int64_t cells = 0;
    if (!checked_mul(Tb, L, &cells))
      return Status::error(ErrorKind::InvalidArgument, msg(call, ": batch entry ", b, " needs ", Tb, " x ", L, " alignment cells, more than 2^48"));
    auto ext = [&](int64_t s) { return s % 2 == 0 ? o.blank : label[s / 2]; };
    double nll = std::numeric_limits<double>::infinity();
    if (Tb > 0) {
      alpha.assign(size_t(cells), kNegInf);
      beta.assign(size_t(cells), kNegInf);
      alpha[0] = lp[at(0, b, o.blank)];
      if (L > 1) alpha[1] = lp[at(0, b, ext(1))];
      for (int64_t t = 1; t < Tb; ++t)
        for (int64_t s = 0; s < L; ++s) {
          double a = alpha[size_t((t - 1) * L + s)];
          if (s > 0) a = log_add(a, alpha[size_t((t - 1) * L + s - 1)]);
          if (s > 1 && ext(s) != ext(s - 2)) a = log_add(a, alpha[size_t((t - 1) * L + s - 2)]);
          alpha[size_t(t * L + s)] = a == kNegInf ? kNegInf : a + lp[at(t, b, ext(s))];
        }
      beta[size_t((Tb - 1) * L + L - 1)] = lp[at(Tb - 1, b, ext(L - 1))];
      if (L > 1) beta[size_t((Tb - 1) * L + L - 2)] = lp[at(Tb - 1, b, ext(L - 2))];
      for (int64_t t = Tb - 2; t >= 0; --t)
        for (int64_t s = 0; s < L; ++s) {
          double v = beta[size_t((t + 1) * L + s)];
          if (s + 1 < L) v = log_add(v, beta[size_t((t + 1) * L + s + 1)]);
          if (s + 2 < L && ext(s) != ext(s + 2)) v = log_add(v, beta[size_t((t + 1) * L + s + 2)]);
          beta[size_t(t * L + s)] = v == kNegInf ? kNegInf : v + lp[at(t, b, ext(s))];
        }
      double ll = alpha[size_t((Tb - 1) * L + L - 1)];
      if (L > 1) ll = log_add(ll, alpha[size_t((Tb - 1) * L + L - 2)]);
      nll = -ll;
    } else if (S == 0) {
      nll = 0;  // no frames, no labels: the empty alignment
    }
    const bool infinite = std::isinf(nll);
    loss[b] = infinite && o.zero_infinity ? 0.0f : float(nll);
    if (infinite || Tb == 0) continue;  // the gradient stays 0 (zero_infinity) — PyTorch gives NaN otherwise
    // d loss / d log_probs[t, c] = -sum over s with ext(s) = c of exp(alpha + beta - lp - log P)
    occ.assign(size_t(C), kNegInf);
    for (int64_t t = 0; t < Tb; ++t) {
      std::fill(occ.begin(), occ.end(), kNegInf);
      for (int64_t s = 0; s < L; ++s) occ[size_t(ext(s))] = log_add(occ[size_t(ext(s))], alpha[size_t(t * L + s)] + beta[size_t(t * L + s)]);
      for (int64_t c = 0; c < C; ++c)
        if (occ[size_t(c)] != kNegInf) gr[at(t, b, c)] = float(-std::exp(occ[size_t(c)] - lp[at(t, b, c)] + nll));
    }
  }
  if (!o.zero_infinity)
    for (int64_t b = 0; b < N; ++b)
      if (std::isinf(loss[b]))
        for (int64_t t = 0; t < T; ++t)
          for (int64_t c = 0; c < C; ++c) gr[at(t, b, c)] = NAN;
  Tensor out = per;
  if (o.reduction != Reduction::None) {
    double total = 0;
    for (int64_t b = 0; b < N; ++b)
      total += o.reduction == Reduction::Mean ? double(loss[b]) / double(std::max<int64_t>(target_lengths[size_t(b)], 1)) : double(loss[b]);
    OM_ASSIGN_OR_RETURN(out, detail::make_tensor({}, DType::f32, false, call));
    *detail::raw_as<float>(out) = float(o.reduction == Reduction::Mean ? (N ? total / double(N) : NAN) : total);
  }
  OM_TRY(record<OpId::CtcLoss>({log_probs, targets}, out, CtcAttrs{o.reduction, o.blank, o.zero_infinity, input_lengths, target_lengths}, grad));
  return out;
}

}  // namespace ops

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const std::vector<int64_t>& input_lengths,
                const std::vector<int64_t>& target_lengths, const CtcOptions& options) {
  return unwrap(ops::ctc_loss(log_probs, targets, input_lengths, target_lengths, options));
}

}  // namespace om
