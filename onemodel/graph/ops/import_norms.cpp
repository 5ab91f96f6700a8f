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

// LRN's record. Work: the N * C planes (n, c); a plane reads its neighbouring channels' input.
struct LrnParams {
  int64_t C = 0, inner = 0, size = 1;
  float alpha = 1e-4f, beta = 0.75f, bias = 1.0f;
};

Status prepare_lrn(const InferContext& ctx, Prepared& out) {
  const ValueDesc& x = *ctx.input(0);
  LrnParams& p = out.record<LrnParams>();
  p.alpha = attr_float(ctx.node, "alpha", 1e-4f);
  p.beta = attr_float(ctx.node, "beta", 0.75f);
  p.bias = attr_float(ctx.node, "bias", 1.0f);
  p.size = attr_int(ctx.node, "size", 1);
  p.C = x.shape[1];
  p.inner = 1;
  for (size_t i = 2; i < x.shape.size(); ++i) p.inner *= x.shape[i];
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
      p.count *= dims[i];
    } else {
      p.kept_dims[p.num_kept] = dims[i];
      p.kept_strides[p.num_kept++] = strides[i];
      groups *= dims[i];
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

constexpr AttrSpec kLrnAttrs[] = {{"alpha", AttrKind::Float}, {"beta", AttrKind::Float}, {"bias", AttrKind::Float},
                                  {"size", AttrKind::PositiveInt}};
constexpr AttrSpec kMvnAttrs[] = {{"axes", AttrKind::Ints}};

constexpr OpDef kOps[] = {
    op("LRN").upgrades_from(1).inputs(1).attributes(kLrnAttrs).shapes(infer_lrn).prepared(prepare_lrn).kernel(lrn_kernel)
        .doc("f32, (N, C, ...), size, alpha, beta, bias; library exp and log for the power"),
    op("MeanVarianceNormalization").upgrades_from(9).inputs(1).attributes(kMvnAttrs).shapes(infer_mvn).prepared(prepare_mvn).kernel(mvn_kernel)
        .doc("f32, axes (default 0, 2, 3); sums in element order"),
};

}  // namespace

OpTable import_norms_ops() { return table_of(kOps); }

}  // namespace om::graph::ops
