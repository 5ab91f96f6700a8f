// Hostile models and calls (issue: hostile input never crashes, hangs or silently corrupts):
// wrapped shape arithmetic, negative dims, integer edge cases, repeated symbols, limits,
// initializer-backed inputs. Threads, files and large graphs are in test_hostile_scale.cpp.
#include <doctest/doctest.h>

#include <climits>
#include <cstdint>

#include "runtime_helpers.h"
#include "test_util.h"

using namespace rt;
using om::graph::Attribute;
using testutil::contains;
using testutil::error_of;

namespace {

g::Graph with_const_shape(const std::string& op, g::ValueInfo x, std::vector<int64_t> shape, g::ValueInfo y) {
  g::Graph gr;
  gr.inputs.push_back(x);
  gr.initializers.push_back(g::TensorData::from_vector<int64_t>("shape", {int64_t(shape.size())}, shape));
  gr.nodes.push_back(node(op, {x.name, "shape"}, {y.name}));
  gr.outputs.push_back(y);
  return gr;
}

// Slice of a 1-D i64 input of size n with one (start, end, step).
std::vector<int64_t> slice1(int64_t n, int64_t start, int64_t end, int64_t step) {
  g::Graph gr;
  gr.inputs.push_back(value("x", DType::i64, {n}));
  gr.initializers.push_back(g::TensorData::from_vector<int64_t>("s", {1}, {start}));
  gr.initializers.push_back(g::TensorData::from_vector<int64_t>("e", {1}, {end}));
  gr.initializers.push_back(g::TensorData::from_vector<int64_t>("a", {1}, {0}));
  gr.initializers.push_back(g::TensorData::from_vector<int64_t>("p", {1}, {step}));
  gr.nodes.push_back(node("Slice", {"x", "s", "e", "a", "p"}, {"y"}));
  gr.outputs.push_back(sym_value("y", DType::i64, {""}));
  std::vector<int64_t> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[size_t(i)] = i;
  auto out = run_graph(gr, {Feed::of<int64_t>("x", {n}, x)});
  REQUIRE(out[0].dims.size() == 1);
  CHECK(out[0].dims[0] >= 0);
  return out[0].template as<int64_t>();
}

template <typename T>
g::Graph binary_graph(const std::string& op) {
  g::Graph gr;
  gr.inputs.push_back(sym_value("a", om::dtype_of<T>::value, {"n"}));
  gr.inputs.push_back(sym_value("b", om::dtype_of<T>::value, {"n"}));
  gr.nodes.push_back(node(op, {"a", "b"}, {"y"}));
  gr.outputs.push_back(sym_value("y", om::dtype_of<T>::value, {"n"}));
  return gr;
}

}  // namespace

TEST_CASE("hostile: Reshape whose product wraps is refused naming the node and the dims") {
  auto gr = with_const_shape("Reshape", value("x", DType::f32, {4}), {5, 3689348814741910324LL}, sym_value("y", DType::f32, {"", ""}));
  // Static input shapes: the graph already says so, so creation refuses it.
  auto e = error_of([&] { om::Session s(gr); });
  CHECK(e.kind() == om::ErrorKind::InvalidArgument);
  CHECK(contains(e.what(), "Reshape node"));
  CHECK(contains(e.what(), "3689348814741910324"));
}

TEST_CASE("hostile: Expand beyond the element limit or to a negative size is refused") {
  auto big = with_const_shape("Expand", value("x", DType::f32, {1}), {int64_t(1) << 32, int64_t(1) << 32}, sym_value("y", DType::f32, {"", ""}));
  auto e = error_of([&] { om::Session s(big); });  // static shapes: refused at creation
  CHECK(e.kind() == om::ErrorKind::InvalidArgument);
  CHECK(contains(e.what(), "Expand node"));
  CHECK(contains(e.what(), "4294967296"));
  CHECK(contains(e.what(), "2^48"));

  auto neg = with_const_shape("Expand", value("x", DType::f32, {1}), {-3}, sym_value("y", DType::f32, {""}));
  auto e2 = error_of([&] { om::Session s2(neg); });
  CHECK(contains(e2.what(), "Expand node"));
  CHECK(contains(e2.what(), "-3"));
}

