// Opsets 7..20: older node forms are upgraded by the operators' registry records (moved
// attributes, hooks) and then run like the newest form; forms the upgrade cannot express are
// refused naming the operator and the version (docs/onnx.md, "Opsets").
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "io_helpers.h"
#include "onemodel/core/tensor.h"
#include "onemodel/io/onnx.h"
#include "onemodel/runtime/session.h"

using namespace om;
using iotest::Pb;

namespace {

Pb attr_float(const std::string& name, float v) { return Pb().str(1, name).f32(2, v).i64(20, 1); }

Result<graph::Graph> read_pb(const Pb& p) { return onnx::read_bytes(p.b.data(), p.b.size()); }

// One node over input x (f32 of dims) to output y, in a model of `opset`.
Pb one_node(const Pb& node, const std::vector<int64_t>& dims, int64_t opset) {
  Pb g;
  g.msg(1, node).str(2, "g").msg(11, iotest::value_info("x", 1, dims)).msg(12, Pb().str(1, "y").msg(2, Pb().msg(1, Pb().i64(1, 1))));
  return iotest::model(g, opset);
}

// Runs the model on x = 0, 1, 2, ... and returns y.
Tensor run_model(const Pb& model, const std::vector<int64_t>& dims) {
  Session s = Session::from_onnx(model.b);
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = float(i) - 2.0f;
  return s.run({{"x", om::from_vector<float>(v, dims)}})[0];
}

void expect_unsupported(const Pb& model, std::initializer_list<const char*> parts) {
  Result<graph::Graph> r = read_pb(model);
  REQUIRE_MESSAGE(!r.is_ok(), "the reader accepted the model");
  CHECK(r.status().kind() == ErrorKind::Unsupported);
  for (const char* p : parts) CHECK_MESSAGE(r.status().message().find(p) != std::string::npos, "'", p, "' not in: ", r.status().message());
}

}  // namespace

TEST_CASE("opset 9 Slice: starts/ends/axes attributes become inputs") {
  Pb m = one_node(iotest::node("Slice", {"x"}, {"y"},
                               {iotest::attr_ints("starts", {1}), iotest::attr_ints("ends", {3}), iotest::attr_ints("axes", {1})}),
                  {2, 4}, 9);
  Result<graph::Graph> g = read_pb(m);
  REQUIRE_MESSAGE(g.is_ok(), g.status().message());
  CHECK(g->nodes[0].inputs.size() == 4);
  CHECK(g->nodes[0].attributes.empty());
  Tensor y = run_model(m, {2, 4});
  CHECK(y.shape() == Shape{2, 2});
  CHECK(y.to_vector<float>() == std::vector<float>{-1, 0, 3, 4});
}

TEST_CASE("opset 11 Squeeze/Unsqueeze and ReduceSum axes, Split's split, Clip's min/max, Dropout's ratio") {
  Tensor u = run_model(one_node(iotest::node("Unsqueeze", {"x"}, {"y"}, {iotest::attr_ints("axes", {0})}), {3}, 11), {3});
  CHECK(u.shape() == Shape{1, 3});
  Tensor r = run_model(one_node(iotest::node("ReduceSum", {"x"}, {"y"}, {iotest::attr_ints("axes", {1}), iotest::attr_int("keepdims", 0)}),
                                {2, 3}, 11), {2, 3});
  CHECK(r.to_vector<float>() == std::vector<float>{-3, 6});
  Pb split = one_node(iotest::node("Split", {"x"}, {"y"}, {iotest::attr_ints("split", {4}), iotest::attr_int("axis", 0)}), {4}, 11);
  CHECK(run_model(split, {4}).shape() == Shape{4});
  Tensor c = run_model(one_node(iotest::node("Clip", {"x"}, {"y"}, {attr_float("min", -1.0f), attr_float("max", 1.5f)}), {5}, 10), {5});
  CHECK(c.to_vector<float>() == std::vector<float>{-1, -1, 0, 1, 1.5f});
  Tensor d = run_model(one_node(iotest::node("Dropout", {"x"}, {"y"}, {attr_float("ratio", 0.3f)}), {3}, 10), {3});
  CHECK(d.to_vector<float>() == std::vector<float>{-2, -1, 0});
}

