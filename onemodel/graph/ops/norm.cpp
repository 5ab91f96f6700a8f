// Normalisation family: LayerNormalization (opset 17). Each row (the axes from `axis` to the
// end) is normalised as y = (x - mean) * inv_std * scale + bias with
//   mean    = sum(x) / n,
//   var     = sum((x - mean)^2) / n,
//   inv_std = 1 / sqrt(var + epsilon),
// every sum through kernels::f32_sum, so in Exact mode the summation order is the fixed one of
// docs/exactness.md (mean first, then the variance over the stored differences) and the result
// does not depend on the ISA. Each remaining step is one IEEE operation per element, in the
// order written above (no fma), identical in both modes. Optional outputs 1 and 2 are the mean
// and inv_std with the reduced axes kept as size 1 (ONNX).
#include <cmath>

#include "onemodel/graph/ops/op_util.h"
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
  if (rank == 0 || !normalize_axis(attr_int(ctx.node, "axis", -1), rank, &axis))
    return ctx.error(ErrorKind::InvalidArgument, msg("axis ", attr_int(ctx.node, "axis", -1), " is out of range for X ",
                                                     shape_str(x->shape), "; give an axis in [-rank, rank)"));
  if (attr_int(ctx.node, "stash_type", 1) != 1)
    return ctx.error(ErrorKind::Unsupported, msg("stash_type ", attr_int(ctx.node, "stash_type", 1),
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
  int64_t axis = 0;
  normalize_axis(attr_int(ctx.node, "axis", -1), int64_t(x.shape.size()), &axis);  // checked by infer
  split_rows(x.shape.data(), x.shape.size(), axis, &p.rows, &p.n);
  p.epsilon = attr_float(ctx.node, "epsilon", 1e-5f);
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

constexpr AttrSpec kLayerNormAttrs[] = {{"axis", AttrKind::Int}, {"epsilon", AttrKind::Float}, {"stash_type", AttrKind::Int}};

constexpr OpDef kOps[] = {
    op("LayerNormalization").since_opset(17).inputs(2, 3).attributes(kLayerNormAttrs).shapes(infer_layer_norm)
        .prepared(prepare_layer_norm).kernel(layer_norm_kernel)
        .doc("f32, axis, epsilon, stash_type 1; optional Mean/InvStdDev outputs; exact: fixed-order sums (mean, then variance)"),
};

}  // namespace

OpTable norm_ops() { return table_of(kOps); }

}  // namespace om::graph::ops
