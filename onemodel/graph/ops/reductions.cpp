// Reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
// ReduceSumSquare, ReduceLogSum, ReduceLogSumExp (one kernel per kind, reduce_util.h), and the
// running sum CumSum. Sums go through kernels::f32_reduce_sum, whose exact mode sums each output
// as the row-major sequence of its reduced elements; reduced axes that are not adjacent are
// first gathered to the end in scratch so that rule holds for any axes. Max, Min and Prod run in
// element order, CumSum adds in element order: exact by nature.
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
  } else if (const Attribute* at = node.attr("axes")) {
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
  if (!x || (x->dtype != DType::f32 && x->dtype != DType::f64))
    return ctx.error(ErrorKind::DTypeMismatch, msg("input must be f32 or f64, got ", x ? dtype_name(x->dtype) : "nothing"));
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
  const bool keep = ctx.node.attr_int("keepdims", 1) != 0;
  if (count == 0) {
    if (ctx.node.attr_int("noop_with_empty_axes", 0) != 0) {
      ctx.set_output(0, x->dtype, x->shape);
      return Status::ok();
    }
    for (size_t i = 0; i < x->shape.size(); ++i) mask[i] = true;
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < x->shape.size(); ++i) {
    if (!mask[i]) out.push_back(x->shape[i]);
    else if (keep) out.push_back(1);
  }
  ctx.set_output(0, x->dtype, std::move(out));
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
    if (ctx.node.attr_int("noop_with_empty_axes", 0) != 0) {
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
    if (mask[i]) n = count_mul(n, dims[i]);
    else if (first_red >= 0 && int(i) > last_red) inner = count_mul(inner, dims[i]);
    else outer = count_mul(outer, dims[i]);
  }
  if (!contiguous) {
    size_t np = 0;
    for (size_t i = 0; i < rank; ++i) if (!mask[i]) p.perm[np++] = int64_t(i);
    for (size_t i = 0; i < rank; ++i) if (mask[i]) p.perm[np++] = int64_t(i);
    p.gather = true;
    p.rank = rank;
    for (size_t i = 0; i < rank; ++i) p.dims[i] = dims[i];
    outer = 1;
    for (size_t i = 0; i < rank; ++i) if (!mask[i]) outer = count_mul(outer, dims[i]);
    inner = 1;
  }
  p.outer = outer;
  p.n = n;
  p.inner = inner;
  out.work = count_mul(outer, inner);
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

namespace {

// What both element types start with: with noop_with_empty_axes the copy of outputs [b, e) (true:
// done); else the elements of outputs [b, e), x itself or, when the axes are not adjacent
// (inner == 1 then), rows b..e of the transposed copy in scratch (*src).
template <typename T>
bool reduce_source(const KernelContext& k, const ReduceParams& p, const T** src) {
  const T* x = k.in(0).as<const T>();
  if (p.noop) {
    std::copy(x + k.begin, x + k.end, k.out(0).as<T>() + k.begin);
    return true;
  }
  *src = x;
  if (p.gather) {
    transpose_copy_range(x, p.dims, p.rank, p.perm, sizeof(T), k.scratch, k.begin * p.n, k.end * p.n);
    *src = static_cast<const T*>(k.scratch);
  }
  return false;
}

// f64 input: every kind in element order, accumulated in f64 (one order in both modes, so Exact
// holds), exp and log the library's own f64 forms.
template <ReduceKind Kind>
Status reduce_f64(const KernelContext& k, const ReduceParams& p) {
  const double* src = nullptr;
  if (reduce_source(k, p, &src)) return Status::ok();
  double* y = k.out(0).as<double>();
  const int64_t b = k.begin, e = k.end, n = p.n, inner = p.inner;
  for (int64_t q = b; q < e; ++q) {
    const int64_t o = q / inner, i = q % inner;
    auto at = [&](int64_t j) { return src[(o * n + j) * inner + i]; };
    double r = 0.0;
    if (Kind == ReduceKind::Max || Kind == ReduceKind::Min) {
      r = Kind == ReduceKind::Max ? -INFINITY : INFINITY;
      for (int64_t j = 0; j < n && !std::isnan(r); ++j) {
        const double v = at(j);
        if ((Kind == ReduceKind::Max ? v > r : v < r) || std::isnan(v)) r = v;
      }
    } else if (Kind == ReduceKind::Prod) {
      r = 1.0;
      for (int64_t j = 0; j < n; ++j) r = r * at(j);
    } else if (Kind == ReduceKind::LogSumExp) {
      // Max-shifted, as the f32 kernel: log(sum exp(x - m)) + m.
      double m = -INFINITY;
      for (int64_t j = 0; j < n; ++j) m = std::fmax(m, at(j));
      const double shift = std::isinf(m) ? 0.0 : m;
      for (int64_t j = 0; j < n; ++j) r = r + kernels::exp_f64(at(j) - shift);
      r = std::isinf(m) ? (m > 0 ? m : kernels::log_f64(r)) : kernels::log_f64(r) + m;
    } else {
      for (int64_t j = 0; j < n; ++j) {
        const double v = at(j);
        r = r + (Kind == ReduceKind::L1 ? std::fabs(v) : Kind == ReduceKind::L2 || Kind == ReduceKind::SumSquare ? v * v : v);
      }
      if (Kind == ReduceKind::Mean) r = r / double(n);
      if (Kind == ReduceKind::L2) r = std::sqrt(r);
      if (Kind == ReduceKind::LogSum) r = kernels::log_f64(r);
    }
    y[q] = r;
  }
  return Status::ok();
}

}  // namespace

template <ReduceKind Kind>
Status reduce_kernel(const KernelContext& k) {
  const ReduceParams& p = k.params<ReduceParams>();
  if (k.in(0).dtype == DType::f64) return reduce_f64<Kind>(k, p);
  const float* src = nullptr;
  if (reduce_source(k, p, &src)) return Status::ok();
  float* y = k.out(0).as<float>();
  const int64_t b = k.begin, e = k.end, n = p.n, inner = p.inner;
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

namespace {

// ---- CumSum ----

Status infer_cumsum(InferContext& ctx) {
  const ValueDesc* x = ctx.input(0);
  const ValueDesc* axis = ctx.input(1);
  if (!x || !axis) return ctx.error(ErrorKind::InvalidArgument, "needs x and axis");
  if (x->dtype == DType::f16 || x->dtype == DType::boolean || x->dtype == DType::i8 || x->dtype == DType::u8)
    return ctx.error(ErrorKind::DTypeMismatch, msg("x must be f32, f64, i64, i32, i16, u64, u32 or u16, got ", dtype_name(x->dtype)));
  if ((axis->dtype != DType::i64 && axis->dtype != DType::i32) || axis->numel() != 1)
    return ctx.error(ErrorKind::InvalidArgument, msg("axis must be an i64 or i32 scalar, got ", dtype_name(axis->dtype), " ",
                                                     shape_str(axis->shape)));
  if (x->shape.empty()) return ctx.error(ErrorKind::InvalidArgument, "x must have rank >= 1");
  if (axis->data) {
    const int64_t a = axis->dtype == DType::i64 ? *static_cast<const int64_t*>(axis->data) : *static_cast<const int32_t*>(axis->data);
    int64_t norm = 0;
    if (!normalize_axis(a, int64_t(x->shape.size()), &norm))
      return ctx.error(ErrorKind::InvalidArgument, msg("axis ", a, " is out of range for ", shape_str(x->shape)));
  }
  ctx.set_output(0, x->dtype, x->shape);
  return Status::ok();
}

// Integers add in their unsigned counterpart so overflow wraps (defined) instead of being
// undefined behaviour; floats add in their own precision.
template <typename T> struct SumType { using type = T; };
template <> struct SumType<int16_t> { using type = uint16_t; };
template <> struct SumType<int32_t> { using type = uint32_t; };
template <> struct SumType<int64_t> { using type = uint64_t; };

// CumSum's record. Work: the outer * inner independent lines along the axis when the axis is
// known when planning; else one unit, the axis read from its tensor while running.
struct CumSumParams {
  bool exclusive = false, reverse = false;
  bool axis_known = false;
  int64_t axis = 0;  // when axis_known
};

int64_t lines_of(const int64_t* dims, size_t rank, int64_t axis, int64_t* inner) {
  const AxisSplit s = split_at_axis(dims, rank, size_t(axis));
  *inner = s.inner;
  return s.outer * s.inner;
}

Status prepare_cumsum(const InferContext& ctx, Prepared& out) {
  CumSumParams& p = out.record<CumSumParams>();
  p.exclusive = ctx.node.attr_int("exclusive", 0) != 0;
  p.reverse = ctx.node.attr_int("reverse", 0) != 0;
  const ValueDesc& x = *ctx.input(0);
  const ValueDesc& a = *ctx.input(1);
  if (a.data) {
    const int64_t v = a.dtype == DType::i64 ? *static_cast<const int64_t*>(a.data) : *static_cast<const int32_t*>(a.data);
    p.axis_known = normalize_axis(v, int64_t(x.shape.size()), &p.axis);  // checked by infer
    int64_t inner;
    out.work = lines_of(x.shape.data(), x.shape.size(), p.axis, &inner);
  }
  return Status::ok();
}

// Lines [begin, end) of X as [outer, n, inner] around the axis.
template <typename T>
void cumsum_typed(const KernelContext& k, int64_t axis, int64_t begin, int64_t end) {
  using A = typename SumType<T>::type;
  const TensorArg& X = k.in(0);
  const CumSumParams& p = k.params<CumSumParams>();
  const bool exclusive = p.exclusive;
  const bool reverse = p.reverse;
  int64_t inner;
  lines_of(X.dims, X.rank, axis, &inner);
  const int64_t n = X.dims[axis];
  const T* x = X.as<const T>();
  T* y = k.out(0).as<T>();
  for (int64_t line = begin; line < end; ++line) {
    const int64_t o = line / inner, i = line % inner;
    A acc = A(0);
    for (int64_t s = 0; s < n; ++s) {
      const int64_t j = reverse ? n - 1 - s : s;
      const int64_t at = (o * n + j) * inner + i;
      if (exclusive) {
        y[at] = T(acc);
        acc = A(acc + A(x[at]));
      } else {
        acc = A(acc + A(x[at]));
        y[at] = T(acc);
      }
    }
  }
}

Status cumsum_kernel(const KernelContext& k) {
  const CumSumParams& p = k.params<CumSumParams>();
  int64_t axis = p.axis, begin = k.begin, end = k.end;
  if (!p.axis_known) {
    const TensorArg& A = k.in(1);
    const int64_t a = A.dtype == DType::i64 ? *A.as<const int64_t>() : *A.as<const int32_t>();
    if (!normalize_axis(a, int64_t(k.in(0).rank), &axis))
      return k.error(ErrorKind::InvalidArgument, msg("axis ", a, " is out of range for rank ", k.in(0).rank));
    int64_t inner;
    begin = 0;
    end = lines_of(k.in(0).dims, k.in(0).rank, axis, &inner);
  }
  switch (k.in(0).dtype) {
    case DType::f32: cumsum_typed<float>(k, axis, begin, end); break;
    case DType::i64: cumsum_typed<int64_t>(k, axis, begin, end); break;
    case DType::i32: cumsum_typed<int32_t>(k, axis, begin, end); break;
    case DType::f64: cumsum_typed<double>(k, axis, begin, end); break;
    case DType::i16: cumsum_typed<int16_t>(k, axis, begin, end); break;
    case DType::u64: cumsum_typed<uint64_t>(k, axis, begin, end); break;
    case DType::u32: cumsum_typed<uint32_t>(k, axis, begin, end); break;
    case DType::u16: cumsum_typed<uint16_t>(k, axis, begin, end); break;
    default: return k.error(ErrorKind::DTypeMismatch, "unsupported dtype");
  }
  return Status::ok();
}

constexpr AttrSpec kCumSumAttrs[] = {{"exclusive", AttrKind::Int}, {"reverse", AttrKind::Int}};

// ReduceSum's `axes` is an input since opset 13; ReduceMean's and ReduceMax's since 18.
constexpr OpDef kOps[] = {
    reduction<ReduceKind::Sum>("ReduceSum", 13)
        .doc("f32 f64 (f64 summed in element order); axes input (or attribute), keepdims, noop_with_empty_axes; exact: fixed-order sum").with_flags(kOpF16InF32),
    reduction<ReduceKind::Mean>("ReduceMean", 18)
        .doc("f32 f64; as ReduceSum, then one division by the count").with_flags(kOpF16InF32),
    reduction<ReduceKind::Max>("ReduceMax", 18).doc("f32 f64; as ReduceSum; NaN propagates").with_flags(kOpF16InF32),
    reduction<ReduceKind::Min>("ReduceMin", 18).doc("f32 f64; as ReduceSum; NaN propagates").with_flags(kOpF16InF32),
    reduction<ReduceKind::Prod>("ReduceProd", 18).doc("f32 f64; as ReduceSum; product in element order"),
    reduction<ReduceKind::L1>("ReduceL1", 18).doc("f32 f64; as ReduceSum, of |x|"),
    reduction<ReduceKind::L2>("ReduceL2", 18).doc("f32 f64; sqrt of the sum of squares"),
    reduction<ReduceKind::SumSquare>("ReduceSumSquare", 18).doc("f32 f64; as ReduceSum, of x*x"),
    reduction<ReduceKind::LogSum>("ReduceLogSum", 18).doc("f32 f64; library log of the sum"),
    reduction<ReduceKind::LogSumExp>("ReduceLogSumExp", 18)
        .doc("f32 f64; max-shifted, library exp and log"),
    op("CumSum").upgrades_from(11).inputs(2).attributes(kCumSumAttrs).shapes(infer_cumsum).prepared(prepare_cumsum).kernel(cumsum_kernel)
        .doc("f32 f64 i64 i32 i16 u64 u32 u16 (integers wrap); axis input (scalar), exclusive, reverse; added in element order"),
};

}  // namespace

}  // namespace om::graph::ops

// The family's operators, one symbol each (onemodel/op_list.h).
#define OM_REDUCTIONS_OPS(X) \
  X(ReduceSum) X(ReduceMean) X(ReduceMax) X(ReduceMin) X(ReduceProd) X(ReduceL1) X(ReduceL2) \
  X(ReduceSumSquare) X(ReduceLogSum) X(ReduceLogSumExp) X(CumSum)
OM_OP_FAMILY_TABLE(reductions, OM_REDUCTIONS_OPS)
