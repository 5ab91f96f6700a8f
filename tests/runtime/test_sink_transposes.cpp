// sink_transposes (docs/graph-passes.md): the Transposes of NHWC exports move down through
// elementwise nodes and Concat until they meet their inverse; no output bit changes.
#include <doctest/doctest.h>

#include "runtime/runtime_helpers.h"

namespace {

using namespace rt;
using g::Attribute;
using g::TensorData;
using om::ArithmeticMode;

g::Node transpose(const std::string& in, const std::string& out, std::vector<int64_t> perm) {
  return node("Transpose", {in}, {out}, {Attribute::of_ints("perm", std::move(perm))});
}

TensorData f32c(const std::string& name, std::vector<int64_t> dims, uint32_t seed) {
  size_t n = 1;
  for (int64_t d : dims) n *= size_t(d);
  return TensorData::from_vector(name, dims, random_floats(n, seed));
}

const std::vector<int64_t> kToNchw{0, 3, 1, 2}, kToNhwc{0, 2, 3, 1};

// Both sessions of gr (passes off and on) give the same bytes for every output, in both modes;
// returns the optimised graph of the Exact session.
g::Graph check_same(const g::Graph& gr, const std::vector<Feed>& feeds) {
  g::Graph optimised;
  for (ArithmeticMode mode : {ArithmeticMode::Exact, ArithmeticMode::Fast}) {
    CAPTURE(int(mode));
    om::Session plain(gr, {mode, false}), fused(gr, {mode, true});
    const std::vector<Out> a = run(plain, feeds), b = run(fused, feeds);
    REQUIRE(a.size() == b.size());
    for (size_t k = 0; k < a.size(); ++k) {
      CHECK(a[k].dims == b[k].dims);
      CHECK(a[k].bytes == b[k].bytes);
    }
    if (mode == ArithmeticMode::Exact) optimised = fused.graph();
  }
  return optimised;
}

}  // namespace

TEST_CASE("sink_transposes: a tf2onnx block's Transposes cancel between its convolutions, and the epilogue fuses") {
  // x NHWC -> T -> Conv -> T -> Add(bias [8], NHWC) -> Relu -> Mul(scale [1,1,1,8]) -> T -> Conv -> T -> y
  g::Graph gr;
  gr.inputs.push_back(value("x", om::DType::f32, {2, 6, 7, 3}));
  gr.initializers = {f32c("w1", {8, 3, 3, 3}, 1), f32c("b", {8}, 2), f32c("s", {1, 1, 1, 8}, 3), f32c("w2", {4, 8, 1, 1}, 4)};
  const Attribute pads = Attribute::of_ints("pads", {1, 1, 1, 1});
  gr.nodes = {transpose("x", "xt", kToNchw),
              node("Conv", {"xt", "w1"}, {"c1"}, {pads}),
              transpose("c1", "c1t", kToNhwc),
              node("Add", {"c1t", "b"}, {"a"}),
              node("Relu", {"a"}, {"r"}),
              node("Mul", {"r", "s"}, {"m"}),
              transpose("m", "mt", kToNchw),
              node("Conv", {"mt", "w2"}, {"c2"}),
              transpose("c2", "y", kToNhwc)};
  gr.outputs.push_back(value("y", om::DType::f32, {}));
  const g::Graph opt = check_same(gr, {Feed::of("x", {2, 6, 7, 3}, random_floats(2 * 6 * 7 * 3, 5))});
  CHECK(count_of(opt, "Transpose") == 2);  // the input's and the output's
  CHECK(count_of(opt, "FusedConv") >= 1);  // the bias Add and the Relu went into the first
}

TEST_CASE("sink_transposes: two transposed branches meet in an Add and a Concat; constants of every rank") {
  // Two NCHW -> NHWC Transposes joined by Add, then Concat on the channel axis (-1) with a third,
  // then a per-position constant [H, W, C] and a scalar, then back to NCHW.
  g::Graph gr;
  for (const char* n : {"p", "q", "r"}) gr.inputs.push_back(value(n, om::DType::f32, {1, 4, 3, 5}));
  gr.initializers = {f32c("k", {3, 5, 8}, 6), TensorData::from_vector("one", {}, std::vector<float>{0.5f})};
  gr.nodes = {transpose("p", "pt", kToNhwc),
              transpose("q", "qt", kToNhwc),
              transpose("r", "rt", kToNhwc),
              node("Add", {"pt", "qt"}, {"s"}),
              node("Concat", {"s", "rt"}, {"c"}, {Attribute::of_int("axis", -1)}),
              node("Sub", {"k", "c"}, {"d"}),
              node("Mul", {"d", "one"}, {"e"}),
              node("Sigmoid", {"e"}, {"f"}),
              transpose("f", "y", kToNchw)};
  gr.outputs.push_back(value("y", om::DType::f32, {}));
  std::vector<Feed> feeds;
  uint32_t seed = 7;
  for (const char* n : {"p", "q", "r"}) feeds.push_back(Feed::of(n, {1, 4, 3, 5}, random_floats(60, seed++)));
  const g::Graph opt = check_same(gr, feeds);
  CHECK(count_of(opt, "Transpose") == 0);
}