TEST_CASE("hostile: a shape operand with huge dims before a zero is empty; an over-long one is refused") {
  // Found by fuzzing the Session: an i64 "shape" initializer of dims [2^30, 2^30, 0] (no values)
  // counted as more than the element limit, and Expand sized a vector from that count.
  g::Graph empty;
  empty.inputs.push_back(value("x", DType::f32, {3}));
  empty.initializers.push_back(g::TensorData::copy_of("shape", DType::i64, {int64_t(1) << 30, int64_t(1) << 30, 0}, nullptr, 0));
  empty.nodes.push_back(node("Expand", {"x", "shape"}, {"y"}));
  empty.outputs.push_back(sym_value("y", DType::f32, {""}));
  om::Session s(empty);  // an empty shape: Expand to x's own shape
  auto y = run(s, {Feed::of("x", {3}, std::vector<float>{1, 2, 3})})[0];
  CHECK(y.dims == std::vector<int64_t>{3});

  auto tall = with_const_shape("Expand", value("x", DType::f32, {1}), std::vector<int64_t>(5000, 1), sym_value("y", DType::f32, {""}));
  auto e = error_of([&] { om::Session s2(tall); });
  CHECK(e.kind() == om::ErrorKind::InvalidArgument);
  CHECK(contains(e.what(), "Expand node"));
  CHECK(contains(e.what(), "5000 values"));
  CHECK(contains(e.what(), "at most 4096"));
}

TEST_CASE("hostile: an input fed with a wrapping shape [2^62, 4] is refused before planning") {
  g::Graph gr;
  gr.inputs.push_back(sym_value("x", DType::f32, {"a", "b"}));
  gr.nodes.push_back(node("Relu", {"x"}, {"y"}));
  gr.outputs.push_back(sym_value("y", DType::f32, {"a", "b"}));
  om::Session s(gr);
  int64_t dims[2] = {int64_t(1) << 62, 4};
  float data = 0;
  om::TensorView in;
  in.name = "x";
  in.dims = dims;
  in.rank = 2;
  in.data = &data;
  om::TensorView out;
  auto st = s.try_run(&in, 1, &out, 1);
  REQUIRE(!st.is_ok());
  CHECK(st.kind() == om::ErrorKind::ShapeMismatch);
  CHECK(contains(st.message(), "input 'x'"));
  CHECK(contains(st.message(), "4611686018427387904"));
  CHECK(s.cached_plan_count() == 0);
}

TEST_CASE("hostile: Slice with step INT64_MAX / INT64_MIN follows ONNX clamping") {
  CHECK(slice1(10, 0, 10, INT64_MAX) == std::vector<int64_t>{0});
  CHECK(slice1(2, 0, 2, INT64_MAX) == std::vector<int64_t>{0});
  CHECK(slice1(10, 0, INT64_MAX, INT64_MAX) == std::vector<int64_t>{0});
  CHECK(slice1(10, -1, INT64_MIN, INT64_MIN) == std::vector<int64_t>{9});
  CHECK(slice1(2, INT64_MAX, INT64_MIN, INT64_MIN) == std::vector<int64_t>{1});
  CHECK(slice1(10, 9, INT64_MIN, -INT64_MAX) == std::vector<int64_t>{9});
  CHECK(slice1(10, 1, 10, 4) == std::vector<int64_t>{1, 5, 9});
  CHECK(slice1(10, 8, -11, -3) == std::vector<int64_t>{8, 5, 2});
  CHECK(slice1(10, 5, 5, INT64_MAX).empty());
  CHECK(slice1(0, 0, 1, INT64_MIN).empty());
}

