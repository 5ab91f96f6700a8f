// Indexing graph operators: Slice (starts/ends/axes/steps inputs, negative steps, clamping),
// Concat, Cast and CastLike, OneHot, EyeLike, and the two whose output shape depends on input
// values — Compress (the condition) and NonZero (the input) — which run when those values are
// known when planning (constants, or value inputs: docs/memory.md). Copies and one conversion or
// operation per element: exact by nature.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "onemodel/core/convert.h"
#include "onemodel/core/dtype_visit.h"
#include "onemodel/core/shape.h"
#include "onemodel/graph/ops/op_util.h"
#include "onemodel/graph/passes/pass.h"
#include "onemodel/graph/ops/strided_view.h"

namespace om::graph::ops {
namespace {

// ---- Slice ----

struct SliceParams {
  int64_t start[kMaxRank], step[kMaxRank], size[kMaxRank];
};

struct IntOperand {
  const void* data = nullptr;
  DType dtype = DType::i64;
  int64_t n = 0;
};

// Fills p for every axis of `dims` (untouched axes: start 0, step 1, full size). Returns an
// error message (empty when fine); used by infer and prepare (the operands are known then).
const char* slice_params(const int64_t* dims, size_t rank, IntOperand starts, IntOperand ends, IntOperand axes, IntOperand steps,
                         SliceParams* p) {
  for (size_t i = 0; i < rank; ++i) p->start[i] = 0, p->step[i] = 1, p->size[i] = dims[i];
  if (starts.n != ends.n) return "starts and ends have different lengths";
  if (axes.data && axes.n != starts.n) return "axes and starts have different lengths";
  if (steps.data && steps.n != starts.n) return "steps and starts have different lengths";
  bool seen[kMaxRank] = {};
  for (int64_t j = 0; j < starts.n; ++j) {
    int64_t ax = axes.data ? read_int(axes.data, axes.dtype, j) : j;
    if (!normalize_axis(ax, int64_t(rank), &ax)) return "an axis is out of range";
    if (seen[ax]) return "an axis appears twice";
    seen[ax] = true;
    const int64_t d = dims[ax];
    const int64_t step = steps.data ? read_int(steps.data, steps.dtype, j) : 1;
    if (step == 0) return "a step is 0";
    int64_t s = read_int(starts.data, starts.dtype, j), e = read_int(ends.data, ends.dtype, j);
    if (s < 0) s += d;
    if (e < 0) e += d;
    // ONNX Slice clamping. The count is 1 + (span - 1) / |step| over unsigned magnitudes, so a
    // step of INT64_MAX or INT64_MIN neither overflows nor yields a negative size.
    int64_t size;
    if (step > 0) {
      s = std::min(std::max<int64_t>(s, 0), d);
      e = std::min(std::max<int64_t>(e, 0), d);
      size = e > s ? int64_t(1 + uint64_t(e - s - 1) / uint64_t(step)) : 0;
    } else {
      s = std::min(std::max<int64_t>(s, 0), d - 1);
      e = std::min(std::max<int64_t>(e, -1), d - 1);
      size = s > e ? int64_t(1 + uint64_t(s - e - 1) / (uint64_t(0) - uint64_t(step))) : 0;
    }
    p->start[ax] = s;
    p->step[ax] = size > 1 ? step : 1;  // one element: the step is never applied (and step * stride could overflow)
    p->size[ax] = size;
  }
  return "";
}

IntOperand operand_desc(const ValueDesc* v) {
  IntOperand o;
  if (v) o.data = v->data, o.dtype = v->dtype, o.n = v->numel();
  return o;
}

Status infer_slice(InferContext& ctx) {
  const ValueDesc* x = ctx.input(0);
  if (!x) return ctx.error(ErrorKind::InvalidArgument, "data input is required");
  if (x->shape.size() > kMaxRank) return ctx.error(ErrorKind::Unsupported, msg("rank ", x->shape.size(), " exceeds ", kMaxRank));
  std::vector<int64_t> tmp;
  for (size_t i = 1; i < 5; ++i)
    if (ctx.input(i) || i < 3) OM_TRY(const_ints(ctx, i, &tmp));  // checks dtype and plan-time availability
  SliceParams p;
  const char* err = slice_params(x->shape.data(), x->shape.size(), operand_desc(ctx.input(1)), operand_desc(ctx.input(2)),
                                 operand_desc(ctx.input(3)), operand_desc(ctx.input(4)), &p);
  if (*err) return ctx.error(ErrorKind::InvalidArgument, msg(err, " (data ", shape_str(x->shape), ")"));
  ctx.set_output(0, x->dtype, std::vector<int64_t>(p.size, p.size + x->shape.size()));
  return Status::ok();
}

// Slice's record is the view of X it copies (strided_view.h). Work: the output rows.
Status prepare_slice(const InferContext& ctx, Prepared& out) {
  const ValueDesc& x = *ctx.input(0);
  const size_t rank = x.shape.size();
  SliceParams p;
  const char* err = slice_params(x.shape.data(), rank, operand_desc(ctx.input(1)), operand_desc(ctx.input(2)),
                                 operand_desc(ctx.input(3)), operand_desc(ctx.input(4)), &p);
  if (*err) return ctx.error(ErrorKind::InvalidArgument, err);
  int64_t xs[kMaxRank];
  contiguous_strides(x.shape.data(), rank, xs);
  StridedView v;
  v.rank = uint32_t(rank);
  v.elem = uint32_t(dtype_size(x.dtype));
  for (size_t i = 0; i < rank; ++i) {
    v.size[i] = p.size[i];
    v.base += p.start[i] * xs[i];
    v.stride[i] = p.step[i] * xs[i];
  }
  prepare_view(v, out);
  return Status::ok();
}

// ---- Concat ----

Status infer_concat(InferContext& ctx) {
  if (ctx.num_inputs() == 0 || !ctx.input(0)) return ctx.error(ErrorKind::InvalidArgument, "needs at least one input");
  const ValueDesc* first = ctx.input(0);
  int64_t axis;
  if (!normalize_axis(ctx.node.attr_int("axis", 0), int64_t(first->shape.size()), &axis))
    return ctx.error(ErrorKind::InvalidArgument, msg("axis ", ctx.node.attr_int("axis", 0), " is out of range for ", shape_str(first->shape)));
  std::vector<int64_t> out = first->shape;
  out[size_t(axis)] = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const ValueDesc* v = ctx.input(i);
    if (!v) return ctx.error(ErrorKind::InvalidArgument, msg("input ", i, " is missing"));
    if (v->dtype != first->dtype)
      return ctx.error(ErrorKind::DTypeMismatch, msg("input ", i, " has dtype ", dtype_name(v->dtype), ", input 0 has ", dtype_name(first->dtype)));
    bool ok = v->shape.size() == first->shape.size();
    for (size_t d = 0; ok && d < v->shape.size(); ++d) ok = int64_t(d) == axis || v->shape[d] == first->shape[d];
    if (!ok)
      return ctx.error(ErrorKind::ShapeMismatch, msg("input ", i, " ", shape_str(v->shape), " does not match input 0 ", shape_str(first->shape),
                                                     " outside axis ", axis));
    out[size_t(axis)] += v->shape[size_t(axis)];  // each term <= kMaxNumel (checked inputs)
    if (out[size_t(axis)] > kMaxNumel) return check_shape(msg("Concat node '", ctx.node.name, "'"), out);
  }
  ctx.set_output(0, first->dtype, std::move(out));
  return Status::ok();
}

// Concat's record. Work: the output's outer rows (one per index of the axes before `axis`),
// each the inputs' rows side by side.
struct ConcatParams {
  int64_t axis = 0;
  int64_t inner = 0;  // bytes per step of the axis
};

Status prepare_concat(const InferContext& ctx, Prepared& out) {
  const ValueDesc& y = ctx.outputs[0];
  ConcatParams& p = out.record<ConcatParams>();
  p.axis = checked_axis(ctx, 0, int64_t(y.shape.size()));
  const AxisSplit s = split_at_axis(y.shape, p.axis);
  p.inner = s.inner * int64_t(dtype_size(y.dtype));
  out.work = y.numel() == 0 ? 0 : s.outer;
  return Status::ok();
}

Status concat_kernel(const KernelContext& k) {
  const ConcatParams& p = k.params<ConcatParams>();
  const TensorArg& Y = k.out(0);
  const int64_t axis = p.axis;
  const size_t out_row = size_t(Y.dims[axis] * p.inner);
  for (int64_t o = k.begin; o < k.end; ++o) {
    size_t col = 0;
    for (size_t i = 0; i < k.num_inputs; ++i) {
      const TensorArg& X = k.in(i);
      const size_t row = size_t(X.dims[axis] * p.inner);
      if (row) std::memcpy(Y.as<uint8_t>() + size_t(o) * out_row + col, X.as<const uint8_t>() + size_t(o) * row, row);
      col += row;
    }
  }
  return Status::ok();
}

// ---- Cast ----

Status infer_cast(InferContext& ctx) {
  if (!ctx.input(0)) return ctx.error(ErrorKind::InvalidArgument, "input is required");
  DType to;
  OM_TRY(dtype_code_attr(ctx, "to", ctx.node.attr_int("to", -1), &to));
  ctx.set_output(0, to, ctx.input(0)->shape);
  return Status::ok();
}

// f64 to f32 rounding to odd (truncate, then set the last bit when inexact). Rounding that
// to f16 afterwards gives the same half as one direct rounding of the double: f32 keeps more
// than two bits beyond f16's precision, so no double-rounding error is possible.
float round_to_odd_f32(double d) {
  const float f = static_cast<float>(d);
  if (d != d || double(f) == d) return f;
  uint32_t b;
  std::memcpy(&b, &f, 4);
  if (std::fabs(double(f)) > std::fabs(d)) --b;  // rounded away from zero: step back toward it
  b |= 1u;
  float r;
  std::memcpy(&r, &b, 4);
  return r;
}

// One element from S to D with the semantics documented at the Cast row of docs/operators.md.
template <typename D, typename S>
D convert_elem(S x) {
  if constexpr (is_float16_storage<S>::value) {
    return convert_elem<D>(storage_to_float(x));
  } else if constexpr (std::is_same<D, bool>::value) {
    return x != S(0);
  } else if constexpr (is_float16_storage<D>::value) {
    // Integers beyond f16's range (65504) become inf either way, and smaller ones are exact in f32
    // (bf16's range is f32's; a large integer rounds once, to f32, before the rounding to bf16 —
    // f32 keeps 16 more bits, so no double-rounding error but for integers above 2^24).
    if constexpr (std::is_same<S, double>::value) return float_to_storage<D>(round_to_odd_f32(x));
    else return float_to_storage<D>(static_cast<float>(x));
  } else if constexpr (std::is_floating_point<S>::value && std::is_integral<D>::value) {
    return float_to_int<D>(double(x));
  } else {
    return static_cast<D>(x);
  }
}

// Work: the elements (prepare_elements).
Status cast_kernel(const KernelContext& k) {
  const TensorArg& X = k.in(0);
  const DType to = k.out(0).dtype;
  const int64_t b = k.begin, n = k.end - k.begin;
  if (X.dtype == to) {
    const size_t es = dtype_size(to);
    std::memcpy(static_cast<uint8_t*>(k.out(0).data) + size_t(b) * es, static_cast<const uint8_t*>(X.data) + size_t(b) * es, size_t(n) * es);
    return Status::ok();
  }
  visit_dtype(X.dtype, [&](auto src) {
    using S = typename decltype(src)::type;
    visit_dtype(to, [&](auto dst) {
      using D = typename decltype(dst)::type;
      const S* x = static_cast<const S*>(X.data) + b;
      D* out = static_cast<D*>(k.out(0).data) + b;
      for (int64_t i = 0; i < n; ++i) out[i] = convert_elem<D>(x[i]);
    });
  });
  return Status::ok();
}

// CastLike: Cast to the dtype of input 1 (only its dtype is read).
Status infer_cast_like(InferContext& ctx) {
  if (!ctx.input(0) || !ctx.input(1)) return ctx.error(ErrorKind::InvalidArgument, "needs input and target_type");
  ctx.set_output(0, ctx.input(1)->dtype, ctx.input(0)->shape);
  return Status::ok();
}

// ---- OneHot(indices, depth, values[off, on]) ----

Status infer_one_hot(InferContext& ctx) {
  for (size_t i = 0; i < 3; ++i) OM_TRY(need_input(ctx, i));
  const ValueDesc* depth = ctx.input(1);
  if (depth->numel() != 1) return ctx.error(ErrorKind::InvalidArgument, "depth must hold one value");
  if (!depth->data) return ctx.error(ErrorKind::Unsupported, "depth must be known when the session plans (it decides the output shape)");
  if (ctx.input(2)->numel() != 2) return ctx.error(ErrorKind::InvalidArgument, "values must be [off_value, on_value]");
  int64_t d = 0;
  if (!index_at(depth->data, depth->dtype, 0, &d))
    return ctx.error(ErrorKind::InvalidArgument, msg("depth has no integer value (NaN, infinite or beyond int64); give a depth >= 1"));
  if (d < 1 || d > kMaxNumel) return ctx.error(ErrorKind::InvalidArgument, msg("depth must be in [1, 2^48], got ", d));
  std::vector<int64_t> shape = ctx.input(0)->shape;
  int64_t axis = 0;
  if (!normalize_axis(ctx.node.attr_int("axis", -1), int64_t(shape.size()) + 1, &axis))
    return ctx.error(ErrorKind::InvalidArgument, "axis is out of range");
  shape.insert(shape.begin() + axis, d);
  int64_t n = 0;
  OM_TRY(check_shape(ctx.node.label() + " output", shape, &n));
  ctx.set_output(0, ctx.input(2)->dtype, std::move(shape));
  return Status::ok();
}

// OneHot's record. Work: the output rows (o, d) over the axes before the new one and the
// depth, each `inner` elements.
struct OneHotParams {
  int64_t depth = 0, inner = 0;
};

Status prepare_one_hot(const InferContext& ctx, Prepared& out) {
  // The output is the indices' shape with the depth inserted at the axis.
  const std::vector<int64_t>& ys = ctx.outputs[0].shape;
  const AxisSplit s = split_at_axis(ys, checked_axis(ctx, -1, int64_t(ys.size())));
  OneHotParams& p = out.record<OneHotParams>();
  p.depth = s.size;
  p.inner = s.inner;
  out.work = p.inner == 0 ? 0 : s.outer * p.depth;
  return Status::ok();
}

Status one_hot_kernel(const KernelContext& k) {
  const OneHotParams& p = k.params<OneHotParams>();
  const TensorArg& I = k.in(0);
  const TensorArg& Y = k.out(0);
  const int64_t depth = p.depth, inner = p.inner;
  const size_t es = dtype_size(Y.dtype);
  const uint8_t* off_v = static_cast<const uint8_t*>(k.in(2).data);
  const uint8_t* on_v = off_v + es;
  uint8_t* y = static_cast<uint8_t*>(Y.data);
  // Indices outside [-depth, depth) give a row of off values (ONNX); one without an integer
  // (NaN, infinite, beyond int64) is refused before anything is written (each range checks
  // every index, so the outcome does not depend on the split).
  for (int64_t e = 0; e < I.numel; ++e) {
    int64_t v = 0;
    if (!index_at(I.data, I.dtype, e, &v))
      return k.error(ErrorKind::InvalidArgument, msg("indices element ", e, " has no integer value (NaN, infinite or beyond ",
                                                     "int64); give finite indices in [-depth, depth)"));
  }
  for (int64_t r = k.begin; r < k.end; ++r) {
    const int64_t o = r / depth, d = r % depth;
    for (int64_t i = 0; i < inner; ++i) {
      int64_t v = 0;
      index_at(I.data, I.dtype, o * inner + i, &v);
      if (v < 0 && v >= -depth) v += depth;
      std::memcpy(y + size_t(r * inner + i) * es, v == d ? on_v : off_v, es);
    }
  }
  return Status::ok();
}

// ---- EyeLike ----

Status infer_eye_like(InferContext& ctx) {
  OM_TRY(need_input(ctx, 0));
  if (ctx.input(0)->shape.size() != 2) return ctx.error(ErrorKind::InvalidArgument, "input must be 2-D");
  DType dt = ctx.input(0)->dtype;
  if (const Attribute* a = ctx.node.attr("dtype")) OM_TRY(dtype_code_attr(ctx, "dtype", a->i, &dt));
  ctx.set_output(0, dt, ctx.input(0)->shape);
  return Status::ok();
}

// EyeLike's record: the diagonal k. Work: the output rows.
struct EyeLikeParams {
  int64_t diag = 0;
};

Status prepare_eye_like(const InferContext& ctx, Prepared& out) {
  out.record<EyeLikeParams>().diag = ctx.node.attr_int("k", 0);
  out.work = ctx.outputs[0].numel() == 0 ? 0 : ctx.outputs[0].shape[0];
  return Status::ok();
}

Status eye_like_kernel(const KernelContext& k) {
  const TensorArg& Y = k.out(0);
  const int64_t diag = k.params<EyeLikeParams>().diag;
  const size_t es = dtype_size(Y.dtype), row = size_t(Y.dims[1]) * es;
  uint8_t* y = static_cast<uint8_t*>(Y.data);
  std::memset(y + size_t(k.begin) * row, 0, size_t(k.end - k.begin) * row);
  uint8_t one[8] = {};
  visit_dtype(Y.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T v;
    if constexpr (is_float16_storage<T>::value) v = float_to_storage<T>(1.0f);
    else v = T(1);
    std::memcpy(one, &v, sizeof(T));
  });
  // Row i holds its one at column i + k: the rows from max(0, -k) to min(rows, cols - k), found
  // without computing i + k for rows it cannot reach (k may be near INT64_MIN or INT64_MAX).
  const int64_t rows = Y.dims[0], cols = Y.dims[1];
  if (diag < cols && diag > -rows) {
    const int64_t first = std::max(k.begin, diag < 0 ? -diag : 0);
    const int64_t last = std::min(k.end, std::min(rows, cols - diag));  // cols - diag > 0 and cannot overflow: diag > -rows
    for (int64_t i = first; i < last; ++i) std::memcpy(y + size_t(i * cols + i + diag) * es, one, es);
  }
  return Status::ok();
}

