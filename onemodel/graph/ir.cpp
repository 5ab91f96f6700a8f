#include "onemodel/graph/ir.h"

#include <atomic>
#include <cstring>
#include <unordered_set>

#include "onemodel/core/shape.h"

namespace om::graph {

bool is_default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

const char* value_kind_name(ValueKind k) {
  switch (k) {
    case ValueKind::Tensor: return "tensor";
    case ValueKind::Sequence: return "sequence";
    case ValueKind::Optional: return "optional";
    case ValueKind::OptionalSequence: return "optional sequence";
  }
  return "?";
}

TensorData TensorData::copy_of(std::string name, DType dtype, std::vector<int64_t> dims, const void* data,
                               size_t nbytes) {
  TensorData t;
  t.name = std::move(name);
  t.dtype = dtype;
  t.dims = std::move(dims);
  auto buf = std::make_shared<std::vector<uint8_t>>(nbytes);
  if (nbytes) std::memcpy(buf->data(), data, nbytes);
  t.bytes = buf->data();
  t.nbytes = nbytes;
  t.owner = buf;
  return t;
}

int64_t TensorData::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

Attribute Attribute::of_int(std::string name, int64_t v) {
  Attribute a; a.name = std::move(name); a.type = AttrType::Int; a.i = v; return a;
}
Attribute Attribute::of_float(std::string name, float v) {
  Attribute a; a.name = std::move(name); a.type = AttrType::Float; a.f = v; return a;
}
Attribute Attribute::of_string(std::string name, std::string v) {
  Attribute a; a.name = std::move(name); a.type = AttrType::String; a.s = std::move(v); return a;
}
Attribute Attribute::of_ints(std::string name, std::vector<int64_t> v) {
  Attribute a; a.name = std::move(name); a.type = AttrType::Ints; a.ints = std::move(v); return a;
}
Attribute Attribute::of_floats(std::string name, std::vector<float> v) {
  Attribute a; a.name = std::move(name); a.type = AttrType::Floats; a.floats = std::move(v); return a;
}
Attribute Attribute::of_tensor(std::string name, TensorData v) {
  Attribute a; a.name = std::move(name); a.type = AttrType::Tensor;
  a.t = std::make_shared<TensorData>(std::move(v)); return a;
}
Attribute Attribute::of_graph(std::string name, Graph v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::Graph;
  a.g = std::make_shared<Graph>(std::move(v));
  return a;
}

const Attribute* Node::attr(std::string_view n) const {
  for (const Attribute& a : attributes)
    if (a.name == n) return &a;
  return nullptr;
}
int64_t Node::attr_int(std::string_view n, int64_t fallback) const {
  const Attribute* a = attr(n);
  return a && a->type == AttrType::Int ? a->i : fallback;
}
float Node::attr_float(std::string_view n, float fallback) const {
  const Attribute* a = attr(n);
  return a && a->type == AttrType::Float ? a->f : fallback;
}
std::string Node::attr_string(std::string_view n, const std::string& fallback) const {
  const Attribute* a = attr(n);
  return a && a->type == AttrType::String ? a->s : fallback;
}
std::string_view Node::attr_text(std::string_view n, std::string_view fallback) const {
  const Attribute* a = attr(n);
  return a && a->type == AttrType::String ? std::string_view(a->s) : fallback;
}
bool Node::attr_is(std::string_view n, std::string_view value) const {
  const Attribute* a = attr(n);
  return a && a->type == AttrType::String && a->s == value;
}
std::vector<int64_t> Node::attr_ints(std::string_view n) const {
  const Attribute* a = attr(n);
  return a && a->type == AttrType::Ints ? a->ints : std::vector<int64_t>{};
}

std::string Node::label() const {
  if (!name.empty() || outputs.empty()) return msg(op_type, " node '", name, "'");
  return msg(op_type, " node producing '", outputs[0], "'");
}

int64_t Graph::opset_version(const std::string& domain) const {
  for (const OpsetImport& o : opsets)
    if (o.domain == domain || (domain.empty() && is_default_domain(o.domain))) return o.version;
  return 0;
}

const TensorData* Graph::find_initializer(const std::string& n) const {
  for (const TensorData& t : initializers)
    if (t.name == n) return &t;
  return nullptr;
}

size_t Graph::find_input(std::string_view n) const {
  size_t slot = inputs.size();
  for (size_t j = 0; j < inputs.size(); ++j)
    if (inputs[j].name == n) slot = j;
  return slot;
}

static Status check_tensor(const TensorData& t, const std::string& what) {
  if (dtype_size(t.dtype) == 0) return Status::error(ErrorKind::Format, msg("graph verify: ", what, " has an invalid dtype code ", int(t.dtype)));
  for (int64_t d : t.dims)
    if (d < 0) return Status::error(ErrorKind::Format, msg("graph verify: ", what, " has a negative dim ", d));
  int64_t count = 0;  // checked (core/shape.h): dims like [2^63, 2] must not wrap to 0 elements
  if (!checked_numel(t.dims, &count))
    return Status::error(ErrorKind::Format, msg("graph verify: ", what, " has dims ", shape_str(t.dims), " above 2^48 elements"));
  const uint64_t n = uint64_t(count);
  if (n * dtype_size(t.dtype) != t.nbytes)
    return Status::error(ErrorKind::Format, msg("graph verify: ", what, " holds ", t.nbytes, " bytes but its shape needs ", n * dtype_size(t.dtype)));
  if (t.nbytes != 0 && t.bytes == nullptr) return Status::error(ErrorKind::Format, msg("graph verify: ", what, " has no data"));
  return Status::ok();
}

// Attribute types: a known type code, the payload of that type present, one attribute per name.
static Status check_attribute(const Node& node, const Attribute& a) {
  const std::string where = msg("graph verify: node '", node.name, "' (", node.op_type, ")");
  if (a.name.empty()) return Status::error(ErrorKind::Format, msg(where, ": attribute without a name"));
  switch (a.type) {
    case AttrType::Float: case AttrType::Int: case AttrType::String: case AttrType::Floats: case AttrType::Ints:
    case AttrType::Strings:
      break;
    case AttrType::Tensor:
      if (!a.t) return Status::error(ErrorKind::Format, msg(where, ": tensor attribute '", a.name, "' has no tensor"));
      return check_tensor(*a.t, msg(where, ": tensor attribute '", a.name, "'"));
    case AttrType::Graph:
      if (!a.g) return Status::error(ErrorKind::Format, msg(where, ": graph attribute '", a.name, "' has no graph"));
      break;
    case AttrType::Graphs:
      for (const auto& sub : a.graphs)
        if (!sub) return Status::error(ErrorKind::Format, msg(where, ": graphs attribute '", a.name, "' holds a null graph"));
      break;
    case AttrType::TypeProto:
      if (!a.tp) return Status::error(ErrorKind::Format, msg(where, ": type attribute '", a.name, "' has no type"));
      break;
    default:
      return Status::error(ErrorKind::Format, msg(where, ": attribute '", a.name, "' has an unknown type code ", int(a.type)));
  }
  for (const Attribute& b : node.attributes)
    if (&b != &a && b.name == a.name)
      return Status::error(ErrorKind::Format, msg(where, ": attribute '", a.name, "' appears twice"));
  return Status::ok();
}

namespace {
std::atomic<uint64_t> g_verify_count{0};
}  // namespace

uint64_t verify_count() { return g_verify_count.load(); }

namespace {

// The names defined so far in each enclosing graph, innermost last.
using Scopes = std::vector<const std::unordered_set<std::string>*>;

bool defined_in(const Scopes& outer, const std::string& name) {
  for (const auto* s : outer)
    if (s->count(name)) return true;
  return false;
}

Status verify_scope(const Graph& g, Scopes& outer, const std::string& where) {
  const std::string pre = where.empty() ? "graph verify: " : msg("graph verify: ", where, ": ");
  if (int(outer.size()) > kMaxSubgraphDepth)
    return Status::error(ErrorKind::Format, msg(pre, "subgraphs nest deeper than ", kMaxSubgraphDepth,
                                                " levels (kMaxSubgraphDepth)"));
  std::unordered_set<std::string> defined;
  auto define = [&](const std::string& name, const char* what) -> Status {
    if (name.empty()) return Status::error(ErrorKind::Format, msg(pre, "a ", what, " has an empty name"));
    if (!defined.insert(name).second)
      return Status::error(ErrorKind::Format, msg(pre, "value '", name, "' is assigned twice (", what,
                                                  "); every value must have one producer"));
    if (defined_in(outer, name))
      return Status::error(ErrorKind::Format, msg(pre, "value '", name, "' (", what,
                                                  ") redefines a value of an enclosing graph; a subgraph's names must be new"));
    return Status::ok();
  };
  for (const TensorData& t : g.initializers) {
    OM_TRY(define(t.name, "initializer"));
    OM_TRY(check_tensor(t, msg("initializer '", t.name, "'")));
  }
  for (const ValueInfo& v : g.inputs) {
    if (g.find_initializer(v.name)) continue;  // ONNX allows an input that an initializer overrides
    OM_TRY(define(v.name, "graph input"));
  }
  auto is_defined = [&](const std::string& name) { return defined.count(name) || defined_in(outer, name); };
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.op_type.empty()) return Status::error(ErrorKind::Format, msg(pre, "node #", i, " has no op_type"));
    for (const std::string& in : n.inputs) {
      if (in.empty()) continue;
      if (!is_defined(in))
        return Status::error(ErrorKind::Format, msg(pre, "node #", i, " '", n.name, "' (", n.op_type, ") reads '", in,
                                                    "', which is not defined before it (graph input, initializer or an earlier node's output",
                                                    outer.empty() ? "" : ", here or in an enclosing graph", ")"));
    }
    for (const Attribute& a : n.attributes) {
      OM_TRY(check_attribute(n, a));
      if (a.type != AttrType::Graph && a.type != AttrType::Graphs) continue;
      outer.push_back(&defined);
      for (size_t k = 0; k < (a.type == AttrType::Graph ? 1 : a.graphs.size()); ++k) {
        const Graph& sub = a.type == AttrType::Graph ? *a.g : *a.graphs[k];
        Status st = verify_scope(sub, outer, msg(where.empty() ? "graph" : where, ".node[", i, "] (", n.label(), ").", a.name));
        if (!st.is_ok()) {
          outer.pop_back();
          return st;
        }
      }
      outer.pop_back();
    }
    for (const std::string& out : n.outputs) {
      if (out.empty()) continue;
      OM_TRY(define(out, "node output"));
    }
  }
  for (const ValueInfo& v : g.outputs)
    if (!is_defined(v.name))
      return Status::error(ErrorKind::Format, msg(pre, "graph output '", v.name, "' is never produced"));
  return Status::ok();
}

