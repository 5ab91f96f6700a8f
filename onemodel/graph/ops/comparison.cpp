// Comparison graph operators: Equal, Less, Greater, GreaterOrEqual and LessOrEqual with numpy
// broadcasting, the f32 tests IsNaN and IsInf, and the selection Where. One comparison or copy
// per element: exact by nature, so the fast and the exact kernel are one function.
#include <cmath>

#include "onemodel/graph/ops/op_util.h"

namespace om::graph::ops {
namespace {

// Work units: output elements. The broadcasting ops keep their iterator in a BroadcastParams
// record (prepare_broadcast), IsInf its attributes.

// ---- comparisons ----

Status infer_compare(InferContext& ctx) {
  return infer_same_binary(ctx, {DType::f32, DType::i64, DType::i32, DType::boolean}, true);
}
// GreaterOrEqual and LessOrEqual (opset 12) also take the 8-bit integers.
Status infer_compare_ordered(InferContext& ctx) {
  return infer_same_binary(ctx, {DType::f32, DType::i64, DType::i32, DType::i8, DType::u8, DType::boolean}, true);
}

// Each comparison is a set of the three outcomes x < y, y < x, x == y (bits 0, 1, 2; none of
// them for a NaN operand, so every comparison with a NaN is false): one loop per dtype serves all
// five operators (a loop per operator and dtype was 17 KB of a device program).
enum Cmp : unsigned { Eq = 4, Lt = 1, Gt = 2, Ge = 6, Le = 5 };

template <typename T>
void compare_typed(const KernelContext& k, unsigned want) {
  binary_range<T, bool>(k, [want](T x, T y) {
    const unsigned outcome = unsigned(x < y) | unsigned(y < x) << 1 | unsigned(x == y) << 2;
    return (outcome & want) != 0;
  });
}

Status compare_with(const KernelContext& k, unsigned want) {
  switch (k.in(0).dtype) {
    case DType::f32: compare_typed<float>(k, want); break;
    case DType::i64: compare_typed<int64_t>(k, want); break;
    case DType::i32: compare_typed<int32_t>(k, want); break;
    case DType::i8: compare_typed<int8_t>(k, want); break;
    case DType::u8: compare_typed<uint8_t>(k, want); break;
    case DType::boolean: compare_typed<bool>(k, want); break;
    default: return k.error(ErrorKind::DTypeMismatch, "comparison: unsupported dtype");
  }
  return Status::ok();
}

template <Cmp C>
Status compare_kernel(const KernelContext& k) {
  return compare_with(k, C);
}

// ---- Where ----

Status infer_where(InferContext& ctx) {
  OM_TRY(require_dtype(ctx, 0, {DType::boolean}));
  const ValueDesc* x = ctx.input(1);
  const ValueDesc* y = ctx.input(2);
  if (!x || !y) return ctx.error(ErrorKind::InvalidArgument, "needs three inputs (condition, X, Y)");
  if (x->dtype != y->dtype)
    return ctx.error(ErrorKind::DTypeMismatch, msg("X and Y dtypes differ: ", dtype_name(x->dtype), " and ", dtype_name(y->dtype)));
  std::vector<int64_t> shape;
  OM_TRY(broadcast_shapes(ctx, {&ctx.input(0)->shape, &x->shape, &y->shape}, &shape));
  ctx.set_output(0, x->dtype, std::move(shape));
  return Status::ok();
}

template <typename T>
void where_typed(const KernelContext& k) {
  const BroadcastIter& it = k.params<BroadcastParams>().it;
  const bool* c = k.in(0).as<const bool>();
  const T* x = k.in(1).as<const T>();
  const T* y = k.in(2).as<const T>();
  T* out = k.out(0).as<T>();
  const int64_t sc = it.inner_step[1], sx = it.inner_step[2], sy = it.inner_step[3];
  it.for_each(k.begin, k.end, [&](const int64_t* off, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[off[0] + i] = c[off[1] + i * sc] ? x[off[2] + i * sx] : y[off[3] + i * sy];
  });
}

Status where_kernel(const KernelContext& k) {
  switch (dtype_size(k.in(1).dtype)) {
    case 1: where_typed<uint8_t>(k); break;
    case 2: where_typed<uint16_t>(k); break;
    case 4: where_typed<uint32_t>(k); break;
    case 8: where_typed<uint64_t>(k); break;
    default: return k.error(ErrorKind::Internal, "Where: unsupported element size");
  }
  return Status::ok();
}

// ---- IsNaN / IsInf ----

Status infer_is(InferContext& ctx) {
  OM_TRY(infer_f32_unary(ctx));
  ctx.outputs[0].dtype = DType::boolean;
  return Status::ok();
}
Status isnan_kernel(const KernelContext& k) { return map_range<float, bool>(k, [](float v) { return std::isnan(v); }); }

// IsInf's record: which infinities count. Work: elements.
struct IsInfParams {
  bool negative = true, positive = true;
};

Status prepare_isinf(const InferContext& ctx, Prepared& out) {
  IsInfParams& p = out.record<IsInfParams>();
  p.negative = ctx.node.attr_int("detect_negative", 1) != 0;
  p.positive = ctx.node.attr_int("detect_positive", 1) != 0;
  out.work = ctx.outputs[0].numel();
  return Status::ok();
}

Status isinf_kernel(const KernelContext& k) {
  const bool neg = k.params<IsInfParams>().negative, pos = k.params<IsInfParams>().positive;
  return map_range<float, bool>(k, [neg, pos](float v) { return std::isinf(v) && (v > 0 ? pos : neg); });
}

constexpr AttrSpec kIsInfAttrs[] = {{"detect_negative", AttrKind::Int}, {"detect_positive", AttrKind::Int}};

constexpr OpDef kOps[] = {
    broadcast_op("Equal", 7, infer_compare, compare_kernel<Eq>, "f32 i64 i32 bool -> bool"),
    broadcast_op("Less", 7, infer_compare, compare_kernel<Lt>, "f32 i64 i32 bool -> bool"),
    broadcast_op("Greater", 7, infer_compare, compare_kernel<Gt>, "f32 i64 i32 bool -> bool"),
    op("Where").upgrades_from(9).per_item(BatchRule::Broadcast).inputs(3).shapes(infer_where)
        .prepared(prepare_broadcast).kernel(where_kernel).doc("any dtype, three-way broadcasting").with_flags(kOpF16InF32),
    broadcast_op("GreaterOrEqual", 12, infer_compare_ordered, compare_kernel<Ge>, "f32 i64 i32 i8 u8 bool -> bool, broadcasting"),
    broadcast_op("LessOrEqual", 12, infer_compare_ordered, compare_kernel<Le>, "f32 i64 i32 i8 u8 bool -> bool, broadcasting"),
    op("IsNaN").upgrades_from(9).inputs(1).shapes(infer_is).prepared(prepare_elements).kernel(isnan_kernel).doc("f32 -> bool"),
    op("IsInf").upgrades_from(10).inputs(1).attributes(kIsInfAttrs).shapes(infer_is).prepared(prepare_isinf).kernel(isinf_kernel)
        .doc("f32 -> bool, detect_negative, detect_positive"),
};

}  // namespace

}  // namespace om::graph::ops

// The family's operators, one symbol each (onemodel/op_list.h).
#define OM_COMPARISON_OPS(X) \
  X(Equal) X(Less) X(Greater) X(Where) X(GreaterOrEqual) X(LessOrEqual) X(IsNaN) X(IsInf)
OM_OP_FAMILY_TABLE(comparison, OM_COMPARISON_OPS)
