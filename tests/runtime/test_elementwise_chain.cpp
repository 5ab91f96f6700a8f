// fuse_elementwise_chains (docs/graph-passes.md) and com.onemodel FusedElementwise: chains of
// elementwise nodes become one node whose output has the separate nodes' bits, in both modes and
// on every ISA (PaddleOCR's hard swish after a learnable affine, every step kind, a constant on
// either side, NaNs and infinities in the input, tf2onnx's LeakyRelu then Max); chains that must not fuse stay as they are; a
// hostile FusedElementwise node is refused naming the attribute.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "onemodel/graph/ops/elementwise_chain.h"
#include "onemodel/kernels/kernels.h"
#include "runtime/runtime_helpers.h"

namespace {

using namespace rt;
using g::Attribute;
using g::TensorData;
using om::ArithmeticMode;

TensorData scalar(const std::string& name, float v, bool rank1 = false) {
  return TensorData::from_vector(name, rank1 ? std::vector<int64_t>{1} : std::vector<int64_t>{}, std::vector<float>{v});
}

// x [2, 3, 5, 67] with a few NaNs, infinities and signed zeros among uniform values.
std::vector<Feed> feeds(const std::vector<int64_t>& dims = {2, 3, 5, 67}) {
  size_t n = 1;
  for (int64_t d : dims) n *= size_t(d);
  std::vector<float> v = random_floats(n, 17, -8.0f, 8.0f);
  const float specials[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, -3.0f, 3.0f};
  for (size_t i = 0; i < n; i += 13) v[i] = specials[(i / 13) % 7];
  return {Feed::of("x", dims, v)};
}

// PaddleOCR's block: Mul(x, a), Add(., b), hard swish written out, Mul(., c), Add(., d).
g::Graph paddle_chain() {
  g::Graph gr;
  gr.inputs.push_back(value("x", om::DType::f32, {2, 3, 5, 67}));
  gr.initializers = {scalar("a", 1.37f, true), scalar("b", -0.21f, true), scalar("three", 3.0f), scalar("zero", 0.0f),
                     scalar("six", 6.0f), scalar("c", 0.93f, true), scalar("d", 0.05f, true)};
  gr.nodes = {node("Mul", {"x", "a"}, {"m"}),         node("Add", {"m", "b"}, {"t"}),
              node("Add", {"t", "three"}, {"t3"}),    node("Clip", {"t3", "zero", "six"}, {"cl"}),
              node("Mul", {"t", "cl"}, {"hs"}),       node("Div", {"hs", "six"}, {"h"}),
              node("Mul", {"h", "c"}, {"hc"}),        node("Add", {"hc", "d"}, {"y"})};
  gr.outputs.push_back(value("y", om::DType::f32, {}));
  return gr;
}

// Plain and fused sessions give the same bytes in both modes on every ISA this CPU runs.
void check_same_bits(const g::Graph& gr, int fused_nodes, const std::vector<Feed>& in = feeds()) {
  const om::kernels::Isa original = om::kernels::active_isa();
  for (ArithmeticMode mode : {ArithmeticMode::Fast, ArithmeticMode::Exact}) {
    om::Session plain(gr, {mode, false});
    om::Session fused(gr, {mode, true});
    CHECK(count_of(fused.graph(), "FusedElementwise") == fused_nodes);
    for (om::kernels::Isa isa : {om::kernels::Isa::Scalar, om::kernels::Isa::Avx2, om::kernels::Isa::Avx512,
                                 om::kernels::Isa::Neon}) {
      if (!om::kernels::isa_supported(isa)) continue;
      om::kernels::force_isa(isa);
      const auto want = run(plain, in), got = run(fused, in);
      REQUIRE(want.size() == got.size());
      for (size_t i = 0; i < want.size(); ++i) {
        CHECK(want[i].dims == got[i].dims);
        CHECK(want[i].bytes == got[i].bytes);
      }
    }
    om::kernels::force_isa(original);
  }
}

}  // namespace

TEST_CASE("fuse_elementwise_chains: PaddleOCR's affine + hard swish + affine becomes one node with the same bits") {
  const g::Graph gr = paddle_chain();
  check_same_bits(gr, 1);
  om::Session fused(gr, {ArithmeticMode::Exact, true});
  CHECK(fused.graph().nodes.size() == 1);
}

