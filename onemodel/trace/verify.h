// Verification of a finished trace (docs/tracing.md, "Verification"): every symbolic axis is
// re-run at a second size, eagerly and in a Session on the traced graph, and the two compared.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "onemodel/core/tensor.h"
#include "onemodel/graph/ir.h"
#include "onemodel/trace/tracer.h"

namespace om::trace {

struct VerifyInput {
  std::string name;
  Tensor example;
  std::vector<std::string> axes;  // "" = static; empty = all static
};

struct VerifyPlan {
  std::vector<VerifyInput> inputs;
  std::set<int64_t> static_sizes;  // every static extent of every traced value
  std::map<std::string, std::string> suspects;  // symbol -> the first reshape/expand given its example size
};

// A SymbolicShape trace error naming the axis, both sizes, the first output that differs and,
// where the graph shows it, the node whose constant operand holds the axis' example size.
// `call` names the public call for the message.
Status verify_traced(const graph::Graph& g, const VerifyPlan& plan, const RerunFn& rerun, const TracerOptions& options, const char* call);

}  // namespace om::trace
