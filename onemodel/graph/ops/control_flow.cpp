// Control flow: If, Loop and Scan. The plan lays out their subgraphs among the graph's steps
// (runtime/plan.cpp, CompiledGraph), so each record carries what the reader and the checks need,
// and no kernel (docs/onnx.md, "Control flow"):
// - If: a condition known when planning picks one branch, inlined (a value input gets one plan
//   per value); a condition computed at run time plans both branches, and each run jumps over
//   the one not taken.
// - Loop and Scan: the body is planned once per input-shape signature and its steps run once per
//   iteration; loop-carried values live in the arena and keep their shapes.
#include "onemodel/graph/ops/op_util.h"

namespace om::runtime {
struct ControlFlowHooks;
extern const ControlFlowHooks kControlFlowHooks;  // runtime/plan_control.cpp: the planning these records link
}

namespace om::graph::ops {
namespace {

constexpr const runtime::ControlFlowHooks* kPlanner = &runtime::kControlFlowHooks;

constexpr AttrSpec kIfAttrs[] = {{"then_branch", AttrKind::Graph}, {"else_branch", AttrKind::Graph}};
constexpr AttrSpec kLoopAttrs[] = {{"body", AttrKind::Graph}};
constexpr AttrSpec kScanAttrs[] = {{"body", AttrKind::Graph},
                                   {"num_scan_inputs", AttrKind::PositiveInt},
                                   {"scan_input_axes", AttrKind::Ints},
                                   {"scan_input_directions", AttrKind::Ints},
                                   {"scan_output_axes", AttrKind::Ints},
                                   {"scan_output_directions", AttrKind::Ints}};

constexpr OpDef kOps[] = {
    op("If").since_opset(1).inputs(1).attributes(kIfAttrs).runs_subgraphs(kPlanner)
        .doc("a condition known when planning (a constant, computed from shapes, or an integer/bool graph input: one plan per value) "
             "inlines one branch, and branches may give different shapes; a run-time condition plans both and runs one "
             "(the branches' outputs of equal shapes)"),
    op("Loop").since_opset(1).inputs(2, 66).attributes(kLoopAttrs).runs_subgraphs(kPlanner)
        .doc("the body planned once, run per iteration; trip count and condition from values; loop-carried values keep their "
             "shapes; scan outputs need the iteration count known when planning; SessionOptions::max_loop_iterations caps a run's iterations"),
    op("Scan").since_opset(9).inputs(1, 64).attributes(kScanAttrs).runs_subgraphs(kPlanner)
        .doc("the body planned once, run per slice; input and output axes and directions; states keep their shapes"),
};

}  // namespace

}  // namespace om::graph::ops

// The family's operators, one symbol each (onemodel/op_list.h).
#define OM_CONTROL_FLOW_OPS(X) X(If) X(Loop) X(Scan)
OM_OP_FAMILY_TABLE(control_flow, OM_CONTROL_FLOW_OPS)
