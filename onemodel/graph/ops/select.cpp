// Selection and ordering graph operators: Max and Min (variadic), ArgMax, ArgMin, TopK (Not is
// bitwise.cpp's, LessOrEqual and GreaterOrEqual comparison.cpp's). They
// compute what the eager operators of ops/math.cpp and ops/select.cpp compute (NaN counts as
// the extreme value, ties keep the lower index unless select_last_index), so traced graphs
// agree with eager bit for bit; all are exact by nature.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "onemodel/core/dtype_visit.h"
#include "onemodel/graph/ops/op_util.h"

namespace om::graph::ops {
namespace {

// Max and Min: one or more inputs of one dtype, multidirectional broadcasting.
Status infer_extreme(InferContext& ctx) {
  if (!ctx.input(0)) return ctx.error(ErrorKind::InvalidArgument, "input 0 is required");
  std::vector<const std::vector<int64_t>*> shapes;
  const DType dt = ctx.input(0)->dtype;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const ValueDesc* v = ctx.input(i);
    if (!v) return ctx.error(ErrorKind::InvalidArgument, msg("input ", i, " is required"));
    if (v->dtype != dt)
      return ctx.error(ErrorKind::DTypeMismatch, msg("input ", i, " ('", ctx.node.inputs[i], "') is ", dtype_name(v->dtype), ", input 0 is ",
                                                     dtype_name(dt), "; insert a Cast so all operands have one dtype"));
    shapes.push_back(&v->shape);
  }
  if (dt == DType::boolean)
    return ctx.error(ErrorKind::DTypeMismatch, msg("dtype ", dtype_name(dt), " is not supported; f32 f64 f16 and the integer dtypes"));
  std::vector<int64_t> shape;
  OM_TRY(broadcast_shapes(ctx, shapes, &shape));
  ctx.set_output(0, dt, std::move(shape));
  return Status::ok();
}

// The larger (Max) or smaller of two values; NaN if either is NaN. Selects only, so the fold's
// loops vectorise.
template <bool Max, typename T>
T extreme(T a, T b) {
  const T m = Max ? (a < b ? b : a) : (b < a ? b : a);
  if constexpr (std::is_floating_point<T>::value) return (a != a) | (b != b) ? T(NAN) : m;
  return m;
}

// Operands folded in input order. f16 compares in f32; the result is one of the operands (or
// NaN), so storing it back as f16 is exact. Work: output elements (prepare_elements).
template <bool Max>
Status extreme_kernel(const KernelContext& k) {
  visit_dtype(k.out(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float16_storage<T>::value)
      fold_inputs<T>(k, k.begin, k.end,
                     [](T a, T b) { return float_to_storage<T>(extreme<Max>(storage_to_float(a), storage_to_float(b))); });
    else if constexpr (!std::is_same<T, bool>::value)  // refused at plan time
      fold_inputs<T>(k, k.begin, k.end, [](T a, T b) { return extreme<Max, T>(a, b); });  // inlined, so it vectorises
  });
  return Status::ok();
}

// `a` comes before `b` in the order "largest first" (max) or "smallest first"; NaN first.
inline bool before(float a, float b, bool max) {
  if (std::isnan(a)) return !std::isnan(b);
  if (std::isnan(b)) return false;
  return max ? a > b : a < b;
}

Status axis_of(const InferContext& ctx, int64_t fallback, int64_t* axis) {
  const ValueDesc* x = ctx.input(0);
  if (!x || x->dtype != DType::f32) return ctx.error(ErrorKind::DTypeMismatch, "input 0 must be f32");
  const int64_t rank = int64_t(x->shape.size());
  if (!normalize_axis(ctx.node.attr_int("axis", fallback), rank, axis))
    return ctx.error(ErrorKind::InvalidArgument, msg("axis ", ctx.node.attr_int("axis", fallback), " is out of range for rank ", rank));
  if (x->shape[size_t(*axis)] == 0) return ctx.error(ErrorKind::InvalidArgument, msg("axis ", *axis, " is empty"));
  return Status::ok();
}

