// Reductions (ReduceSum, ReduceMean, ReduceMax; the kernel also serves the reductions of
// reduce_more.cpp) and Softmax/LogSoftmax. Sums go through
// kernels::f32_reduce_sum, whose exact mode sums each output as the row-major sequence of its
// reduced elements; reduced axes that are not adjacent are first gathered to the end in
// scratch so that rule holds for any axes.
#include <algorithm>
#include <cmath>

#include "onemodel/graph/ops/op_util.h"
#include "onemodel/graph/ops/reduce_util.h"
#include "onemodel/kernels/kernels.h"

namespace om::graph::ops {
namespace {

// Axes from input 1 (opset >= 13/18, known at plan time) or the "axes" attribute (older
// opsets). Returns false when an axis is out of range. *count = 0 means "no axes given".
bool read_axes(const Node& node, const ValueDesc* axes_desc, size_t rank, bool mask[kMaxRank], size_t* count) {
  for (size_t i = 0; i < kMaxRank; ++i) mask[i] = false;
  *count = 0;
  const int64_t* a64 = nullptr;
  const int32_t* a32 = nullptr;
  int64_t n = 0;
  if (axes_desc) {
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

// The reductions' record: x viewed as [outer, n, inner] with the n reduced elements of each
// output in the middle; when the reduced axes are not adjacent, x is first transposed (kept
// axes first) into scratch, and then inner = 1. Work: the outer * inner kept outputs (all
// elements for the no-op copy).
struct ReduceParams {
  bool noop = false;    // no axes and noop_with_empty_axes: y is a copy of x
  bool gather = false;  // transpose x by perm into scratch first
  int64_t outer = 1, n = 1, inner = 1;
  size_t rank = 0;
  int64_t dims[kMaxRank] = {};  // x's shape, for the transpose
  int64_t perm[kMaxRank] = {};
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
  if (!read_axes(ctx.node, axes, x->shape.size(), mask, &count))
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

Status prepare_reduce(const InferContext& ctx, Prepared& out) {
  const ValueDesc& X = *ctx.input(0);
  ReduceParams& p = out.record<ReduceParams>();
  const size_t rank = X.shape.size();
  const int64_t* dims = X.shape.data();
  bool mask[kMaxRank];
  size_t count = 0;
  read_axes(ctx.node, ctx.input(1), rank, mask, &count);  // checked by infer
  if (count == 0) {
    if (attr_int(ctx.node, "noop_with_empty_axes", 0) != 0) {
      p.noop = true;
      out.work = X.numel();
      return Status::ok();
    }
    for (size_t i = 0; i < rank; ++i) mask[i] = true;
  }
  // Kept axes first, reduced axes last (size-1 axes ignored). Contiguous block: no copy.
  int64_t outer = 1, n = 1, inner = 1;
  int first_red = -1, last_red = -1;
  bool contiguous = true;
  for (size_t i = 0; i < rank; ++i) {
    if (dims[i] == 1) continue;
    if (mask[i]) {
      if (first_red < 0) first_red = int(i);
      else if (last_red != int(i) - 1) {
        for (int j = last_red + 1; j < int(i); ++j) if (dims[j] != 1) contiguous = false;
      }
      last_red = int(i);
    }
  }
  for (size_t i = 0; i < rank; ++i) {
    if (mask[i]) n *= dims[i];
    else if (first_red >= 0 && int(i) > last_red) inner *= dims[i];
    else outer *= dims[i];
  }
  if (!contiguous) {
    size_t np = 0;
    for (size_t i = 0; i < rank; ++i) if (!mask[i]) p.perm[np++] = int64_t(i);
    for (size_t i = 0; i < rank; ++i) if (mask[i]) p.perm[np++] = int64_t(i);
    p.gather = true;
    p.rank = rank;
    for (size_t i = 0; i < rank; ++i) p.dims[i] = dims[i];
    outer = 1;
    for (size_t i = 0; i < rank; ++i) if (!mask[i]) outer *= dims[i];
    inner = 1;
  }
  p.outer = outer;
  p.n = n;
  p.inner = inner;
  out.work = outer * inner;
  return Status::ok();
}

namespace {

// sums[q] for the kept outputs q in [b, e) of v viewed as [outer, n, inner] (q = o * inner + i):
// the sum over j of f(v[o, j, i], q), in the order f32_reduce_sum sums each output. With
// Transform the f values go to t (v's layout; t may be v), without it f must be the identity.
// A slice o that the range covers whole is summed as one f32_reduce_sum call; the columns of a
// slice cut by b or e are gathered into rows of t (row q at t + q * n, inside the slice's own
// part of t) and summed one by one in the exact order, the order f32_reduce_sum sums every
// column of a slice with inner > 1 in either mode.
template <bool Transform, typename F>
void sum_kept(const float* v, int64_t n, int64_t inner, int64_t b, int64_t e, F f, float* t, float* sums,
              ArithmeticMode mode) {
  if (n == 0) {  // empty sums are +0; an empty input may have no storage
    kernels::f32_reduce_sum(v, 1, 0, size_t(e - b), sums + b, mode);
    return;
  }
  if (inner == 1) {
    const float* s = v + b * n;
    if (Transform) {
      for (int64_t q = b; q < e; ++q)
        for (int64_t j = 0; j < n; ++j) t[q * n + j] = f(v[q * n + j], q);
      s = t + b * n;
    }
    kernels::f32_reduce_sum(s, size_t(e - b), size_t(n), 1, sums + b, mode);
    return;
  }
  for (int64_t o = b / inner; o * inner < e; ++o) {
    const int64_t i0 = std::max(b, o * inner) - o * inner, i1 = std::min(e, (o + 1) * inner) - o * inner;
    const float* vo = v + o * n * inner;
    if (i0 == 0 && i1 == inner) {
      const float* s = vo;
      if (Transform) {
        float* to = t + o * n * inner;
        for (int64_t j = 0; j < n; ++j)
          for (int64_t i = 0; i < inner; ++i) to[j * inner + i] = f(vo[j * inner + i], o * inner + i);
        s = to;
      }
      kernels::f32_reduce_sum(s, 1, size_t(n), size_t(inner), sums + o * inner, mode);
      continue;
    }
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t q = o * inner + i;
      float* row = t + q * n;
      for (int64_t j = 0; j < n; ++j) row[j] = f(vo[j * inner + i], q);
      sums[q] = kernels::f32_sum(row, size_t(n), ArithmeticMode::Exact);
    }
  }
}

}  // namespace

template <ReduceKind Kind>
Status reduce_kernel(const KernelContext& k) {
  const ReduceParams& p = k.params<ReduceParams>();
  const float* x = k.in(0).as<const float>();
  float* y = k.out(0).as<float>();
  const int64_t b = k.begin, e = k.end;
  if (p.noop) {
    for (int64_t i = b; i < e; ++i) y[i] = x[i];
    return Status::ok();
  }
  const int64_t n = p.n, inner = p.inner;
  const float* src = x;
  if (p.gather) {  // inner == 1: output q's elements are rows q of the transposed copy
    transpose_copy_range(x, p.dims, p.rank, p.perm, sizeof(float), k.scratch, b * n, e * n);
    src = static_cast<const float*>(k.scratch);
  }
  if (Kind == ReduceKind::Max || Kind == ReduceKind::Min || Kind == ReduceKind::Prod) {
    for (int64_t q = b; q < e; ++q) {
      const int64_t o = q / inner, i = q % inner;
      float m = Kind == ReduceKind::Max ? -INFINITY : Kind == ReduceKind::Min ? INFINITY : 1.0f;
      for (int64_t j = 0; j < n; ++j) {
        const float v = src[(o * n + j) * inner + i];
        if (Kind == ReduceKind::Prod) { m = m * v; continue; }
        if ((Kind == ReduceKind::Max ? v > m : v < m) || std::isnan(v)) m = v;
        if (std::isnan(m)) break;
      }
      y[q] = m;
    }
    return Status::ok();
  }
  // The rest sum x or a function of each element: the values go to scratch (in place when src
  // is already there) and are summed in the same fixed order as ReduceSum.
  float* t = static_cast<float*>(k.scratch);
  if (Kind == ReduceKind::Sum || Kind == ReduceKind::Mean) {
    sum_kept<false>(src, n, inner, b, e, [](float v, int64_t) { return v; }, t, y, k.mode);
    if (Kind == ReduceKind::Mean) {
      const float div = float(n);
      for (int64_t q = b; q < e; ++q) y[q] = y[q] / div;
    }
    return Status::ok();
  }
  if (Kind == ReduceKind::LogSumExp) {
    // y = log(sum exp(x - m)) + m with m the maximum, so large inputs do not overflow.
    for (int64_t q = b; q < e; ++q) {
      const int64_t o = q / inner, i = q % inner;
      float m = -INFINITY;
      for (int64_t j = 0; j < n; ++j) m = std::fmax(m, src[(o * n + j) * inner + i]);
      y[q] = m;
    }
    float* sums = static_cast<float*>(k.scratch) + k.in(0).numel;
    sum_kept<true>(src, n, inner, b, e, [y](float v, int64_t q) {
      const float shift = std::isinf(y[q]) ? 0.0f : y[q];
      return kernels::exp_f32(v - shift);
    }, t, sums, k.mode);
    for (int64_t q = b; q < e; ++q) {
      const float m = y[q];
      y[q] = std::isinf(m) ? (m > 0 ? m : kernels::log_f32(sums[q])) : kernels::log_f32(sums[q]) + m;
    }
    return Status::ok();
  }
  sum_kept<true>(src, n, inner, b, e, [](float v, int64_t) {
    return Kind == ReduceKind::L1 ? std::fabs(v) : Kind == ReduceKind::LogSum ? v : v * v;
  }, t, y, k.mode);
  if (Kind == ReduceKind::L2)
    for (int64_t q = b; q < e; ++q) y[q] = std::sqrt(y[q]);
  if (Kind == ReduceKind::LogSum)
    for (int64_t q = b; q < e; ++q) y[q] = kernels::log_f32(y[q]);
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


void softmax_along_axis_rows(const float* x, const int64_t* dims, size_t rank, int64_t axis, bool log, float* y, void* scratch,
                             ArithmeticMode mode, int64_t row_begin, int64_t row_end) {
  int64_t numel = 1, after = 1;
  for (size_t i = 0; i < rank; ++i) numel *= dims[i];
  for (size_t i = size_t(axis) + 1; i < rank; ++i) after *= dims[i];
  const int64_t n = dims[axis];
  if (numel == 0 || row_begin >= row_end) return;
  if (after == 1) {
    kernels::f32_softmax_rows(x + row_begin * n, y + row_begin * n, size_t(row_end - row_begin), size_t(n), log, mode);
    return;
  }
  // Row r = (o, a) is strided by `after`: gather the rows into t0 (row r at t0 + r * n, the
  // layout of x with the axis moved last), run them, scatter them back.
  float* t0 = static_cast<float*>(scratch);
  float* t1 = t0 + numel;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const float* xr = x + (r / after) * n * after + r % after;
    for (int64_t j = 0; j < n; ++j) t0[r * n + j] = xr[j * after];
  }
  kernels::f32_softmax_rows(t0 + row_begin * n, t1 + row_begin * n, size_t(row_end - row_begin), size_t(n), log, mode);
  for (int64_t r = row_begin; r < row_end; ++r) {
    float* yr = y + (r / after) * n * after + r % after;
    for (int64_t j = 0; j < n; ++j) yr[j * after] = t1[r * n + j];
  }
}

void softmax_along_axis(const float* x, const int64_t* dims, size_t rank, int64_t axis, bool log, float* y, void* scratch,
                        ArithmeticMode mode) {
  int64_t numel = 1;
  for (size_t i = 0; i < rank; ++i) numel *= dims[i];
  if (numel == 0) return;
  softmax_along_axis_rows(x, dims, rank, axis, log, y, scratch, mode, 0, numel / dims[axis]);
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

// Softmax's and LogSoftmax's record: the axis. Work: the rows (lines along the axis).
struct SoftmaxParams {
  int64_t axis = 0;
};

Status prepare_softmax(const InferContext& ctx, Prepared& out) {
  const ValueDesc& x = *ctx.input(0);
  int64_t& axis = out.record<SoftmaxParams>().axis;
  normalize_axis(attr_int(ctx.node, "axis", -1), int64_t(x.shape.size()), &axis);  // checked by infer
  const int64_t n = x.shape[size_t(axis)];
  out.work = n == 0 ? 0 : x.numel() / n;
  return Status::ok();
}

template <bool Log>
Status softmax_kernel(const KernelContext& k) {
  const TensorArg& X = k.in(0);
  softmax_along_axis_rows(X.as<const float>(), X.dims, X.rank, k.params<SoftmaxParams>().axis, Log, k.out(0).as<float>(), k.scratch,
                          k.mode, k.begin, k.end);
  return Status::ok();
}

constexpr AttrSpec kSoftmaxAttrs[] = {{"axis", AttrKind::Int}};



// ReduceSum's `axes` is an input since opset 13; ReduceMean's and ReduceMax's since 18.
constexpr OpDef kOps[] = {
    reduction<ReduceKind::Sum>("ReduceSum", 13)
        .doc("f32; axes input (or attribute), keepdims, noop_with_empty_axes; exact: fixed-order sum"),
    reduction<ReduceKind::Mean>("ReduceMean", 18)
        .doc("f32; as ReduceSum, then one division by the count"),
    reduction<ReduceKind::Max>("ReduceMax", 18).doc("f32; as ReduceSum; NaN propagates"),
    op("Softmax").upgrades_from(1).upgrade_hook(softmax_upgrade).inputs(1).attributes(kSoftmaxAttrs).shapes(infer_softmax)
        .prepared(prepare_softmax).kernel(softmax_kernel<false>)
        .with_scratch(softmax_scratch).doc("f32, axis (opset 13 semantics); exact: fixed-order sum, library exp"),
    op("LogSoftmax").upgrades_from(1).upgrade_hook(softmax_upgrade).inputs(1).attributes(kSoftmaxAttrs).shapes(infer_softmax)
        .prepared(prepare_softmax).kernel(softmax_kernel<true>)
        .with_scratch(softmax_scratch).doc("f32, axis (opset 13 semantics)"),
};

}  // namespace

OpTable reduce_ops() { return table_of(kOps); }

}  // namespace om::graph::ops
