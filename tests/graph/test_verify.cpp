// The IR verifier: topological order, single assignment, defined inputs, produced outputs,
// initializer payloads and attribute types.
#include <doctest/doctest.h>

#include "onemodel/graph/ir.h"

using namespace om;
using namespace om::graph;

namespace {

Graph chain() {
  Graph g;
  g.inputs = {ValueInfo{"x", DType::f32, true, {Dim::symbol("n"), Dim::fixed(2)}}};
  g.initializers = {TensorData::from_vector<float>("w", {2}, {1, 2})};
  g.nodes = {Node{"Add", "", "a", {"x", "w"}, {"h"}, {}}, Node{"Relu", "", "r", {"h"}, {"y"}, {}}};
  g.outputs = {ValueInfo{"y", DType::f32, true, {Dim::symbol("n"), Dim::fixed(2)}}};
  return g;
}

void expect_bad(const Graph& g, const char* part) {
  Status s = verify(g);
  REQUIRE(!s.is_ok());
  CHECK(s.kind() == ErrorKind::Format);
  CHECK_MESSAGE(s.message().find(part) != std::string::npos, s.message());
}

}  // namespace

TEST_CASE("verify: a well-formed graph passes") {
  CHECK(verify(chain()).is_ok());
  Graph g = chain();
  g.nodes[0].inputs.push_back("");  // an omitted optional input
  g.nodes[1].attributes = {Attribute::of_int("k", 1), Attribute::of_floats("f", {1.0f}),
                           Attribute::of_tensor("t", TensorData::from_vector<int64_t>("", {2}, {1, 2}))};
  CHECK(verify(g).is_ok());
  g.inputs.push_back(ValueInfo{"w", DType::f32, true, {Dim::fixed(2)}});  // an input an initializer overrides
  CHECK(verify(g).is_ok());
}

TEST_CASE("verify: topological order and defined inputs") {
  Graph g = chain();
  std::swap(g.nodes[0], g.nodes[1]);
  expect_bad(g, "reads 'h'");
  g = chain();
  g.nodes[1].inputs = {"missing"};
  expect_bad(g, "'missing'");
  g = chain();
  g.outputs[0].name = "nowhere";
  expect_bad(g, "'nowhere' is never produced");
  g = chain();
  g.nodes[1].op_type.clear();
  expect_bad(g, "no op_type");
}

TEST_CASE("verify: single assignment") {
  Graph g = chain();
  g.nodes[1].outputs = {"h"};
  g.outputs[0].name = "h";
  expect_bad(g, "assigned twice");
  g = chain();
  g.initializers.push_back(TensorData::from_vector<float>("h", {1}, {0}));
  expect_bad(g, "assigned twice");
  g = chain();
  g.nodes[0].outputs = {"x"};
  expect_bad(g, "assigned twice");
  g = chain();
  g.initializers[0].name.clear();
  expect_bad(g, "empty name");
}

TEST_CASE("verify: initializer payloads") {
  Graph g = chain();
  g.initializers[0].nbytes = 4;
  expect_bad(g, "holds 4 bytes");
  g = chain();
  g.initializers[0].dims = {-2};
  expect_bad(g, "negative dim");
  g = chain();
  g.initializers[0].dtype = static_cast<DType>(14);  // complex64: no onemodel dtype
  expect_bad(g, "invalid dtype");
  g = chain();
  g.initializers[0].bytes = nullptr;
  expect_bad(g, "no data");
}

TEST_CASE("verify: attribute types") {
  Graph g = chain();
  g.nodes[1].attributes = {Attribute::of_int("", 1)};
  expect_bad(g, "without a name");
  g = chain();
  Attribute t;
  t.name = "value";
  t.type = AttrType::Tensor;
  g.nodes[1].attributes = {t};
  expect_bad(g, "has no tensor");
  g = chain();
  Attribute bad = Attribute::of_int("k", 1);
  bad.type = static_cast<AttrType>(11);  // SPARSE_TENSOR: not an IR attribute type
  g.nodes[1].attributes = {bad};
  expect_bad(g, "unknown type code 11");
  g = chain();
  Attribute no_graph = Attribute::of_int("k", 1);
  no_graph.type = AttrType::Graph;  // declared GRAPH, no graph held
  g.nodes[1].attributes = {no_graph};
  expect_bad(g, "has no graph");
  g = chain();
  g.nodes[1].attributes = {Attribute::of_int("k", 1), Attribute::of_float("k", 2)};
  expect_bad(g, "appears twice");
  g = chain();
  TensorData broken = TensorData::from_vector<float>("", {3}, {1, 2, 3});
  broken.dims = {4};
  g.nodes[1].attributes = {Attribute::of_tensor("value", broken)};
  expect_bad(g, "tensor attribute 'value'");
}