TEST_CASE("hostile: integer Add/Sub/Mul/Neg wrap and INT_MIN / -1 wraps, in the graph (both modes)") {
  for (auto mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
    om::SessionOptions opt;
    opt.mode = mode;
    const int64_t mn = INT64_MIN, mx = INT64_MAX;
    auto a = Feed::of<int64_t>("a", {4}, {mn, mx, mn, 3});
    auto b = Feed::of<int64_t>("b", {4}, {-1, 1, -1, -1});
    CHECK(run_graph(binary_graph<int64_t>("Div"), {a, b}, opt)[0].as<int64_t>() == std::vector<int64_t>{mn, mx, mn, -3});
    CHECK(run_graph(binary_graph<int64_t>("Add"), {a, b}, opt)[0].as<int64_t>() == std::vector<int64_t>{mx, mn, mx, 2});
    CHECK(run_graph(binary_graph<int64_t>("Sub"), {a, b}, opt)[0].as<int64_t>() == std::vector<int64_t>{mn + 1, mx - 1, mn + 1, 4});
    CHECK(run_graph(binary_graph<int64_t>("Mul"), {a, b}, opt)[0].as<int64_t>() == std::vector<int64_t>{mn, mx, mn, -3});
    auto a32 = Feed::of<int32_t>("a", {2}, {INT32_MIN, 7});
    auto b32 = Feed::of<int32_t>("b", {2}, {-1, -2});
    CHECK(run_graph(binary_graph<int32_t>("Div"), {a32, b32}, opt)[0].as<int32_t>() == std::vector<int32_t>{INT32_MIN, -3});
    CHECK(run_graph(binary_graph<int32_t>("Mul"), {a32, b32}, opt)[0].as<int32_t>() == std::vector<int32_t>{INT32_MIN, -14});
    g::Graph neg;
    neg.inputs.push_back(sym_value("a", DType::i64, {"n"}));
    neg.nodes.push_back(node("Neg", {"a"}, {"y"}));
    neg.outputs.push_back(sym_value("y", DType::i64, {"n"}));
    CHECK(run_graph(neg, {Feed::of<int64_t>("a", {2}, {mn, 5})}, opt)[0].as<int64_t>() == std::vector<int64_t>{mn, -5});
  }
}

TEST_CASE("hostile: integer division by zero is the same InvalidArgument error in the graph path") {
  for (auto mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
    om::SessionOptions opt;
    opt.mode = mode;
    auto e = error_of([&] {
      run_graph(binary_graph<int64_t>("Div"), {Feed::of<int64_t>("a", {2}, {1, 2}), Feed::of<int64_t>("b", {2}, {1, 0})}, opt);
    });
    CHECK(e.kind() == om::ErrorKind::InvalidArgument);
    CHECK(contains(e.what(), "Div node"));
    CHECK(contains(e.what(), "integer division by zero"));
    auto e32 = error_of([&] {
      run_graph(binary_graph<int32_t>("Div"), {Feed::of<int32_t>("a", {1}, {1}), Feed::of<int32_t>("b", {1}, {0})}, opt);
    });
    CHECK(contains(e32.what(), "integer division by zero"));
  }
}

TEST_CASE("hostile: a symbol repeated in one input or across inputs must name one size") {
  g::Graph gr;
  gr.inputs.push_back(sym_value("x", DType::f32, {"N", "N"}));
  gr.nodes.push_back(node("Relu", {"x"}, {"y"}));
  gr.outputs.push_back(sym_value("y", DType::f32, {"N", "N"}));
  om::Session s(gr);
  auto e = error_of([&] { run(s, {Feed::of<float>("x", {2, 3}, std::vector<float>(6))}); });
  CHECK(e.kind() == om::ErrorKind::ShapeMismatch);
  CHECK(contains(e.what(), "'N'"));
  CHECK(contains(e.what(), " 2 "));
  CHECK(contains(e.what(), " 3 "));
  CHECK(run(s, {Feed::of<float>("x", {2, 2}, std::vector<float>(4))})[0].dims == std::vector<int64_t>{2, 2});

  auto two = binary_graph<float>("Add");
  om::Session s2(two);
  auto e2 = error_of([&] { run(s2, {Feed::of<float>("a", {2}, {1, 2}), Feed::of<float>("b", {3}, {1, 2, 3})}); });
  CHECK(contains(e2.what(), "'n'"));
}