TEST_CASE("opset 11 Softmax/LogSoftmax/Hardmax: the 2-D coercion becomes Shape, Flatten, the op on the last axis, Reshape") {
  Tensor s = run_model(one_node(iotest::node("Softmax", {"x"}, {"y"}, {iotest::attr_int("axis", -1)}), {2, 3}, 11), {2, 3});
  CHECK(s.shape() == Shape{2, 3});
  // axis 1 of [2, 3, 4]: each batch row of 12 values is normalised as one.
  Pb m = one_node(iotest::node("Softmax", {"x"}, {"y"}, {iotest::attr_int("axis", 1)}), {2, 3, 4}, 11);
  Result<graph::Graph> g = read_pb(m);
  REQUIRE_MESSAGE(g.is_ok(), g.status().message());
  REQUIRE(g->nodes.size() == 4);
  CHECK(g->nodes[0].op_type == "Shape");
  CHECK(g->nodes[1].op_type == "Flatten");
  CHECK(g->nodes[2].op_type == "Softmax");
  CHECK(g->nodes[3].op_type == "Reshape");
  CHECK(g->nodes[3].outputs[0] == "y");
  Tensor y = run_model(m, {2, 3, 4});
  CHECK(y.shape() == Shape{2, 3, 4});
  const std::vector<float> v = y.to_vector<float>();
  for (int b = 0; b < 2; ++b) {
    double sum = 0;
    for (int i = 0; i < 12; ++i) sum += v[size_t(b * 12 + i)];
    CHECK(std::fabs(sum - 1.0) < 1e-5);
  }
  CHECK(v[23] > v[12]);  // the largest input of the batch row gets the largest share
  // Default axis (1) of opset 12 on a matrix: the same as the last axis.
  Tensor h = run_model(one_node(iotest::node("Hardmax", {"x"}, {"y"}), {2, 3}, 12), {2, 3});
  CHECK(h.to_vector<float>() == std::vector<float>{0, 0, 1, 0, 0, 1});
}

TEST_CASE("older forms refused by name: broadcast flags, operators before their oldest upgradable opset") {
  Pb g;
  g.msg(1, iotest::node("Add", {"x", "x"}, {"y"}, {iotest::attr_int("broadcast", 1)})).str(2, "g");
  g.msg(11, iotest::value_info("x", 1, {2})).msg(12, Pb().str(1, "y").msg(2, Pb().msg(1, Pb().i64(1, 1))));
  expect_unsupported(iotest::model(g, 7), {"'broadcast'", "opset < 7", "Add", "opset_version"});
  // Trilu exists from opset 14; HardSwish from 14.
  expect_unsupported(one_node(iotest::node("HardSwish", {"x"}, {"y"}), {2}, 13), {"HardSwish (needs opset 14, the model imports 13)"});
  // Older than the operator's oldest form: the advice does not rely on the onnx version converter.
  Result<graph::Graph> r = read_pb(one_node(iotest::node("Sin", {"x"}, {"y"}), {2}, 6));
  REQUIRE(!r.is_ok());
  CHECK(r.status().message().find("convert_version") == std::string::npos);
  CHECK(r.status().message().find("opset_version") != std::string::npos);
}

TEST_CASE("Upsample (opsets 7 to 10): opset 7's scales attribute becomes an input; asymmetric nearest rounds down, linear interpolates") {
  auto floats = [](const std::string& name, std::vector<float> v) {
    Pb a;
    a.str(1, name);
    for (float f : v) a.f32(7, f);
    return a.i64(20, 6);
  };
  Pb nearest = one_node(iotest::node("Upsample", {"x"}, {"y"}, {floats("scales", {1, 1, 2, 3})}), {1, 1, 2, 2}, 7);
  Tensor y = run_model(nearest, {1, 1, 2, 2});
  CHECK(y.shape() == Shape{1, 1, 4, 6});
  CHECK(y.to_vector<float>() == std::vector<float>{-2, -2, -2, -1, -1, -1, -2, -2, -2, -1, -1, -1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1});
  Pb linear = one_node(iotest::node("Upsample", {"x"}, {"y"}, {floats("scales", {1, 1, 1, 2}), Pb().str(1, "mode").str(4, "linear").i64(20, 3)}),
                       {1, 1, 1, 2}, 7);
  CHECK(run_model(linear, {1, 1, 1, 2}).to_vector<float>() == std::vector<float>{-2, -1.5f, -1, -1});
  // Scales that shrink N or C are refused by name when the session plans.
  Pb bad = one_node(iotest::node("Upsample", {"x"}, {"y"}, {floats("scales", {2, 1, 1, 1})}), {1, 1, 1, 2}, 7);
  CHECK_THROWS_WITH_AS(run_model(bad, {1, 1, 1, 2}), doctest::Contains("scales must be 1 on N and C"), om::Error);
}
