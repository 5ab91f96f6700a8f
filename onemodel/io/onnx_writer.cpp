// ONNX writer: graph IR -> ModelProto bytes through nanopb. Every field is a callback that
// reads the IR directly, so the only large data touched is each initializer's own storage,
// handed to the output stream in one piece (no second copy of the weights in memory).
// nanopb encodes fields in declaration order, which onnx.proto keeps ascending.
#include <pb_encode.h>

#include <climits>
#include <cstdio>

#include "onemodel/io/onnx.h"
#include "onemodel/io/onnx.h"
#include "onnx.pb.h"

namespace om::onnx {
namespace {

using graph::Attribute;
using graph::AttrType;
using graph::Dim;
using graph::Graph;
using graph::Node;
using graph::OpsetImport;
using graph::TensorData;
using graph::ValueInfo;

using EncodeFn = bool (*)(pb_ostream_t*, const pb_field_t*, void* const*);

void set(pb_callback_t& cb, EncodeFn fn, const void* arg) {
  cb.funcs.encode = fn;
  cb.arg = const_cast<void*>(arg);
}

template <typename T>
const T& arg_as(void* const* arg) {
  return *static_cast<const T*>(*arg);
}

bool put_bytes(pb_ostream_t* s, const pb_field_t* f, const void* data, size_t n) {
  return pb_encode_tag_for_field(s, f) && pb_encode_string(s, static_cast<const pb_byte_t*>(data), n);
}

// Optional string: an empty one is left out (its proto2 default is "").
bool enc_string(pb_ostream_t* s, const pb_field_t* f, void* const* arg) {
  const std::string& v = arg_as<std::string>(arg);
  return v.empty() || put_bytes(s, f, v.data(), v.size());
}

// Repeated string: every entry, empty ones too (an empty node input marks an omitted input).
bool enc_strings(pb_ostream_t* s, const pb_field_t* f, void* const* arg) {
  for (const std::string& v : arg_as<std::vector<std::string>>(arg))
    if (!put_bytes(s, f, v.data(), v.size())) return false;
  return true;
}

// Repeated int64 / float, unpacked: that is how the ONNX schema (proto2, no [packed]) declares
// TensorProto.dims and AttributeProto.ints/floats, so this matches what ONNX itself writes.
bool enc_ints(pb_ostream_t* s, const pb_field_t* f, void* const* arg) {
  for (int64_t v : arg_as<std::vector<int64_t>>(arg))
    if (!pb_encode_tag_for_field(s, f) || !pb_encode_varint(s, static_cast<uint64_t>(v))) return false;
  return true;
}

bool enc_floats(pb_ostream_t* s, const pb_field_t* f, void* const* arg) {
  for (const float& v : arg_as<std::vector<float>>(arg))
    if (!pb_encode_tag_for_field(s, f) || !pb_encode_fixed32(s, &v)) return false;
  return true;
}

// The weights: one pb_write of the tensor's own bytes. On nanopb's sizing pass the stream has
// no callback and only counts.
bool enc_raw_data(pb_ostream_t* s, const pb_field_t* f, void* const* arg) {
  const TensorData& t = arg_as<TensorData>(arg);
  return t.nbytes == 0 || put_bytes(s, f, t.bytes, t.nbytes);
}

onemodel_onnx_TensorProto tensor_msg(const TensorData& t) {
  onemodel_onnx_TensorProto m = onemodel_onnx_TensorProto_init_zero;
  set(m.dims, enc_ints, &t.dims);
  m.has_data_type = true;
  m.data_type = static_cast<int32_t>(t.dtype);
  set(m.name, enc_string, &t.name);
  set(m.raw_data, enc_raw_data, &t);
  return m;
}

bool enc_tensor(pb_ostream_t* s, const pb_field_t* f, void* const* arg) {
  onemodel_onnx_TensorProto m = tensor_msg(arg_as<TensorData>(arg));
  return pb_encode_tag_for_field(s, f) && pb_encode_submessage(s, onemodel_onnx_TensorProto_fields, &m);
}

bool enc_tensors(pb_ostream_t* s, const pb_field_t* f, void* const* arg) {
  for (const TensorData& t : arg_as<std::vector<TensorData>>(arg)) {
    onemodel_onnx_TensorProto m = tensor_msg(t);
    if (!pb_encode_tag_for_field(s, f) || !pb_encode_submessage(s, onemodel_onnx_TensorProto_fields, &m)) return false;
  }
  return true;
}

bool enc_dims(pb_ostream_t* s, const pb_field_t* f, void* const* arg) {
  for (const Dim& d : arg_as<std::vector<Dim>>(arg)) {
    onemodel_onnx_TensorShapeProto_Dimension m = onemodel_onnx_TensorShapeProto_Dimension_init_zero;
    if (d.is_static()) {
      m.has_dim_value = true;
      m.dim_value = d.size;
    } else {
      set(m.dim_param, enc_string, &d.param);  // empty param: an unknown dimension, no field
    }
    if (!pb_encode_tag_for_field(s, f) || !pb_encode_submessage(s, onemodel_onnx_TensorShapeProto_Dimension_fields, &m))
      return false;
  }
  return true;
}

bool enc_shape(pb_ostream_t* s, const pb_field_t* f, void* const* arg) {
  onemodel_onnx_TensorShapeProto m = onemodel_onnx_TensorShapeProto_init_zero;
  set(m.dim, enc_dims, &arg_as<ValueInfo>(arg).shape);
  return pb_encode_tag_for_field(s, f) && pb_encode_submessage(s, onemodel_onnx_TensorShapeProto_fields, &m);
}

bool enc_tensor_type(pb_ostream_t* s, const pb_field_t* f, void* const* arg) {
  const ValueInfo& v = arg_as<ValueInfo>(arg);
  onemodel_onnx_TypeProto_Tensor m = onemodel_onnx_TypeProto_Tensor_init_zero;
  m.has_elem_type = true;
  m.elem_type = static_cast<int32_t>(v.dtype);
  if (v.has_shape) set(m.shape, enc_shape, &v);
  return pb_encode_tag_for_field(s, f) && pb_encode_submessage(s, onemodel_onnx_TypeProto_Tensor_fields, &m);
}

// One level of a value's TypeProto: the sequence and optional types around its tensor type,
// outermost first ("S", "O", "OS"), `level` of them already written.
struct TypeLevel {
  const ValueInfo* v;
  size_t level;
};
const char* type_wrappers(graph::ValueKind k) {
  switch (k) {
    case graph::ValueKind::Sequence: return "S";
    case graph::ValueKind::Optional: return "O";
    case graph::ValueKind::OptionalSequence: return "OS";
    case graph::ValueKind::Tensor: break;
  }
  return "";
}

bool enc_type_level(pb_ostream_t* s, const pb_field_t* f, void* const* arg);

template <typename Wrapper>
bool enc_wrapped(pb_ostream_t* s, const pb_field_t* f, const TypeLevel& at, Wrapper m, const pb_msgdesc_t* fields) {
  TypeLevel inner{at.v, at.level + 1};
  set(m.elem_type, enc_type_level, &inner);
  return pb_encode_tag_for_field(s, f) && pb_encode_submessage(s, fields, &m);
}
bool enc_sequence_type(pb_ostream_t* s, const pb_field_t* f, void* const* arg) {
  return enc_wrapped(s, f, arg_as<TypeLevel>(arg), onemodel_onnx_TypeProto_Sequence(onemodel_onnx_TypeProto_Sequence_init_zero),
                     onemodel_onnx_TypeProto_Sequence_fields);
}
bool enc_optional_type(pb_ostream_t* s, const pb_field_t* f, void* const* arg) {
  return enc_wrapped(s, f, arg_as<TypeLevel>(arg), onemodel_onnx_TypeProto_Optional(onemodel_onnx_TypeProto_Optional_init_zero),
                     onemodel_onnx_TypeProto_Optional_fields);
}

bool enc_type_level(pb_ostream_t* s, const pb_field_t* f, void* const* arg) {
  const TypeLevel& at = arg_as<TypeLevel>(arg);
  const char w = type_wrappers(at.v->kind)[at.level];
  onemodel_onnx_TypeProto m = onemodel_onnx_TypeProto_init_zero;
  if (w == 'S') set(m.sequence_type, enc_sequence_type, *arg);
  else if (w == 'O') set(m.optional_type, enc_optional_type, *arg);
  else set(m.tensor_type, enc_tensor_type, at.v);
  return pb_encode_tag_for_field(s, f) && pb_encode_submessage(s, onemodel_onnx_TypeProto_fields, &m);
}

bool enc_type(pb_ostream_t* s, const pb_field_t* f, void* const* arg) {
  TypeLevel top{&arg_as<ValueInfo>(arg), 0};
  void* p = &top;
  return enc_type_level(s, f, &p);
}

bool enc_value_infos(pb_ostream_t* s, const pb_field_t* f, void* const* arg) {
  for (const ValueInfo& v : arg_as<std::vector<ValueInfo>>(arg)) {
    onemodel_onnx_ValueInfoProto m = onemodel_onnx_ValueInfoProto_init_zero;
    set(m.name, enc_string, &v.name);
    if (v.has_type) set(m.type, enc_type, &v);
    if (!pb_encode_tag_for_field(s, f) || !pb_encode_submessage(s, onemodel_onnx_ValueInfoProto_fields, &m)) return false;
  }
  return true;
}

bool enc_graph(pb_ostream_t* s, const pb_field_t* f, void* const* arg);

bool enc_graphs(pb_ostream_t* s, const pb_field_t* f, void* const* arg) {
  for (const auto& g : arg_as<std::vector<std::shared_ptr<Graph>>>(arg)) {
    void* p = g.get();
    if (!enc_graph(s, f, &p)) return false;
  }
  return true;
}

bool enc_attributes(pb_ostream_t* s, const pb_field_t* f, void* const* arg) {
  for (const Attribute& a : arg_as<std::vector<Attribute>>(arg)) {
    onemodel_onnx_AttributeProto m = onemodel_onnx_AttributeProto_init_zero;
    set(m.name, enc_string, &a.name);
    switch (a.type) {
      case AttrType::Float: m.has_f = true; m.f = a.f; break;
      case AttrType::Int: m.has_i = true; m.i = a.i; break;
      case AttrType::String: set(m.s, enc_string, &a.s); break;
      case AttrType::Tensor: set(m.t, enc_tensor, a.t.get()); break;
      case AttrType::Floats: set(m.floats, enc_floats, &a.floats); break;
      case AttrType::Ints: set(m.ints, enc_ints, &a.ints); break;
      case AttrType::Strings: set(m.strings, enc_strings, &a.strings); break;
      case AttrType::Graph: set(m.g, enc_graph, a.g.get()); break;
      case AttrType::Graphs: set(m.graphs, enc_graphs, &a.graphs); break;
      case AttrType::TypeProto: set(m.tp, enc_type, a.tp.get()); break;
    }
    m.has_type = true;
    m.type = static_cast<int32_t>(a.type);
    if (!pb_encode_tag_for_field(s, f) || !pb_encode_submessage(s, onemodel_onnx_AttributeProto_fields, &m)) return false;
  }
  return true;
}

bool enc_nodes(pb_ostream_t* s, const pb_field_t* f, void* const* arg) {
  for (const Node& n : arg_as<std::vector<Node>>(arg)) {
    onemodel_onnx_NodeProto m = onemodel_onnx_NodeProto_init_zero;
    set(m.input, enc_strings, &n.inputs);
    set(m.output, enc_strings, &n.outputs);
    set(m.name, enc_string, &n.name);
    set(m.op_type, enc_string, &n.op_type);
    set(m.attribute, enc_attributes, &n.attributes);
    set(m.domain, enc_string, &n.domain);
    if (!pb_encode_tag_for_field(s, f) || !pb_encode_submessage(s, onemodel_onnx_NodeProto_fields, &m)) return false;
  }
  return true;
}

bool enc_graph(pb_ostream_t* s, const pb_field_t* f, void* const* arg) {
  const Graph& g = arg_as<Graph>(arg);
  onemodel_onnx_GraphProto m = onemodel_onnx_GraphProto_init_zero;
  set(m.node, enc_nodes, &g.nodes);
  set(m.name, enc_string, &g.name);
  set(m.initializer, enc_tensors, &g.initializers);
  set(m.input, enc_value_infos, &g.inputs);
  set(m.output, enc_value_infos, &g.outputs);
  set(m.value_info, enc_value_infos, &g.value_info);
  return pb_encode_tag_for_field(s, f) && pb_encode_submessage(s, onemodel_onnx_GraphProto_fields, &m);
}

bool enc_opsets(pb_ostream_t* s, const pb_field_t* f, void* const* arg) {
  for (const OpsetImport& o : arg_as<std::vector<OpsetImport>>(arg)) {
    onemodel_onnx_OperatorSetIdProto m = onemodel_onnx_OperatorSetIdProto_init_zero;
    set(m.domain, enc_string, &o.domain);
    m.has_version = true;
    m.version = o.version;
    if (!pb_encode_tag_for_field(s, f) || !pb_encode_submessage(s, onemodel_onnx_OperatorSetIdProto_fields, &m)) return false;
  }
  return true;
}

// Everything the callbacks point at, alive for the whole encode.
struct ModelView {
  const Graph* g = nullptr;
  std::vector<OpsetImport> opsets;
  onemodel_onnx_ModelProto msg = onemodel_onnx_ModelProto_init_zero;
};

constexpr size_t kProtobufLimit = size_t(INT32_MAX);  // protobuf parsers refuse 2 GiB and more

Status check_tensor_size(const TensorData& t, const char* what) {
  if (t.nbytes > kProtobufLimit)
    return Status::error(ErrorKind::Unsupported,
                         msg("om::onnx::write: ", what, " '", t.name, "' holds ", t.nbytes,
                             " bytes; an ONNX (protobuf) file cannot hold a tensor of 2 GiB or more. "
                             "Save the model in the library format (save) instead, or split the tensor"));
  return Status::ok();
}

// Every tensor of g and of its subgraphs (verify() bounds their nesting).
Status check_tensor_sizes(const Graph& g) {
  for (const TensorData& t : g.initializers) OM_TRY(check_tensor_size(t, "initializer"));
  for (const Node& n : g.nodes)
    for (const Attribute& a : n.attributes) {
      if (a.type == AttrType::Tensor) OM_TRY(check_tensor_size(*a.t, "tensor attribute"));
      if (a.type == AttrType::Graph) OM_TRY(check_tensor_sizes(*a.g));
      if (a.type == AttrType::Graphs)
        for (const auto& sub : a.graphs) OM_TRY(check_tensor_sizes(*sub));
    }
  return Status::ok();
}

// Checks the graph and prepares the message. The default-domain opset is written as 20: the IR
// is always in opset-20 form (the reader normalises older files).
Status prepare(const Graph& g, graph::GraphCheck check, ModelView& v) {
  if (check == graph::GraphCheck::Verify) OM_TRY(graph::verify(g).with_context("om::onnx::write"));
  OM_TRY(check_tensor_sizes(g));
  for (const auto* list : {&g.inputs, &g.outputs, &g.value_info})
    for (const ValueInfo& vi : *list)
      if (dtype_size(vi.dtype) == 0)
        return Status::error(ErrorKind::InvalidArgument,
                             msg("om::onnx::write: value '", vi.name, "' has an invalid dtype code ", int(vi.dtype)));
  v.g = &g;
  v.opsets.push_back(OpsetImport{"", kMaxOpset});
  for (const OpsetImport& o : g.opsets)
    if (!graph::is_default_domain(o.domain)) v.opsets.push_back(o);
  v.msg.has_ir_version = true;
  v.msg.ir_version = kIrVersion;
  set(v.msg.producer_name, enc_string, &g.producer_name);
  set(v.msg.producer_version, enc_string, &g.producer_version);
  set(v.msg.graph, enc_graph, &g);
  set(v.msg.opset_import, enc_opsets, &v.opsets);
  return Status::ok();
}

Result<size_t> encoded_size(const ModelView& v) {
  size_t size = 0;
  if (!pb_get_encoded_size(&size, onemodel_onnx_ModelProto_fields, &v.msg))
    return Status::error(ErrorKind::Internal, "om::onnx::write: nanopb could not size the model");
  if (size > kProtobufLimit)
    return Status::error(ErrorKind::Unsupported,
                         msg("om::onnx::write: the model needs ", size,
                             " bytes; an ONNX (protobuf) file must stay under 2 GiB. Save it in the library format instead"));
  return size;
}

bool file_write(pb_ostream_t* s, const pb_byte_t* buf, size_t n) {
  return std::fwrite(buf, 1, n, static_cast<FILE*>(s->state)) == n;
}

}  // namespace

Result<std::vector<uint8_t>> write_bytes(const Graph& g, graph::GraphCheck check) {
  ModelView v;
  OM_TRY(prepare(g, check, v));
  OM_ASSIGN_OR_RETURN(size_t size, encoded_size(v));
  std::vector<uint8_t> out(size);
  pb_ostream_t s = pb_ostream_from_buffer(out.data(), out.size());
  if (!pb_encode(&s, onemodel_onnx_ModelProto_fields, &v.msg) || s.bytes_written != size)
    return Status::error(ErrorKind::Internal, msg("om::onnx::write: nanopb encoding failed: ", PB_GET_ERROR(&s)));
  return out;
}

Status write_file(const Graph& g, const std::string& path, graph::GraphCheck check) {
  ModelView v;
  OM_TRY(prepare(g, check, v));
  OM_ASSIGN_OR_RETURN(size_t size, encoded_size(v));
  FILE* fp = std::fopen(path.c_str(), "wb");
  if (!fp) return Status::error(ErrorKind::Io, msg("om::onnx::write: cannot open '", path, "' for writing"));
  pb_ostream_t s = {file_write, fp, SIZE_MAX, 0, nullptr};
  const bool ok = pb_encode(&s, onemodel_onnx_ModelProto_fields, &v.msg) && s.bytes_written == size;
  const bool closed = std::fclose(fp) == 0;
  if (!ok || !closed) {
    std::remove(path.c_str());
    return Status::error(ErrorKind::Io, msg("om::onnx::write: writing '", path, "' failed after ", s.bytes_written, " of ",
                                            size, " bytes (disk full or I/O error?)"));
  }
  return Status::ok();
}

std::vector<uint8_t> write(const Graph& g) { return unwrap(write_bytes(g)); }
void write(const Graph& g, const std::string& path) { check(write_file(g, path)); }

}  // namespace om::onnx