// ---- Compress / NonZero: shapes from values known when planning ----

Status infer_compress(InferContext& ctx) {
  OM_TRY(need_input(ctx, 0));
  OM_TRY(need_input(ctx, 1));
  const ValueDesc* c = ctx.input(1);
  if (c->dtype != DType::boolean || c->shape.size() != 1) return ctx.error(ErrorKind::InvalidArgument, "condition must be a 1-D bool tensor");
  if (!c->data) return ctx.error(ErrorKind::Unsupported, "condition must be known when the session plans (it decides the output shape)");
  const auto& s = ctx.input(0)->shape;
  const Attribute* a = ctx.node.attr("axis");
  int64_t axis = 0, len = 0;
  if (a && !normalize_axis(a->i, int64_t(s.size()), &axis)) return ctx.error(ErrorKind::InvalidArgument, "axis is out of range");
  int64_t total = 1;
  for (int64_t d : s) total *= d;
  const int64_t limit = a ? s[size_t(axis)] : total;
  if (c->shape[0] > limit) return ctx.error(ErrorKind::ShapeMismatch, "condition is longer than the axis");
  for (int64_t i = 0; i < c->shape[0]; ++i) len += static_cast<const uint8_t*>(c->data)[i] ? 1 : 0;
  std::vector<int64_t> shape = a ? s : std::vector<int64_t>{};
  if (a) shape[size_t(axis)] = len; else shape.push_back(len);
  ctx.set_output(0, ctx.input(0)->dtype, std::move(shape));
  return Status::ok();
}

