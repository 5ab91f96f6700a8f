// Classification losses of exported training graphs: NegativeLogLikelihoodLoss and
// SoftmaxCrossEntropyLoss (log-softmax over the class axis, then the same loss).
//
// scores [N, C, d1..dk], target [N, d1..dk] (i64/i32 class labels), optional weight [C]:
//   loss[e] = -scores[n, target[e], d] * weight[target[e]]   (weight 1 when absent)
// and 0, with weight 0, where target[e] equals ignore_index. reduction "none" keeps loss's shape;
// "sum" adds the elements; "mean" (the default) divides that sum by the sum of the weights of the
// elements not ignored (their count when no weight is given; 0/0 = NaN when all are ignored). A
// label outside [0, C) that is not ignore_index is an error at run time.
//
// Evaluation order, the same in both modes except for the sums: each loss element is one IEEE
// product; the sum runs over the elements in target's row-major order through kernels::f32_sum,
// which fixes its order in Exact mode (docs/exactness.md, "sums"); mean is then one division by
// the weight sum, summed the same way, or by the count of elements not ignored converted once.
// SoftmaxCrossEntropyLoss's log-softmax is the Softmax family's, exact in Exact mode.
#include <algorithm>

#include "onemodel/graph/ops/op_util.h"
#include "onemodel/graph/ops/reduce_util.h"
#include "onemodel/kernels/kernels.h"

