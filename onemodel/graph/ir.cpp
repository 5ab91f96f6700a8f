#include "onemodel/graph/ir.h"

#include <atomic>
#include <cstring>
#include <unordered_set>

#include "onemodel/core/shape.h"

namespace om::graph {

bool is_default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

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

Status verify(const Graph& g) {
  g_verify_count.fetch_add(1, std::memory_order_relaxed);
  std::unordered_set<std::string> defined;
  auto define = [&](const std::string& name, const char* what) -> Status {
    if (name.empty()) return Status::error(ErrorKind::Format, msg("graph verify: a ", what, " has an empty name"));
    if (!defined.insert(name).second)
      return Status::error(ErrorKind::Format, msg("graph verify: value '", name, "' is assigned twice (", what, "); every value must have one producer"));
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
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.op_type.empty()) return Status::error(ErrorKind::Format, msg("graph verify: node #", i, " has no op_type"));
    for (const std::string& in : n.inputs) {
      if (in.empty()) continue;
      if (!defined.count(in))
        return Status::error(ErrorKind::Format, msg("graph verify: node #", i, " '", n.name, "' (", n.op_type, ") reads '", in,
                                                    "', which is not defined before it (graph input, initializer or an earlier node's output)"));
    }
    for (const Attribute& a : n.attributes) OM_TRY(check_attribute(n, a));
    for (const std::string& out : n.outputs) {
      if (out.empty()) continue;
      OM_TRY(define(out, "node output"));
    }
  }
  for (const ValueInfo& v : g.outputs)
    if (!defined.count(v.name))
      return Status::error(ErrorKind::Format, msg("graph verify: graph output '", v.name, "' is never produced"));
  return Status::ok();
}

}  // namespace om::graph
