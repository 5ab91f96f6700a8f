// Normalisations: LayerNormalization (opset 17), BatchNormalization (inference form, and
// training_mode's batch statistics), InstanceNormalization, LRN (AlexNet/GoogLeNet style local
// response normalisation across channels) and MeanVarianceNormalization.
// LayerNormalization normalises each row (the axes from `axis` to the end) as
// y = (x - mean) * inv_std * scale + bias with
//   mean    = sum(x) / n,
//   var     = sum((x - mean)^2) / n,
//   inv_std = 1 / sqrt(var + epsilon),
// every sum through kernels::f32_sum, so in Exact mode the summation order is the fixed one of
// docs/exactness.md (mean first, then the variance over the stored differences) and the result
// does not depend on the ISA. Each remaining step is one IEEE operation per element, in the
// order written above (no fma), identical in both modes. Its optional outputs 1 and 2 are the
// mean and inv_std with the reduced axes kept as size 1 (ONNX). InstanceNormalization and
// BatchNormalization's statistics sum through the same fixed-order kernels; LRN and MVN sum in
// element order and LRN's power is exp(beta log(base)) with the library's own exp/log, so every
// kernel here is exact in both modes.
#include <cmath>
#include <vector>

#include "onemodel/graph/ops/op_util.h"
#include "onemodel/kernels/conv.h"
#include "onemodel/kernels/kernels.h"