// Compress's record: X as [outer, n, inner] around the axis (flattened: [1, numel, 1]). Work:
// the outer slices, each `kept` rows of the output.
struct CompressParams {
  int64_t n = 0, inner = 0;  // inner in bytes
  int64_t kept = 0;          // the true conditions among the first n
};

Status prepare_compress(const InferContext& ctx, Prepared& out) {
  const ValueDesc& x = *ctx.input(0);
  const ValueDesc& c = *ctx.input(1);
  const Attribute* a = ctx.node.attr("axis");
  int64_t axis = 0;
  if (a) normalize_axis(a->i, int64_t(x.shape.size()), &axis);  // checked by infer
  const int64_t* dims = x.shape.data();
  CompressParams& p = out.record<CompressParams>();
  p.n = a ? dims[axis] : x.numel();
  p.inner = (a ? dims_product(dims, size_t(axis) + 1, x.shape.size()) : 1) * int64_t(dtype_size(x.dtype));
  for (int64_t j = 0; j < p.n && j < c.numel(); ++j) p.kept += static_cast<const uint8_t*>(c.data)[j] ? 1 : 0;
  out.work = a ? dims_product(dims, 0, size_t(axis)) : 1;
  return Status::ok();
}

Status compress_kernel(const KernelContext& k) {
  const CompressParams& p = k.params<CompressParams>();
  const TensorArg& X = k.in(0);
  const TensorArg& C = k.in(1);
  const int64_t n = p.n, inner = p.inner;
  const uint8_t* x = static_cast<const uint8_t*>(X.data);
  uint8_t* y = static_cast<uint8_t*>(k.out(0).data) + k.begin * p.kept * inner;
  const uint8_t* c = C.as<const uint8_t>();
  for (int64_t o = k.begin; o < k.end; ++o)
    for (int64_t j = 0; j < n && j < C.numel; ++j)
      if (c[j]) {
        std::memcpy(y, x + (o * n + j) * inner, size_t(inner));
        y += inner;
      }
  return Status::ok();
}

