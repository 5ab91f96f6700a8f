// The convolution passes (docs/graph-passes.md): the Conv epilogue fusion changes no output bit
// (every activation of the epilogue list, a per-channel Add as the bias, an inference
// BatchNormalization, a residual Add in every convolution form, broadcast residuals, depthwise and
// general convolutions, every ISA); Conv + BatchNormalization folding runs in Fast sessions only and
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

TensorData f32c(const std::string& name, std::vector<int64_t> dims, uint32_t seed, float lo = -1, float hi = 1) {
  size_t n = 1;
  for (int64_t d : dims) n *= size_t(d);
  return TensorData::from_vector(name, dims, random_floats(n, seed, lo, hi));
}

// An inference BatchNormalization of `cur` ([.., M, ..]) with constant statistics: its output.
std::string add_batch_norm(g::Graph& gr, const std::string& cur, int64_t M, float epsilon) {
  gr.initializers.push_back(f32c("s", {M}, 5, 0.5f, 2));
  gr.initializers.push_back(f32c("bb", {M}, 6));
  gr.initializers.push_back(f32c("mu", {M}, 7));
  gr.initializers.push_back(f32c("var", {M}, 8, 0.2f, 3));
  gr.nodes.push_back(node("BatchNormalization", {cur, "s", "bb", "mu", "var"}, {"n"}, {Attribute::of_float("epsilon", epsilon)}));
  return "n";
}