Status infer_arg(InferContext& ctx) {
  int64_t axis;
  OM_TRY(axis_of(ctx, 0, &axis));
  std::vector<int64_t> shape = ctx.input(0)->shape;
  if (ctx.node.attr_int("keepdims", 1) != 0) shape[size_t(axis)] = 1;
  else shape.erase(shape.begin() + axis);
  ctx.set_output(0, DType::i64, std::move(shape));
  return Status::ok();
}

// Sub-products of a planned (checked) shape, with the checked helper of core/shape.h.
void split(const int64_t* dims, size_t rank, int64_t axis, int64_t* outer, int64_t* n, int64_t* inner) {
  *outer = *inner = 0;  // a planned shape always passes; the zeros only quiet the compiler
  checked_numel(dims, size_t(axis), outer);
  *n = dims[axis];
  checked_numel(dims + axis + 1, rank - size_t(axis) - 1, inner);
}

// The record of ArgMax, ArgMin and TopK: x viewed as [outer, n, inner] around the axis. Work:
// the outer * inner lines along the axis (one output each for ArgMax/ArgMin, kk for TopK).
struct AxisParams {
  int64_t outer = 0, n = 0, inner = 0;
  int64_t kk = 0;        // TopK: K
  bool flag = false;     // ArgMax/ArgMin: select_last_index; TopK: largest
};

AxisParams axis_params(const InferContext& ctx, int64_t fallback_axis, int64_t* axis) {
  const ValueDesc& x = *ctx.input(0);
  *axis = ctx.node.attr_int("axis", fallback_axis);
  normalize_axis(*axis, int64_t(x.shape.size()), axis);  // checked by infer
  AxisParams p;
  split(x.shape.data(), x.shape.size(), *axis, &p.outer, &p.n, &p.inner);
  return p;
}

Status prepare_arg(const InferContext& ctx, Prepared& out) {
  int64_t axis = 0;
  AxisParams& p = out.record<AxisParams>() = axis_params(ctx, 0, &axis);
  p.flag = ctx.node.attr_int("select_last_index", 0) != 0;
  out.work = p.outer * p.inner;
  return Status::ok();
}

template <bool Max>
Status arg_kernel(const KernelContext& k) {
  const AxisParams& p = k.params<AxisParams>();
  const int64_t n = p.n, inner = p.inner;
  // select_last_index: a later element that ties with the best (neither comes before the
  // other; NaN ties with NaN) replaces it, so the last of the ties is returned.
  const bool last = p.flag;
  const float* x = k.in(0).as<const float>();
  int64_t* y = k.out(0).as<int64_t>();
  for (int64_t q = k.begin; q < k.end; ++q) {
    const int64_t o = q / inner, i = q % inner;
    const float* row = x + o * n * inner + i;
    int64_t best = 0;
    for (int64_t a = 1; a < n; ++a)
      if (last ? !before(row[best * inner], row[a * inner], Max) : before(row[a * inner], row[best * inner], Max)) best = a;
    y[o * inner + i] = best;
  }
  return Status::ok();
}

Status infer_topk(InferContext& ctx) {
  int64_t axis;
  OM_TRY(axis_of(ctx, -1, &axis));
  std::vector<int64_t> kv;
  OM_TRY(const_ints(ctx, 1, &kv));
  const std::vector<int64_t>& s = ctx.input(0)->shape;
  if (kv.size() != 1 || kv[0] < 0 || kv[0] > s[size_t(axis)])
    return ctx.error(ErrorKind::InvalidArgument, msg("K must be one value in [0, ", s[size_t(axis)], "]"));
  if (ctx.node.attr_int("sorted", 1) == 0) return ctx.error(ErrorKind::Unsupported, "sorted = 0 is not supported (results are always sorted)");
  std::vector<int64_t> shape = s;
  shape[size_t(axis)] = kv[0];
  ctx.set_output(0, DType::f32, shape);
  if (ctx.outputs.size() > 1) ctx.set_output(1, DType::i64, shape);
  return Status::ok();
}

Status prepare_topk(const InferContext& ctx, Prepared& out) {
  int64_t axis = 0;
  AxisParams& p = out.record<AxisParams>() = axis_params(ctx, -1, &axis);
  p.kk = ctx.outputs[0].shape[size_t(axis)];
  p.flag = ctx.node.attr_int("largest", 1) != 0;
  out.work = p.outer * p.inner;
  return Status::ok();
}