namespace om::graph::ops {
namespace {

// The normalised row length and the row count for x's shape and the `axis` attribute.
bool split_rows(const int64_t* dims, size_t rank, int64_t axis, int64_t* rows, int64_t* n) {
  *rows = 1;
  *n = 1;
  for (size_t i = 0; i < rank; ++i) {
    int64_t* target = int64_t(i) < axis ? rows : n;
    if (!checked_mul(*target, dims[i], target)) return false;
  }
  return true;
}

Status infer_layer_norm(InferContext& ctx) {
  const ValueDesc* x = ctx.input(0);
  const ValueDesc* scale = ctx.input(1);
  const ValueDesc* bias = ctx.input(2);
  if (!x || x->dtype != DType::f32)
    return ctx.error(ErrorKind::DTypeMismatch, msg("input X must be f32, got ", x ? dtype_name(x->dtype) : "nothing"));
  const int64_t rank = int64_t(x->shape.size());
  int64_t axis;
  if (rank == 0 || !normalize_axis(ctx.node.attr_int("axis", -1), rank, &axis))
    return ctx.error(ErrorKind::InvalidArgument, msg("axis ", ctx.node.attr_int("axis", -1), " is out of range for X ",
                                                     shape_str(x->shape), "; give an axis in [-rank, rank)"));
  if (ctx.node.attr_int("stash_type", 1) != 1)
    return ctx.error(ErrorKind::Unsupported, msg("stash_type ", ctx.node.attr_int("stash_type", 1),
                                                 " is not supported; only 1 (float) is"));
  int64_t rows, n;
  if (!split_rows(x->shape.data(), x->shape.size(), axis, &rows, &n))
    return ctx.error(ErrorKind::InvalidArgument, msg("X ", shape_str(x->shape), " has too many elements"));
  const std::vector<int64_t> normalized(x->shape.begin() + axis, x->shape.end());
  for (const ValueDesc* p : {scale, bias}) {
    if (!p) continue;
    if (p->dtype != DType::f32)
      return ctx.error(ErrorKind::DTypeMismatch, msg("Scale and B must be f32, got ", dtype_name(p->dtype)));
    // Scale and B broadcast to the normalised shape; onemodel supports exactly that shape
    // (leading 1s allowed), the form every exporter writes.
    if (p->numel() != n || p->shape.size() > size_t(rank))
      return ctx.error(ErrorKind::ShapeMismatch, msg("Scale/B ", shape_str(p->shape), " must hold the normalised shape ",
                                                     shape_str(normalized), " (", n, " elements)"));
  }
  if (!scale) return ctx.error(ErrorKind::InvalidArgument, "input Scale is required");
  ctx.set_output(0, DType::f32, x->shape);
  std::vector<int64_t> stat = x->shape;
  for (size_t i = size_t(axis); i < stat.size(); ++i) stat[i] = 1;
  for (size_t o = 1; o < ctx.outputs.size() && o < 3; ++o) ctx.set_output(o, DType::f32, stat);
  if (ctx.outputs.size() > 3) return ctx.error(ErrorKind::InvalidArgument, msg(ctx.outputs.size(), " outputs; at most 3"));
  return Status::ok();
}

// LayerNormalization's record. Work: the rows (each normalised on its own).
struct LayerNormParams {
  int64_t rows = 0, n = 0;
  float epsilon = 1e-5f;
};

Status prepare_layer_norm(const InferContext& ctx, Prepared& out) {
  const ValueDesc& x = *ctx.input(0);
  LayerNormParams& p = out.record<LayerNormParams>();
  split_rows(x.shape.data(), x.shape.size(), checked_axis(ctx, -1, int64_t(x.shape.size())), &p.rows, &p.n);
  p.epsilon = ctx.node.attr_float("epsilon", 1e-5f);
  out.work = p.n == 0 ? 0 : p.rows;
  return Status::ok();
}

// The squared differences are summed from the output row (it is written again after), so
// rows need no shared scratch; x - mean is computed again for the result, the same bits.
Status layer_norm_kernel(const KernelContext& k) {
  const LayerNormParams& p = k.params<LayerNormParams>();
  const int64_t n = p.n;
  const float eps = p.epsilon;
  const float* x = k.in(0).as<const float>();
  const float* scale = k.in(1).as<const float>();
  const float* bias = k.has_input(2) ? k.in(2).as<const float>() : nullptr;
  float* y = k.out(0).as<float>();
  float* mean_out = k.num_outputs > 1 && k.out(1).present ? k.out(1).as<float>() : nullptr;
  float* inv_out = k.num_outputs > 2 && k.out(2).present ? k.out(2).as<float>() : nullptr;
  const float fn = float(n);
  for (int64_t r = k.begin; r < k.end; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    const float mean = kernels::f32_sum(xr, size_t(n), k.mode) / fn;
    for (int64_t i = 0; i < n; ++i) {
      const float d = xr[i] - mean;
      yr[i] = d * d;
    }
    const float var = kernels::f32_sum(yr, size_t(n), k.mode) / fn;
    const float inv = 1.0f / std::sqrt(var + eps);
    for (int64_t i = 0; i < n; ++i) {
      const float t = ((xr[i] - mean) * inv) * scale[i];
      yr[i] = bias ? t + bias[i] : t;
    }
    if (mean_out) mean_out[r] = mean;
    if (inv_out) inv_out[r] = inv;
  }
  return Status::ok();
}

// ---- BatchNormalization ----

Status refuse_extra_outputs(const InferContext& ctx, const char* what) {
  for (size_t i = 1; i < ctx.node.outputs.size(); ++i)
    if (!ctx.node.outputs[i].empty())
      return ctx.error(ErrorKind::Unsupported, msg("the optional output ", i, " ('", ctx.node.outputs[i], "', ", what,
                                                   ") is not supported; remove it from the node"));
  return Status::ok();
}

Status infer_batch_norm(InferContext& ctx) {
  for (size_t i = 0; i < 5; ++i) OM_TRY(require_dtype(ctx, i, {DType::f32}));
  const bool training = ctx.node.attr_int("training_mode", 0) != 0;
  if (!training) OM_TRY(refuse_extra_outputs(ctx, "running statistics, given only in training_mode"));
  const auto& x = ctx.input(0)->shape;
  if (x.size() < 2) return ctx.error(ErrorKind::ShapeMismatch, msg("the input must be [N, C, ...], got ", shape_str(x)));
  static const char* names[] = {"X", "scale", "B", "input_mean", "input_var"};
  for (size_t i = 1; i < 5; ++i) {
    const auto& s = ctx.input(i)->shape;
    if (s.size() != 1 || s[0] != x[1])
      return ctx.error(ErrorKind::ShapeMismatch, msg(names[i], " must be [", x[1], "] (the channels of X ", shape_str(x), "), got ", shape_str(s)));
  }
  if (training && (x[0] == 0 || ctx.input(0)->numel() == 0))
    return ctx.error(ErrorKind::InvalidArgument, msg("training_mode needs batch statistics, but X ", shape_str(x), " is empty"));
  ctx.set_output(0, DType::f32, x);
  for (size_t i = 1; i < ctx.outputs.size() && i < 3; ++i) ctx.set_output(i, DType::f32, {x[1]});
  return Status::ok();
}

// training_mode: the batch mean and (population) variance per channel, in the scratch.
size_t batch_norm_scratch(const InferContext& ctx) {
  return ctx.node.attr_int("training_mode", 0) != 0 ? size_t(ctx.input(0)->shape[1]) * 2 * sizeof(float) : 0;
}

// The batch statistics of channel c of [N, C, inner]: the mean is the library's sum of each
// (n, c) run (fixed order in Exact mode) added in n order, divided by the count; the variance
// sums (x - mean)^2 in element order, divided by the count.
void batch_stats(const float* x, int64_t N, int64_t C, int64_t inner, int64_t c, ArithmeticMode mode, float* mean, float* var) {
  const float count = float(N * inner);
  float s = 0.0f;
  for (int64_t n = 0; n < N; ++n) s = s + kernels::f32_sum(x + (n * C + c) * inner, size_t(inner), mode);
  const float mu = s / count;
  float q = 0.0f;
  for (int64_t n = 0; n < N; ++n) {
    const float* run = x + (n * C + c) * inner;
    for (int64_t i = 0; i < inner; ++i) {
      const float d = run[i] - mu;
      q = q + d * d;
    }
  }
  *mean = mu;
  *var = q / count;
}

// BatchNormalization's record. Work: the C channels (statistics and normalisation of one
// channel read only that channel).
struct BatchNormParams {
  int64_t N = 0, C = 0, inner = 0;
  float epsilon = 1e-5f, momentum = 0.9f;
  bool training = false;
};

Status prepare_batch_norm(const InferContext& ctx, Prepared& out) {
  const ValueDesc& x = *ctx.input(0);
  BatchNormParams& p = out.record<BatchNormParams>();
  p.N = x.shape[0];
  p.C = x.shape[1];
  p.inner = p.N * p.C == 0 ? 0 : x.numel() / (p.N * p.C);
  p.epsilon = ctx.node.attr_float("epsilon", 1e-5f);
  p.momentum = ctx.node.attr_float("momentum", 0.9f);
  p.training = ctx.node.attr_int("training_mode", 0) != 0;
  out.work = p.C;
  return Status::ok();
}

// Inference: the given mean and variance. training_mode (opset 15): the batch statistics
// normalise X, and the optional outputs are the running statistics
// input * momentum + batch * (1 - momentum).
Status batch_norm_kernel(const KernelContext& k) {
  const BatchNormParams& p = k.params<BatchNormParams>();
  const int64_t N = p.N, C = p.C, inner = p.inner, b = k.begin, e = k.end;
  const float* x = k.in(0).as<const float>();
  const float* mean = k.in(3).as<const float>();
  const float* var = k.in(4).as<const float>();
  if (p.training) {
    float* bm = static_cast<float*>(k.scratch);
    float* bv = bm + C;
    for (int64_t c = b; c < e; ++c) batch_stats(x, N, C, inner, c, k.mode, &bm[c], &bv[c]);
    const float m = p.momentum;
    for (size_t o = 1; o < 3; ++o) {
      if (o >= k.num_outputs || !k.out(o).present) continue;
      const float* given = o == 1 ? mean : var;
      const float* batch = o == 1 ? bm : bv;
      float* r = k.out(o).as<float>();
      for (int64_t c = b; c < e; ++c) r[c] = given[c] * m + batch[c] * (1.0f - m);
    }
    mean = bm;
    var = bv;
  }
  float* y = k.out(0).as<float>();
  for (int64_t n = 0; n < N; ++n)
    kernels::f32_batch_norm_inference(x + (n * C + b) * inner, k.in(1).as<const float>() + b, k.in(2).as<const float>() + b,
                                      mean + b, var + b, p.epsilon, 1, e - b, inner, y + (n * C + b) * inner);
  return Status::ok();
}

// ---- InstanceNormalization: per (n, c), y = scale[c] (x - mean) / sqrt(var + epsilon) + B[c] ----

Status infer_instance_norm(InferContext& ctx) {
  for (size_t i = 0; i < 3; ++i) OM_TRY(require_dtype(ctx, i, {DType::f32}));
  const ValueDesc* x = ctx.input(0);
  if (x->shape.size() < 3) return ctx.error(ErrorKind::InvalidArgument, msg("input must be (N, C, D1, ...), got ", shape_str(x->shape)));
  for (size_t i = 1; i < 3; ++i)
    if (ctx.input(i)->shape != std::vector<int64_t>{x->shape[1]})
      return ctx.error(ErrorKind::ShapeMismatch, msg(i == 1 ? "scale " : "B ", shape_str(ctx.input(i)->shape), " must be [", x->shape[1], "]"));
  ctx.set_output(0, DType::f32, x->shape);
  return Status::ok();
}

// InstanceNormalization's record. Work: the N * C planes.
struct InstanceNormParams {
  int64_t C = 0, spatial = 1;
  float epsilon = 1e-5f;
};

Status prepare_instance_norm(const InferContext& ctx, Prepared& out) {
  const auto& s = ctx.input(0)->shape;
  InstanceNormParams& p = out.record<InstanceNormParams>();
  p.C = s[1];
  for (size_t i = 2; i < s.size(); ++i) p.spatial = count_mul(p.spatial, s[i]);
  p.epsilon = ctx.node.attr_float("epsilon", 1e-5f);
  out.work = s[0] * s[1];
  return Status::ok();
}

// The plane's own output holds its squared deviations until they are summed: no other plane
// reads it, and the output never shares the input's buffer.
Status instance_norm_kernel(const KernelContext& k) {
  const InstanceNormParams& p = k.params<InstanceNormParams>();
  const TensorArg& X = k.in(0);
  const float eps = p.epsilon;
  const int64_t C = p.C, spatial = p.spatial;
  const float* x = X.as<const float>();
  const float* scale = k.in(1).as<const float>();
  const float* bias = k.in(2).as<const float>();
  float* y = k.out(0).as<float>();
  for (int64_t plane = k.begin; plane < k.end; ++plane) {
    const int64_t c = plane % C;
    const float* px = x + plane * spatial;
    float* py = y + plane * spatial;
    float* dev = py;
    const float mean = kernels::f32_sum(px, size_t(spatial), k.mode) / float(spatial);
    for (int64_t i = 0; i < spatial; ++i) {
      const float d = px[i] - mean;
      dev[i] = d * d;
    }
    const float var = kernels::f32_sum(dev, size_t(spatial), k.mode) / float(spatial);
    const float inv = 1.0f / std::sqrt(var + eps);
    for (int64_t i = 0; i < spatial; ++i) py[i] = scale[c] * ((px[i] - mean) * inv) + bias[c];
  }
  return Status::ok();
}

Status infer_f32_rank(InferContext& ctx, size_t min_rank) {
  OM_TRY(require_dtype(ctx, 0, {DType::f32}));
  const ValueDesc* x = ctx.input(0);
  if (x->shape.size() < min_rank) return ctx.error(ErrorKind::InvalidArgument, msg("input must have rank >= ", min_rank, ", got ", shape_str(x->shape)));
  ctx.set_output(0, DType::f32, x->shape);
  return Status::ok();
}

// ---- LRN: y = x / (bias + alpha / size * sum over nearby channels of x^2)^beta ----

Status infer_lrn(InferContext& ctx) {
  OM_TRY(infer_f32_rank(ctx, 2));
  if (ctx.node.attr_int("size", 0) < 1) return ctx.error(ErrorKind::InvalidArgument, "attribute size (>= 1) is required");
  return Status::ok();
}

// LRN's record. Work: the N * C planes (n, c); a plane reads its neighbouring channels' input.
struct LrnParams {
  int64_t C = 0, inner = 0, size = 1;
  float alpha = 1e-4f, beta = 0.75f, bias = 1.0f;
};

Status prepare_lrn(const InferContext& ctx, Prepared& out) {
  const ValueDesc& x = *ctx.input(0);
  LrnParams& p = out.record<LrnParams>();
  p.alpha = ctx.node.attr_float("alpha", 1e-4f);
  p.beta = ctx.node.attr_float("beta", 0.75f);
  p.bias = ctx.node.attr_float("bias", 1.0f);
  p.size = ctx.node.attr_int("size", 1);
  p.C = x.shape[1];
  p.inner = 1;
  for (size_t i = 2; i < x.shape.size(); ++i) p.inner = count_mul(p.inner, x.shape[i]);
  out.work = x.shape[0] * p.C;
  return Status::ok();
}

Status lrn_kernel(const KernelContext& k) {
  const LrnParams& p = k.params<LrnParams>();
  const float alpha = p.alpha, beta = p.beta, bias = p.bias;
  const int64_t size = p.size, C = p.C, inner = p.inner;
  const int64_t lo_off = (size - 1) / 2, hi_off = size - 1 - lo_off;
  const float* x = k.in(0).as<const float>();
  float* y = k.out(0).as<float>();
  const float scale = alpha / float(size);
  for (int64_t q = k.begin; q < k.end; ++q) {
    const int64_t n = q / C, c = q % C;
    for (int64_t i = 0; i < inner; ++i) {
      float sq = 0.0f;
      const int64_t c0 = c - lo_off < 0 ? 0 : c - lo_off, c1 = c + hi_off > C - 1 ? C - 1 : c + hi_off;
      for (int64_t j = c0; j <= c1; ++j) {
        const float v = x[(n * C + j) * inner + i];
        sq = sq + v * v;
      }
      const float base = bias + scale * sq;
      const int64_t at = (n * C + c) * inner + i;
      y[at] = x[at] / kernels::exp_f32(beta * kernels::log_f32(base));
    }
  }
  return Status::ok();
}

// ---- MeanVarianceNormalization: (x - mean) / (sqrt(variance) + 1e-9) over `axes` ----

bool mvn_mask(const Node& node, size_t rank, bool mask[kMaxRank]) {
  for (size_t i = 0; i < kMaxRank; ++i) mask[i] = false;
  const Attribute* a = node.attr("axes");
  static const int64_t kDefault[] = {0, 2, 3};
  const int64_t* axes = a ? a->ints.data() : kDefault;
  const size_t n = a ? a->ints.size() : 3;
  for (size_t i = 0; i < n; ++i) {
    int64_t ax = 0;
    if (!normalize_axis(axes[i], int64_t(rank), &ax)) return false;
    mask[ax] = true;
  }
  return true;
}

Status infer_mvn(InferContext& ctx) {
  OM_TRY(infer_f32_rank(ctx, 1));
  if (ctx.input(0)->shape.size() > kMaxRank) return ctx.error(ErrorKind::Unsupported, msg("rank above ", kMaxRank));
  bool mask[kMaxRank];
  if (!mvn_mask(ctx.node, ctx.input(0)->shape.size(), mask))
    return ctx.error(ErrorKind::InvalidArgument, msg("an axis is out of range for ", shape_str(ctx.input(0)->shape)));
  return Status::ok();
}

// MeanVarianceNormalization's record: x's kept and reduced axes (sizes and element strides).
// Work: the groups of kept coordinates (row-major), each normalised over its own elements.
struct MvnParams {
  size_t num_kept = 0, num_reduced = 0;
  int64_t kept_dims[kMaxRank] = {}, kept_strides[kMaxRank] = {};
  int64_t red_dims[kMaxRank] = {}, red_strides[kMaxRank] = {};
  int64_t count = 1;  // elements per group
};

Status prepare_mvn(const InferContext& ctx, Prepared& out) {
  const std::vector<int64_t>& dims = ctx.input(0)->shape;
  bool mask[kMaxRank];
  mvn_mask(ctx.node, dims.size(), mask);  // checked by infer
  int64_t strides[kMaxRank];
  contiguous_strides(dims.data(), dims.size(), strides);
  MvnParams& p = out.record<MvnParams>();
  int64_t groups = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (mask[i]) {
      p.red_dims[p.num_reduced] = dims[i];
      p.red_strides[p.num_reduced++] = strides[i];
      p.count = count_mul(p.count, dims[i]);
    } else {
      p.kept_dims[p.num_kept] = dims[i];
      p.kept_strides[p.num_kept++] = strides[i];
      groups = count_mul(groups, dims[i]);
    }
  }
  out.work = p.count == 0 ? 0 : groups;
  return Status::ok();
}

// Per group, three passes over its elements in element order: the sum, the squared
// deviations, the result (the order the whole-tensor passes gave each group).
Status mvn_kernel(const KernelContext& k) {
  const MvnParams& p = k.params<MvnParams>();
  const int64_t count = p.count;
  const float* x = k.in(0).as<const float>();
  float* y = k.out(0).as<float>();
  for (int64_t g = k.begin; g < k.end; ++g) {
    int64_t base = 0;
    for (size_t d = p.num_kept, rest = size_t(g); d-- > 0;) {
      base += int64_t(rest % size_t(p.kept_dims[d])) * p.kept_strides[d];
      rest /= size_t(p.kept_dims[d]);
    }
    float sum = 0.0f, dev = 0.0f;
    for (int pass = 0; pass < 3; ++pass) {
      int64_t idx[kMaxRank] = {};
      int64_t e = base;
      const float mean = sum / float(count);
      for (int64_t j = 0; j < count; ++j) {
        if (pass == 0) sum = sum + x[e];
        else if (pass == 1) dev = dev + (x[e] - mean) * (x[e] - mean);
        else y[e] = (x[e] - mean) / (std::sqrt(dev / float(count)) + 1e-9f);
        for (size_t d = p.num_reduced; d-- > 0;) {
          e += p.red_strides[d];
          if (++idx[d] < p.red_dims[d]) break;
          e -= p.red_strides[d] * p.red_dims[d];
          idx[d] = 0;
        }
      }
    }
  }
  return Status::ok();
}

constexpr AttrSpec kLayerNormAttrs[] = {{"axis", AttrKind::Int}, {"epsilon", AttrKind::Float}, {"stash_type", AttrKind::Int}};
constexpr AttrSpec kBatchNormAttrs[] = {{"epsilon", AttrKind::Float}, {"momentum", AttrKind::Float}, {"training_mode", AttrKind::Int}};
constexpr AttrSpec kInstanceNormAttrs[] = {{"epsilon", AttrKind::Float}};
constexpr AttrSpec kLrnAttrs[] = {{"alpha", AttrKind::Float}, {"beta", AttrKind::Float}, {"bias", AttrKind::Float},
                                  {"size", AttrKind::PositiveInt}};
constexpr AttrSpec kMvnAttrs[] = {{"axes", AttrKind::Ints}};

constexpr OpDef kOps[] = {
    op("LayerNormalization").since_opset(17).per_item(BatchRule::Axis, -1).inputs(2, 3).attributes(kLayerNormAttrs).shapes(infer_layer_norm)
        .prepared(prepare_layer_norm).kernel(layer_norm_kernel)
        .doc("f32, axis, epsilon, stash_type 1; optional Mean/InvStdDev outputs; exact: fixed-order sums (mean, then variance)").with_flags(kOpF16InF32),
    op("BatchNormalization").upgrades_from(9).per_item(BatchRule::FirstOutput).inputs(5).attributes(kBatchNormAttrs).shapes(infer_batch_norm).prepared(prepare_batch_norm).kernel(batch_norm_kernel)
        .with_scratch(batch_norm_scratch)
        .doc("f32: (x - mean) * (scale / sqrt(var + epsilon)) + B, one rounding per operation; training_mode (opset 15): batch mean and population variance (exact: fixed-order sums), running mean/var outputs").with_flags(kOpF16InF32),
    op("InstanceNormalization").upgrades_from(6).per_item(BatchRule::Items).inputs(3).attributes(kInstanceNormAttrs).shapes(infer_instance_norm)
        .prepared(prepare_instance_norm).kernel(instance_norm_kernel)
        .doc("f32, (N, C, ...), epsilon; exact: fixed-order sums for mean and variance").with_flags(kOpF16InF32),
    op("LRN").upgrades_from(1).per_item(BatchRule::Items).inputs(1).attributes(kLrnAttrs).shapes(infer_lrn).prepared(prepare_lrn).kernel(lrn_kernel)
        .doc("f32, (N, C, ...), size, alpha, beta, bias; library exp and log for the power"),
    op("MeanVarianceNormalization").upgrades_from(9).inputs(1).attributes(kMvnAttrs).shapes(infer_mvn).prepared(prepare_mvn).kernel(mvn_kernel)
        .doc("f32, axes (default 0, 2, 3); sums in element order"),
};

}  // namespace

}  // namespace om::graph::ops

// The family's operators, one symbol each (onemodel/op_list.h).
#define OM_NORMALIZATION_OPS(X) \
  X(LayerNormalization) X(BatchNormalization) X(InstanceNormalization) X(LRN) \
  X(MeanVarianceNormalization)
OM_OP_FAMILY_TABLE(normalization, OM_NORMALIZATION_OPS)