TEST_CASE("fuse_elementwise_chains: every step kind, constants on either side, the same bits") {
  g::Graph gr;
  gr.inputs.push_back(value("x", om::DType::f32, {2, 3, 5, 67}));
  gr.initializers = {scalar("k", 0.75f), scalar("lo", -1.5f), scalar("hi", 2.5f)};
  gr.nodes = {node("Sub", {"k", "x"}, {"v1"}),
              node("Relu", {"v1"}, {"v2"}),
              node("Div", {"k", "v2"}, {"v3"}),  // a constant over a value: infinities from the zeros
              node("Sigmoid", {"v3"}, {"v4"}),
              node("Tanh", {"v4"}, {"v5"}),
              node("Sub", {"v5", "x"}, {"v6"}),  // reads X again
              node("LeakyRelu", {"v6"}, {"v7"}, {Attribute::of_float("alpha", 0.3f)}),
              node("HardSigmoid", {"v7"}, {"v8"}, {Attribute::of_float("alpha", 0.4f), Attribute::of_float("beta", 0.3f)}),
              node("HardSwish", {"v8"}, {"v9"}),
              node("Clip", {"v9", "", "hi"}, {"v10"}),  // only a maximum
              node("Mul", {"v10", "v10"}, {"v11"}),
              node("Clip", {"v11", "lo"}, {"v12"}),  // only a minimum
              node("Max", {"v12", "k"}, {"v13"}),    // tf2onnx's Max(x, constant)
              node("Min", {"k", "v13"}, {"v14"}),
              node("Max", {"v14", "v12"}, {"v15"}),
              node("Div", {"v15", "k"}, {"y"})};
  gr.outputs.push_back(value("y", om::DType::f32, {}));
  check_same_bits(gr, 1);
}

TEST_CASE("fuse_elementwise_chains: values read outside the chain, graph outputs, integers and long chains") {
  SUBCASE("an intermediate value read by another node ends the chain before it") {
    g::Graph gr;
    gr.inputs.push_back(value("x", om::DType::f32, {2, 3, 5, 67}));
    gr.initializers = {scalar("k", 2.0f)};
    gr.nodes = {node("Mul", {"x", "k"}, {"a"}), node("Relu", {"a"}, {"b"}), node("Sigmoid", {"b"}, {"c"}),
                node("Transpose", {"b"}, {"bt"}), node("Add", {"c", "k"}, {"y"})};
    gr.outputs = {value("y", om::DType::f32, {}), value("bt", om::DType::f32, {})};
    check_same_bits(gr, 2);  // Mul, Relu (b is read by the Transpose), then Sigmoid, Add from b
    om::Session fused(gr, {ArithmeticMode::Exact, true});
    CHECK(count_of(fused.graph(), "Transpose") == 1);
    CHECK(fused.graph().nodes.size() == 3);
  }
  SUBCASE("an intermediate graph output is kept") {
    g::Graph gr;
    gr.inputs.push_back(value("x", om::DType::f32, {2, 3, 5, 67}));
    gr.initializers = {scalar("k", 2.0f)};
    gr.nodes = {node("Mul", {"x", "k"}, {"a"}), node("Relu", {"a"}, {"y"})};
    gr.outputs = {value("y", om::DType::f32, {}), value("a", om::DType::f32, {})};
    check_same_bits(gr, 0);
  }
  SUBCASE("integer arithmetic between values is left alone") {
    g::Graph gr;
    gr.inputs.push_back(value("x", om::DType::i32, {7}));
    gr.nodes = {node("Mul", {"x", "x"}, {"a"}), node("Add", {"a", "x"}, {"y"})};
    gr.outputs = {value("y", om::DType::i32, {})};
    std::vector<int32_t> v = {1, -2, 3, 40000, -5, 6, 7};
    check_same_bits(gr, 0, {Feed::of("x", {7}, v)});
  }
  SUBCASE("a rank-0 input with a rank-1 constant gives a [1] output") {
    g::Graph gr;
    gr.inputs.push_back(value("x", om::DType::f32, {}));
    gr.initializers = {scalar("k", 2.0f, true)};
    gr.nodes = {node("Mul", {"x", "k"}, {"a"}), node("Sigmoid", {"a"}, {"y"})};
    gr.outputs = {value("y", om::DType::f32, {})};
    check_same_bits(gr, 1, {Feed::of("x", {}, std::vector<float>{0.7f})});
  }
  SUBCASE("tf2onnx's [1, 1, 1, 1] constant: LeakyRelu then Max; of higher rank than X, X broadcasts") {
    for (const std::vector<int64_t>& xdims : {std::vector<int64_t>{2, 3, 5, 67}, std::vector<int64_t>{3, 5}}) {
      g::Graph gr;
      gr.inputs.push_back(value("x", om::DType::f32, xdims));
      gr.initializers = {TensorData::from_vector("c", {1, 1, 1, 1}, std::vector<float>{-0.25f})};
      gr.nodes = {node("LeakyRelu", {"x"}, {"a"}, {Attribute::of_float("alpha", 0.2f)}), node("Max", {"a", "c"}, {"y"})};
      gr.outputs = {value("y", om::DType::f32, {})};
      size_t n = 1;
      for (int64_t d : xdims) n *= size_t(d);
      check_same_bits(gr, 1, {Feed::of("x", xdims, random_floats(n, 5, -3.0f, 3.0f))});
    }
  }
  SUBCASE("more steps than one node holds: two nodes") {
    g::Graph gr;
    gr.inputs.push_back(value("x", om::DType::f32, {2, 3, 5, 67}));
    gr.initializers = {scalar("k", 1.01f)};
    std::string cur = "x";
    for (int i = 0; i < 20; ++i) {
      const std::string out = i == 19 ? "y" : "v" + std::to_string(i);
      gr.nodes.push_back(node(i % 2 ? "Mul" : "Add", {cur, "k"}, {out}));
      cur = out;
    }
    gr.outputs = {value("y", om::DType::f32, {})};
    check_same_bits(gr, 2);
  }
}