// `act` (a node template) on `cur` as the graph output y, or y = the last node's output.
void finish_with(g::Graph& gr, const std::string& cur, const g::Node* act) {
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
  if (batchnorm) cur = add_batch_norm(gr, cur, M, 1e-3f);
  finish_with(gr, cur, act);
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

namespace {

// One residual block's convolution: x [N, C, H, W] -> Conv (kernel k, stride, pad, groups) with a
// bias [-> BatchNormalization] -> Add(., r) (or Add(r, .)) [-> act] -> y, r a graph input.
struct ResidualCase {
  const char* form;  // the kernel path it reaches
  int64_t N, C, H, W, M, k, stride, pad, groups;
};

g::Graph residual_graph(const ResidualCase& c, const std::vector<int64_t>& r_dims, bool bn, bool r_first, const g::Node* act) {
  g::Graph gr;
  gr.inputs.push_back(value("x", om::DType::f32, {c.N, c.C, c.H, c.W}));
  gr.inputs.push_back(value("r", om::DType::f32, r_dims));
  gr.initializers.push_back(f32c("w", {c.M, c.C / c.groups, c.k, c.k}, 3));
  gr.initializers.push_back(f32c("b", {c.M}, 4));
  gr.nodes.push_back(node("Conv", {"x", "w", "b"}, {"c"},
                          {Attribute::of_ints("pads", {c.pad, c.pad, c.pad, c.pad}), Attribute::of_int("group", c.groups),
                           Attribute::of_ints("strides", {c.stride, c.stride})}));
  const std::string cur = bn ? add_batch_norm(gr, "c", c.M, 1e-5f) : "c";
  gr.nodes.push_back(node("Add", r_first ? std::vector<std::string>{"r", cur} : std::vector<std::string>{cur, "r"}, {"sum"}));
  finish_with(gr, "sum", act);
  return gr;
}

int64_t out_extent(int64_t in, const ResidualCase& c) { return (in + 2 * c.pad - c.k) / c.stride + 1; }

// One geometry per convolution form.
constexpr ResidualCase kConvForms[] = {
    {"implicit GEMM", 2, 4, 9, 8, 8, 3, 1, 1, 1},
    {"pointwise", 2, 8, 5, 7, 16, 1, 1, 0, 1},
    {"depthwise", 2, 8, 9, 8, 8, 3, 1, 1, 8},
    {"im2col tiles (small M, stride 2)", 2, 4, 9, 8, 3, 3, 2, 1, 1},
    {"grouped", 2, 4, 6, 6, 8, 3, 1, 1, 2},
    {"transposed (few positions)", 2, 4, 4, 4, 32, 3, 1, 0, 1},
    {"Winograd in Fast sessions", 2, 16, 10, 9, 16, 3, 1, 1, 1},
    {"Winograd, odd height, runs in place", 1, 16, 9, 32, 16, 3, 1, 1, 1},
};

}  // namespace

TEST_CASE("fuse_conv_epilogue: a residual Add (then the activation) in every convolution form, no output bit changes") {
  const om::kernels::Isa original = om::kernels::active_isa();
  const g::Node relu = node("Relu", {"?"}, {"?"}), sigmoid = node("Sigmoid", {"?"}, {"?"});
  for (const ResidualCase& c : kConvForms) {
    const int64_t OH = out_extent(c.H, c), OW = out_extent(c.W, c);
    const std::vector<int64_t> y_dims{c.N, c.M, OH, OW};
    const std::vector<Feed> feeds{Feed::of("x", {c.N, c.C, c.H, c.W}, random_floats(size_t(c.N * c.C * c.H * c.W), 9)),
                                  Feed::of("r", y_dims, random_floats(size_t(c.N * c.M * OH * OW), 10))};
    for (const g::Node* act : {&relu, &sigmoid, static_cast<const g::Node*>(nullptr)})
      for (bool bn : {false, true})
        for (ArithmeticMode mode : {ArithmeticMode::Exact, ArithmeticMode::Fast}) {
          if (bn && mode == ArithmeticMode::Fast) continue;  // fold_conv_batchnorm changes bits there
          const std::string form = c.form;
          CAPTURE(form);
          CAPTURE(bn);
          CAPTURE(int(mode));
          CAPTURE(act ? act->op_type : std::string("none"));
          const g::Graph gr = residual_graph(c, y_dims, bn, act == &sigmoid, act);
          om::Session plain(gr, {mode, false});
          om::Session fused(gr, {mode, true});
          REQUIRE(fused.graph().nodes.size() == 1);
          CHECK(fused.graph().nodes[0].op_type == "FusedConv");
          CHECK(fused.graph().nodes[0].inputs.size() == 8);
          CHECK(fused.graph().nodes[0].inputs[7] == "r");
          for (om::kernels::Isa isa : {om::kernels::Isa::Scalar, om::kernels::Isa::Avx2, om::kernels::Isa::Avx512}) {
            if (!om::kernels::isa_supported(isa)) continue;
            om::kernels::force_isa(isa);
            CHECK(run(plain, feeds)[0].bytes == run(fused, feeds)[0].bytes);
          }
          om::kernels::force_isa(original);
        }
  }
}

TEST_CASE("fuse_conv_epilogue: a broadcast residual, and one defined after the Conv, keep the Add's result") {
  const ResidualCase c{"implicit GEMM", 2, 4, 9, 8, 8, 3, 1, 1, 1};
  const g::Node relu = node("Relu", {"?"}, {"?"});
  // r broadcast into the output ([1, M, H, W], [M, 1, 1]) and r making it larger (x with batch 1
  // against r with batch 3: the output is r's shape).
  struct Shapes {
    int64_t x_batch;
    std::vector<int64_t> r;
  };
  const Shapes shapes[] = {{2, {1, 8, 9, 8}}, {2, {8, 1, 1}}, {1, {3, 8, 9, 8}}, {2, {9, 1}}};
  for (const Shapes& sh : shapes) {
    CAPTURE(sh.r.size());
    ResidualCase cc = c;
    cc.N = sh.x_batch;
    size_t rn = 1;
    for (int64_t d : sh.r) rn *= size_t(d);
    const std::vector<Feed> feeds{Feed::of("x", {cc.N, cc.C, cc.H, cc.W}, random_floats(size_t(cc.N * cc.C * cc.H * cc.W), 11)),
                                  Feed::of("r", sh.r, random_floats(rn, 12))};
    const g::Graph gr = residual_graph(cc, sh.r, false, false, &relu);
    om::Session plain(gr, {ArithmeticMode::Exact, false});
    om::Session fused(gr, {ArithmeticMode::Exact, true});
    REQUIRE(fused.graph().nodes.size() == 1);
    const Out a = run(plain, feeds)[0], b = run(fused, feeds)[0];
    CHECK(a.dims == b.dims);
    CHECK(a.bytes == b.bytes);
  }
  // The shortcut computed after the Conv (a node later in the list): the fused node would read it
  // before it exists, so the Add stays.
  g::Graph late = residual_graph(c, {2, 8, 9, 8}, false, false, &relu);
  late.nodes[1].inputs[1] = "r2";
  late.nodes.insert(late.nodes.begin() + 1, node("Neg", {"r"}, {"r2"}));
  om::Session plain(late, {ArithmeticMode::Exact, false}), fused(late, {ArithmeticMode::Exact, true});
  CHECK(count_of(fused.graph(), "Add") == 1);
  const std::vector<Feed> feeds{Feed::of("x", {2, 4, 9, 8}, random_floats(2 * 4 * 9 * 8, 13)),
                                Feed::of("r", {2, 8, 9, 8}, random_floats(2 * 8 * 9 * 8, 14))};
  CHECK(run(plain, feeds)[0].bytes == run(fused, feeds)[0].bytes);
}

TEST_CASE("fuse_conv_epilogue on a 3-D convolution: normalisation, residual (same shape and broadcast), activation, no output bit changes") {
  // x [2, 4, 5, 6, 6] -> Conv 3x3x3 pad 1 (C*kD = 12 channels per 2-D unit; 24 with 8 channels:
  // Winograd-sized in Fast sessions) [-> BatchNormalization] -> Add(., r) -> Relu.
  for (int64_t C : {4, 8})
    for (bool bn : {false, true})
      for (bool broadcast : {false, true})
        for (ArithmeticMode mode : {ArithmeticMode::Exact, ArithmeticMode::Fast}) {
          if (bn && mode == ArithmeticMode::Fast) continue;  // fold_conv_batchnorm changes bits there
          CAPTURE(C);
          CAPTURE(bn);
          CAPTURE(broadcast);
          CAPTURE(int(mode));
          const int64_t M = 16;
          const std::vector<int64_t> x_dims{2, C, 5, 6, 6}, y_dims{2, M, 5, 6, 6};
          const std::vector<int64_t> r_dims = broadcast ? std::vector<int64_t>{M, 1, 1, 1} : y_dims;
          g::Graph gr;
          gr.inputs.push_back(value("x", om::DType::f32, x_dims));
          gr.inputs.push_back(value("r", om::DType::f32, r_dims));
          gr.initializers.push_back(f32c("w", {M, C, 3, 3, 3}, 3));
          gr.initializers.push_back(f32c("b", {M}, 4));
          gr.nodes.push_back(node("Conv", {"x", "w", "b"}, {"c"}, {Attribute::of_ints("pads", {1, 1, 1, 1, 1, 1})}));
          const std::string cur = bn ? add_batch_norm(gr, "c", M, 1e-5f) : "c";
          gr.nodes.push_back(node("Add", {cur, "r"}, {"sum"}));
          const g::Node relu = node("Relu", {"?"}, {"?"});
          finish_with(gr, "sum", &relu);
          size_t xn = 1, rn = 1;
          for (int64_t d : x_dims) xn *= size_t(d);
          for (int64_t d : r_dims) rn *= size_t(d);
          const std::vector<Feed> feeds{Feed::of("x", x_dims, random_floats(xn, 15)), Feed::of("r", r_dims, random_floats(rn, 16))};
          om::Session plain(gr, {mode, false});
          om::Session fused(gr, {mode, true});
          REQUIRE(fused.graph().nodes.size() == 1);
          CHECK(fused.graph().nodes[0].op_type == "FusedConv");
          const Out a = run(plain, feeds)[0], b = run(fused, feeds)[0];
          CHECK(a.dims == y_dims);
          CHECK(a.bytes == b.bytes);
        }
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
  // A chain (FusedElementwise's attributes) is checked as FusedElementwise checks it.
  gr.nodes[0].inputs.resize(2);
  gr.nodes[0].attributes.push_back(Attribute::of_ints("ops", {99}));
  gr.nodes[0].attributes.push_back(Attribute::of_ints("operands", {0, -2}));
  gr.nodes[0].attributes.push_back(Attribute::of_floats("consts", {0, 0}));
  try {
    om::Session s(gr, {ArithmeticMode::Exact, true});
    FAIL("a FusedConv with an unknown chain op was accepted");
  } catch (const om::Error& e) {
    CHECK(std::string(e.what()).find("unknown op code 99") != std::string::npos);
  }
}

namespace {

// The fused and unfused sessions of `gr` give the same bytes on every ISA; the fused graph is one
// FusedConv carrying the chain.
void check_chain_fused(const g::Graph& gr, const std::vector<Feed>& feeds, ArithmeticMode mode) {
  om::Session plain(gr, {mode, false});
  om::Session fused(gr, {mode, true});
  REQUIRE(fused.graph().nodes.size() == 1);
  CHECK(fused.graph().nodes[0].op_type == "FusedConv");
  CHECK(fused.graph().nodes[0].attr("ops") != nullptr);
  for_each_isa([&](om::kernels::Isa) {
    const Out a = run(plain, feeds)[0], b = run(fused, feeds)[0];
    CHECK(a.dims == b.dims);
    CHECK(a.bytes == b.bytes);
  });
}

}  // namespace

TEST_CASE("fuse_conv_chain: an elementwise chain after every convolution form runs in its epilogue, no output bit changes") {
  for (const ResidualCase& c : kConvForms) {
    const int64_t OH = out_extent(c.H, c), OW = out_extent(c.W, c);
    // The residual: none, the output's shape (in the epilogue), or broadcast ([M, 1, 1]).
    for (int residual : {0, 1, 2})
      for (bool single : {false, true})
        for (ArithmeticMode mode : {ArithmeticMode::Exact, ArithmeticMode::Fast}) {
          const std::string form = c.form;
          CAPTURE(form);
          CAPTURE(residual);
          CAPTURE(single);
          CAPTURE(int(mode));
          const std::vector<int64_t> r_dims = residual == 2 ? std::vector<int64_t>{c.M, 1, 1} : std::vector<int64_t>{c.N, c.M, OH, OW};
          g::Graph gr = residual_graph(c, r_dims, false, false, nullptr);
          std::vector<Feed> feeds{Feed::of("x", {c.N, c.C, c.H, c.W}, random_floats(size_t(c.N * c.C * c.H * c.W), 21, -4, 4))};
          gr.outputs.clear();
          if (residual == 0) {
            gr.inputs.pop_back();
            gr.nodes.pop_back();  // the Add
            add_activation_chain(gr, "c", single);
          } else {
            size_t rn = 1;
            for (int64_t d : r_dims) rn *= size_t(d);
            feeds.push_back(Feed::of("r", r_dims, random_floats(rn, 22, -4, 4)));
            gr.nodes.back().outputs[0] = "sum";
            add_activation_chain(gr, "sum", single);
          }
          check_chain_fused(gr, feeds, mode);
        }
  }
}

TEST_CASE("fuse_conv_chain: a 3-D convolution, a shared output and a chain that broadcasts to a higher rank") {
  const std::vector<int64_t> x_dims{2, 4, 5, 6, 6};
  const std::vector<Feed> feeds{Feed::of("x", x_dims, random_floats(2 * 4 * 5 * 6 * 6, 23, -4, 4))};
  for (bool single : {false, true})
    for (ArithmeticMode mode : {ArithmeticMode::Exact, ArithmeticMode::Fast}) {
      g::Graph gr;
      gr.inputs.push_back(value("x", om::DType::f32, x_dims));
      gr.initializers = {f32c("w", {8, 4, 3, 3, 3}, 3), f32c("b", {8}, 4)};
      gr.nodes.push_back(node("Conv", {"x", "w", "b"}, {"c"}, {Attribute::of_ints("pads", {1, 1, 1, 1, 1, 1})}));
      add_activation_chain(gr, "c", single);
      check_chain_fused(gr, feeds, mode);
    }
  // The convolution's output read by the chain and by a graph output: the chain stays a node.
  const std::vector<Feed> feeds2{Feed::of("x", {2, 4, 9, 8}, random_floats(2 * 4 * 9 * 8, 24, -4, 4))};
  g::Graph shared = conv_graph(1, false, false, nullptr);
  shared.outputs.clear();
  shared.nodes.back().outputs[0] = "c";
  shared.outputs.push_back(value("c", om::DType::f32, {}));
  add_activation_chain(shared, "c", false);
  {
    om::Session plain(shared, {ArithmeticMode::Exact, false}), fused(shared, {ArithmeticMode::Exact, true});
    CHECK(count_of(fused.graph(), "FusedElementwise") == 1);
    CHECK(count_of(fused.graph(), "Conv") == 1);
    const std::vector<Out> a = run(plain, feeds2), b = run(fused, feeds2);
    CHECK(a[0].bytes == b[0].bytes);
    CHECK(a[1].bytes == b[1].bytes);
  }
  // A constant of rank 5 after a rank-4 output: the chain's output is rank 5, so it stays apart.
  g::Graph wide = conv_graph(1, false, false, nullptr);
  wide.outputs.clear();
  wide.nodes.back().outputs[0] = "c";
  wide.initializers.push_back(TensorData::from_vector("k5", {1, 1, 1, 1, 1}, std::vector<float>{0.5f}));
  wide.nodes.push_back(node("Mul", {"c", "k5"}, {"m"}));
  wide.nodes.push_back(node("Relu", {"m"}, {"y"}));
  wide.outputs.push_back(value("y", om::DType::f32, {}));
  om::Session plain(wide, {ArithmeticMode::Exact, false}), fused(wide, {ArithmeticMode::Exact, true});
  CHECK(count_of(fused.graph(), "FusedElementwise") == 1);
  const Out a = run(plain, feeds2)[0], b = run(fused, feeds2)[0];
  CHECK(a.dims == std::vector<int64_t>{1, 2, 8, 9, 8});
  CHECK(a.bytes == b.bytes);
}