Status infer_nonzero(InferContext& ctx) {
  OM_TRY(need_input(ctx, 0));
  const ValueDesc* x = ctx.input(0);
  if (!x->data) return ctx.error(ErrorKind::Unsupported, "the input must be known when the session plans (it decides the output shape)");
  int64_t count = 0;
  const size_t es = dtype_size(x->dtype);
  const uint8_t zero[8] = {};
  for (int64_t i = 0; i < x->numel(); ++i) count += std::memcmp(static_cast<const uint8_t*>(x->data) + size_t(i) * es, zero, es) != 0;
  ctx.set_output(0, DType::i64, {int64_t(x->shape.size()), count});
  return Status::ok();
}

// One work unit (no prepare step): the column of each nonzero element is the count of those
// before it.
Status nonzero_kernel(const KernelContext& k) {
  const TensorArg& X = k.in(0);
  const int64_t count = k.out(0).dims[1];
  const size_t es = dtype_size(X.dtype);
  const uint8_t zero[8] = {};
  int64_t* y = k.out(0).as<int64_t>();
  int64_t idx[kMaxRank] = {};
  int64_t c = 0;
  for (int64_t i = 0; i < X.numel; ++i) {
    if (std::memcmp(static_cast<const uint8_t*>(X.data) + size_t(i) * es, zero, es) != 0 && c < count) {
      for (size_t d = 0; d < X.rank; ++d) y[int64_t(d) * count + c] = idx[d];
      ++c;
    }
    for (size_t d = X.rank; d-- > 0;) {
      if (++idx[d] < X.dims[d]) break;
      idx[d] = 0;
    }
  }
  return Status::ok();
}

