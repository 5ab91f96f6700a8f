// The reader's checks after nanopb decoding: tensors (dtype, dims, data size), attributes
// (declared type vs payload), opsets, operator support (every unsupported op type listed at
// once), attribute types per operator, and normalisation to the opset-20 form of the IR.
#include <cstring>
#include <unordered_set>

#include "onemodel/graph/op_registry.h"
#include "onemodel/io/onnx.h"
#include "onemodel/io/onnx_reader_internal.h"

namespace om::onnx::detail {
namespace {

using graph::Attribute;
using graph::AttrType;
using graph::Graph;
using graph::Node;
using graph::TensorData;

const char* onnx_only_type_name(int32_t code) {
  switch (code) {
    case 4: return "uint16";
    case 5: return "int16";
    case 8: return "string";
    case 11: return "double";
    case 12: return "uint32";
    case 13: return "uint64";
    case 14: return "complex64";
    case 15: return "complex128";
    case 16: return "bfloat16";
    case 17: return "float8e4m3fn";
    case 18: return "float8e4m3fnuz";
    case 19: return "float8e5m2";
    case 20: return "float8e5m2fnuz";
    case 21: return "uint4";
    case 22: return "int4";
    case 23: return "float4e2m1";
    default: return nullptr;
  }
}

Status format(const std::string& where, const std::string& what) {
  return Status::error(ErrorKind::Format, msg("om::onnx::read: malformed ONNX file: ", where, ": ", what));
}

using graph::is_default_domain;
using graph::OpDef;

// The schema check shared with the Session (graph::check_attributes); a file breaking it is
// malformed.
Status check_attribute_types(const OpDef& op, const Node& node) { return graph::check_attributes(op, node, ErrorKind::Format); }

// Copies typed values (int32_data etc.) into the tensor's storage, checking each fits.
template <typename T>
Status narrow_into(const std::vector<int64_t>& v, int64_t lo, int64_t hi, const std::string& where, const std::string& name,
                   uint8_t* dst) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] < lo || v[i] > hi)
      return format(where, msg("tensor '", name, "': value ", v[i], " at index ", i, " does not fit its dtype"));
    const T x = static_cast<T>(v[i]);
    std::memcpy(dst + i * sizeof(T), &x, sizeof(T));
  }
  return Status::ok();
}

const char* attr_type_name(int t) {
  static const char* names[] = {"UNDEFINED", "FLOAT",   "INT",           "STRING",         "TENSOR",
                                "GRAPH",     "FLOATS",  "INTS",          "STRINGS",        "TENSORS",
                                "GRAPHS",    "SPARSE_TENSOR", "SPARSE_TENSORS", "TYPE_PROTO", "TYPE_PROTOS"};
  return t >= 0 && t <= 14 ? names[t] : "?";
}

}  // namespace

Status dtype_from_code(int32_t code, const std::string& what, DType* out) {
  if (dtype_from_onnx(code, out)) return Status::ok();
  if (const char* name = onnx_only_type_name(code))
    return Status::error(ErrorKind::Unsupported, msg(what, " has dtype ", name, " (ONNX code ", code,
                                                     "); onemodel supports f32, f64, f16, bf16, i64, i32, i16, i8, u64, u32, u16, u8 and bool"));
  return Status::error(ErrorKind::Format, msg(what, " has an unknown dtype code ", code, " (not an ONNX data type)"));
}

