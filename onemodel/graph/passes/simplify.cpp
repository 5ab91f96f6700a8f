// Passes that only remove or precompute: identity removal, dead-node removal, constant folding.
// None changes an output bit: identities copy bytes, dead nodes feed no output, and folding runs
// the very kernel (of the session's mode) that the session would run.
#include <unordered_map>
#include <unordered_set>

#include "onemodel/graph/op_registry.h"
#include "onemodel/graph/passes/pass.h"

namespace om::graph::passes {

static bool is_graph_output(const Graph& g, const std::string& name) {
  for (const auto& o : g.outputs)
    if (o.name == name) return true;
  return false;
}

Status remove_identities(Graph& g, ArithmeticMode, size_t* changes) {
  std::unordered_map<std::string, std::string> rename;
  std::vector<Node> kept;
  for (Node& n : g.nodes) {
    for (auto& in : n.inputs) {
      auto it = rename.find(in);
      if (it != rename.end()) in = it->second;
    }
    const bool identity = n.op_type == "Identity" && is_default_domain(n.domain) && n.inputs.size() == 1 &&
                          n.outputs.size() == 1 && !n.inputs[0].empty();
    // An identity that names a graph output stays: the output name must be produced.
    if (identity && !is_graph_output(g, n.outputs[0])) {
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
  for (auto& t : g.initializers) {
    bool is_input = false;
    for (const auto& in : g.inputs) is_input = is_input || in.name == t.name;
    if (needed.count(t.name) || is_input) inits.push_back(std::move(t));
    else ++*changes;
  }
  g.initializers = std::move(inits);
  return Status::ok();
}

Status fold_constants(Graph& g, ArithmeticMode mode, size_t* changes) {
  std::unordered_map<std::string, ValueDesc> known;
  for (const auto& t : g.initializers) {
    bool overridable = false;  // an initializer that is also a graph input may be replaced by the caller
    for (const auto& in : g.inputs) overridable = overridable || in.name == t.name;
    if (overridable) continue;
    ValueDesc d;
    d.dtype = t.dtype;
    d.shape = t.dims;
    d.data = t.bytes ? static_cast<const void*>(t.bytes) : static_cast<const void*>(&t);
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