TEST_CASE("FusedElementwise: hostile attributes are refused naming them") {
  auto chain = [](std::vector<int64_t> ops, std::vector<int64_t> operands, std::vector<float> consts) {
    g::Graph gr = single_node("FusedElementwise", {value("x", om::DType::f32, {4})},
                              {Attribute::of_ints("ops", ops), Attribute::of_ints("operands", operands),
                               Attribute::of_floats("consts", consts)});
    gr.nodes[0].domain = "com.onemodel";
    return gr;
  };
  auto refusal = [](const g::Graph& gr) {
    try {
      om::Session s(gr, {ArithmeticMode::Fast, false});
      run(s, {Feed::of("x", {4}, std::vector<float>{1, 2, 3, 4})});
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const int64_t relu = int64_t(g::ops::ChainOp::Relu), add = int64_t(g::ops::ChainOp::Add);
  CHECK(refusal(chain({relu}, {0, -2}, {0, 0})).empty());
  CHECK(refusal(chain({}, {}, {})).find("attribute ops") != std::string::npos);
  CHECK(refusal(chain(std::vector<int64_t>(17, relu), std::vector<int64_t>(34, -2), std::vector<float>(34))).find("1 to 16") !=
        std::string::npos);
  CHECK(refusal(chain({relu}, {0}, {0, 0})).find("two entries per step") != std::string::npos);
  CHECK(refusal(chain({99}, {0, -2}, {0, 0})).find("unknown op code 99") != std::string::npos);
  CHECK(refusal(chain({-1}, {0, -2}, {0, 0})).find("unknown op code -1") != std::string::npos);
  CHECK(refusal(chain({relu}, {1, -2}, {0, 0})).find("operands (1, -2)") != std::string::npos);  // its own value
  CHECK(refusal(chain({relu}, {-1, -2}, {0, 0})).find("operands") != std::string::npos);  // a constant
  CHECK(refusal(chain({add}, {-1, -1}, {0, 0})).find("operands (-1, -1)") != std::string::npos);
  CHECK(refusal(chain({add}, {0, -2}, {0, 0})).find("operands (0, -2)") != std::string::npos);
  CHECK(refusal(chain({add, relu}, {0, 0, 5, -2}, {0, 0, 0, 0})).find("step 1") != std::string::npos);
}