Status finish_tensor(TensorFields tf, const std::string& where, TensorData* out) {
  const std::string& name = tf.name;
  if (tf.external)
    return Status::error(ErrorKind::Unsupported,
                         msg("om::onnx::read: ", where, ": tensor '", name, "' keeps its data in an external file",
                             tf.location.empty() ? std::string() : " ('" + tf.location + "')",
                             "; onemodel reads self-contained ONNX files only. Re-save the model with its weights inside "
                             "the file (the onnx Python package: onnx.save_model(model, path, save_as_external_data=False))"));
  if (!tf.has_data_type) return format(where, msg("tensor '", name, "' has no data_type"));
  DType dt;
  {
    Status st = dtype_from_code(tf.data_type, msg("tensor '", name, "'"), &dt);
    if (!st.is_ok()) return st.kind() == ErrorKind::Format ? format(where, st.message()) : st.with_context(msg("om::onnx::read: ", where));
  }
  if (tf.dims.size() > kMaxFileRank) return format(where, msg("tensor '", name, "' has ", tf.dims.size(), " dims; at most ", kMaxFileRank, " are allowed"));
  const size_t esize = dtype_size(dt);
  uint64_t numel = 1;
  for (size_t i = 0; i < tf.dims.size(); ++i) {
    const int64_t d = tf.dims[i];
    if (d < 0) return format(where, msg("tensor '", name, "': dim ", i, " is ", d, "; tensor dims must be >= 0"));
    // Bounded so numel * element size fits: no file could hold more anyway.
    if (d != 0 && numel > (uint64_t(1) << 62) / esize / uint64_t(d))
      return format(where, msg("tensor '", name, "': dims overflow (the element count exceeds 2^62 bytes)"));
    numel *= uint64_t(d);
  }
  const size_t nbytes = size_t(numel) * esize;
  const int sources = int(tf.has_raw) + int(!tf.floats.empty()) + int(!tf.int32s.empty()) + int(!tf.int64s.empty()) +
                      int(!tf.other_data.empty());
  if (sources > 1) return format(where, msg("tensor '", name, "' stores its values in more than one data field"));
  if (!tf.other_data.empty())
    return format(where, msg("tensor '", name, "' (", dtype_name(dt), ") stores its values in ", tf.other_data,
                             ", which does not hold that dtype"));

  TensorData t;
  t.name = std::move(tf.name);
  t.dtype = dt;
  t.dims = std::move(tf.dims);
  t.nbytes = nbytes;
  if (tf.has_raw) {
    if (tf.raw_bytes != nbytes)
      return format(where, msg("tensor '", t.name, "': raw_data holds ", tf.raw_bytes, " bytes but ", numel, " elements of ",
                               dtype_name(dt), " need ", nbytes));
    t.owner = tf.raw;
    t.bytes = tf.raw.get();
    *out = std::move(t);
    return Status::ok();
  }
  if (sources == 0) {
    if (numel != 0) return format(where, msg("tensor '", t.name, "' has ", numel, " elements but no data"));
    std::shared_ptr<uint8_t> buf = alloc_aligned(0);
    if (!buf) return Status::error(ErrorKind::OutOfMemory, "om::onnx::read: out of memory");
    t.owner = buf;
    t.bytes = buf.get();
    *out = std::move(t);
    return Status::ok();
  }
  const char* field = !tf.floats.empty() ? "float_data" : !tf.int32s.empty() ? "int32_data" : "int64_data";
  const size_t count = !tf.floats.empty() ? tf.floats.size() : !tf.int32s.empty() ? tf.int32s.size() : tf.int64s.size();
  const bool fits = (dt == DType::f32 && !tf.floats.empty()) || (dt == DType::i64 && !tf.int64s.empty()) ||
                    ((dt == DType::i32 || dt == DType::i8 || dt == DType::u8 || dt == DType::boolean || dt == DType::f16 || dt == DType::bf16 ||
                      dt == DType::i16 || dt == DType::u16) &&
                     !tf.int32s.empty());
  if (!fits) return format(where, msg("tensor '", t.name, "' (", dtype_name(dt), ") stores its values in ", field, ", which does not hold that dtype"));
  if (count != numel)
    return format(where, msg("tensor '", t.name, "': ", field, " holds ", count, " values but its dims need ", numel));
  std::shared_ptr<uint8_t> buf = alloc_aligned(nbytes);
  if (!buf) return Status::error(ErrorKind::OutOfMemory, msg("om::onnx::read: cannot allocate ", nbytes, " bytes for tensor '", t.name, "'"));
  uint8_t* dst = buf.get();
  Status st;
  switch (dt) {
    case DType::f32: std::memcpy(dst, tf.floats.data(), nbytes); break;
    case DType::i64: std::memcpy(dst, tf.int64s.data(), nbytes); break;
    case DType::i32: st = narrow_into<int32_t>(tf.int32s, INT32_MIN, INT32_MAX, where, t.name, dst); break;
    case DType::i8: st = narrow_into<int8_t>(tf.int32s, -128, 127, where, t.name, dst); break;
    case DType::u8: st = narrow_into<uint8_t>(tf.int32s, 0, 255, where, t.name, dst); break;
    case DType::boolean: st = narrow_into<uint8_t>(tf.int32s, 0, 1, where, t.name, dst); break;
    case DType::f16:
    case DType::bf16: st = narrow_into<uint16_t>(tf.int32s, 0, 65535, where, t.name, dst); break;  // the bits
    case DType::i16: st = narrow_into<int16_t>(tf.int32s, -32768, 32767, where, t.name, dst); break;
    case DType::u16: st = narrow_into<uint16_t>(tf.int32s, 0, 65535, where, t.name, dst); break;
    // double_data and uint64_data are not parsed: these dtypes are read from raw_data only, and
    // `fits` above already refused any other field for them.
    case DType::f64: case DType::u32: case DType::u64: break;
  }
  OM_TRY(st);
  t.owner = buf;
  t.bytes = dst;
  *out = std::move(t);
  return Status::ok();
}

