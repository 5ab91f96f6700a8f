// Tracer::finish: prune to what the outputs need, check captured constants, name values stably
// and build the graph IR.
#include <algorithm>
#include <set>

#include "onemodel/trace/state.h"

namespace om::trace {

namespace {
// A symbolic dim is named after its extent: the atom's name ("h", or "h/2" for an atom a pool
// derived), or a product with the coefficient first ("2*h", "batch*seq"). Compound names are put
// in parentheses where they take part in a product.
graph::Dim dim_of(const SymDim& d, int64_t example, ArenaList<Atom>& atoms) {
  if (d.atoms.size == 0) return graph::Dim::fixed(example);
  if (d.atoms.size == 1 && d.coef == 1) return graph::Dim::symbol(atoms[d.atoms[0]].name);
  std::string name = d.coef == 1 ? std::string() : std::to_string(d.coef);
  for (uint32_t a : d.atoms) {
    std::string atom = atoms[a].name;
    if (atom.find_first_of("+-*/") != std::string::npos) atom = "(" + atom + ")";
    name += (name.empty() ? "" : "*") + atom;
  }
  return graph::Dim::symbol(name);
}
}  // namespace

Result<graph::Graph> TraceState::finish(const std::vector<std::pair<std::string, Tensor>>& outputs) {
  const char* call = "om::Tracer::finish";
  if (outputs.empty()) return Status::trace(TraceErrorKind::InvalidUsage, msg(call, ": give at least one output"));
  std::vector<ValueId> out_values;
  std::set<std::string> out_names;
  for (const auto& [name, t] : outputs) {
    if (name.empty()) return Status::trace(TraceErrorKind::InvalidUsage, msg(call, ": an output needs a name"));
    if (!out_names.insert(name).second || std::find(names_.begin(), names_.end(), name) != names_.end())
      return Status::trace(TraceErrorKind::InvalidUsage, msg(call, ": the name '", name, "' is used twice; every input, parameter and output needs its own"));
    if (!t.defined() || !is_traced(*t.impl()))
      return Status::trace(TraceErrorKind::InvalidUsage, msg(call, ": output '", name, "' does not depend on any input (it would be a constant); "
                                                            "compute it from the tensors Tracer::input returned"));
    out_values.push_back(t.impl()->trace_value);
  }

  // Prune: keep the nodes the outputs need.
  std::vector<bool> keep_node(nodes_.size(), false), keep_value(values_.size(), false);
  std::vector<ValueId> stack(out_values.begin(), out_values.end());
  while (!stack.empty()) {
    const ValueId v = stack.back();
    stack.pop_back();
    if (keep_value[v]) continue;
    keep_value[v] = true;
    const Value& val = values_[v];
    if (val.kind != ValueKind::Node) continue;
    keep_node[size_t(val.node)] = true;
    for (ValueId in : nodes_[size_t(val.node)].inputs)
      if (in != kNoValue) stack.push_back(in);
  }

  // Captured constants must still hold the values the graph recorded.
  for (const ConstantRecord& c : constants_) {
    if (!keep_value[c.value]) continue;
    if (c.storage->version.load() != c.version)
      return Status::trace(TraceErrorKind::InPlaceMutation,
                           msg(call, ": constant ", c.name.empty() ? std::string("(unnamed)") : "'" + c.name + "'", " ", dtype_name(c.data.dtype),
                               shape_str(c.data.dims), " was modified in place after the trace captured it; the graph holds the earlier values. "
                               "Do not mutate weights or buffers while tracing"));
  }

  // Names: user names as given, generated names that never clash with them.
  std::set<std::string> taken(names_.begin(), names_.end());
  taken.insert(out_names.begin(), out_names.end());
  auto fresh = [&](const std::string& base) {
    std::string n = base;
    for (int k = 2; taken.count(n); ++k) n = msg(base, "_", k);
    taken.insert(n);
    return n;
  };
  std::vector<std::string> value_name(values_.size());
  for (const InputRecord& in : inputs_) value_name[in.value] = in.name;
  size_t generated = 0;
  for (const ConstantRecord& c : constants_) {
    if (!keep_value[c.value]) continue;
    value_name[c.value] = c.name.empty() ? fresh(msg("const_", generated++)) : c.name;
  }
  // The first output naming a node value renames that value; the rest get Identity nodes.
  std::vector<bool> renamed(values_.size(), false);
  for (size_t k = 0; k < outputs.size(); ++k) {
    const ValueId v = out_values[k];
    if (values_[v].kind == ValueKind::Node && !renamed[v]) {
      value_name[v] = outputs[k].first;
      renamed[v] = true;
    }
  }
  size_t counter = 0;
  for (size_t n = 0; n < nodes_.size(); ++n) {
    if (!keep_node[n]) continue;
    for (ValueId o : nodes_[n].outputs)
      if (value_name[o].empty()) value_name[o] = fresh(msg("v", counter++));
  }

  graph::Graph g;
  g.name = "traced";
  for (const InputRecord& in : inputs_) {
    const Value& v = values_[in.value];
    graph::ValueInfo vi;
    vi.name = in.name;
    vi.dtype = v.dtype;
    for (uint32_t k = 0; k < v.shape.size; ++k) vi.shape.push_back(dim_of(v.sym[k], v.shape[k], atoms_));
    g.inputs.push_back(std::move(vi));
  }
  for (const ConstantRecord& c : constants_) {
    if (!keep_value[c.value]) continue;
    graph::TensorData t = c.data;
    t.name = value_name[c.value];
    g.initializers.push_back(std::move(t));
  }
  size_t node_index = 0;
  for (size_t n = 0; n < nodes_.size(); ++n) {
    if (!keep_node[n]) continue;
    const Node& src = nodes_[n];
    graph::Node node;
    node.op_type = src.op_type;
    node.name = msg(src.op_type, "_", node_index++);
    for (ValueId in : src.inputs) node.inputs.push_back(in == kNoValue ? std::string() : value_name[in]);
    for (ValueId o : src.outputs) node.outputs.push_back(value_name[o]);
    for (const Attr& a : src.attrs) {
      switch (a.type) {
        case graph::AttrType::Int: node.attributes.push_back(graph::Attribute::of_int(a.name, a.i)); break;
        case graph::AttrType::Float: node.attributes.push_back(graph::Attribute::of_float(a.name, a.f)); break;
        case graph::AttrType::String: node.attributes.push_back(graph::Attribute::of_string(a.name, a.s)); break;
        case graph::AttrType::Ints: node.attributes.push_back(graph::Attribute::of_ints(a.name, std::vector<int64_t>(a.ints.begin(), a.ints.end()))); break;
        default: return Status::error(ErrorKind::Internal, msg(call, ": unexpected attribute type in the trace"));
      }
    }
    g.nodes.push_back(std::move(node));
  }
  std::vector<bool> emitted(values_.size(), false);
  for (size_t k = 0; k < outputs.size(); ++k) {
    const ValueId v = out_values[k];
    const std::string& name = outputs[k].first;
    if (value_name[v] != name) {
      graph::Node id;
      id.op_type = "Identity";
      id.name = msg("Identity_", node_index++);
      id.inputs = {value_name[v]};
      id.outputs = {name};
      g.nodes.push_back(std::move(id));
    }
    emitted[v] = true;
    const Value& val = values_[v];
    graph::ValueInfo vi;
    vi.name = name;
    vi.dtype = val.dtype;
    for (uint32_t d = 0; d < val.shape.size; ++d) vi.shape.push_back(dim_of(val.sym[d], val.shape[d], atoms_));
    g.outputs.push_back(std::move(vi));
  }
  OM_TRY(graph::verify(g).with_context("om::Tracer::finish (internal graph check)"));
  return g;
}

}  // namespace om::trace
