// Inspecting a graph from user code and tools (the `onemodel` command-line tool uses these):
// which operators the runtime knows and which have an exact kernel (docs/operators.md), and the
// shape of every value with the inputs' symbolic axes carried through.
#pragma once
#include <string>
#include <vector>

#include "onemodel/core/status.h"
#include "onemodel/graph/ir.h"

namespace om {

// `domain` "" (or "ai.onnx") is the default ONNX domain.
bool is_known_operator(const std::string& domain, const std::string& op_type);
bool has_exact_kernel(const std::string& domain, const std::string& op_type);

// One ValueInfo per value of the graph (inputs, initializers, node outputs). An axis is
// static, one of the inputs' symbols (e.g. "batch"), or unknown (size -1, no symbol) when it
// is derived from symbols (such as batch*4). Found by planning the graph for two sets of
// sizes of the symbols; a graph that cannot be planned that way is an error naming why.
Status try_infer_shapes(const graph::Graph& g, std::vector<graph::ValueInfo>* out);
std::vector<graph::ValueInfo> infer_shapes(const graph::Graph& g);

}  // namespace om
