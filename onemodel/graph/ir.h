// The graph IR: one representation for traced graphs, imported ONNX files and library-format
// files. Plain data, ONNX-shaped: values are named, nodes carry an ONNX op type and typed
// attributes, initializers own or reference their bytes.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "onemodel/core/dtype.h"
#include "onemodel/core/status.h"

namespace om::graph {

// "" and "ai.onnx" both name the default ONNX domain.
bool is_default_domain(const std::string& domain);

// One axis: a static size (size >= 0), a symbolic one (param non-empty), or unknown (neither).
struct Dim {
  int64_t size = -1;
  std::string param;
  static Dim fixed(int64_t n) { return Dim{n, {}}; }
  static Dim symbol(std::string name) { return Dim{-1, std::move(name)}; }
  bool is_static() const { return size >= 0; }
  bool is_symbolic() const { return !param.empty(); }
  bool operator==(const Dim& o) const { return size == o.size && param == o.param; }
};

// What a value holds (ONNX's TypeProto): a tensor, a sequence of tensors, or an optional one of
// those. dtype and shape always describe the tensors (a sequence's elements, an optional's
// content). Graphs with sequences or optionals run through the sequence lowering
// (runtime/sequence_lowering.h; docs/onnx.md, "Sequences and optionals").
enum class ValueKind : uint8_t { Tensor = 0, Sequence = 1, Optional = 2, OptionalSequence = 3 };
const char* value_kind_name(ValueKind k);  // "tensor", "sequence", "optional", "optional sequence"

struct ValueInfo {
  std::string name;
  DType dtype = DType::f32;
  bool has_shape = true;  // false: rank unknown
  std::vector<Dim> shape;
  // false: the file gives no type (allowed for a subgraph's inputs and outputs, which take the
  // types of what they are bound to); dtype is then meaningless and the writer leaves it out.
  bool has_type = true;
  // Last, so that brace-initialised tensor infos ({name, dtype, has_shape, shape}) stay valid.
  ValueKind kind = ValueKind::Tensor;
};

// Tensor payload of an initializer or a tensor attribute. `bytes` points either into `owner`'s
// buffer (copied, decoded) or into memory kept alive by `owner` (a mapped file, a tensor store).
struct TensorData {
  std::string name;
  DType dtype = DType::f32;
  std::vector<int64_t> dims;
  std::shared_ptr<const void> owner;
  const uint8_t* bytes = nullptr;
  size_t nbytes = 0;

  static TensorData copy_of(std::string name, DType dtype, std::vector<int64_t> dims, const void* data,
                            size_t nbytes);
  template <typename T>
  static TensorData from_vector(std::string name, std::vector<int64_t> dims, const std::vector<T>& v) {
    return copy_of(std::move(name), dtype_of<T>::value, std::move(dims), v.data(), v.size() * sizeof(T));
  }
  int64_t numel() const;
  template <typename T>
  const T* data() const { return reinterpret_cast<const T*>(bytes); }
};

struct Graph;

// Codes equal ONNX AttributeProto.AttributeType.
enum class AttrType : int32_t {
  Float = 1, Int = 2, String = 3, Tensor = 4, Graph = 5, Floats = 6, Ints = 7, Strings = 8, Graphs = 10, TypeProto = 13
};

// Subgraphs (If's branches, Loop's and Scan's bodies) nest at most this deep: a hostile file's
// nesting is refused by the reader and verify() before anything recurses further.
constexpr int kMaxSubgraphDepth = 16;

struct Attribute {
  std::string name;
  AttrType type = AttrType::Int;
  float f = 0;
  int64_t i = 0;
  std::string s;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::shared_ptr<TensorData> t;
  // A GRAPH attribute's graph, a GRAPHS attribute's graphs. Copies of a node share them: no pass
  // rewrites a subgraph in place.
  std::shared_ptr<Graph> g;
  std::vector<std::shared_ptr<Graph>> graphs;
  // A TYPE_PROTO attribute's type (Optional's `type`): kind, dtype and shape; the name is empty.
  std::shared_ptr<ValueInfo> tp;

  static Attribute of_int(std::string name, int64_t v);
  static Attribute of_float(std::string name, float v);
  static Attribute of_string(std::string name, std::string v);
  static Attribute of_ints(std::string name, std::vector<int64_t> v);
  static Attribute of_floats(std::string name, std::vector<float> v);
  static Attribute of_tensor(std::string name, TensorData v);
  static Attribute of_graph(std::string name, Graph v);
};

struct Node {
  std::string op_type;
  std::string domain;  // "" = ai.onnx
  std::string name;
  std::vector<std::string> inputs;  // "" marks an omitted optional input
  std::vector<std::string> outputs;
  std::vector<Attribute> attributes;

  // The one attribute-reading API. Names are views, so a lookup by a literal builds no string.
  const Attribute* attr(std::string_view name) const;
  int64_t attr_int(std::string_view name, int64_t fallback) const;
  float attr_float(std::string_view name, float fallback) const;
  std::string attr_string(std::string_view name, const std::string& fallback) const;
  // A string attribute as a view of the node's own text (no copy), or `fallback`.
  std::string_view attr_text(std::string_view name, std::string_view fallback) const;
  // Whether string attribute `name` is present and equals `value`.
  bool attr_is(std::string_view name, std::string_view value) const;
  std::vector<int64_t> attr_ints(std::string_view name) const;  // empty when absent
  // For messages: "Reshape node 'name'", or "Reshape node producing 'y'" when it has no name.
  std::string label() const;
};

struct OpsetImport {
  std::string domain;  // "" = ai.onnx
  int64_t version = 20;
};

struct Graph {
  std::string name = "onemodel";
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> outputs;
  std::vector<ValueInfo> value_info;  // optional shapes of intermediate values
  std::vector<Node> nodes;            // topological order
  std::vector<TensorData> initializers;
  std::vector<OpsetImport> opsets{{"", 20}};
  int64_t ir_version = 9;
  std::string producer_name = "onemodel";
  std::string producer_version = "0.1.0";

  int64_t opset_version(const std::string& domain = "") const;  // 0 when not imported
  const TensorData* find_initializer(const std::string& name) const;
  // The position of the graph input so named (the last, as a later one would shadow), or
  // inputs.size() when there is none.
  size_t find_input(std::string_view name) const;
};

// Topological order, single assignment, every input defined (graph input, initializer or an
// earlier node's output), outputs defined, attribute payloads consistent with their types.
// Subgraphs likewise, where a name may also be a value of an enclosing graph defined before the
// node holding the subgraph (ONNX's outer-scope rule); a subgraph never redefines an enclosing
// graph's name, and nesting is bounded by kMaxSubgraphDepth.
Status verify(const Graph& g);

// The names node `n`'s subgraphs read from the graph holding `n` (outer-scope references, nested
// subgraphs' included), each once, in first-use order. Passes keep these values alive and
// unrenamed, as they do graph outputs.
std::vector<std::string> outer_reads(const Node& n);
// Every node's outer_reads in g.
std::vector<std::string> outer_reads(const Graph& g);
// Whether some node of g holds a subgraph.
bool has_subgraphs(const Graph& g);

// Whether a function handed a graph must verify it. A graph is verified once where it enters
// the library (reader, tracer, passes); functions handed a graph that already passed (a
// TracedModel's, a Session's own) say AlreadyVerified.
enum class GraphCheck { Verify, AlreadyVerified };
// How many times verify() ran in this process (tests hold the hand-over rule with it).
uint64_t verify_count();

}  // namespace om::graph