Status finish_attribute(const AttrPayload& p, const std::string& where, Attribute* a, Status* deferred) {
  const std::string who = msg("attribute '", a->name, "'");
  if (a->name.empty()) return format(where, "attribute without a name");
  if (!p.ref_attr_name.empty()) {
    *deferred = Status::error(ErrorKind::Unsupported, msg("om::onnx::read: ", where, ": ", who, " refers to a function attribute ('",
                                                          p.ref_attr_name, "'); onemodel does not read ONNX functions"));
    return Status::ok();
  }
  if (!p.has_type) return format(where, who + " has no type field");
  if (p.type <= 0 || p.type > 14) return format(where, msg(who, " has an unknown type code ", p.type));
  if (p.tensors > 1) return format(where, who + " carries more than one tensor");
  if (p.graphs > 1) return format(where, who + " carries more than one graph");
  if (p.type == 5 || p.type == 10) {
    // A graph (GRAPH) or graphs (GRAPHS): exactly that payload.
    const bool other = p.has_f || p.has_i || p.has_s || p.tensors > 0 || !a->floats.empty() || !a->ints.empty() || !a->strings.empty();
    if (other || (p.type == 5 && p.graph_list > 0) || (p.type == 10 && p.graphs > 0))
      return format(where, msg(who, " is declared ", attr_type_name(p.type), " but carries another payload"));
    if (p.type == 5 && p.graphs == 0) return format(where, who + " is declared GRAPH but carries no graph");
    a->type = static_cast<AttrType>(p.type);
    return Status::ok();
  }
  if (p.graphs > 0 || p.graph_list > 0)
    return format(where, msg(who, " is declared ", attr_type_name(p.type), " but carries a graph payload"));
  if (p.type == 13) {
    // A type (TYPE_PROTO: Optional's `type`): exactly that payload.
    const bool other = p.has_f || p.has_i || p.has_s || p.tensors > 0 || !a->floats.empty() || !a->ints.empty() || !a->strings.empty();
    if (other || p.types != 1) return format(where, msg(who, " is declared TYPE_PROTO but carries ", p.types == 1 ? "another payload" : msg(p.types, " types")));
    a->type = AttrType::TypeProto;
    return Status::ok();
  }
  if (p.types > 0) return format(where, msg(who, " is declared ", attr_type_name(p.type), " but carries a type payload"));
  if (p.type >= 9) {
    *deferred = Status::error(ErrorKind::Unsupported, msg("om::onnx::read: ", where, ": ", who, " is of type ", attr_type_name(p.type),
                                                          "; onemodel reads FLOAT, INT, STRING, TENSOR, GRAPH, FLOATS, INTS, STRINGS, GRAPHS and TYPE_PROTO attributes"));
    return Status::ok();
  }
  // Exactly the payload the declared type names, nothing else.
  const bool present[9] = {false, p.has_f, p.has_i, p.has_s, p.tensors > 0, false,
                           !a->floats.empty(), !a->ints.empty(), !a->strings.empty()};
  for (int t = 1; t <= 8; ++t)
    if (present[t] && t != p.type)
      return format(where, msg(who, " is declared ", attr_type_name(p.type), " but carries a ", attr_type_name(t), " payload"));
  if (p.type == 4 && p.tensors == 0) return format(where, who + " is declared TENSOR but carries no tensor");
  a->type = static_cast<AttrType>(p.type);
  return Status::ok();
}

