// Bitwise and logic graph operators: And, Or, Xor and Not on bool, and BitShift on the unsigned
// integers, with numpy broadcasting. Exact by nature.
#include <cstdint>

#include "onemodel/graph/ops/op_util.h"

namespace om::graph::ops {
namespace {

// Work units: output elements. And, Or and Xor keep their broadcast iterator in a
// BroadcastParams record (prepare_broadcast), BitShift in its own with the direction.

Status infer_logic(InferContext& ctx) { return infer_same_binary(ctx, {DType::boolean}, true); }

enum class Logic { And, Or, Xor };
template <Logic L>
Status logic_kernel(const KernelContext& k) {
  binary_range<bool, bool>(k, [](bool a, bool b) { return L == Logic::And ? (a && b) : L == Logic::Or ? (a || b) : (a != b); });
  return Status::ok();
}

Status infer_not(InferContext& ctx) {
  OM_TRY(require_dtype(ctx, 0, {DType::boolean}));
  ctx.set_output(0, DType::boolean, ctx.input(0)->shape);
  return Status::ok();
}
Status not_kernel(const KernelContext& k) { return map_range<bool, bool>(k, [](bool v) { return !v; }); }

// ---- BitShift (unsigned integers) ----

Status infer_bitshift(InferContext& ctx) {
  const ValueDesc* x = ctx.input(0);
  if (x && x->dtype != DType::u8 && x->dtype != DType::u16 && x->dtype != DType::u32 && x->dtype != DType::u64)
    return ctx.error(ErrorKind::DTypeMismatch, msg("BitShift takes unsigned integers (u8 u16 u32 u64), got ", dtype_name(x->dtype)));
  OM_TRY(infer_same_binary(ctx, {DType::u8, DType::u16, DType::u32, DType::u64}, false));
  const Attribute* d = ctx.node.attr("direction");
  if (!d || (d->s != "LEFT" && d->s != "RIGHT"))
    return ctx.error(ErrorKind::InvalidArgument, "attribute direction must be \"LEFT\" or \"RIGHT\"");
  return Status::ok();
}
// BitShift's record: the broadcast iterator and the direction. Work: output elements.
struct BitShiftParams {
  BroadcastIter it;
  bool left = false;
};

Status prepare_bitshift(const InferContext& ctx, Prepared& out) {
  broadcast_record<BitShiftParams>(ctx, out).left = ctx.node.attr_is("direction", "LEFT");
  return Status::ok();
}

// A shift by the width or more is undefined in C++; ONNX's result there is 0 (all bits out).
template <typename T>
void bitshift_loop(const KernelContext& k) {
  constexpr T kBits = T(8 * sizeof(T));
  const BitShiftParams& p = k.params<BitShiftParams>();
  const bool left = p.left;
  binary_loop<T, T>(k, p.it, k.begin, k.end, [left](T v, T s) -> T {
    if (s >= kBits) return T(0);
    return left ? T(v << s) : T(v >> s);
  });
}

Status bitshift_kernel(const KernelContext& k) {
  switch (k.in(0).dtype) {
    case DType::u16: bitshift_loop<uint16_t>(k); break;
    case DType::u32: bitshift_loop<uint32_t>(k); break;
    case DType::u64: bitshift_loop<uint64_t>(k); break;
    default: bitshift_loop<uint8_t>(k); break;  // u8; others are refused at plan time
  }
  return Status::ok();
}

constexpr AttrSpec kBitShiftAttrs[] = {{"direction", AttrKind::String}};

constexpr OpDef kOps[] = {
    broadcast_op("And", 7, infer_logic, logic_kernel<Logic::And>, "bool, broadcasting"),
    broadcast_op("Or", 7, infer_logic, logic_kernel<Logic::Or>, "bool, broadcasting"),
    broadcast_op("Xor", 7, infer_logic, logic_kernel<Logic::Xor>, "bool, broadcasting"),
    op("Not").upgrades_from(1).per_item(BatchRule::Broadcast).inputs(1).shapes(infer_not).prepared(prepare_elements).kernel(not_kernel).doc("bool"),
    op("BitShift").upgrades_from(11).inputs(2).attributes(kBitShiftAttrs).shapes(infer_bitshift).prepared(prepare_bitshift).kernel(bitshift_kernel)
        .doc("u8 u16 u32 u64, direction LEFT|RIGHT, broadcasting; shifts by the bit width or more give 0"),
};

}  // namespace

}  // namespace om::graph::ops

// The family's operators, one symbol each (onemodel/op_list.h).
#define OM_BITWISE_OPS(X) X(And) X(Or) X(Xor) X(Not) X(BitShift)
OM_OP_FAMILY_TABLE(bitwise, OM_BITWISE_OPS)