Status topk_kernel(const KernelContext& k) {
  const AxisParams& p = k.params<AxisParams>();
  const bool largest = p.flag;
  const int64_t n = p.n, inner = p.inner, kk = p.kk;
  const float* x = k.in(0).as<const float>();
  float* v = k.out(0).as<float>();
  int64_t* idx = k.num_outputs > 1 && k.out(1).present ? k.out(1).as<int64_t>() : nullptr;
  // Selection of the k best, one at a time, in the plan's scratch (n flags per line, so lines
  // of different ranges never share them): no heap at run time. The first best among the
  // remaining keeps ties in index order, as the eager sort does.
  for (int64_t q = k.begin; q < k.end; ++q) {
    const int64_t o = q / inner, i = q % inner;
    const float* row = x + o * n * inner + i;
    bool* used = static_cast<bool*>(k.scratch) + q * n;
    std::fill(used, used + n, false);
    for (int64_t j = 0; j < kk; ++j) {
      int64_t best = -1;
      for (int64_t a = 0; a < n; ++a)
        if (!used[a] && (best < 0 || before(row[a * inner], row[best * inner], largest))) best = a;
      used[best] = true;
      v[(o * kk + j) * inner + i] = row[best * inner];
      if (idx) idx[(o * kk + j) * inner + i] = best;
    }
  }
  return Status::ok();
}

// n flags for each of the outer * inner lines: one per input element.
size_t topk_scratch(const InferContext& ctx) { return size_t(ctx.input(0)->numel()); }

constexpr AttrSpec kArgAttrs[] = {{"axis", AttrKind::Int}, {"keepdims", AttrKind::Int}, {"select_last_index", AttrKind::Int}};
constexpr AttrSpec kTopKAttrs[] = {{"axis", AttrKind::Int}, {"largest", AttrKind::Int}, {"sorted", AttrKind::Int}};

constexpr OpDef kOps[] = {
    op("Max").upgrades_from(8).per_item(BatchRule::Broadcast).inputs(1, 64).shapes(infer_extreme).prepared(prepare_elements).kernel(extreme_kernel<true>)
        .doc("f32 f64 f16 i8 i16 i32 i64 u8 u16 u32 u64, one or more inputs, broadcasting; folded in input order; NaN propagates").with_flags(kOpF16InF32),
    op("Min").upgrades_from(8).per_item(BatchRule::Broadcast).inputs(1, 64).shapes(infer_extreme).prepared(prepare_elements).kernel(extreme_kernel<false>)
        .doc("f32 f64 f16 i8 i16 i32 i64 u8 u16 u32 u64, one or more inputs, broadcasting; folded in input order; NaN propagates").with_flags(kOpF16InF32),
    op("ArgMax").upgrades_from(11).per_item(BatchRule::Axis).inputs(1).attributes(kArgAttrs).shapes(infer_arg).prepared(prepare_arg).kernel(arg_kernel<true>)
        .doc("f32 -> i64, axis, keepdims, select_last_index; NaN is the largest"),
    op("ArgMin").upgrades_from(11).per_item(BatchRule::Axis).inputs(1).attributes(kArgAttrs).shapes(infer_arg).prepared(prepare_arg).kernel(arg_kernel<false>)
        .doc("f32 -> i64, axis, keepdims, select_last_index; NaN is the smallest"),
    op("TopK").upgrades_from(10).per_item(BatchRule::Axis, -1).plan_time_inputs_mask(1u << 1).inputs(2).attributes(kTopKAttrs).shapes(infer_topk)
        .prepared(prepare_topk).kernel(topk_kernel).with_scratch(topk_scratch)
        .doc("f32; K known at plan time; axis, largest; always sorted, ties by lower index"),
};

}  // namespace

}  // namespace om::graph::ops

// The family's operators, one symbol each (onemodel/op_list.h).
#define OM_SELECT_OPS(X) X(Max) X(Min) X(ArgMax) X(ArgMin) X(TopK)
OM_OP_FAMILY_TABLE(select, OM_SELECT_OPS)