// What to do with a model older than the reader takes. The onnx package's version converter is
// not the advice: it fails on many models (and with the onnx Python package Debian ships).
constexpr const char* kReexportAdvice =
    "Export the model again from its framework with a newer opset (e.g. torch.onnx.export(..., opset_version=17), "
    "tf2onnx --opset 17); docs/onnx.md, \"Opsets\"";
constexpr const char* kNewerAdvice = "Export the model with opset 20 or older (e.g. torch.onnx.export(..., opset_version=17))";

std::string node_label(const Node& n) {
  if (!n.name.empty()) return msg(n.op_type, " '", n.name, "'");
  return msg(n.op_type, " producing '", n.outputs.empty() ? std::string() : n.outputs[0], "'");
}

// Brings a node of an opset older than its op's form there: attributes that became inputs move
// into initializers, then the op's hook runs (docs/onnx.md, "Opsets").
Status upgrade_node(Graph& g, size_t index, const OpDef& op, int64_t opset, std::unordered_set<std::string>* names, size_t* inserted) {
  *inserted = 0;
  Node& n = g.nodes[index];
  // Broadcast flags are the opset < 7 form of the arithmetic operators.
  for (const Attribute& a : n.attributes)
    if (a.name == "broadcast" || (a.name == "consumed_inputs"))
      return Status::error(ErrorKind::Unsupported, msg("attribute '", a.name, "' belongs to the opset < 7 form of ", n.op_type,
                                                       ", which onemodel does not read. ", kReexportAdvice));
  for (int m = 0; m < op.upgrade.num_moved; ++m) {
    const graph::MovedAttr& mv = op.upgrade.moved[m];
    if (opset >= mv.since) continue;
    for (size_t k = 0; k < n.attributes.size(); ++k) {
      const Attribute& a = n.attributes[k];
      if (a.name != mv.name) continue;
      const std::string base = (n.outputs.empty() || n.outputs[0].empty() ? n.name : n.outputs[0]) + "." + mv.name;
      graph::UpgradeContext naming{n, opset, names, {}, {}};
      const std::string name = naming.fresh(base);
      if (a.type == AttrType::Float) {
        g.initializers.push_back(TensorData::copy_of(name, DType::f32, {}, &a.f, sizeof(float)));
      } else if (a.type == AttrType::Ints) {
        g.initializers.push_back(TensorData::copy_of(name, DType::i64, {int64_t(a.ints.size())}, a.ints.data(), a.ints.size() * 8));
      } else if (a.type == AttrType::Floats) {
        g.initializers.push_back(TensorData::copy_of(name, DType::f32, {int64_t(a.floats.size())}, a.floats.data(), a.floats.size() * 4));
      } else {
        return Status::error(ErrorKind::InvalidArgument, msg("attribute '", a.name, "' must be ", "INTS, FLOATS or FLOAT"));
      }
      if (n.inputs.size() <= size_t(mv.input)) n.inputs.resize(size_t(mv.input) + 1);
      n.inputs[size_t(mv.input)] = name;
      n.attributes.erase(n.attributes.begin() + long(k));
      break;
    }
  }
  if (!op.upgrade.hook || opset >= op.since) return Status::ok();
  graph::UpgradeContext ctx{n, opset, names, {}, {}};
  OM_TRY(op.upgrade.hook(ctx));
  // The hook may have asked for nodes around this one (the order stays topological).
  std::vector<Node> after = std::move(ctx.after);
  const size_t nb = ctx.before.size();
  g.nodes.insert(g.nodes.begin() + long(index), std::make_move_iterator(ctx.before.begin()), std::make_move_iterator(ctx.before.end()));
  g.nodes.insert(g.nodes.begin() + long(index + nb + 1), std::make_move_iterator(after.begin()), std::make_move_iterator(after.end()));
  *inserted = nb + after.size();
  return Status::ok();
}

