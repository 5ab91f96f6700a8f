// Reductions (ReduceSum, ReduceMean, ReduceMax; the kernel also serves the reductions of
// reduce_more.cpp) and Softmax/LogSoftmax. Sums go through
// kernels::f32_reduce_sum, whose exact mode sums each output as the row-major sequence of its
// reduced elements; reduced axes that are not adjacent are first gathered to the end in
// scratch so that rule holds for any axes.
#include <cmath>

#include "onemodel/graph/ops/op_util.h"
#include "onemodel/graph/ops/reduce_util.h"
#include "onemodel/kernels/kernels.h"

namespace om::graph::ops {
namespace {

// Axes from input 1 (opset >= 13/18) or the "axes" attribute (older opsets); no heap use.
// Returns false when an axis is out of range. *count = 0 means "no axes given".
bool read_axes(const Node& node, const TensorArg* axes_in, const ValueDesc* axes_desc, size_t rank, bool mask[kMaxRank],
               size_t* count) {
  for (size_t i = 0; i < kMaxRank; ++i) mask[i] = false;
  *count = 0;
  const int64_t* a64 = nullptr;
  const int32_t* a32 = nullptr;
  int64_t n = 0;
  if (axes_in && axes_in->present) {
    n = axes_in->numel;
    if (axes_in->dtype == DType::i64) a64 = axes_in->as<const int64_t>(); else a32 = axes_in->as<const int32_t>();
  } else if (axes_desc) {
    n = axes_desc->numel();
    if (axes_desc->dtype == DType::i64) a64 = static_cast<const int64_t*>(axes_desc->data);
    else a32 = static_cast<const int32_t*>(axes_desc->data);
  } else if (const Attribute* at = find_attr(node, "axes")) {
    n = int64_t(at->ints.size());
    a64 = at->ints.data();
  }
  for (int64_t i = 0; i < n; ++i) {
    int64_t ax = a64 ? a64[i] : a32[i];
    if (!normalize_axis(ax, int64_t(rank), &ax)) return false;
    mask[ax] = true;
  }
  *count = size_t(n);
  return true;
}

// How to reduce: all axes when none are given unless noop_with_empty_axes.
struct ReducePlan {
  bool noop = false;
  bool mask[kMaxRank] = {};
};

}  // namespace

Status infer_reduce(InferContext& ctx) {
  const ValueDesc* x = ctx.input(0);
  if (!x || x->dtype != DType::f32)
    return ctx.error(ErrorKind::DTypeMismatch, msg("input must be f32, got ", x ? dtype_name(x->dtype) : "nothing"));
  const ValueDesc* axes = ctx.input(1);
  if (axes) {
    if (axes->dtype != DType::i64 && axes->dtype != DType::i32)
      return ctx.error(ErrorKind::DTypeMismatch, "axes must be i64");
    if (!axes->data) return ctx.error(ErrorKind::Unsupported, "axes must be known when the session plans (a constant)");
  }
  if (x->shape.size() > kMaxRank) return ctx.error(ErrorKind::Unsupported, msg("rank ", x->shape.size(), " exceeds ", kMaxRank));
  bool mask[kMaxRank];
  size_t count = 0;
  if (!read_axes(ctx.node, nullptr, axes, x->shape.size(), mask, &count))
    return ctx.error(ErrorKind::InvalidArgument, msg("an axis is out of range for rank ", x->shape.size()));
  const bool keep = attr_int(ctx.node, "keepdims", 1) != 0;
  if (count == 0) {
    if (attr_int(ctx.node, "noop_with_empty_axes", 0) != 0) {
      ctx.set_output(0, DType::f32, x->shape);
      return Status::ok();
    }
    for (size_t i = 0; i < x->shape.size(); ++i) mask[i] = true;
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < x->shape.size(); ++i) {
    if (!mask[i]) out.push_back(x->shape[i]);
    else if (keep) out.push_back(1);
  }
  ctx.set_output(0, DType::f32, std::move(out));
  return Status::ok();
}

// The gathered copy of the input, and for ReduceLogSumExp one sum per output.
size_t reduce_scratch(const InferContext& ctx) {
  const bool lse = ctx.node.op_type == "ReduceLogSumExp";
  return ctx.input(0)->nbytes() + (lse ? ctx.outputs[0].nbytes() : 0);
}

template <ReduceKind Kind>
Status reduce_kernel(const KernelContext& k) {
  const TensorArg& X = k.in(0);
  const float* x = X.as<const float>();
  float* y = k.out(0).as<float>();
  bool mask[kMaxRank];
  size_t count = 0;
  read_axes(*k.node, k.has_input(1) ? &k.in(1) : nullptr, nullptr, X.rank, mask, &count);
  if (count == 0) {
    if (attr_int(*k.node, "noop_with_empty_axes", 0) != 0) {
      for (int64_t i = 0; i < X.numel; ++i) y[i] = x[i];
      return Status::ok();
    }
    for (size_t i = 0; i < X.rank; ++i) mask[i] = true;
  }
  // Kept axes first, reduced axes last (size-1 axes ignored). Contiguous block: no copy.
  int64_t perm[kMaxRank];
  size_t np = 0;
  int64_t outer = 1, n = 1, inner = 1;
  int first_red = -1, last_red = -1;
  bool contiguous = true;
  for (size_t i = 0; i < X.rank; ++i) {
    if (X.dims[i] == 1) continue;
    if (mask[i]) {
      if (first_red < 0) first_red = int(i);
      else if (last_red != int(i) - 1) {
        for (int j = last_red + 1; j < int(i); ++j) if (X.dims[j] != 1) contiguous = false;
      }
      last_red = int(i);
    }
  }
  for (size_t i = 0; i < X.rank; ++i) {
    if (mask[i]) n *= X.dims[i];
    else if (first_red >= 0 && int(i) > last_red) inner *= X.dims[i];
    else outer *= X.dims[i];
  }
  const float* src = x;
  if (!contiguous) {
    for (size_t i = 0; i < X.rank; ++i) if (!mask[i]) perm[np++] = int64_t(i);
    for (size_t i = 0; i < X.rank; ++i) if (mask[i]) perm[np++] = int64_t(i);
    transpose_copy(x, X.dims, X.rank, perm, sizeof(float), k.scratch);
    src = static_cast<const float*>(k.scratch);
    outer = 1;
    for (size_t i = 0; i < X.rank; ++i) if (!mask[i]) outer *= X.dims[i];
    inner = 1;
  }
  if (Kind == ReduceKind::Max || Kind == ReduceKind::Min || Kind == ReduceKind::Prod) {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        float m = Kind == ReduceKind::Max ? -INFINITY : Kind == ReduceKind::Min ? INFINITY : 1.0f;
        for (int64_t j = 0; j < n; ++j) {
          const float v = src[(o * n + j) * inner + i];
          if (Kind == ReduceKind::Prod) { m = m * v; continue; }
          if ((Kind == ReduceKind::Max ? v > m : v < m) || std::isnan(v)) m = v;
          if (std::isnan(m)) break;
        }
        y[o * inner + i] = m;
      }
    return Status::ok();
  }
  if (Kind == ReduceKind::Sum || Kind == ReduceKind::Mean) {
    kernels::f32_reduce_sum(src, size_t(outer), size_t(n), size_t(inner), y, k.mode);
    if (Kind == ReduceKind::Mean) {
      const float div = float(n);
      for (int64_t i = 0; i < outer * inner; ++i) y[i] = y[i] / div;
    }
    return Status::ok();
  }
  // The rest sum a function of each element: the values go to scratch (in place when src is
  // already there) and are summed in the same fixed order as ReduceSum.
  float* t = static_cast<float*>(k.scratch);
  if (Kind == ReduceKind::LogSumExp) {
    // y = log(sum exp(x - m)) + m with m the maximum, so large inputs do not overflow.
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        float m = -INFINITY;
        for (int64_t j = 0; j < n; ++j) m = std::fmax(m, src[(o * n + j) * inner + i]);
        y[o * inner + i] = m;
        const float shift = std::isinf(m) ? 0.0f : m;
        for (int64_t j = 0; j < n; ++j) {
          const int64_t at = (o * n + j) * inner + i;
          t[at] = kernels::exp_f32(src[at] - shift);
        }
      }
    float* sums = static_cast<float*>(k.scratch) + X.numel;
    kernels::f32_reduce_sum(t, size_t(outer), size_t(n), size_t(inner), sums, k.mode);
    for (int64_t i = 0; i < outer * inner; ++i) {
      const float m = y[i];
      y[i] = std::isinf(m) ? (m > 0 ? m : kernels::log_f32(sums[i])) : kernels::log_f32(sums[i]) + m;
    }
    return Status::ok();
  }
  for (int64_t i = 0; i < X.numel; ++i) {
    const float v = src[i];
    t[i] = Kind == ReduceKind::L1 ? std::fabs(v) : Kind == ReduceKind::LogSum ? v : v * v;
  }
  kernels::f32_reduce_sum(t, size_t(outer), size_t(n), size_t(inner), y, k.mode);
  if (Kind == ReduceKind::L2)
    for (int64_t i = 0; i < outer * inner; ++i) y[i] = std::sqrt(y[i]);
  if (Kind == ReduceKind::LogSum)
    for (int64_t i = 0; i < outer * inner; ++i) y[i] = kernels::log_f32(y[i]);
  return Status::ok();
}

