// The convolution passes (docs/graph-passes.md): the Conv epilogue fusion changes no output bit
// (every activation of the epilogue list, a per-channel Add as the bias, an inference
// BatchNormalization, depthwise and general convolutions, every ISA); Conv + BatchNormalization folding runs in Fast sessions only and
// stays within 1e-5 of the unfolded graph.
#include <doctest/doctest.h>

#include <cmath>

#include "onemodel/graph/op_registry.h"
#include "onemodel/graph/ops/epilogue.h"
#include "onemodel/kernels/kernels.h"
#include "runtime/runtime_helpers.h"

namespace {

using namespace rt;
using g::Attribute;
using g::TensorData;
using om::ArithmeticMode;

int count_of(const g::Graph& gr, const std::string& op) {
  int n = 0;
  for (const auto& node : gr.nodes) n += node.op_type == op;
  return n;
}

TensorData f32c(const std::string& name, std::vector<int64_t> dims, uint32_t seed, float lo = -1, float hi = 1) {
  size_t n = 1;
  for (int64_t d : dims) n *= size_t(d);
  return TensorData::from_vector(name, dims, random_floats(n, seed, lo, hi));
}

// x [2, 4, 9, 8] -> Conv (3x3, groups) [-> Add(b4) | with bias] [-> BatchNormalization] -> act -> y
g::Graph conv_graph(int64_t groups, bool bias_as_add, bool batchnorm, const g::Node* act) {
  g::Graph gr;
  gr.inputs.push_back(value("x", om::DType::f32, {2, 4, 9, 8}));
  const int64_t M = 8;
  gr.initializers.push_back(f32c("w", {M, 4 / groups, 3, 3}, 3));
  gr.initializers.push_back(bias_as_add ? f32c("b", {1, M, 1, 1}, 4) : f32c("b", {M}, 4));
  std::vector<std::string> ins{"x", "w"};
  if (!bias_as_add) ins.push_back("b");
  gr.nodes.push_back(node("Conv", ins, {"c"}, {Attribute::of_ints("pads", {1, 1, 1, 1}), Attribute::of_int("group", groups)}));
  std::string cur = "c";
  if (bias_as_add) {
    gr.nodes.push_back(node("Add", {cur, "b"}, {"cb"}));
    cur = "cb";
  }
  if (batchnorm) {
    gr.initializers.push_back(f32c("s", {M}, 5, 0.5f, 2));
    gr.initializers.push_back(f32c("bb", {M}, 6));
    gr.initializers.push_back(f32c("mu", {M}, 7));
    gr.initializers.push_back(f32c("var", {M}, 8, 0.2f, 3));
    gr.nodes.push_back(node("BatchNormalization", {cur, "s", "bb", "mu", "var"}, {"n"}, {Attribute::of_float("epsilon", 1e-3f)}));
    cur = "n";
  }
  if (act) {
    g::Node a = *act;
    a.inputs = {cur};
    a.outputs = {"y"};
    a.name = "act";
    gr.nodes.push_back(a);
  } else {
    gr.nodes.back().outputs[0] = "y";
  }
  gr.outputs.push_back(value("y", om::DType::f32, {}));
  return gr;
}

}  // namespace