// One graph of the model (the main graph or a subgraph) as the checks see it: its nodes'
// operators, looked up once, and each sorted node's index in the file.
struct GraphForm {
  Graph* g = nullptr;
  std::string where;  // "graph", "graph.node[3].then_branch"...
  std::vector<const OpDef*> ops;
  std::vector<size_t> file_pos;
};

// Sorts g (files out of topological order are sorted, stably) and looks up its operators, then
// its subgraphs' (depth first); every unsupported op type goes to *unsupported once.
Status sort_and_resolve(Graph& g, int64_t opset, const std::string& where, std::vector<GraphForm>* forms,
                        std::vector<std::string>* unsupported, std::unordered_set<std::string>* seen, bool* newer) {
  GraphForm f;
  f.g = &g;
  f.where = where;
  OM_TRY(sort_nodes(g, &f.file_pos));
  f.ops.reserve(g.nodes.size());
  for (const Node& n : g.nodes) {
    std::string label;
    const OpDef* op = graph::find_op(n.domain, n.op_type);
    f.ops.push_back(op);
    if (!op) label = is_default_domain(n.domain) ? n.op_type : n.domain + "::" + n.op_type;
    else if (is_default_domain(n.domain) && op->oldest_opset() > opset && !legacy_version(n.op_type, opset)) {
      label = msg(n.op_type, " (needs opset ", op->oldest_opset(), ", the model imports ", opset, ")");
      *newer = true;
    }
    if (!label.empty() && seen->insert(label).second) unsupported->push_back(label);
  }
  const size_t self = forms->size();
  forms->push_back(std::move(f));
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (graph::Attribute& a : g.nodes[i].attributes) {
      const std::string at = msg(where, ".node[", (*forms)[self].file_pos[i], "].", a.name);
      if (a.type == graph::AttrType::Graph && a.g) OM_TRY(sort_and_resolve(*a.g, opset, at, forms, unsupported, seen, newer));
      if (a.type == graph::AttrType::Graphs)
        for (size_t k = 0; k < a.graphs.size(); ++k)
          if (a.graphs[k]) OM_TRY(sort_and_resolve(*a.graphs[k], opset, msg(at, "[", k, "]"), forms, unsupported, seen, newer));
    }
  return Status::ok();
}

// Attribute types and the registry's form for every node of one graph.
Status normalise_nodes(GraphForm& f, int64_t opset, std::unordered_set<std::string>* names) {
  Graph& g = *f.g;
  // `k` counts the file's nodes; nodes an upgrade inserts are already in the newest form.
  for (size_t i = 0, k = 0; i < g.nodes.size(); ++i, ++k) {
    Node& n = g.nodes[i];
    const size_t file_index = f.file_pos[k];
    if (is_default_domain(n.domain)) n.domain.clear();
    const OpDef* op = f.ops[k];
    OM_TRY(check_attribute_types(*op, n).with_context(msg("om::onnx::read: ", f.where, ".node[", file_index, "]")));
    if (!n.domain.empty()) continue;
    const std::string where = msg("om::onnx::read: ", f.where, ".node[", file_index, "] (", node_label(n), ")");
    int64_t form_opset = opset;
    if (op->oldest_opset() > opset) {
      // An old form no record reads: converted into one they do (onnx_legacy.cpp).
      LegacyContext lc;
      lc.names = names;
      OM_TRY(convert_legacy(g, i, opset, lc).with_context(where));
      const size_t nb = lc.before.size();
      g.nodes.insert(g.nodes.begin() + long(i), std::make_move_iterator(lc.before.begin()), std::make_move_iterator(lc.before.end()));
      i += nb;
      if (lc.replaced) continue;
      // The conversion table and the records must agree: a converted node the record's own
      // upgrade cannot take further is refused, never run in a form its kernel does not know.
      if (lc.reaches < op->oldest_opset())
        return Status::error(ErrorKind::Unsupported, msg(where, ": converted to the opset-", lc.reaches, " form, but ", op->op_type,
                                                         " is read from opset ", op->oldest_opset(), " on. ", kReexportAdvice));
      form_opset = lc.reaches;
    }
    size_t inserted = 0;
    OM_TRY(upgrade_node(g, i, *op, form_opset, names, &inserted).with_context(where));
    i += inserted;
  }
  return Status::ok();
}

