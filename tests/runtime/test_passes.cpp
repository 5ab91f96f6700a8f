// Graph passes: each pass's effect, that outputs keep their bits under the Exact passes, and
// that Exact sessions run only exact-safe passes.
#include <doctest/doctest.h>

#include <cmath>

#include "onemodel/graph/passes/pass.h"
#include "runtime_helpers.h"

using namespace rt;
using om::ArithmeticMode;
using om::graph::Attribute;
namespace passes = om::graph::passes;

namespace {

size_t count_op(const g::Graph& gr, const std::string& op) {
  size_t n = 0;
  for (const auto& nd : gr.nodes) n += nd.op_type == op;
  return n;
}

// x -> Identity -> MatMul(Transpose(W)) + b -> Gelu -> MatMul(W2) + x2 residual; plus a dead branch.
g::Graph model() {
  g::Graph gr;
  gr.inputs.push_back(sym_value("x", DType::f32, {"batch", "6"}));
  gr.initializers.push_back(g::TensorData::from_vector<float>("Wt", {5, 6}, random_floats(30, 1)));
  gr.initializers.push_back(g::TensorData::from_vector<float>("b", {5}, random_floats(5, 2)));
  gr.initializers.push_back(g::TensorData::from_vector<float>("W2", {5, 6}, random_floats(30, 3)));
  gr.initializers.push_back(g::TensorData::from_vector<float>("unused", {3}, {1, 2, 3}));
  gr.nodes.push_back(node("Identity", {"x"}, {"xi"}));
  gr.nodes.push_back(node("Transpose", {"Wt"}, {"W"}, {Attribute::of_ints("perm", {1, 0})}));
  gr.nodes.push_back(node("MatMul", {"xi", "W"}, {"h0"}));
  gr.nodes.push_back(node("Add", {"b", "h0"}, {"h1"}));
  gr.nodes.push_back(node("Gelu", {"h1"}, {"h2"}));
  gr.nodes.push_back(node("MatMul", {"h2", "W2"}, {"o0"}));
  gr.nodes.push_back(node("Add", {"o0", "xi"}, {"y"}));
  gr.nodes.push_back(node("Exp", {"xi"}, {"dead"}));
  gr.outputs.push_back(value("y", DType::f32, {}));
  return gr;
}

}  // namespace

TEST_CASE("each pass does its rewrite") {
  g::Graph gr = model();
  size_t n = 0;
  REQUIRE(passes::remove_identities(gr, ArithmeticMode::Exact, &n).is_ok());
  CHECK(n == 1);
  CHECK(count_op(gr, "Identity") == 0);
  CHECK(gr.nodes[1].inputs[0] == "x");

  n = 0;
  REQUIRE(passes::fold_constants(gr, ArithmeticMode::Exact, &n).is_ok());
  CHECK(n == 1);  // the Transpose of the weight
  CHECK(count_op(gr, "Transpose") == 0);
  REQUIRE(gr.find_initializer("W"));
  CHECK(gr.find_initializer("W")->dims == std::vector<int64_t>{6, 5});
  CHECK(gr.find_initializer("W")->data<float>()[1] == random_floats(30, 1)[6]);  // W[0,1] = Wt[1,0]

  n = 0;
  REQUIRE(passes::fuse_matmul_epilogue(gr, ArithmeticMode::Exact, &n).is_ok());
  CHECK(n == 1);
  REQUIRE(count_op(gr, "FusedMatMul") == 1);
  for (const auto& nd : gr.nodes)
    if (nd.op_type == "FusedMatMul") {
      CHECK(nd.inputs == std::vector<std::string>{"x", "W", "b"});
      CHECK(nd.outputs == std::vector<std::string>{"h2"});
      CHECK(nd.attr_string("activation", "") == "Gelu");
    }

  n = 0;
  REQUIRE(passes::fuse_matmul_residual(gr, ArithmeticMode::Fast, &n).is_ok());
  CHECK(n == 1);
  CHECK(count_op(gr, "FusedMatMul") == 2);
  CHECK(count_op(gr, "Add") == 0);

  n = 0;
  REQUIRE(passes::remove_dead_nodes(gr, ArithmeticMode::Exact, &n).is_ok());
  CHECK(n == 3);  // the Exp, the unused initializer and the Wt source of the folded W
  CHECK(count_op(gr, "Exp") == 0);
  CHECK(!gr.find_initializer("unused"));
  CHECK(om::graph::verify(gr).is_ok());
}