template Status reduce_kernel<ReduceKind::Sum>(const KernelContext&);
template Status reduce_kernel<ReduceKind::Mean>(const KernelContext&);
template Status reduce_kernel<ReduceKind::Max>(const KernelContext&);
template Status reduce_kernel<ReduceKind::Min>(const KernelContext&);
template Status reduce_kernel<ReduceKind::Prod>(const KernelContext&);
template Status reduce_kernel<ReduceKind::L1>(const KernelContext&);
template Status reduce_kernel<ReduceKind::L2>(const KernelContext&);
template Status reduce_kernel<ReduceKind::SumSquare>(const KernelContext&);
template Status reduce_kernel<ReduceKind::LogSum>(const KernelContext&);
template Status reduce_kernel<ReduceKind::LogSumExp>(const KernelContext&);

// Before opset 13 Softmax, LogSoftmax and Hardmax flattened the input to 2-D at `axis` (default
// 1) and normalised each row of that matrix. axis = -1 is the opset-13 form already; any other
// axis becomes that composition of registry operators:
//   s = Shape(x); f = Flatten(x, axis); t = Op(f, axis = -1); y = Reshape(t, s)
// (Flatten and Reshape alias, the Shape folds when planning: no copy is added).
Status softmax_upgrade(UpgradeContext& ctx) {
  Node& node = ctx.node;
  const int64_t axis = attr_int(node, "axis", 1);
  if (axis == -1) return Status::ok();
  if (node.inputs.empty() || node.outputs.empty()) return Status::ok();  // the Session reports it
  const std::string x = node.inputs[0], y = node.outputs[0];
  const std::string base = y.empty() ? node.name : y;
  const std::string s = ctx.fresh(base + ".shape"), f = ctx.fresh(base + ".rows"), t = ctx.fresh(base + ".normalised");
  Node shape;
  shape.op_type = "Shape";
  shape.name = node.name.empty() ? "" : node.name + ".shape";
  shape.inputs = {x};
  shape.outputs = {s};
  Node flat;
  flat.op_type = "Flatten";
  flat.name = node.name.empty() ? "" : node.name + ".flatten";
  flat.inputs = {x};
  flat.outputs = {f};
  flat.attributes.push_back(Attribute::of_int("axis", axis));
  Node back;
  back.op_type = "Reshape";
  back.name = node.name.empty() ? "" : node.name + ".reshape";
  back.inputs = {t, s};
  back.outputs = {y};
  node.inputs[0] = f;
  node.outputs[0] = t;
  bool set = false;
  for (Attribute& a : node.attributes)
    if (a.name == "axis") a = Attribute::of_int("axis", -1), set = true;
  if (!set) node.attributes.push_back(Attribute::of_int("axis", -1));
  ctx.before.push_back(std::move(shape));
  ctx.before.push_back(std::move(flat));
  ctx.after.push_back(std::move(back));
  return Status::ok();
}


