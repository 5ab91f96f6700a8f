// Verification of a finished trace (docs/tracing.md, "Verification"): every symbolic axis is
// re-run at a second size, eagerly and in a Session on the traced graph, and the two compared.
// It lives in runtime/ because it runs Sessions; the tracer records the plan it needs
// (trace/state.h) and Tracer::finish(outputs, verify_with) is defined at the end of the .cpp.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "onemodel/core/tensor.h"
#include "onemodel/graph/ir.h"
#include "onemodel/trace/tracer.h"
#include "onemodel/trace/verify_plan.h"

namespace om::trace {

// A SymbolicShape trace error naming the axis, both sizes, the first output that differs and,
// where the graph shows it, the node whose constant operand holds the axis' example size.
// `call` names the public call for the message.
Status verify_traced(const graph::Graph& g, const VerifyPlan& plan, const RerunFn& rerun, const TracerOptions& options, const char* call);

}  // namespace om::trace
