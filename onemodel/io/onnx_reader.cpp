// ONNX reader: ModelProto bytes -> graph IR through nanopb. Every string, list and submessage
// arrives in a callback that decodes straight into the IR and checks what it gets; scalars are
// nanopb static fields (nanopb checks their wire types). After decoding, onnx_reader_check.cpp
// validates opsets, operators and attributes and normalises the graph to opset-20 form.
#include <pb_decode.h>

#include <cstdio>
#include <cstdlib>
#include <cerrno>
#include <cstring>

#include "onemodel/kernels/sync.h"
#include "onemodel/io/onnx.h"
#include "onemodel/io/onnx_reader_internal.h"
#include "onnx.pb.h"

namespace om::onnx::detail {
namespace {

using graph::Attribute;
using graph::AttrType;
using graph::Dim;
using graph::Graph;
using graph::Node;
using graph::TensorData;
using graph::ValueInfo;

using DecodeFn = bool (*)(pb_istream_t*, const pb_field_t*, void**);

// The state of one read: the first error a callback met and where decoding is (for messages).
struct Ctx {
  Status error;
  const uint8_t* base = nullptr;  // memory input
  FILE* file = nullptr;           // file input
  std::vector<std::string> path;  // e.g. graph, node[3], attribute[1]
  Decoded* out = nullptr;
  int depth = 0;  // subgraphs entered (bounded by graph::kMaxSubgraphDepth before recursing)
};
OM_THREAD_LOCAL Ctx* t_ctx = nullptr;

bool mem_read(pb_istream_t* s, pb_byte_t* buf, size_t n) {
  // nanopb checks bytes_left (bounded by the input size) before calling.
  const pb_byte_t* p = static_cast<const pb_byte_t*>(s->state);
  std::memcpy(buf, p, n);
  s->state = const_cast<pb_byte_t*>(p + n);
  return true;
}

bool file_read(pb_istream_t* s, pb_byte_t* buf, size_t n) {
  return std::fread(buf, 1, n, static_cast<FILE*>(s->state)) == n;
}

// A callback's stream reads the input itself only for a length-delimited field; for a field
// that came with a scalar wire type nanopb hands over a scratch stream over its own buffer. That
// is how a string, bytes or submessage field with a wrong wire type is recognised.
bool length_delimited(const pb_istream_t* s) { return s->callback == mem_read || s->callback == file_read; }

std::string where() {
  std::string w;
  for (const std::string& p : t_ctx->path) w += (w.empty() ? "" : ".") + p;
  return w.empty() ? "model" : w;
}

std::string offset_of(const pb_istream_t* s) {
  if (s->callback == mem_read) return msg(" (byte ", static_cast<const uint8_t*>(s->state) - t_ctx->base, ")");
  if (s->callback == file_read) return msg(" (byte ", std::ftell(t_ctx->file), ")");
  return "";
}

bool fail(Status st) {
  if (t_ctx->error.is_ok()) t_ctx->error = std::move(st);
  return false;
}

bool format_error(const pb_istream_t* s, const std::string& what) {
  return fail(Status::error(ErrorKind::Format, msg("om::onnx::read: malformed ONNX file: ", where(), ": ", what, offset_of(s))));
}

struct Scope {
  explicit Scope(std::string p) { t_ctx->path.push_back(std::move(p)); }
  ~Scope() { t_ctx->path.pop_back(); }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
};

// nanopb's terse messages, with what they mean for an ONNX file.
std::string explain(const char* e) {
  const std::string m = e ? e : "decoding failed";
  if (m == "end-of-stream" || m == "parent stream too short" || m == "io error")
    return m + ": the file is truncated, or a length field is larger than the data that follows";
  if (m == "varint overflow") return m + ": a length or integer field is corrupt";
  if (m == "invalid wire_type") return m + ": this is not protobuf data, or it is corrupt";
  return m;
}

bool decode_msg(pb_istream_t* s, const pb_msgdesc_t* fields, void* m) {
  if (pb_decode_noinit(s, fields, m)) return true;
  if (t_ctx->error.is_ok()) format_error(s, explain(PB_GET_ERROR(s)));
  return false;
}

bool need_ld(pb_istream_t* s, const pb_field_t* f) {
  return length_delimited(s) || format_error(s, msg("field ", f->tag, " has a wrong wire type (expected length-delimited)"));
}

void set(pb_callback_t& cb, DecodeFn fn, void* arg) {
  cb.funcs.decode = fn;
  cb.arg = arg;
}

// ---- scalars, strings, lists ----

bool read_into(pb_istream_t* s, std::string* out) {
  out->assign(s->bytes_left, '\0');
  return out->empty() || pb_read(s, reinterpret_cast<pb_byte_t*>(&(*out)[0]), out->size()) || format_error(s, PB_GET_ERROR(s));
}

bool dec_string(pb_istream_t* s, const pb_field_t* f, void** arg) {
  return need_ld(s, f) && read_into(s, static_cast<std::string*>(*arg));
}

bool dec_strings(pb_istream_t* s, const pb_field_t* f, void** arg) {
  auto* v = static_cast<std::vector<std::string>*>(*arg);
  v->emplace_back();
  return need_ld(s, f) && read_into(s, &v->back());
}

// Packed (one length-delimited run) or unpacked (one varint per call) alike.
bool dec_int64s(pb_istream_t* s, const pb_field_t*, void** arg) {
  auto* v = static_cast<std::vector<int64_t>*>(*arg);
  while (s->bytes_left) {
    uint64_t x;
    if (!pb_decode_varint(s, &x)) return format_error(s, PB_GET_ERROR(s));
    v->push_back(static_cast<int64_t>(x));
  }
  return true;
}

bool dec_int32s(pb_istream_t* s, const pb_field_t* f, void** arg) {
  auto* v = static_cast<std::vector<int64_t>*>(*arg);
  const size_t first = v->size();
  if (!dec_int64s(s, f, arg)) return false;
  for (size_t i = first; i < v->size(); ++i)
    if ((*v)[i] < INT32_MIN || (*v)[i] > INT32_MAX) return format_error(s, msg("int32 value ", (*v)[i], " out of range"));
  return true;
}

bool dec_floats(pb_istream_t* s, const pb_field_t* f, void** arg) {
  auto* v = static_cast<std::vector<float>*>(*arg);
  if (s->bytes_left % 4 != 0)
    return format_error(s, msg("field ", f->tag, " holds ", s->bytes_left, " bytes, not a whole number of floats"));
  while (s->bytes_left) {
    float x;
    if (!pb_decode_fixed32(s, &x)) return format_error(s, PB_GET_ERROR(s));
    v->push_back(x);
  }
  return true;
}

// A field onemodel does not take (double_data, uint64_data, string_data): counted, skipped.
bool dec_present(pb_istream_t* s, const pb_field_t*, void** arg) {
  *static_cast<bool*>(*arg) = true;
  return pb_read(s, nullptr, s->bytes_left) || format_error(s, PB_GET_ERROR(s));
}

// ---- tensors ----

struct TensorDecode {
  std::string name;
  std::vector<int64_t> dims;
  std::vector<float> floats;
  std::vector<int64_t> int32s;
  std::vector<int64_t> int64s;
  std::shared_ptr<uint8_t> raw;
  size_t raw_bytes = 0;
  bool has_raw = false, has_double = false, has_uint64 = false, has_string = false;
  bool has_external = false;
  std::string location;
};

bool dec_raw(pb_istream_t* s, const pb_field_t* f, void** arg) {
  if (!need_ld(s, f)) return false;
  auto* td = static_cast<TensorDecode*>(*arg);
  const size_t n = s->bytes_left;  // bounded by the input's size: nanopb checked the length
  td->raw = alloc_aligned(n);
  if (!td->raw) return fail(Status::error(ErrorKind::OutOfMemory, msg("om::onnx::read: ", where(), ": cannot allocate ", n, " bytes for raw_data")));
  td->raw_bytes = n;
  td->has_raw = true;
  return n == 0 || pb_read(s, td->raw.get(), n) || format_error(s, PB_GET_ERROR(s));
}

struct Entry {
  std::string key, value;
};

bool dec_external(pb_istream_t* s, const pb_field_t* f, void** arg) {
  if (!need_ld(s, f)) return false;
  auto* td = static_cast<TensorDecode*>(*arg);
  Entry e;
  onemodel_onnx_StringStringEntryProto m = onemodel_onnx_StringStringEntryProto_init_zero;
  set(m.key, dec_string, &e.key);
  set(m.value, dec_string, &e.value);
  if (!decode_msg(s, onemodel_onnx_StringStringEntryProto_fields, &m)) return false;
  td->has_external = true;
  if (e.key == "location") td->location = e.value;
  return true;
}

// Decodes one TensorProto from `s` and checks it into `out`.
bool decode_tensor(pb_istream_t* s, TensorData* out) {
  TensorDecode td;
  onemodel_onnx_TensorProto m = onemodel_onnx_TensorProto_init_zero;
  set(m.dims, dec_int64s, &td.dims);
  set(m.float_data, dec_floats, &td.floats);
  set(m.int32_data, dec_int32s, &td.int32s);
  set(m.string_data, dec_present, &td.has_string);
  set(m.int64_data, dec_int64s, &td.int64s);
  set(m.name, dec_string, &td.name);
  set(m.raw_data, dec_raw, &td);
  set(m.double_data, dec_present, &td.has_double);
  set(m.uint64_data, dec_present, &td.has_uint64);
  set(m.external_data, dec_external, &td);
  if (!decode_msg(s, onemodel_onnx_TensorProto_fields, &m)) return false;
  if (m.has_data_location && m.data_location != 0 && m.data_location != 1)
    return format_error(s, msg("tensor '", td.name, "': data_location ", m.data_location, " is neither DEFAULT (0) nor EXTERNAL (1)"));

  TensorFields tf;
  tf.name = std::move(td.name);
  tf.has_data_type = m.has_data_type;
  tf.data_type = m.data_type;
  tf.dims = std::move(td.dims);
  tf.external = td.has_external || (m.has_data_location && m.data_location == 1 /* EXTERNAL */);
  tf.location = std::move(td.location);
  tf.floats = std::move(td.floats);
  tf.int32s = std::move(td.int32s);
  tf.int64s = std::move(td.int64s);
  tf.raw = std::move(td.raw);
  tf.raw_bytes = td.raw_bytes;
  tf.has_raw = td.has_raw;
  tf.other_data = td.has_double ? "double_data" : td.has_uint64 ? "uint64_data" : td.has_string ? "string_data" : "";
  Status st = finish_tensor(std::move(tf), where(), out);
  return st.is_ok() || fail(st);
}

bool dec_initializer(pb_istream_t* s, const pb_field_t* f, void** arg) {
  auto* list = static_cast<std::vector<TensorData>*>(*arg);
  Scope scope(msg("initializer[", list->size(), "]"));
  if (!need_ld(s, f)) return false;
  list->emplace_back();
  return decode_tensor(s, &list->back());
}

// ---- value infos ----

struct ValueDecode {
  ValueInfo* v;
  int type_fields = 0;    // TypeProto seen
  int tensor_fields = 0;  // TypeProto.tensor_type seen
  bool has_elem = false;
  int32_t elem = 0;
  std::string wrappers;   // the sequence ('S') and optional ('O') types around the tensor type, outermost first
};

bool dec_dim(pb_istream_t* s, const pb_field_t* f, void** arg) {
  auto* shape = static_cast<std::vector<Dim>*>(*arg);
  Scope scope(msg("dim[", shape->size(), "]"));
  if (!need_ld(s, f)) return false;
  if (shape->size() >= kMaxFileRank) return format_error(s, msg("more than ", kMaxFileRank, " dimensions"));
  Dim d;
  onemodel_onnx_TensorShapeProto_Dimension m = onemodel_onnx_TensorShapeProto_Dimension_init_zero;
  set(m.dim_param, dec_string, &d.param);
  if (!decode_msg(s, onemodel_onnx_TensorShapeProto_Dimension_fields, &m)) return false;
  if (m.has_dim_value) {
    if (m.dim_value < 0) return format_error(s, msg("dim_value is ", m.dim_value, "; a dimension is >= 0 or a dim_param name"));
    if (!d.param.empty()) return format_error(s, msg("both dim_value ", m.dim_value, " and dim_param '", d.param, "' are set"));
    d.size = m.dim_value;
  }
  shape->push_back(std::move(d));
  return true;
}

bool dec_shape(pb_istream_t* s, const pb_field_t* f, void** arg) {
  auto* vd = static_cast<ValueDecode*>(*arg);
  if (!need_ld(s, f)) return false;
  vd->v->has_shape = true;
  vd->v->shape.clear();  // a repeated shape field replaces the earlier one
  onemodel_onnx_TensorShapeProto m = onemodel_onnx_TensorShapeProto_init_zero;
  set(m.dim, dec_dim, &vd->v->shape);
  return decode_msg(s, onemodel_onnx_TensorShapeProto_fields, &m);
}

bool dec_tensor_type(pb_istream_t* s, const pb_field_t* f, void** arg) {
  auto* vd = static_cast<ValueDecode*>(*arg);
  if (!need_ld(s, f)) return false;
  ++vd->tensor_fields;
  onemodel_onnx_TypeProto_Tensor m = onemodel_onnx_TypeProto_Tensor_init_zero;
  set(m.shape, dec_shape, vd);
  if (!decode_msg(s, onemodel_onnx_TypeProto_Tensor_fields, &m)) return false;
  if (m.has_elem_type) {
    vd->has_elem = true;
    vd->elem = m.elem_type;
  }
  return true;
}

bool dec_type(pb_istream_t* s, const pb_field_t* f, void** arg);

// TypeProto.sequence_type / optional_type: the nested TypeProto, at most two levels deep (an
// optional sequence), checked before decoding it so a hostile nesting cannot recurse far.
template <typename Wrapper>
bool dec_wrapped_type(pb_istream_t* s, const pb_field_t* f, void** arg, char wrapper, Wrapper m, const pb_msgdesc_t* fields) {
  auto* vd = static_cast<ValueDecode*>(*arg);
  if (!need_ld(s, f)) return false;
  vd->wrappers.push_back(wrapper);
  if (vd->wrappers.size() > 2)
    return format_error(s, msg("value '", vd->v->name, "' nests sequence and optional types ", vd->wrappers.size(),
                               " deep; onemodel reads sequences of tensors and optionals of a tensor or a sequence"));
  set(m.elem_type, dec_type, vd);
  return decode_msg(s, fields, &m);
}
bool dec_sequence_type(pb_istream_t* s, const pb_field_t* f, void** arg) {
  return dec_wrapped_type(s, f, arg, 'S', onemodel_onnx_TypeProto_Sequence(onemodel_onnx_TypeProto_Sequence_init_zero),
                          onemodel_onnx_TypeProto_Sequence_fields);
}
bool dec_optional_type(pb_istream_t* s, const pb_field_t* f, void** arg) {
  return dec_wrapped_type(s, f, arg, 'O', onemodel_onnx_TypeProto_Optional(onemodel_onnx_TypeProto_Optional_init_zero),
                          onemodel_onnx_TypeProto_Optional_fields);
}

bool dec_type(pb_istream_t* s, const pb_field_t* f, void** arg) {
  auto* vd = static_cast<ValueDecode*>(*arg);
  if (!need_ld(s, f)) return false;
  ++vd->type_fields;
  onemodel_onnx_TypeProto m = onemodel_onnx_TypeProto_init_zero;
  set(m.tensor_type, dec_tensor_type, vd);
  set(m.sequence_type, dec_sequence_type, vd);
  set(m.optional_type, dec_optional_type, vd);
  return decode_msg(s, onemodel_onnx_TypeProto_fields, &m);
}

struct ValueList {
  std::vector<ValueInfo>* list;
  const char* role;  // input, output, value_info
};

// The kind (the sequence and optional types around the tensor type) and the dtype of a decoded
// TypeProto that has a tensor type.
bool finish_type(pb_istream_t* s, ValueDecode& vd) {
  ValueInfo& v = *vd.v;
  if (vd.wrappers.empty()) v.kind = graph::ValueKind::Tensor;
  else if (vd.wrappers == "S") v.kind = graph::ValueKind::Sequence;
  else if (vd.wrappers == "O") v.kind = graph::ValueKind::Optional;
  else if (vd.wrappers == "OS") v.kind = graph::ValueKind::OptionalSequence;
  else
    return format_error(s, msg("value '", v.name, "' is a ", vd.wrappers == "SS" ? "sequence of sequences" : "sequence of optionals",
                               "; onemodel reads sequences of tensors and optionals of a tensor or a sequence"));
  if (!vd.has_elem) return format_error(s, msg("value '", v.name, "' has a tensor type without elem_type"));
  Status st = dtype_from_code(vd.elem, msg("value '", v.name, "'"), &v.dtype);
  if (!st.is_ok()) return fail(st.with_context(msg("om::onnx::read: ", where())));
  return true;
}

bool dec_value_info(pb_istream_t* s, const pb_field_t* f, void** arg) {
  auto* vl = static_cast<ValueList*>(*arg);
  Scope scope(msg(vl->role, "[", vl->list->size(), "]"));
  if (!need_ld(s, f)) return false;
  ValueInfo v;
  v.has_shape = false;
  ValueDecode vd{&v, 0, 0, false, 0, {}};
  onemodel_onnx_ValueInfoProto m = onemodel_onnx_ValueInfoProto_init_zero;
  set(m.name, dec_string, &v.name);
  set(m.type, dec_type, &vd);
  if (!decode_msg(s, onemodel_onnx_ValueInfoProto_fields, &m)) return false;
  const bool is_value_info = std::strcmp(vl->role, "value_info") == 0;
  if (vd.tensor_fields == 0 && t_ctx->depth > 0 && !is_value_info) {
    v.has_type = false;  // a subgraph's value typed by what it is bound to (ONNX allows leaving it out)
    vl->list->push_back(std::move(v));
    return true;
  }
  if (vd.tensor_fields == 0) {
    if (is_value_info) return true;  // shapes of intermediates are optional: skip an untyped one
    return format_error(s, msg("graph ", vl->role, " '", v.name, "' has no tensor type (onemodel reads tensor values only)"));
  }
  if (!finish_type(s, vd)) return false;
  vl->list->push_back(std::move(v));
  return true;
}

// ---- nodes and attributes ----

struct AttrDecode {
  Attribute a;
  std::string ref_attr_name;
  int types = 0;
  int tensors = 0;
  int graphs = 0;
  bool has_s = false;
};

bool decode_graph(pb_istream_t* s, Graph* g);

// A subgraph (If's branches, Loop's body...): the nesting is bounded here, before the decoder
// recurses, so a hostile file cannot exhaust the stack.
bool decode_subgraph(pb_istream_t* s, Graph* g) {
  if (t_ctx->depth >= graph::kMaxSubgraphDepth)
    return fail(Status::error(ErrorKind::Format, msg("om::onnx::read: ", where(), ": subgraphs nest deeper than ",
                                                     graph::kMaxSubgraphDepth, " levels; onemodel refuses such a model")));
  ++t_ctx->depth;
  g->name.clear();
  g->opsets.clear();
  const bool ok = decode_graph(s, g);
  --t_ctx->depth;
  return ok;
}

bool dec_attr_g(pb_istream_t* s, const pb_field_t* f, void** arg) {
  auto* ad = static_cast<AttrDecode*>(*arg);
  Scope scope("g");
  if (!need_ld(s, f)) return false;
  ++ad->graphs;
  ad->a.g = std::make_shared<Graph>();
  return decode_subgraph(s, ad->a.g.get());
}

bool dec_attr_graphs(pb_istream_t* s, const pb_field_t* f, void** arg) {
  auto* ad = static_cast<AttrDecode*>(*arg);
  Scope scope(msg("graphs[", ad->a.graphs.size(), "]"));
  if (!need_ld(s, f)) return false;
  ad->a.graphs.push_back(std::make_shared<Graph>());
  return decode_subgraph(s, ad->a.graphs.back().get());
}

bool dec_attr_s(pb_istream_t* s, const pb_field_t* f, void** arg) {
  auto* ad = static_cast<AttrDecode*>(*arg);
  ad->has_s = true;
  return need_ld(s, f) && read_into(s, &ad->a.s);
}

bool dec_attr_t(pb_istream_t* s, const pb_field_t* f, void** arg) {
  auto* ad = static_cast<AttrDecode*>(*arg);
  Scope scope("t");
  if (!need_ld(s, f)) return false;
  ++ad->tensors;
  ad->a.t = std::make_shared<TensorData>();
  return decode_tensor(s, ad->a.t.get());
}

// A TYPE_PROTO attribute (Optional's `type`): a type with a tensor type inside.
bool dec_attr_tp(pb_istream_t* s, const pb_field_t* f, void** arg) {
  auto* ad = static_cast<AttrDecode*>(*arg);
  Scope scope("tp");
  if (!need_ld(s, f)) return false;
  if (++ad->types > 1) return format_error(s, "a type attribute carries more than one type");
  ad->a.tp = std::make_shared<ValueInfo>();
  ad->a.tp->has_shape = false;
  ValueDecode vd{ad->a.tp.get(), 1, 0, false, 0, {}};
  onemodel_onnx_TypeProto m = onemodel_onnx_TypeProto_init_zero;
  set(m.tensor_type, dec_tensor_type, &vd);
  set(m.sequence_type, dec_sequence_type, &vd);
  set(m.optional_type, dec_optional_type, &vd);
  if (!decode_msg(s, onemodel_onnx_TypeProto_fields, &m)) return false;
  if (vd.tensor_fields == 0) return format_error(s, "a type attribute without a tensor type (onemodel reads tensors, sequences and optionals)");
  return finish_type(s, vd);
}

struct NodeDecode {
  Node* n;
  Status deferred;  // an unsupported attribute kind: reported only if the op itself is supported
};

bool dec_attribute(pb_istream_t* s, const pb_field_t* f, void** arg) {
  auto* nd = static_cast<NodeDecode*>(*arg);
  Scope scope(msg("attribute[", nd->n->attributes.size(), "]"));
  if (!need_ld(s, f)) return false;
  AttrDecode ad;
  onemodel_onnx_AttributeProto m = onemodel_onnx_AttributeProto_init_zero;
  set(m.name, dec_string, &ad.a.name);
  set(m.s, dec_attr_s, &ad);
  set(m.t, dec_attr_t, &ad);
  set(m.g, dec_attr_g, &ad);
  set(m.graphs, dec_attr_graphs, &ad);
  set(m.floats, dec_floats, &ad.a.floats);
  set(m.ints, dec_int64s, &ad.a.ints);
  set(m.strings, dec_strings, &ad.a.strings);
  set(m.ref_attr_name, dec_string, &ad.ref_attr_name);
  set(m.tp, dec_attr_tp, &ad);
  if (!decode_msg(s, onemodel_onnx_AttributeProto_fields, &m)) return false;
  AttrPayload p;
  p.has_type = m.has_type;
  p.type = int(m.type);
  p.has_f = m.has_f;
  p.has_i = m.has_i;
  p.has_s = ad.has_s;
  p.tensors = ad.tensors;
  p.graphs = ad.graphs;
  p.graph_list = int(ad.a.graphs.size());
  p.types = ad.types;
  p.ref_attr_name = ad.ref_attr_name;
  ad.a.f = m.f;
  ad.a.i = m.i;
  Status deferred;
  Status st = finish_attribute(p, where(), &ad.a, &deferred);
  if (!st.is_ok()) return fail(st);
  if (!deferred.is_ok()) {
    if (nd->deferred.is_ok()) nd->deferred = deferred;
    return true;  // the attribute is dropped; the node is refused later
  }
  nd->n->attributes.push_back(std::move(ad.a));
  return true;
}

struct NodeList {
  std::vector<Node>* nodes;
  std::vector<Status>* deferred;
};

bool dec_node(pb_istream_t* s, const pb_field_t* f, void** arg) {
  auto* nl = static_cast<NodeList*>(*arg);
  Scope scope(msg("node[", nl->nodes->size(), "]"));
  if (!need_ld(s, f)) return false;
  Node n;
  NodeDecode nd{&n, Status::ok()};
  onemodel_onnx_NodeProto m = onemodel_onnx_NodeProto_init_zero;
  set(m.input, dec_strings, &n.inputs);
  set(m.output, dec_strings, &n.outputs);
  set(m.name, dec_string, &n.name);
  set(m.op_type, dec_string, &n.op_type);
  set(m.attribute, dec_attribute, &nd);
  set(m.domain, dec_string, &n.domain);
  if (!decode_msg(s, onemodel_onnx_NodeProto_fields, &m)) return false;
  if (n.op_type.empty()) return format_error(s, "node without op_type");
  nl->nodes->push_back(std::move(n));
  nl->deferred->push_back(nd.deferred);
  return true;
}

// ---- graph and model ----

// One GraphProto into g; its nodes' deferred attribute errors (subgraphs' too) join the model's.
bool decode_graph(pb_istream_t* s, Graph* gp) {
  Graph& g = *gp;
  NodeList nodes{&g.nodes, &t_ctx->out->node_deferred};
  ValueList inputs{&g.inputs, "input"}, outputs{&g.outputs, "output"}, infos{&g.value_info, "value_info"};
  onemodel_onnx_GraphProto m = onemodel_onnx_GraphProto_init_zero;
  set(m.node, dec_node, &nodes);
  set(m.name, dec_string, &g.name);
  set(m.initializer, dec_initializer, &g.initializers);
  set(m.input, dec_value_info, &inputs);
  set(m.output, dec_value_info, &outputs);
  set(m.value_info, dec_value_info, &infos);
  return decode_msg(s, onemodel_onnx_GraphProto_fields, &m);
}

bool dec_graph(pb_istream_t* s, const pb_field_t* f, void** arg) {
  auto* d = static_cast<Decoded*>(*arg);
  Scope scope("graph");
  if (!need_ld(s, f)) return false;
  if (++d->graph_fields > 1) return format_error(s, "the model has two graph fields");
  return decode_graph(s, &d->graph);
}

bool dec_opset(pb_istream_t* s, const pb_field_t* f, void** arg) {
  auto* d = static_cast<Decoded*>(*arg);
  Scope scope(msg("opset_import[", d->graph.opsets.size(), "]"));
  if (!need_ld(s, f)) return false;
  graph::OpsetImport o;
  onemodel_onnx_OperatorSetIdProto m = onemodel_onnx_OperatorSetIdProto_init_zero;
  set(m.domain, dec_string, &o.domain);
  if (!decode_msg(s, onemodel_onnx_OperatorSetIdProto_fields, &m)) return false;
  if (!m.has_version) return format_error(s, msg("opset import of domain '", o.domain, "' has no version"));
  o.version = m.version;
  d->graph.opsets.push_back(std::move(o));
  return true;
}

Result<Graph> decode_model(pb_istream_t* s, Ctx& ctx) {
  Decoded d;
  d.graph.opsets.clear();
  d.graph.name.clear();
  d.graph.producer_name.clear();
  d.graph.producer_version.clear();
  ctx.out = &d;
  Ctx* saved = t_ctx;
  t_ctx = &ctx;
  onemodel_onnx_ModelProto m = onemodel_onnx_ModelProto_init_zero;
  set(m.producer_name, dec_string, &d.graph.producer_name);
  set(m.producer_version, dec_string, &d.graph.producer_version);
  set(m.graph, dec_graph, &d);
  set(m.opset_import, dec_opset, &d);
  const bool ok = decode_msg(s, onemodel_onnx_ModelProto_fields, &m);
  t_ctx = saved;
  if (!ok) return ctx.error;
  d.has_ir_version = m.has_ir_version;
  d.ir_version = m.ir_version;
  OM_TRY(check_and_normalise(d));
  return std::move(d.graph);
}

}  // namespace

std::shared_ptr<uint8_t> alloc_aligned(size_t n) {
  const size_t cap = n == 0 ? 64 : (n + 63) / 64 * 64;
  void* p = ::aligned_alloc(64, cap);
  if (!p) return nullptr;
  return std::shared_ptr<uint8_t>(static_cast<uint8_t*>(p), [](uint8_t* q) { std::free(q); });
}

}  // namespace om::onnx::detail