template <typename Fn>
void for_each_subgraph(const Node& n, Fn fn) {
  for (const Attribute& a : n.attributes) {
    if (a.type == AttrType::Graph && a.g) fn(*a.g);
    if (a.type == AttrType::Graphs)
      for (const auto& sub : a.graphs)
        if (sub) fn(*sub);
  }
}

// The names g reads that it does not define itself (nor an input or initializer of it), nested
// subgraphs' included, appended to `out` once each. Bounded by verify()'s depth cap.
void free_names(const Graph& g, std::vector<std::string>* out, std::unordered_set<std::string>* seen, int depth) {
  if (depth > kMaxSubgraphDepth) return;
  std::unordered_set<std::string> local;
  for (const TensorData& t : g.initializers) local.insert(t.name);
  for (const ValueInfo& v : g.inputs) local.insert(v.name);
  for (const Node& n : g.nodes)
    for (const std::string& o : n.outputs) local.insert(o);
  auto use = [&](const std::string& name) {
    if (!name.empty() && !local.count(name) && seen->insert(name).second) out->push_back(name);
  };
  for (const Node& n : g.nodes) {
    for (const std::string& in : n.inputs) use(in);
    for_each_subgraph(n, [&](const Graph& sub) {
      std::vector<std::string> inner;
      std::unordered_set<std::string> inner_seen;
      free_names(sub, &inner, &inner_seen, depth + 1);
      for (const std::string& name : inner) use(name);
    });
  }
  for (const ValueInfo& v : g.outputs) use(v.name);
}

}  // namespace

Status verify(const Graph& g) {
  g_verify_count.fetch_add(1, std::memory_order_relaxed);
  Scopes outer;
  return verify_scope(g, outer, "");
}

std::vector<std::string> outer_reads(const Node& n) {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  for_each_subgraph(n, [&](const Graph& sub) { free_names(sub, &out, &seen, 1); });
  return out;
}

std::vector<std::string> outer_reads(const Graph& g) {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  for (const Node& n : g.nodes)
    for (const std::string& name : outer_reads(n))
      if (seen.insert(name).second) out.push_back(name);
  return out;
}

bool has_subgraphs(const Graph& g) {
  for (const Node& n : g.nodes)
    for (const Attribute& a : n.attributes)
      if (a.type == AttrType::Graph || a.type == AttrType::Graphs) return true;
  return false;
}

}  // namespace om::graph