constexpr AttrSpec kAxisAttrs[] = {{"axis", AttrKind::Int}};
constexpr AttrSpec kCastAttrs[] = {{"to", AttrKind::Int}, {"saturate", AttrKind::Int}};
constexpr AttrSpec kEyeAttrs[] = {{"dtype", AttrKind::Int}, {"k", AttrKind::Int}};

constexpr OpDef kOps[] = {
    op("Slice").upgrades_from(1).per_item(BatchRule::AxesInput, 3).written_by_passes(writers<passes::merge_qkv_projections>).plan_time_inputs_mask(0x1eu).attr_became_input("starts", 1, 10).attr_became_input("ends", 2, 10).attr_became_input("axes", 3, 10).inputs(3, 5).shapes(infer_slice)
        .prepared(prepare_slice).kernel(strided_copy_kernel)
        .doc("any dtype; starts/ends/axes/steps known at plan time; negative steps, clamping").with_flags(kOpF16InF32),
    op("Concat").upgrades_from(4).per_item(BatchRule::Axis).inputs(1, 64).attributes(kAxisAttrs).shapes(infer_concat).prepared(prepare_concat).kernel(concat_kernel)
        .doc("any dtype, axis").with_flags(kOpF16InF32),
    op("Cast").upgrades_from(6).per_item(BatchRule::Broadcast).written_by_passes(writers<passes::compute_f16_in_f32>).inputs(1).attributes(kCastAttrs).shapes(infer_cast)
        .prepared(prepare_elements).kernel(cast_kernel)
        .doc("f32 f64 f16 i64 i32 i16 i8 u64 u32 u16 u8 bool, all pairs; float to int truncates, NaN/inf/beyond [-2^63, 2^64) give 0, else wraps modulo 2^width"),
    op("CastLike").since_opset(15).inputs(2).attributes(kCastAttrs).shapes(infer_cast_like)
        .prepared(prepare_elements).kernel(cast_kernel)
        .doc("as Cast, to the dtype of input 1"),
    op("OneHot").upgrades_from(9).plan_time_inputs_mask(1u << 1).inputs(3).attributes(kAxisAttrs).shapes(infer_one_hot)
        .prepared(prepare_one_hot).kernel(one_hot_kernel).doc("indices f32 i64 i32; depth known at plan time; values of any dtype; axis"),
    op("EyeLike").upgrades_from(9).inputs(1).attributes(kEyeAttrs).shapes(infer_eye_like)
        .prepared(prepare_eye_like).kernel(eye_like_kernel)
        .doc("2-D, any dtype (input's or the dtype attribute's), k"),
    op("Compress").upgrades_from(9).plan_time_inputs_mask(1u << 1).inputs(2).attributes(kAxisAttrs).shapes(infer_compress)
        .prepared(prepare_compress).kernel(compress_kernel).doc("any dtype; condition known at plan time; axis or flattened"),
    op("NonZero").upgrades_from(9).plan_time_inputs_mask(1u << 0).inputs(1).shapes(infer_nonzero).kernel(nonzero_kernel)
        .doc("any dtype -> i64 [rank, count]; its input known at plan time"),
};

}  // namespace

}  // namespace om::graph::ops

// The family's operators, one symbol each (onemodel/op_list.h).
#define OM_INDEXING_OPS(X) X(Slice) X(Concat) X(Cast) X(CastLike) X(OneHot) X(EyeLike) X(Compress) X(NonZero)
OM_OP_FAMILY_TABLE(indexing, OM_INDEXING_OPS)
