// Sequences and optionals: the ONNX operators over sequence(tensor) and optional values. A
// Session over a graph with them lowers it, per input structure (sequence lengths, which
// optionals are present, the integer and bool inputs the structure depends on), into a graph of
// tensor nodes that runs in an ordinary plan (runtime/sequence_lowering.cpp), so these records
// carry what the reader and the checks need, and no kernel (docs/onnx.md, "Sequences and
// optionals"). Positions, counts and conditions must then be known when planning: constants, or
// computed from constants, sequence lengths and integer/bool graph inputs.
#include "onemodel/graph/ops/op_util.h"

namespace om::runtime {
struct SequenceHooks;
extern const SequenceHooks kSequenceHooks;  // runtime/sequence_lowering.cpp: the lowering these records link
}

namespace om::graph::ops {
namespace {

constexpr const runtime::SequenceHooks* kLowering = &runtime::kSequenceHooks;

constexpr AttrSpec kDtypeAttrs[] = {{"dtype", AttrKind::Int}};
constexpr AttrSpec kSplitAttrs[] = {{"axis", AttrKind::Int}, {"keepdims", AttrKind::Int}};
constexpr AttrSpec kConcatAttrs[] = {{"axis", AttrKind::Int}, {"new_axis", AttrKind::Int}};
constexpr AttrSpec kMapAttrs[] = {{"body", AttrKind::Graph}};
constexpr AttrSpec kOptionalAttrs[] = {{"type", AttrKind::TypeProto}};

constexpr OpDef kOps[] = {
    op("SequenceConstruct").since_opset(11).inputs(1, 64).lowered_by(kLowering).doc("the inputs as one sequence"),
    op("SequenceEmpty").since_opset(11).inputs(0).attributes(kDtypeAttrs).lowered_by(kLowering).doc("an empty sequence"),
    op("SequenceAt").since_opset(11).inputs(2).lowered_by(kLowering)
        .doc("the element at a position known when planning (negative from the end); out of range refused"),
    op("SequenceInsert").since_opset(11).inputs(2, 3).lowered_by(kLowering)
        .doc("a tensor inserted at a position known when planning (default: at the end)"),
    op("SequenceErase").since_opset(11).inputs(1, 2).lowered_by(kLowering)
        .doc("the element at a position known when planning removed (default: the last)"),
    op("SequenceLength").since_opset(11).inputs(1).lowered_by(kLowering).doc("the length, an i64 scalar known when planning"),
    op("SplitToSequence").since_opset(11).inputs(1, 2).attributes(kSplitAttrs).lowered_by(kLowering)
        .doc("Split along axis by a 1-D split known when planning; a scalar split or none (chunks of the input's extent) refused"),
    op("ConcatFromSequence").since_opset(11).inputs(1).attributes(kConcatAttrs).lowered_by(kLowering)
        .doc("Concat of the elements along axis (new_axis: Unsqueeze each first); an empty sequence refused"),
    op("SequenceMap").since_opset(17).inputs(1, 64).attributes(kMapAttrs).lowered_by(kLowering)
        .doc("the body once per element (sequence inputs of one length, tensor inputs to every call), its outputs collected into sequences"),
    op("Optional").since_opset(15).inputs(0, 1).attributes(kOptionalAttrs).lowered_by(kLowering)
        .doc("the input as an optional, or an empty optional without one"),
    op("OptionalHasElement").since_opset(15).inputs(0, 1).lowered_by(kLowering).doc("whether the optional holds a value: a bool known when planning"),
    op("OptionalGetElement").since_opset(15).inputs(1).lowered_by(kLowering)
        .doc("the optional's value (a tensor or sequence passes through); an empty optional refused"),
};

}  // namespace

}  // namespace om::graph::ops

// The family's operators, one symbol each (onemodel/op_list.h).
#define OM_SEQUENCE_OPS(X) \
  X(SequenceConstruct) X(SequenceEmpty) X(SequenceAt) X(SequenceInsert) X(SequenceErase) X(SequenceLength) X(SplitToSequence) \
  X(ConcatFromSequence) X(SequenceMap) X(Optional) X(OptionalHasElement) X(OptionalGetElement)
OM_OP_FAMILY_TABLE(sequence, OM_SEQUENCE_OPS)