namespace om::onnx {

namespace {
// The library format's magic (docs/format.md): such a file given to the ONNX reader gets the
// loader that fits, not a protobuf decoding error.
bool is_library_file(const uint8_t* head) { return std::memcmp(head, "ONEMODEL", 8) == 0; }
Status library_file_error() {
  return Status::error(ErrorKind::Format, "om::onnx::read: this is a onemodel library file (docs/format.md), not ONNX: open it with "
                                          "om::Session::load or om::Model::load");
}
}  // namespace

Result<graph::Graph> read_bytes(const uint8_t* data, size_t size) {
  static const uint8_t empty = 0;
  if (data && size >= 8 && is_library_file(data)) return library_file_error();
  detail::Ctx ctx;
  ctx.base = data ? data : &empty;
  pb_istream_t s = {detail::mem_read, const_cast<uint8_t*>(ctx.base), data ? size : 0, nullptr};
  return detail::decode_model(&s, ctx);
}

Result<graph::Graph> read_file(const std::string& path) {
  FILE* fp = std::fopen(path.c_str(), "rb");
  if (!fp) return Status::error(ErrorKind::Io, msg("om::onnx::read: cannot open '", path, "': ", std::strerror(errno)));
  long size = -1;
  if (std::fseek(fp, 0, SEEK_END) == 0) size = std::ftell(fp);
  if (size < 0 || std::fseek(fp, 0, SEEK_SET) != 0) {
    std::fclose(fp);
    return Status::error(ErrorKind::Io, msg("om::onnx::read: cannot determine the size of '", path, "' (not a regular file?)"));
  }
  uint8_t head[8];
  if (size >= 8 && std::fread(head, 1, 8, fp) == 8 && is_library_file(head)) {
    std::fclose(fp);
    return library_file_error().with_context(path);
  }
  if (std::fseek(fp, 0, SEEK_SET) != 0) {
    std::fclose(fp);
    return Status::error(ErrorKind::Io, msg("om::onnx::read: cannot rewind '", path, "'"));
  }
  // Decoding straight from the file: initializer bytes go from the stdio buffer into their own
  // aligned storage, so reading needs no whole-file buffer next to the weights.
  detail::Ctx ctx;
  ctx.file = fp;
  pb_istream_t s = {detail::file_read, fp, static_cast<size_t>(size), nullptr};
  Result<graph::Graph> r = detail::decode_model(&s, ctx);
  const bool io_error = std::ferror(fp) != 0;
  std::fclose(fp);
  if (io_error) return Status::error(ErrorKind::Io, msg("om::onnx::read: I/O error while reading '", path, "'"));
  if (!r.is_ok()) return r.status().with_context(path);
  return r;
}

Result<graph::TensorData> read_tensor_bytes(const uint8_t* data, size_t size) {
  static const uint8_t empty = 0;
  detail::Ctx ctx;
  ctx.base = data ? data : &empty;
  detail::Decoded d;
  ctx.out = &d;
  detail::Ctx* saved = detail::t_ctx;
  detail::t_ctx = &ctx;
  pb_istream_t s = {detail::mem_read, const_cast<uint8_t*>(ctx.base), data ? size : 0, nullptr};
  graph::TensorData t;
  const bool ok = detail::decode_tensor(&s, &t);
  detail::t_ctx = saved;
  if (!ok) return ctx.error;
  return t;
}

graph::Graph read(const std::vector<uint8_t>& bytes) { return unwrap(read_bytes(bytes.data(), bytes.size())); }
graph::Graph read(const std::string& path) { return unwrap(read_file(path)); }

}  // namespace om::onnx
