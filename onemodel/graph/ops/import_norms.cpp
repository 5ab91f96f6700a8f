// Normalisations of older exported models: LRN (AlexNet/GoogLeNet style local response
// normalisation across channels) and MeanVarianceNormalization. Sums run in element order and
// the power is exp(beta log(base)) with the library's own exp/log, so one kernel is exact in
// both modes (docs/exactness.md).
#include <cmath>

#include "onemodel/graph/ops/op_util.h"
#include "onemodel/kernels/kernels.h"

namespace om::graph::ops {
namespace {

Status infer_f32_rank(InferContext& ctx, size_t min_rank) {
  const ValueDesc* x = ctx.input(0);
  if (!x || x->dtype != DType::f32)
    return ctx.error(ErrorKind::DTypeMismatch, msg("input must be f32", x ? msg(", got ", dtype_name(x->dtype)) : ""));
  if (x->shape.size() < min_rank) return ctx.error(ErrorKind::InvalidArgument, msg("input must have rank >= ", min_rank, ", got ", shape_str(x->shape)));
  ctx.set_output(0, DType::f32, x->shape);
  return Status::ok();
}

// ---- LRN: y = x / (bias + alpha / size * sum over nearby channels of x^2)^beta ----

Status infer_lrn(InferContext& ctx) {
  OM_TRY(infer_f32_rank(ctx, 2));
  if (attr_int(ctx.node, "size", 0) < 1) return ctx.error(ErrorKind::InvalidArgument, "attribute size (>= 1) is required");
  return Status::ok();
}

Status lrn_kernel(const KernelContext& k) {
  const TensorArg& X = k.in(0);
  const float alpha = attr_float(*k.node, "alpha", 1e-4f), beta = attr_float(*k.node, "beta", 0.75f);
  const float bias = attr_float(*k.node, "bias", 1.0f);
  const int64_t size = attr_int(*k.node, "size", 1);
  const int64_t N = X.dims[0], C = X.dims[1];
  int64_t inner = 1;
  for (size_t i = 2; i < X.rank; ++i) inner *= X.dims[i];
  const int64_t lo_off = (size - 1) / 2, hi_off = size - 1 - lo_off;
  const float* x = X.as<const float>();
  float* y = k.out(0).as<float>();
  const float scale = alpha / float(size);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
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
  return Status::ok();
}

// ---- MeanVarianceNormalization: (x - mean) / (sqrt(variance) + 1e-9) over `axes` ----

bool mvn_mask(const Node& node, size_t rank, bool mask[kMaxRank]) {
  for (size_t i = 0; i < kMaxRank; ++i) mask[i] = false;
  const Attribute* a = find_attr(node, "axes");
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

// Per group of kept coordinates: the sum, then the sum of squared deviations (scratch).
size_t mvn_scratch(const InferContext& ctx) {
  bool mask[kMaxRank];
  mvn_mask(ctx.node, ctx.input(0)->shape.size(), mask);
  int64_t groups = 1;
  for (size_t i = 0; i < ctx.input(0)->shape.size(); ++i)
    if (!mask[i]) groups *= ctx.input(0)->shape[i];
  return size_t(groups) * 2 * sizeof(float);
}

Status mvn_kernel(const KernelContext& k) {
  const TensorArg& X = k.in(0);
  bool mask[kMaxRank];
  mvn_mask(*k.node, X.rank, mask);
  int64_t gstride[kMaxRank];
  int64_t groups = 1, count = 1;
  for (size_t i = X.rank; i-- > 0;) {
    gstride[i] = mask[i] ? 0 : groups;
    if (mask[i]) count *= X.dims[i]; else groups *= X.dims[i];
  }
  float* sum = static_cast<float*>(k.scratch);
  float* dev = sum + groups;
  for (int64_t g = 0; g < groups; ++g) sum[g] = 0.0f, dev[g] = 0.0f;
  const float* x = X.as<const float>();
  float* y = k.out(0).as<float>();
  // Three passes in element order: sums, squared deviations, the result.
  for (int pass = 0; pass < 3; ++pass) {
    int64_t idx[kMaxRank] = {};
    int64_t g = 0;
    for (int64_t e = 0; e < X.numel; ++e) {
      const float mean = sum[g] / float(count);
      if (pass == 0) sum[g] = sum[g] + x[e];
      else if (pass == 1) dev[g] = dev[g] + (x[e] - mean) * (x[e] - mean);
      else y[e] = (x[e] - mean) / (std::sqrt(dev[g] / float(count)) + 1e-9f);
      for (size_t d = X.rank; d-- > 0;) {
        g += gstride[d];
        if (++idx[d] < X.dims[d]) break;
        g -= gstride[d] * X.dims[d];
        idx[d] = 0;
      }
    }
  }
  return Status::ok();
}

constexpr AttrSpec kLrnAttrs[] = {{"alpha", AttrKind::Float}, {"beta", AttrKind::Float}, {"bias", AttrKind::Float},
                                  {"size", AttrKind::PositiveInt}};
constexpr AttrSpec kMvnAttrs[] = {{"axes", AttrKind::Ints}};

constexpr OpDef kOps[] = {
    op("LRN").upgrades_from(1).inputs(1).attributes(kLrnAttrs).shapes(infer_lrn).kernel(lrn_kernel)
        .doc("f32, (N, C, ...), size, alpha, beta, bias; library exp and log for the power"),
    op("MeanVarianceNormalization").upgrades_from(9).inputs(1).attributes(kMvnAttrs).shapes(infer_mvn).kernel(mvn_kernel)
        .with_scratch(mvn_scratch).doc("f32, axes (default 0, 2, 3); sums in element order"),
};

}  // namespace

OpTable import_norms_ops() { return table_of(kOps); }

}  // namespace om::graph::ops
