// Shared between the reader's nanopb decoding (onnx_reader.cpp) and its checks
// (onnx_reader_check.cpp). Not installed API.
#pragma once
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "onemodel/core/status.h"
#include "onemodel/graph/ir.h"

namespace om::onnx::detail {

// The decoded model before its checks.
struct Decoded {
  graph::Graph graph;
  int graph_fields = 0;
  bool has_ir_version = false;
  int64_t ir_version = 0;
  std::vector<Status> node_deferred;  // per node: an unsupported attribute, reported if the op is supported
};

// The fields of one TensorProto as decoded.
struct TensorFields {
  std::string name;
  bool has_data_type = false;
  int32_t data_type = 0;
  std::vector<int64_t> dims;
  bool external = false;
  std::string location;
  std::vector<float> floats;
  std::vector<int64_t> int32s;
  std::vector<int64_t> int64s;
  std::shared_ptr<uint8_t> raw;
  size_t raw_bytes = 0;
  bool has_raw = false;
  std::string other_data;  // name of a data field onemodel does not take, if present
};

struct AttrPayload {
  bool has_type = false;
  int type = 0;
  bool has_f = false, has_i = false, has_s = false;
  int tensors = 0;
  int graphs = 0;       // g fields (GRAPH)
  int graph_list = 0;   // graphs entries (GRAPHS)
  int types = 0;        // tp fields (TYPE_PROTO)
  std::string ref_attr_name;
};

// 64-byte aligned storage (kernels and the runtime like aligned weights); nullptr on failure.
std::shared_ptr<uint8_t> alloc_aligned(size_t n);

// ONNX elem type code -> DType: Format for codes that are not ONNX types, Unsupported for ONNX
// types onemodel does not have (string, complex, ...). `what` names the value for the message.
Status dtype_from_code(int32_t code, const std::string& what, DType* out);

Status finish_tensor(TensorFields tf, const std::string& where, graph::TensorData* out);
// Format errors are returned; an attribute kind onemodel does not read (graph, ...) goes to
// *deferred so that an unsupported op is reported as such first.
Status finish_attribute(const AttrPayload& p, const std::string& where, graph::Attribute* a, Status* deferred);
// Opsets, operator support (every unsupported op type listed), attribute types, opset-20
// normalisation, and the IR verifier.
Status check_and_normalise(Decoded& d);
// Puts the nodes in topological order, keeping the file's order wherever it is valid (a sorted
// graph is left untouched); *file_index gets each sorted node's index in the file. A cycle is
// a Format error naming its nodes (onnx_sort.cpp).
Status sort_nodes(graph::Graph& g, std::vector<size_t>* file_index);

// Old-opset forms the registry's records do not read, converted into ones they do
// (onnx_legacy.cpp). legacy_version: the ONNX version of `op_type` a model of `opset` uses when
// the reader converts it, else 0.
int legacy_version(const std::string& op_type, int64_t opset);
struct LegacyContext {
  std::unordered_set<std::string>* names = nullptr;  // every value name of the graph
  std::vector<graph::Node> before;                    // nodes to insert before the converted one
  int reaches = 0;        // the ONNX version whose semantics the converted node has
  bool replaced = false;  // the node and `before` are already in the registry's newest forms
  std::string fresh(const std::string& base) {
    std::string n = base;
    for (int s = 1; names->count(n); ++s) n = base + "_" + std::to_string(s);
    names->insert(n);
    return n;
  }
};
// Converts g.nodes[index] (of a model importing `opset`); an old form whose semantics do not
// map is Unsupported, naming the operator and its version.
Status convert_legacy(graph::Graph& g, size_t index, int64_t opset, LegacyContext& ctx);

}  // namespace om::onnx::detail