Status check_and_normalise(Decoded& d) {
  Graph& g = d.graph;
  if (!d.has_ir_version) return format("model", "no ir_version field: this is not an ONNX model (or it is truncated)");
  if (d.ir_version < 1) return format("model", msg("ir_version is ", d.ir_version));
  if (d.graph_fields == 0) return format("model", "the model has no graph");

  // Opsets: the default domain once, 1..20; each operator decides how old a node it reads (below).
  int64_t opset = 0;
  std::unordered_set<std::string> domains;
  for (graph::OpsetImport& o : g.opsets) {
    if (is_default_domain(o.domain)) o.domain.clear();
    if (!domains.insert(o.domain).second) return format("model", msg("opset_import lists domain '", o.domain, "' twice"));
    if (o.domain.empty()) opset = o.version;
  }
  bool default_nodes = false;
  for (const Node& n : g.nodes) default_nodes = default_nodes || is_default_domain(n.domain);
  if (default_nodes && opset == 0) return format("model", "no opset_import for the default ONNX domain");
  if (default_nodes && (opset < kMinOpset || opset > kMaxOpset))
    return Status::error(ErrorKind::Unsupported,
                         msg("om::onnx::read: the model imports opset ", opset, " of the default ONNX domain; onemodel reads opsets ",
                             kMinOpset, " to ", kMaxOpset, ". ", opset < kMinOpset ? kReexportAdvice : kNewerAdvice));

  std::vector<std::string> unsupported;
  std::unordered_set<std::string> seen;
  bool newer = false;  // some operator's form needs a newer opset than the model imports
  std::vector<GraphForm> forms;
  OM_TRY(sort_and_resolve(g, opset, "graph", &forms, &unsupported, &seen, &newer));
  if (!unsupported.empty()) {
    std::string list;
    for (const std::string& u : unsupported) list += (list.empty() ? "" : ", ") + u;
    return Status::error(ErrorKind::Unsupported,
                         graph::registered_op_list().selective
                             ? msg("om::onnx::read: the model uses operators this program does not register: ", list, "; ",
                                   graph::unknown_op_hint())
                             : msg("om::onnx::read: the model uses ", unsupported.size(), " operator type",
                                   unsupported.size() == 1 ? "" : "s", " onemodel does not support: ", list,
                                   ". The supported operators are listed in docs/operators.md",
                                   newer ? msg(". ", kReexportAdvice) : std::string()));
  }
  for (const Status& st : d.node_deferred) OM_TRY(st);

  // Attribute types, then the opset-20 form: attributes that became inputs move there. Fresh
  // names are new in every scope.
  std::unordered_set<std::string> names;
  for (const GraphForm& f : forms) {
    for (const auto& v : f.g->inputs) names.insert(v.name);
    for (const auto& t : f.g->initializers) names.insert(t.name);
    for (const Node& n : f.g->nodes)
      for (const std::string& o : n.outputs) names.insert(o);
  }
  for (GraphForm& f : forms) OM_TRY(normalise_nodes(f, opset, &names));
  for (graph::OpsetImport& o : g.opsets)
    if (o.domain.empty()) o.version = kMaxOpset;
  if (g.opsets.empty() || opset == 0) g.opsets.insert(g.opsets.begin(), graph::OpsetImport{"", kMaxOpset});
  g.ir_version = kIrVersion;
  return graph::verify(g).with_context("om::onnx::read");
}

}  // namespace om::onnx::detail
