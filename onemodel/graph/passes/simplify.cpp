// Passes that only remove or precompute: identity removal, dead-node removal, constant folding.
// None changes an output bit: identities copy bytes, dead nodes feed no output, and folding runs
// the very kernel (of the session's mode) that the session would run.
#include <unordered_map>
#include <unordered_set>

#include "onemodel/core/shape.h"
#include "onemodel/graph/infer_check.h"
#include "onemodel/graph/op_registry.h"
#include "onemodel/graph/passes/pass.h"

namespace om::graph::passes {

Status remove_identities(Graph& g, ArithmeticMode, size_t* changes) {
  std::unordered_map<std::string, std::string> rename;
  std::unordered_set<std::string> outputs;
  for (const auto& o : g.outputs) outputs.insert(o.name);
  for (std::string& v : outer_reads(g)) outputs.insert(std::move(v));  // subgraphs read them by name
  std::vector<Node> kept;
  for (Node& n : g.nodes) {
    for (auto& in : n.inputs) {
      auto it = rename.find(in);
      if (it != rename.end()) in = it->second;
    }
    const bool identity = n.op_type == "Identity" && is_default_domain(n.domain) && n.inputs.size() == 1 &&
                          n.outputs.size() == 1 && !n.inputs[0].empty();
    // An identity that names a graph output (or a value a subgraph reads) stays: the name must be produced.
    if (identity && !outputs.count(n.outputs[0])) {
      rename[n.outputs[0]] = n.inputs[0];
      ++*changes;
      continue;
    }
    kept.push_back(std::move(n));
  }
  g.nodes = std::move(kept);
  return Status::ok();
}

Status remove_dead_nodes(Graph& g, ArithmeticMode, size_t* changes) {
  std::unordered_set<std::string> needed;
  for (const auto& o : g.outputs) needed.insert(o.name);
  for (std::string& v : outer_reads(g)) needed.insert(std::move(v));
  std::vector<bool> live(g.nodes.size(), false);
  for (size_t i = g.nodes.size(); i-- > 0;) {
    const Node& n = g.nodes[i];
    for (const auto& o : n.outputs)
      if (!o.empty() && needed.count(o)) live[i] = true;
    if (!live[i]) continue;
    for (const auto& in : n.inputs)
      if (!in.empty()) needed.insert(in);
  }
  std::vector<Node> kept;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (live[i]) kept.push_back(std::move(g.nodes[i]));
    else ++*changes;
  }
  g.nodes = std::move(kept);
  std::vector<TensorData> inits;
  std::unordered_set<std::string> inputs;
  for (const auto& in : g.inputs) inputs.insert(in.name);
  for (auto& t : g.initializers) {
    if (needed.count(t.name) || inputs.count(t.name)) inits.push_back(std::move(t));
    else ++*changes;
  }
  g.initializers = std::move(inits);
  return Status::ok();
}

Status fold_constants(Graph& g, ArithmeticMode mode, size_t* changes) { return fold_constants_within(g, mode, SIZE_MAX, changes); }

Status fold_constants_within(Graph& g, ArithmeticMode mode, size_t max_folded_bytes, size_t* changes) {
  std::unordered_map<std::string, ValueDesc> known;
  std::unordered_set<std::string> inputs;  // an initializer that is also a graph input may be replaced by the caller
  for (const auto& in : g.inputs) inputs.insert(in.name);
  size_t folded_bytes = 0;
  for (const auto& t : g.initializers) {
    if (inputs.count(t.name)) continue;
    ValueDesc d;
    d.dtype = t.dtype;
    d.shape = t.dims;
    d.data = t.bytes ? static_cast<const void*>(t.bytes) : kEmptyValue;
    known[t.name] = std::move(d);
  }
  std::vector<Node> kept;
  std::vector<TensorData> added;
  for (Node& n : g.nodes) {
    const OpDef* op = find_op(n.domain, n.op_type);
    bool foldable = op && (mode == ArithmeticMode::Fast ? op->fast : op->exact) && !n.outputs.empty();
    std::vector<const ValueDesc*> ins(n.inputs.size(), nullptr);
    for (size_t i = 0; foldable && i < n.inputs.size(); ++i) {
      if (n.inputs[i].empty()) continue;
      auto it = known.find(n.inputs[i]);
      if (it == known.end()) foldable = false;
      else ins[i] = &it->second;
    }
    for (const auto& o : n.outputs) foldable = foldable && !o.empty();
    std::vector<EvaluatedValue> results;
    std::vector<ValueDesc> shapes;
    // Shapes first (checked: no wrapped sizes), so nothing is allocated beyond the limit.
    if (foldable && !infer_checked(n, *op, ins, &shapes).is_ok()) foldable = false;  // left for the session to report
    if (foldable) {
      size_t bytes = folded_bytes;
      for (const ValueDesc& d : shapes) bytes = saturating_add(bytes, d.nbytes());
      if (bytes > max_folded_bytes)
        return Status::error(ErrorKind::OutOfMemory,
                             msg(n.op_type, " node '", n.name, "': folding constants would create ", bytes,
                                 " bytes, above SessionOptions::max_folded_bytes = ", max_folded_bytes, "; raise that option to allow it"));
      folded_bytes = bytes;
    }
    if (foldable && !evaluate_node(n, *op, mode, ins, &results).is_ok()) foldable = false;  // left for the session to report
    if (!foldable) {
      kept.push_back(std::move(n));
      continue;
    }
    for (size_t o = 0; o < n.outputs.size(); ++o) {
      TensorData t;
      t.name = n.outputs[o];
      t.dtype = results[o].desc.dtype;
      t.dims = results[o].desc.shape;
      t.owner = results[o].owner;
      t.bytes = static_cast<const uint8_t*>(results[o].desc.data);
      t.nbytes = results[o].desc.nbytes();
      known[t.name] = results[o].desc;
      added.push_back(std::move(t));
    }
    ++*changes;
  }
  g.nodes = std::move(kept);
  for (auto& t : added) g.initializers.push_back(std::move(t));
  return Status::ok();
}

}  // namespace om::graph::passes