namespace om::graph::ops {
namespace {

enum class Reduction { None, Sum, Mean };

Reduction reduction_of(const Node& node) {
  if (node.attr_is("reduction", "none")) return Reduction::None;
  if (node.attr_is("reduction", "sum")) return Reduction::Sum;
  return Reduction::Mean;
}

// The checks and output 0 both losses share; `log_prob` adds SoftmaxCrossEntropyLoss's optional
// output 1 (the log-softmax, scores' shape).
Status infer_loss(InferContext& ctx, bool log_prob) {
  const ValueDesc* x = ctx.input(0);
  const ValueDesc* t = ctx.input(1);
  if (!x || !t) return ctx.error(ErrorKind::InvalidArgument, "needs the scores (input 0) and the target (input 1)");
  if (x->dtype != DType::f32) return ctx.error(ErrorKind::DTypeMismatch, msg("scores must be f32, got ", dtype_name(x->dtype)));
  if (t->dtype != DType::i64 && t->dtype != DType::i32)
    return ctx.error(ErrorKind::DTypeMismatch, msg("target must be i64 or i32 class labels, got ", dtype_name(t->dtype)));
  if (x->shape.size() < 2 || x->shape.size() > kMaxRank)
    return ctx.error(ErrorKind::ShapeMismatch, msg("scores must be [N, C, d1..dk] (rank 2 to ", kMaxRank, "), got ", shape_str(x->shape)));
  std::vector<int64_t> want = x->shape;
  want.erase(want.begin() + 1);
  if (t->shape != want)
    return ctx.error(ErrorKind::ShapeMismatch, msg("target must be scores' shape without the class axis, ", shape_str(want),
                                                   ", got ", shape_str(t->shape)));
  if (const ValueDesc* w = ctx.input(2)) {
    if (w->dtype != DType::f32 || w->shape != std::vector<int64_t>{x->shape[1]})
      return ctx.error(ErrorKind::ShapeMismatch, msg("weight must be f32 [C] = [", x->shape[1], "], got ", dtype_name(w->dtype), " ",
                                                     shape_str(w->shape)));
  }
  const Attribute* r = ctx.node.attr("reduction");
  if (r && r->s != "none" && r->s != "sum" && r->s != "mean")
    return ctx.error(ErrorKind::InvalidArgument, msg("reduction must be none, sum or mean, got '", r->s, "'"));
  const size_t outs = ctx.outputs.size();
  if (outs > (log_prob ? 2u : 1u)) return ctx.error(ErrorKind::InvalidArgument, msg(outs, " outputs; at most ", log_prob ? 2 : 1));
  ctx.set_output(0, DType::f32, reduction_of(ctx.node) == Reduction::None ? t->shape : std::vector<int64_t>{});
  if (log_prob && outs > 1) ctx.set_output(1, DType::f32, x->shape);
  return Status::ok();
}

Status infer_nll(InferContext& ctx) { return infer_loss(ctx, false); }
Status infer_sce(InferContext& ctx) { return infer_loss(ctx, true); }

// Per-element losses and weights when the loss is reduced (target's element count each).
size_t reduce_bytes(const InferContext& ctx) {
  return reduction_of(ctx.node) == Reduction::None ? 0 : 2 * size_t(ctx.input(1)->numel()) * sizeof(float);
}
size_t nll_scratch(const InferContext& ctx) { return reduce_bytes(ctx); }
// SoftmaxCrossEntropyLoss: room for the log-probabilities (used when output 1 is absent, so the
// size never depends on which outputs the plan keeps), the log-softmax's own, the reduction's.
size_t sce_scratch(const InferContext& ctx) {
  return ctx.input(0)->nbytes() + softmax_along_axis_scratch(*ctx.input(0)) + reduce_bytes(ctx);
}

// The losses' record. Work: with reduction none, the loss elements (NegativeLogLikelihoodLoss)
// or the batch items (SoftmaxCrossEntropyLoss: the log-softmax of each item with its losses);
// a reduced loss is one unit (its sum needs every element).
struct LossParams {
  Reduction red = Reduction::Mean;
  bool has_ii = false;
  int64_t ii = 0;  // ignore_index
  int64_t inner = 1;
};

template <bool Sce>
Status prepare_loss(const InferContext& ctx, Prepared& out) {
  const std::vector<int64_t>& x = ctx.input(0)->shape;
  LossParams& p = out.record<LossParams>();
  p.red = reduction_of(ctx.node);
  const Attribute* ii = ctx.node.attr("ignore_index");
  p.has_ii = ii != nullptr;
  p.ii = ii ? ii->i : 0;
  for (size_t d = 2; d < x.size(); ++d) p.inner = count_mul(p.inner, x[d]);
  if (p.red == Reduction::None) out.work = Sce ? x[0] : ctx.input(1)->numel();
  return Status::ok();
}

// The loss of log-probabilities `lp` (scores' layout) for target elements [e0, e1) into out(0);
// `scratch` holds reduce_bytes. A reduced loss takes every element.
Status nll_from(const KernelContext& k, const float* lp, float* scratch, int64_t e0, int64_t e1) {
  const LossParams& p = k.params<LossParams>();
  const TensorArg& X = k.in(0);
  const TensorArg& T = k.in(1);
  const int64_t C = X.dims[1], inner = p.inner;
  const float* weight = k.has_input(2) ? k.in(2).as<const float>() : nullptr;
  const bool has_ii = p.has_ii;
  const int64_t ii = p.ii;
  const Reduction red = p.red;
  float* loss = red == Reduction::None ? k.out(0).as<float>() : scratch;
  float* w = red == Reduction::None ? nullptr : scratch + T.numel;
  int64_t counted = 0;
  for (int64_t n = inner > 0 ? e0 / inner : 0, e = e0; e < e1; ++n)
    for (int64_t i = e - n * inner; i < inner && e < e1; ++i, ++e) {
      const int64_t t = T.dtype == DType::i64 ? T.as<const int64_t>()[e] : T.as<const int32_t>()[e];
      if (has_ii && t == ii) {
        loss[e] = 0.0f;
        if (red != Reduction::None) w[e] = 0.0f;
        continue;
      }
      if (t < 0 || t >= C)
        return k.error(ErrorKind::InvalidArgument, msg("target value ", t, " at element ", e, " is not a class of [0, ", C,
                                                       ") and not ignore_index", has_ii ? msg(" (", ii, ")") : std::string(),
                                                       ": fix the labels, or set ignore_index to the label that marks elements to skip"));
      const float wt = weight ? weight[t] : 1.0f;
      loss[e] = -lp[(n * C + t) * inner + i] * wt;
      if (red != Reduction::None) w[e] = wt;
      ++counted;
    }
  if (red == Reduction::None) return Status::ok();
  const float sum = kernels::f32_sum(loss, size_t(T.numel), k.mode);
  float* y = k.out(0).as<float>();
  if (red == Reduction::Sum) {
    y[0] = sum;
  } else {
    const float total = weight ? kernels::f32_sum(w, size_t(T.numel), k.mode) : float(counted);
    y[0] = sum / total;
  }
  return Status::ok();
}

Status nll_kernel(const KernelContext& k) {
  const bool whole = k.params<LossParams>().red != Reduction::None;
  return nll_from(k, k.in(0).as<const float>(), static_cast<float*>(k.scratch), whole ? 0 : k.begin, whole ? k.in(1).numel : k.end);
}

Status sce_kernel(const KernelContext& k) {
  const LossParams& p = k.params<LossParams>();
  const TensorArg& X = k.in(0);
  const bool kept = k.num_outputs > 1 && k.out(1).present;
  // Scratch: [log-probabilities unless kept][log-softmax's 2 * numel][reduction's].
  float* at = static_cast<float*>(k.scratch);
  float* lp = kept ? k.out(1).as<float>() : at;
  at += X.numel;
  // Batch items [b, e): their scores, log-probabilities and log-softmax scratch are theirs alone.
  const bool whole = p.red != Reduction::None;
  const int64_t b = whole ? 0 : k.begin, e = whole ? X.dims[0] : k.end;
  const int64_t item = X.dims[1] * p.inner;
  int64_t dims[kMaxRank];
  std::copy(X.dims, X.dims + X.rank, dims);
  dims[0] = e - b;
  softmax_along_axis(X.as<const float>() + b * item, dims, X.rank, 1, true, lp + b * item, at + 2 * b * item, k.mode);
  return nll_from(k, lp, at + 2 * X.numel, b * p.inner, e * p.inner);
}

constexpr AttrSpec kLossAttrs[] = {{"reduction", AttrKind::String}, {"ignore_index", AttrKind::Int}};

// Opset 13 only widened the dtypes (bfloat16, which onemodel lacks): the opset-12 nodes read as is.
constexpr OpDef kOps[] = {
    op("NegativeLogLikelihoodLoss").upgrades_from(12).inputs(2, 3).attributes(kLossAttrs).shapes(infer_nll).kernel(nll_kernel)
        .prepared(prepare_loss<false>).with_scratch(nll_scratch)
        .doc("f32 [N, C, d...], i64/i32 target, optional weight [C]; reduction none/sum/mean, ignore_index; exact: fixed-order sums"),
    op("SoftmaxCrossEntropyLoss").upgrades_from(12).inputs(2, 3).attributes(kLossAttrs).shapes(infer_sce).kernel(sce_kernel)
        .prepared(prepare_loss<true>).with_scratch(sce_scratch)
        .doc("as NegativeLogLikelihoodLoss on the log-softmax over axis 1 (optional output 1); exact: LogSoftmax's order, fixed-order sums"),
};

}  // namespace

}  // namespace om::graph::ops

// The family's operators, one symbol each (onemodel/op_list.h).
#define OM_LOSS_OPS(X) X(NegativeLogLikelihoodLoss) X(SoftmaxCrossEntropyLoss)
OM_OP_FAMILY_TABLE(loss, OM_LOSS_OPS)