void softmax_along_axis(const float* x, const int64_t* dims, size_t rank, int64_t axis, bool log, float* y, void* scratch,
                        ArithmeticMode mode) {
  int64_t numel = 1, after = 1;
  for (size_t i = 0; i < rank; ++i) numel *= dims[i];
  for (size_t i = size_t(axis) + 1; i < rank; ++i) after *= dims[i];
  const int64_t n = dims[axis];
  if (numel == 0) return;
  const int64_t rows = numel / n;
  if (after == 1) {
    kernels::f32_softmax_rows(x, y, size_t(rows), size_t(n), log, mode);
    return;
  }
  // Move the axis last, run rows, move it back.
  int64_t perm[kMaxRank], inv[kMaxRank], tdims[kMaxRank];
  size_t j = 0;
  for (size_t i = 0; i < rank; ++i) if (int64_t(i) != axis) perm[j++] = int64_t(i);
  perm[j] = axis;
  for (size_t i = 0; i < rank; ++i) { inv[perm[i]] = int64_t(i); tdims[i] = dims[perm[i]]; }
  float* t0 = static_cast<float*>(scratch);
  float* t1 = t0 + numel;
  transpose_copy(x, dims, rank, perm, sizeof(float), t0);
  kernels::f32_softmax_rows(t0, t1, size_t(rows), size_t(n), log, mode);
  transpose_copy(t1, tdims, rank, inv, sizeof(float), y);
}
}  // namespace om::graph::ops
namespace om::graph::ops {
namespace {

// ---- Softmax / LogSoftmax (opset 13 semantics: one axis) ----

Status infer_softmax(InferContext& ctx) {
  const ValueDesc* x = ctx.input(0);
  if (!x || x->dtype != DType::f32)
    return ctx.error(ErrorKind::DTypeMismatch, msg("input must be f32, got ", x ? dtype_name(x->dtype) : "nothing"));
  int64_t axis;
  if (!normalize_axis(attr_int(ctx.node, "axis", -1), int64_t(x->shape.size()), &axis))
    return ctx.error(ErrorKind::InvalidArgument, msg("axis ", attr_int(ctx.node, "axis", -1), " is out of range for ", shape_str(x->shape)));
  ctx.set_output(0, DType::f32, x->shape);
  return Status::ok();
}

size_t softmax_scratch(const InferContext& ctx) { return softmax_along_axis_scratch(*ctx.input(0)); }

template <bool Log>
Status softmax_kernel(const KernelContext& k) {
  const TensorArg& X = k.in(0);
  int64_t axis = 0;
  normalize_axis(attr_int(*k.node, "axis", -1), int64_t(X.rank), &axis);
  softmax_along_axis(X.as<const float>(), X.dims, X.rank, axis, Log, k.out(0).as<float>(), k.scratch, k.mode);
  return Status::ok();
}

constexpr AttrSpec kSoftmaxAttrs[] = {{"axis", AttrKind::Int}};



// ReduceSum's `axes` is an input since opset 13; ReduceMean's and ReduceMax's since 18.
constexpr OpDef kOps[] = {
    reduction("ReduceSum", reduce_kernel<ReduceKind::Sum>, 13)
        .doc("f32; axes input (or attribute), keepdims, noop_with_empty_axes; exact: fixed-order sum"),
    reduction("ReduceMean", reduce_kernel<ReduceKind::Mean>, 18)
        .doc("f32; as ReduceSum, then one division by the count"),
    reduction("ReduceMax", reduce_kernel<ReduceKind::Max>, 18).doc("f32; as ReduceSum; NaN propagates"),
    op("Softmax").upgrades_from(1).upgrade_hook(softmax_upgrade).inputs(1).attributes(kSoftmaxAttrs).shapes(infer_softmax).kernel(softmax_kernel<false>)
        .with_scratch(softmax_scratch).doc("f32, axis (opset 13 semantics); exact: fixed-order sum, library exp"),
    op("LogSoftmax").upgrades_from(1).upgrade_hook(softmax_upgrade).inputs(1).attributes(kSoftmaxAttrs).shapes(infer_softmax).kernel(softmax_kernel<true>)
        .with_scratch(softmax_scratch).doc("f32, axis (opset 13 semantics)"),
};

}  // namespace

OpTable reduce_ops() { return table_of(kOps); }

}  // namespace om::graph::ops