TEST_CASE("fuse_conv_epilogue: bias, batch normalisation and every epilogue activation after the chain, no output bit changes") {
  const std::vector<Feed> feeds{Feed::of("x", {2, 4, 9, 8}, random_floats(2 * 4 * 9 * 8, 9))};
  const om::kernels::Isa original = om::kernels::active_isa();
  for (const auto& e : g::kEpilogueActivations) {
    g::Node act = node(e.op_type, {"?"}, {"?"});
    if (e.approximate) act.attributes.push_back(Attribute::of_string("approximate", e.approximate));
    for (int64_t groups : {1, 4})
      for (bool add : {false, true})
        for (bool bn : {false, true}) {
          CAPTURE(e.name);
          CAPTURE(groups);
          CAPTURE(add);
          CAPTURE(bn);
          const g::Graph gr = conv_graph(groups, add, bn, &act);
          om::Session plain(gr, {ArithmeticMode::Exact, false});
          om::Session fused(gr, {ArithmeticMode::Exact, true});
          CHECK(count_of(fused.graph(), "FusedConv") == 1);
          CHECK(fused.graph().nodes.size() == 1);
          for (om::kernels::Isa isa : {om::kernels::Isa::Scalar, om::kernels::Isa::Avx2, om::kernels::Isa::Avx512}) {
            if (!om::kernels::isa_supported(isa)) continue;
            om::kernels::force_isa(isa);
            CHECK(run(plain, feeds)[0].bytes == run(fused, feeds)[0].bytes);
          }
          om::kernels::force_isa(original);
        }
  }
  // Groups = channels (depthwise) with a bias input and Relu.
  g::Node relu = node("Relu", {"?"}, {"?"});
  g::Graph dw;
  dw.inputs.push_back(value("x", om::DType::f32, {2, 4, 9, 8}));
  dw.initializers = {f32c("w", {4, 1, 3, 3}, 3), f32c("b", {4}, 4)};
  dw.nodes = {node("Conv", {"x", "w", "b"}, {"c"}, {Attribute::of_int("group", 4)}), node("Relu", {"c"}, {"y"})};
  dw.outputs.push_back(value("y", om::DType::f32, {}));
  om::Session p2(dw, {ArithmeticMode::Exact, false}), f2(dw, {ArithmeticMode::Exact, true});
  CHECK(count_of(f2.graph(), "FusedConv") == 1);
  CHECK(run(p2, feeds)[0].bytes == run(f2, feeds)[0].bytes);
}

TEST_CASE("fold_conv_batchnorm runs in Fast sessions only, within 1e-5 of the unfolded graph") {
  const std::vector<Feed> feeds{Feed::of("x", {2, 4, 9, 8}, random_floats(2 * 4 * 9 * 8, 10))};
  g::Node relu = node("Relu", {"?"}, {"?"});
  for (int64_t groups : {1, 2, 4}) {
    CAPTURE(groups);
    const g::Graph gr = conv_graph(groups, false, true, &relu);
    om::Session plain(gr, {ArithmeticMode::Fast, false});
    om::Session fast(gr, {ArithmeticMode::Fast, true});
    om::Session exact(gr, {ArithmeticMode::Exact, true});
    CHECK(count_of(fast.graph(), "BatchNormalization") == 0);
    CHECK(count_of(fast.graph(), "FusedConv") == 1);
    CHECK(fast.graph().nodes.size() == 1);
    // FastOnly: not in Exact sessions, where the epilogue fusion takes the node in whole instead.
    for (const auto& r : exact.pass_reports()) CHECK(r.name != "fold_conv_batchnorm");
    CHECK(count_of(exact.graph(), "BatchNormalization") == 0);
    CHECK(exact.graph().nodes.size() == 1);
    const auto a = run(plain, feeds)[0].as<float>(), b = run(fast, feeds)[0].as<float>();
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) CHECK(std::fabs(a[i] - b[i]) <= 1e-5f * std::max(1.0f, std::fabs(a[i])));
    om::Session exact_plain(gr, {ArithmeticMode::Exact, false});
    CHECK(run(exact, feeds)[0].bytes == run(exact_plain, feeds)[0].bytes);
  }
}

TEST_CASE("FusedConv's batch normalisation inputs are checked when a session is created") {
  g::Graph gr;
  gr.inputs.push_back(value("x", om::DType::f32, {1, 4, 5, 5}));
  gr.initializers = {f32c("w", {8, 4, 3, 3}, 3), f32c("s", {8}, 4), f32c("bb", {8}, 5), f32c("mu", {8}, 6),
                     f32c("short", {7}, 7)};
  g::Node n = node("FusedConv", {"x", "w", "", "s", "bb", "mu", "short"}, {"y"}, {Attribute::of_string("activation", "Relu")});
  n.domain = om::graph::kOnemodelDomain;
  gr.nodes = {n};
  gr.outputs.push_back(value("y", om::DType::f32, {}));
  try {
    om::Session s(gr, {ArithmeticMode::Exact, true});
    FAIL("a FusedConv with a 7-element var for 8 channels was accepted");
  } catch (const om::Error& e) {
    const std::string what = e.what();
    CHECK(what.find("var (input 6) must be f32 [8]") != std::string::npos);
    CHECK(what.find("[7]") != std::string::npos);
  }
  gr.nodes[0].inputs.resize(4);  // scale without the other statistics
  CHECK_THROWS_AS(om::Session(gr, {ArithmeticMode::Exact, true}), om::Error);
}