TEST_CASE("hostile: SessionOptions limits name the option to raise") {
  // A symbolic batch planned above max_arena_bytes.
  g::Graph gr;
  gr.inputs.push_back(sym_value("x", DType::f32, {"n"}));
  gr.nodes.push_back(node("Relu", {"x"}, {"h"}));
  gr.nodes.push_back(node("Relu", {"h"}, {"y"}));
  gr.outputs.push_back(sym_value("y", DType::f32, {"n"}));
  om::SessionOptions opt;
  opt.max_arena_bytes = 4096;
  om::Session s(gr, opt);
  CHECK(run(s, {Feed::of<float>("x", {16}, std::vector<float>(16))})[0].dims == std::vector<int64_t>{16});
  int64_t dims[1] = {1 << 20};
  om::TensorView in;
  in.dims = dims;
  in.rank = 1;
  CHECK(!s.try_prepare(&in, 1).is_ok());
  auto st = s.try_prepare(&in, 1);
  CHECK(st.kind() == om::ErrorKind::OutOfMemory);
  CHECK(contains(st.message(), "max_arena_bytes"));
  CHECK(om::SessionOptions{}.max_arena_bytes <= (size_t(1) << 30));

  // Constant folding that expands a tiny constant.
  g::Graph fold;
  fold.initializers.push_back(g::TensorData::from_vector<float>("one", {1}, {1.0f}));
  fold.initializers.push_back(g::TensorData::from_vector<int64_t>("shape", {2}, {1024, 1024}));
  fold.nodes.push_back(node("Expand", {"one", "shape"}, {"big"}));
  fold.inputs.push_back(value("x", DType::f32, {1024, 1024}));
  fold.nodes.push_back(node("Add", {"x", "big"}, {"y"}));
  fold.outputs.push_back(value("y", DType::f32, {1024, 1024}));
  for (bool optimize : {true, false}) {
    om::SessionOptions fo;
    fo.optimize = optimize;
    fo.max_folded_bytes = 1 << 20;
    auto e = error_of([&] {
      om::Session f(fold, fo);
      run(f, {Feed::of<float>("x", {1024, 1024}, std::vector<float>(1 << 20))});
    });
    CHECK(e.kind() == om::ErrorKind::OutOfMemory);
    CHECK(contains(e.what(), "max_folded_bytes"));
  }

  // Cached plans: at least one; least recently used dropped.
  om::SessionOptions zero;
  zero.max_cached_plans = 0;
  CHECK(contains(error_of([&] { om::Session z(gr, zero); }).what(), "max_cached_plans"));
  om::SessionOptions two;
  two.max_cached_plans = 2;
  om::Session c(gr, two);
  auto plan_of = [&](int64_t n) {
    run(c, {Feed::of<float>("x", {n}, std::vector<float>(size_t(n)))});
    return c.last_plan_stats().plan_number;
  };
  CHECK(plan_of(1) == 1);
  CHECK(plan_of(2) == 2);
  CHECK(plan_of(1) == 1);  // cached; now the most recently used
  CHECK(plan_of(3) == 3);  // evicts the least recently used: the plan for 2
  CHECK(c.cached_plan_count() == 2);
  CHECK(plan_of(1) == 1);  // kept
  CHECK(plan_of(2) == 4);  // planned again; evicts 3
  CHECK(plan_of(1) == 1);
  CHECK(plan_of(3) == 5);
}

TEST_CASE("hostile: initializer-backed graph inputs may be fed by name or left out") {
  g::Graph gr;
  gr.inputs.push_back(value("x", DType::f32, {2}));
  gr.inputs.push_back(value("w", DType::f32, {2}));
  gr.initializers.push_back(g::TensorData::from_vector<float>("w", {2}, {10, 20}));
  gr.nodes.push_back(node("Add", {"x", "w"}, {"y"}));
  gr.outputs.push_back(value("y", DType::f32, {2}));
  for (auto mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
    om::SessionOptions opt;
    opt.mode = mode;
    om::Session s(gr, opt);
    CHECK(s.input_names() == std::vector<std::string>{"x"});
    CHECK(s.overridable_input_names() == std::vector<std::string>{"w"});
    auto x = Feed::of<float>("x", {2}, {1, 2});
    CHECK(run(s, {x})[0].as<float>() == std::vector<float>{11, 22});
    CHECK(run(s, {x, Feed::of<float>("w", {2}, {100, 200})})[0].as<float>() == std::vector<float>{101, 202});
    CHECK(run(s, {x})[0].as<float>() == std::vector<float>{11, 22});
    auto e = error_of([&] { run(s, {x, Feed::of<float>("w", {3}, {1, 2, 3})}); });
    CHECK(e.kind() == om::ErrorKind::ShapeMismatch);
  }
}