TEST_CASE("Exact sessions run only exact-safe passes, and they change no output bit") {
  auto feeds = std::vector<Feed>{Feed::of("x", {9, 6}, random_floats(54, 7))};
  om::Session plain(model(), {ArithmeticMode::Exact, false});
  om::Session optimized(model(), {ArithmeticMode::Exact, true});
  CHECK(plain.pass_reports().empty());
  REQUIRE(!optimized.pass_reports().empty());
  for (const auto& r : optimized.pass_reports()) {
    CAPTURE(r.name);
    CHECK(r.exact_safe);
    CHECK(r.name != "fuse_matmul_residual");
  }
  CHECK(count_op(optimized.graph(), "FusedMatMul") == 1);  // the epilogue fusion only
  CHECK(count_op(optimized.graph(), "Add") == 1);          // the residual Add stays
  auto a = run(plain, feeds), b = run(optimized, feeds);
  CHECK(a[0].bytes == b[0].bytes);

  // Fast mode also fuses the residual; results stay within 1e-5 of the exact ones.
  om::Session fast(model(), {ArithmeticMode::Fast, true});
  bool ran_residual = false;
  for (const auto& r : fast.pass_reports()) ran_residual = ran_residual || (r.name == "fuse_matmul_residual" && r.changes == 1);
  CHECK(ran_residual);
  CHECK(count_op(fast.graph(), "Add") == 0);
  auto c = run(fast, feeds);
  auto va = a[0].as<float>(), vc = c[0].as<float>();
  REQUIRE(va.size() == vc.size());
  for (size_t i = 0; i < va.size(); ++i) CHECK(std::fabs(va[i] - vc[i]) <= 1e-5f * std::max(1.0f, std::fabs(va[i])));
}

TEST_CASE("epilogue fusion is exact for every activation and keeps graph outputs") {
  for (const char* act : {"Relu", "Sigmoid", "Tanh", "Gelu", "GeluTanh"}) {
    CAPTURE(act);
    g::Graph gr;
    gr.inputs.push_back(value("x", DType::f32, {2, 3, 7}));
    gr.initializers.push_back(g::TensorData::from_vector<float>("W", {7, 9}, random_floats(63, 11)));
    gr.initializers.push_back(g::TensorData::from_vector<float>("b", {9}, random_floats(9, 12)));
    gr.nodes.push_back(node("MatMul", {"x", "W"}, {"h"}));
    gr.nodes.push_back(node("Add", {"h", "b"}, {"hb"}));
    std::vector<Attribute> attrs;
    if (std::string(act) == "GeluTanh") attrs.push_back(Attribute::of_string("approximate", "tanh"));
    gr.nodes.push_back(node(std::string(act) == "GeluTanh" ? "Gelu" : act, {"hb"}, {"y"}, attrs));
    gr.outputs.push_back(value("y", DType::f32, {}));
    auto feeds = std::vector<Feed>{Feed::of("x", {2, 3, 7}, random_floats(42, 13))};
    for (auto mode : {ArithmeticMode::Exact, ArithmeticMode::Fast}) {
      om::Session plain(gr, {mode, false}), fused(gr, {mode, true});
      CHECK(count_op(fused.graph(), "FusedMatMul") == 1);
      CHECK(fused.graph().nodes.size() == 1);
      CHECK(run(plain, feeds)[0].bytes == run(fused, feeds)[0].bytes);
    }
    // The pre-activation value is also an output: the activation must not be fused away.
    g::Graph both = gr;
    both.outputs.push_back(value("hb", DType::f32, {}));
    om::Session s(both, {ArithmeticMode::Exact});
    REQUIRE(s.graph().nodes.size() == 2);  // MatMul + bias fused, the activation stays a node
    CHECK(s.graph().nodes[0].op_type == "FusedMatMul");
    CHECK(s.graph().nodes[0].attr_string("activation", "") == "Identity");
    CHECK(s.graph().nodes[0].outputs[0] == "hb");
  }
}
