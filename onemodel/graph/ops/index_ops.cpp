// Indexing and layout operators: Slice (starts/ends/axes/steps inputs, negative steps,
// clamping), Gather (any axis, scalar or tensor indices, negative indices), Concat and Cast.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "onemodel/core/convert.h"
#include "onemodel/core/dtype_visit.h"
#include "onemodel/core/shape.h"
#include "onemodel/graph/ops/op_util.h"
#include "onemodel/graph/ops/strided_view.h"

namespace om::graph::ops {
namespace {

int64_t read_int(const void* data, DType dt, int64_t i) {
  return dt == DType::i64 ? static_cast<const int64_t*>(data)[i] : static_cast<const int32_t*>(data)[i];
}

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

// ---- Gather ----

Status infer_gather(InferContext& ctx) {
  const ValueDesc* x = ctx.input(0);
  const ValueDesc* ind = ctx.input(1);
  if (!x || !ind) return ctx.error(ErrorKind::InvalidArgument, "needs data and indices");
  if (ind->dtype != DType::i64 && ind->dtype != DType::i32)
    return ctx.error(ErrorKind::DTypeMismatch, msg("indices must be i64 or i32, got ", dtype_name(ind->dtype)));
  int64_t axis;
  if (!normalize_axis(attr_int(ctx.node, "axis", 0), int64_t(x->shape.size()), &axis))
    return ctx.error(ErrorKind::InvalidArgument, msg("axis ", attr_int(ctx.node, "axis", 0), " is out of range for ", shape_str(x->shape)));
  if (ind->data) {  // known indices: check them now, so a bad constant fails at creation
    const int64_t d = x->shape[size_t(axis)];
    for (int64_t i = 0; i < ind->numel(); ++i) {
      const int64_t v = read_int(ind->data, ind->dtype, i);
      if (v < -d || v >= d)
        return ctx.error(ErrorKind::InvalidArgument, msg("index ", v, " is out of range for axis ", axis, " of size ", d));
    }
  }
  std::vector<int64_t> out(x->shape.begin(), x->shape.begin() + axis);
  out.insert(out.end(), ind->shape.begin(), ind->shape.end());
  out.insert(out.end(), x->shape.begin() + axis + 1, x->shape.end());
  ctx.set_output(0, x->dtype, std::move(out));
  return Status::ok();
}

// Gather's record. Work: the output rows, one per (outer index, index element): each is one
// row of X's axes after `axis`.
struct GatherParams {
  int64_t axis = 0;
  int64_t d = 0;    // the gathered axis' size
  int64_t row = 0;  // bytes of one row
};

Status prepare_gather(const InferContext& ctx, Prepared& out) {
  const ValueDesc& x = *ctx.input(0);
  GatherParams& p = out.record<GatherParams>();
  normalize_axis(attr_int(ctx.node, "axis", 0), int64_t(x.shape.size()), &p.axis);  // checked by infer
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < p.axis; ++i) outer *= x.shape[size_t(i)];
  for (size_t i = size_t(p.axis) + 1; i < x.shape.size(); ++i) inner *= x.shape[i];
  p.d = x.shape[size_t(p.axis)];
  p.row = inner * int64_t(dtype_size(x.dtype));
  out.work = outer * ctx.input(1)->numel();
  return Status::ok();
}

// Every call checks all the indices before writing, as a whole-range call does.
Status gather_kernel(const KernelContext& k) {
  const GatherParams& p = k.params<GatherParams>();
  const TensorArg& X = k.in(0);
  const TensorArg& I = k.in(1);
  const int64_t d = p.d;
  const size_t row = size_t(p.row);
  const uint8_t* x = X.as<const uint8_t>();
  uint8_t* y = k.out(0).as<uint8_t>();
  for (int64_t j = 0; j < I.numel; ++j) {
    const int64_t v = read_int(I.data, I.dtype, j);
    if (v < -d || v >= d)
      return k.error(ErrorKind::InvalidArgument, msg("index ", v, " (element ", j, " of the indices) is out of range for axis ", p.axis,
                                                     " of size ", d));
  }
  for (int64_t r = k.begin; r < k.end; ++r) {
    const int64_t o = r / I.numel, j = r % I.numel;
    int64_t v = read_int(I.data, I.dtype, j);
    if (v < 0) v += d;
    if (row) std::memcpy(y + size_t(r) * row, x + size_t(o * d + v) * row, row);
  }
  return Status::ok();
}

// ---- Concat ----

Status infer_concat(InferContext& ctx) {
  if (ctx.num_inputs() == 0 || !ctx.input(0)) return ctx.error(ErrorKind::InvalidArgument, "needs at least one input");
  const ValueDesc* first = ctx.input(0);
  int64_t axis;
  if (!normalize_axis(attr_int(ctx.node, "axis", 0), int64_t(first->shape.size()), &axis))
    return ctx.error(ErrorKind::InvalidArgument, msg("axis ", attr_int(ctx.node, "axis", 0), " is out of range for ", shape_str(first->shape)));
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
  normalize_axis(attr_int(ctx.node, "axis", 0), int64_t(y.shape.size()), &p.axis);  // checked by infer
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < p.axis; ++i) outer *= y.shape[size_t(i)];
  for (size_t i = size_t(p.axis) + 1; i < y.shape.size(); ++i) inner *= y.shape[i];
  p.inner = inner * int64_t(dtype_size(y.dtype));
  out.work = y.numel() == 0 ? 0 : outer;
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
  OM_TRY(dtype_code_attr(ctx, "to", attr_int(ctx.node, "to", -1), &to));
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
  if constexpr (std::is_same<S, half>::value) {
    return convert_elem<D>(half_to_float(x));
  } else if constexpr (std::is_same<D, bool>::value) {
    return x != S(0);
  } else if constexpr (std::is_same<D, half>::value) {
    // Integers beyond f16's range (65504) become inf either way, and smaller ones are exact in f32.
    if constexpr (std::is_same<S, double>::value) return float_to_half(round_to_odd_f32(x));
    else return float_to_half(static_cast<float>(x));
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

constexpr AttrSpec kAxisAttrs[] = {{"axis", AttrKind::Int}};
constexpr AttrSpec kCastAttrs[] = {{"to", AttrKind::Int}, {"saturate", AttrKind::Int}};

constexpr OpDef kOps[] = {
    op("Slice").upgrades_from(1).plan_time_inputs_mask(0x1eu).attr_became_input("starts", 1, 10).attr_became_input("ends", 2, 10).attr_became_input("axes", 3, 10).inputs(3, 5).shapes(infer_slice)
        .prepared(prepare_slice).kernel(strided_copy_kernel)
        .doc("any dtype; starts/ends/axes/steps known at plan time; negative steps, clamping"),
    op("Gather").upgrades_from(1).inputs(2).attributes(kAxisAttrs).shapes(infer_gather).prepared(prepare_gather).kernel(gather_kernel)
        .doc("any dtype, axis; i64/i32 indices of any rank, negative indices; out of range is an error"),
    op("Concat").upgrades_from(4).inputs(1, 64).attributes(kAxisAttrs).shapes(infer_concat).prepared(prepare_concat).kernel(concat_kernel)
        .doc("any dtype, axis"),
    op("Cast").upgrades_from(6).inputs(1).attributes(kCastAttrs).shapes(infer_cast)
        .prepared(prepare_elements).kernel(cast_kernel)
        .doc("f32 f64 f16 i64 i32 i16 i8 u64 u32 u16 u8 bool, all pairs; float to int truncates, NaN/inf/beyond [-2^63, 2^64) give 0, else wraps modulo 2^width"),
    op("CastLike").since_opset(15).inputs(2).attributes(kCastAttrs).shapes(infer_cast_like)
        .prepared(prepare_elements).kernel(cast_kernel)
        .doc("as Cast, to the dtype of input 1"),
};

}  // namespace

OpTable index_ops() { return table_of(kOps); }

}  // namespace om::graph::ops
