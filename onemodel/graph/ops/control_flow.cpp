// Control flow: If. The plan inlines the chosen branch (runtime/plan.cpp, CompiledGraph), so the
// record carries what the reader and the checks need, and no kernel: the condition is a
// plan-time operand, and each value of it gets a plan of its own (docs/onnx.md, "Control flow").
#include "onemodel/graph/ops/op_util.h"

namespace om::graph::ops {
namespace {

constexpr AttrSpec kIfAttrs[] = {{"then_branch", AttrKind::Graph}, {"else_branch", AttrKind::Graph}};

constexpr OpDef kOps[] = {
    op("If").since_opset(1).inputs(1).attributes(kIfAttrs).with_flags(kOpControlFlow).plan_time_inputs_mask(1u)
        .doc("condition known when planning (a constant, computed from shapes, or a value input: one plan per value); "
             "the chosen branch is planned inline; branches may give different shapes"),
};

}  // namespace

}  // namespace om::graph::ops

// The family's operators, one symbol each (onemodel/op_list.h).
#define OM_CONTROL_FLOW_OPS(X) X(If)
OM_OP_FAMILY_TABLE(control_flow, OM_CONTROL_FLOW_OPS)