TEST_CASE("sink_transposes: a constant two transposed branches read is transposed back once") {
  // p, q NCHW -> NHWC, each + k (a [W, C] constant), each back to NCHW: both Adds read k.
  g::Graph gr;
  for (const char* n : {"p", "q"}) gr.inputs.push_back(value(n, om::DType::f32, {1, 4, 3, 5}));
  gr.initializers = {f32c("k", {5, 4}, 11)};
  gr.nodes = {transpose("p", "pt", kToNhwc),      transpose("q", "qt", kToNhwc),
              node("Add", {"pt", "k"}, {"a"}),    node("Add", {"k", "qt"}, {"b"}),
              transpose("a", "y1", kToNchw),      transpose("b", "y2", kToNchw)};
  for (const char* n : {"y1", "y2"}) gr.outputs.push_back(value(n, om::DType::f32, {}));
  const g::Graph opt =
      check_same(gr, {Feed::of("p", {1, 4, 3, 5}, random_floats(60, 12)), Feed::of("q", {1, 4, 3, 5}, random_floats(60, 13))});
  CHECK(count_of(opt, "Transpose") == 0);
  size_t copies = 0;
  for (const TensorData& t : opt.initializers) copies += t.name.rfind("k_untransposed", 0) == 0;
  CHECK(copies == 1);
}

TEST_CASE("sink_transposes: what must stay stays") {
  const std::vector<Feed> feeds{Feed::of("x", {1, 2, 3, 4}, random_floats(24, 9))};
  auto graph = [](std::vector<g::Node> nodes, std::vector<std::string> outputs) {
    g::Graph gr;
    gr.inputs.push_back(value("x", om::DType::f32, {1, 2, 3, 4}));
    gr.initializers = {f32c("big", {2, 1, 1, 1, 1}, 10)};
    gr.nodes = std::move(nodes);
    for (const std::string& o : outputs) gr.outputs.push_back(value(o, om::DType::f32, {}));
    return gr;
  };
  // A transposed value read twice, or also an output: the Transpose does not move.
  g::Graph twice = graph({transpose("x", "t", kToNhwc), node("Relu", {"t"}, {"a"}), node("Neg", {"t"}, {"b"})}, {"a", "b"});
  CHECK(count_of(check_same(twice, feeds), "Transpose") == 1);
  g::Graph out = graph({transpose("x", "t", kToNhwc), node("Relu", {"t"}, {"a"}), transpose("a", "y", kToNchw)}, {"t", "y"});
  CHECK(count_of(check_same(out, feeds), "Transpose") == 2);
  // A constant of higher rank than the Transpose, a non-inverse second Transpose, a MatMul.
  g::Graph wide = graph({transpose("x", "t", kToNhwc), node("Add", {"t", "big"}, {"y"})}, {"y"});
  CHECK(count_of(check_same(wide, feeds), "Transpose") == 1);
  g::Graph other = graph({transpose("x", "t", kToNhwc), node("Relu", {"t"}, {"a"}), transpose("a", "y", {0, 1, 3, 2})}, {"y"});
  check_same(other, feeds);
  g::Graph stops = graph({transpose("x", "t", {0, 1, 3, 2}), node("Relu", {"t"}, {"a"}), node("MatMul", {"a", "x"}, {"y"})}, {"y"});
  check_same(stops, feeds);
  // A Concat whose other input is not transposed.
  g::Graph mixed = graph({transpose("x", "t", {0, 1, 2, 3}), node("Concat", {"t", "x"}, {"y"}, {Attribute::of_int("axis", 0)})},
                         {"y"});
  CHECK(count_of(check_same(mixed, feeds), "Transpose") == 1);
}
