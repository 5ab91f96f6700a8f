// Session entry points beyond graphs: ONNX bytes, and the om::Tensor convenience overload.
#include <doctest/doctest.h>

#include "onemodel/core/tensor.h"
#include "onemodel/io/onnx.h"
#include "runtime_helpers.h"

using namespace rt;
using om::graph::Attribute;

namespace {
g::Graph tiny() {
  g::Graph gr;
  gr.inputs.push_back(sym_value("x", DType::f32, {"batch", "3"}));
  gr.initializers.push_back(g::TensorData::from_vector<float>("W", {3, 2}, random_floats(6, 1)));
  gr.nodes.push_back(node("MatMul", {"x", "W"}, {"h"}));
  gr.nodes.push_back(node("Tanh", {"h"}, {"y"}));
  gr.outputs.push_back(sym_value("y", DType::f32, {"batch", "2"}));
  return gr;
}
}  // namespace

TEST_CASE("a session from ONNX bytes gives the in-memory session's bits") {
  auto bytes = om::onnx::write_bytes(tiny());
  REQUIRE(bytes.is_ok());
  for (auto mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
    om::Session a(tiny(), {mode});
    om::Session b = om::Session::from_onnx(bytes.value(), {mode});
    auto feeds = std::vector<Feed>{Feed::of("x", {4, 3}, random_floats(12, 2))};
    CHECK(run(a, feeds)[0].bytes == run(b, feeds)[0].bytes);
  }
  std::vector<uint8_t> junk{1, 2, 3};
  CHECK_THROWS_AS(om::Session::from_onnx(junk), om::Error);
}

TEST_CASE("the om::Tensor overload runs by name and returns new tensors") {
  om::Session s(tiny());
  auto xv = random_floats(6, 3);
  std::vector<om::Tensor> out = s.run({{"x", om::from_vector<float>(xv, {2, 3})}});
  REQUIRE(out.size() == 1);
  CHECK(out[0].shape() == om::Shape{2, 2});
  auto ref = run(s, {Feed::of("x", {2, 3}, xv)})[0].as<float>();
  CHECK(out[0].to_vector<float>() == ref);
  // A non-contiguous input (a transposed view) is made contiguous first.
  om::Tensor xt = om::from_vector<float>(xv, {3, 2}).t();
  auto via_view = s.run({{"x", xt}});
  CHECK(via_view[0].shape() == om::Shape{2, 2});
}

TEST_CASE("inputs() and outputs() give names, dtypes and shapes, symbols by name; initializer-backed inputs are not listed") {
  g::Graph gr = tiny();
  gr.inputs.push_back(sym_value("W", DType::f32, {"3", "2"}));  // overridable: not an input a run must give
  om::Session s(gr);
  const std::vector<om::ValueInfo> in = s.inputs(), out = s.outputs();
  REQUIRE(in.size() == 1);
  CHECK(in[0].name == "x");
  CHECK(in[0].dtype == DType::f32);
  CHECK(in[0].has_shape);
  CHECK(in[0].dims == std::vector<int64_t>{-1, 3});
  CHECK(in[0].dim_names == std::vector<std::string>{"batch", ""});
  REQUIRE(out.size() == 1);
  CHECK(out[0].name == "y");
  CHECK(out[0].dims == std::vector<int64_t>{-1, 2});
  CHECK(out[0].dim_names == std::vector<std::string>{"batch", ""});
  CHECK(s.input_names() == std::vector<std::string>{"x"});
  CHECK(om::Session().inputs().empty());
}
