// Transposes and scalar scales folded into FusedMatMul (fold_transposes_into_matmul,
// fold_matmul_scale), and the residual fusion on a FusedMatMul that already has a bias: Exact
// sessions give the very bits of the unoptimised graph, Fast ones stay close to them.
#include <doctest/doctest.h>

#include <cmath>

#include "onemodel/graph/passes/pass.h"
#include "onemodel/kernels/kernels.h"
#include "runtime_helpers.h"

using namespace rt;
using om::ArithmeticMode;
using om::graph::Attribute;

namespace {

size_t count_op(const g::Graph& gr, const std::string& op) {
  size_t n = 0;
  for (const auto& nd : gr.nodes) n += nd.op_type == op;
  return n;
}

Attribute perm(std::vector<int64_t> p) { return Attribute::of_ints("perm", std::move(p)); }

// Exact: optimised == unoptimised bit for bit; Fast: within 1e-5 (scaled) of the exact values.
void check_both_modes(const g::Graph& gr, const std::vector<Feed>& feeds) {
  om::Session plain(gr, {ArithmeticMode::Exact, false}), exact(gr, {ArithmeticMode::Exact, true});
  const auto ref = run(plain, feeds);
  const auto got = run(exact, feeds);
  REQUIRE(ref.size() == got.size());
  for (size_t i = 0; i < ref.size(); ++i) {
    CHECK(ref[i].dims == got[i].dims);
    CHECK(ref[i].bytes == got[i].bytes);
  }
  om::Session fast(gr, {ArithmeticMode::Fast, true});
  const auto f = run(fast, feeds);
  for (size_t i = 0; i < ref.size(); ++i) {
    CHECK(ref[i].dims == f[i].dims);
    const auto a = ref[i].as<float>(), b = f[i].as<float>();
    REQUIRE(a.size() == b.size());
    for (size_t j = 0; j < a.size(); ++j) CHECK(std::fabs(a[j] - b[j]) <= 1e-5f * std::max(1.0f, std::fabs(a[j])));
  }
}

}  // namespace

TEST_CASE("attention-style transposes and the score scale fold into the matmuls, bit-exact") {
  // scores = (x^T' . y^T'') * c; softmax; . Transpose(Transpose(v)); output transposed back.
  g::Graph gr;
  gr.inputs.push_back(value("x", DType::f32, {2, 5, 3, 4}));
  gr.inputs.push_back(value("y", DType::f32, {2, 3, 6, 4}));
  gr.inputs.push_back(value("v", DType::f32, {2, 6, 3, 4}));
  gr.initializers.push_back(g::TensorData::from_vector<float>("c", {}, {0.3711f}));
  gr.nodes.push_back(node("Transpose", {"x"}, {"xt"}, {perm({0, 2, 1, 3})}));   // [2,3,5,4]
  gr.nodes.push_back(node("Transpose", {"y"}, {"yt"}, {perm({0, 1, 3, 2})}));   // [2,3,4,6]
  gr.nodes.push_back(node("MatMul", {"xt", "yt"}, {"s"}));                      // [2,3,5,6]
  gr.nodes.push_back(node("Mul", {"s", "c"}, {"ss"}));
  gr.nodes.push_back(node("Softmax", {"ss"}, {"p"}, {Attribute::of_int("axis", -1)}));
  gr.nodes.push_back(node("Transpose", {"v"}, {"v1"}, {perm({0, 2, 3, 1})}));   // [2,3,4,6]
  gr.nodes.push_back(node("Transpose", {"v1"}, {"v2"}, {perm({0, 1, 3, 2})}));  // [2,3,6,4]
  gr.nodes.push_back(node("MatMul", {"p", "v2"}, {"o"}));                       // [2,3,5,4]
  gr.nodes.push_back(node("Transpose", {"o"}, {"ot"}, {perm({0, 2, 1, 3})}));   // [2,5,3,4]
  gr.outputs.push_back(value("ot", DType::f32, {}));
  gr.outputs.push_back(value("p", DType::f32, {}));

  for (auto mode : {ArithmeticMode::Exact, ArithmeticMode::Fast}) {
    om::Session s(gr, {mode, true});
    CHECK(count_op(s.graph(), "Transpose") == 0);
    CHECK(count_op(s.graph(), "Mul") == 0);
    CHECK(count_op(s.graph(), "FusedMatMul") == 2);
    for (const auto& r : s.pass_reports())
      if (r.name == "fold_transposes_into_matmul" || r.name == "fold_matmul_scale") CHECK(r.exact_safe);
  }
  check_both_modes(gr, {Feed::of("x", {2, 5, 3, 4}, random_floats(120, 1)), Feed::of("y", {2, 3, 6, 4}, random_floats(144, 2)),
                        Feed::of("v", {2, 6, 3, 4}, random_floats(144, 3))});
}

TEST_CASE("strided operands with broadcast batch axes and a transposed 2-D right operand") {
  g::Graph gr;
  gr.inputs.push_back(value("x", DType::f32, {3, 4, 5}));
  gr.inputs.push_back(value("w", DType::f32, {7, 4}));
  gr.inputs.push_back(value("a", DType::f32, {1, 5, 4}));
  gr.inputs.push_back(value("b", DType::f32, {3, 6, 4}));
  gr.nodes.push_back(node("Transpose", {"x"}, {"xt"}, {perm({0, 2, 1})}));  // [3,5,4]
  gr.nodes.push_back(node("Transpose", {"w"}, {"wt"}, {perm({1, 0})}));     // [4,7]
  gr.nodes.push_back(node("MatMul", {"xt", "wt"}, {"y1"}));                 // [3,5,7]
  gr.nodes.push_back(node("Transpose", {"b"}, {"bt"}, {perm({0, 2, 1})}));  // [3,4,6]
  gr.nodes.push_back(node("MatMul", {"a", "bt"}, {"y2"}));                  // [3,5,6], A broadcast
  gr.nodes.push_back(node("Transpose", {"y2"}, {"y2t"}, {perm({1, 0, 2})}));  // [5,3,6]
  gr.outputs.push_back(value("y1", DType::f32, {}));
  gr.outputs.push_back(value("y2t", DType::f32, {}));
  om::Session s(gr, {ArithmeticMode::Exact, true});
  CHECK(count_op(s.graph(), "Transpose") == 0);
  check_both_modes(gr, {Feed::of("x", {3, 4, 5}, random_floats(60, 4)), Feed::of("w", {7, 4}, random_floats(28, 5)),
                        Feed::of("a", {1, 5, 4}, random_floats(20, 6)), Feed::of("b", {3, 6, 4}, random_floats(72, 7))});
}

TEST_CASE("a Transpose with another reader, or one moving the last product axis, stays") {
  g::Graph gr;
  gr.inputs.push_back(value("x", DType::f32, {4, 3}));
  gr.inputs.push_back(value("y", DType::f32, {4, 5}));
  gr.nodes.push_back(node("Transpose", {"x"}, {"xt"}, {perm({1, 0})}));  // [3,4], also an output
  gr.nodes.push_back(node("MatMul", {"xt", "y"}, {"m"}));                // [3,5]
  gr.nodes.push_back(node("Transpose", {"m"}, {"mt"}, {perm({1, 0})}));  // moves the last axis
  gr.outputs.push_back(value("mt", DType::f32, {}));
  gr.outputs.push_back(value("xt", DType::f32, {}));
  om::Session s(gr, {ArithmeticMode::Exact, true});
  CHECK(count_op(s.graph(), "Transpose") == 2);
  check_both_modes(gr, {Feed::of("x", {4, 3}, random_floats(12, 8)), Feed::of("y", {4, 5}, random_floats(20, 9))});
}

TEST_CASE("residual Add after a biased FusedMatMul: fused in Fast sessions only") {
  g::Graph gr;
  gr.inputs.push_back(value("x", DType::f32, {5, 8}));
  gr.initializers.push_back(g::TensorData::from_vector<float>("W", {8, 8}, random_floats(64, 10)));
  gr.initializers.push_back(g::TensorData::from_vector<float>("b", {8}, random_floats(8, 11)));
  gr.nodes.push_back(node("MatMul", {"x", "W"}, {"h"}));
  gr.nodes.push_back(node("Add", {"h", "b"}, {"hb"}));
  gr.nodes.push_back(node("Add", {"x", "hb"}, {"y"}));
  gr.outputs.push_back(value("y", DType::f32, {}));
  om::Session exact(gr, {ArithmeticMode::Exact, true}), fast(gr, {ArithmeticMode::Fast, true});
  CHECK(count_op(exact.graph(), "Add") == 1);
  CHECK(count_op(fast.graph(), "Add") == 0);
  REQUIRE(fast.graph().nodes.size() == 1);
  CHECK(fast.graph().nodes[0].inputs == std::vector<std::string>{"x", "W", "b", "x"});
  check_both_modes(gr, {Feed::of("x", {5, 8}, random_floats(40, 12))});

  // With an activation the residual is added after it (scratch path), in Fast mode too.
  g::Graph act = gr;
  act.nodes[2].inputs = {"x", "r"};
  act.nodes.insert(act.nodes.begin() + 2, node("Relu", {"hb"}, {"r"}));
  om::Session fa(act, {ArithmeticMode::Fast, true});
  CHECK(count_op(fa.graph(), "Add") == 0);
  CHECK(count_op(fa.graph(), "Relu") == 0);
  check_both_modes(act, {Feed::of("x", {5, 8}, random_floats(40, 13))});
}

TEST_CASE("a residual that broadcasts (into the product, or making the output larger) keeps the Add's bits") {
  // x [2, 3, 8] MatMul W [8, 5] -> [2, 3, 5], + R of shape [3, 5] (into it) or [4, 2, 3, 5] (larger):
  // the product goes to the scratch, then the Add's broadcast.
  for (const std::vector<int64_t>& rd : {std::vector<int64_t>{3, 5}, std::vector<int64_t>{4, 2, 3, 5}}) {
    CAPTURE(rd.size());
    g::Graph gr;
    gr.inputs.push_back(value("x", DType::f32, {2, 3, 8}));
    gr.inputs.push_back(value("r", DType::f32, rd));
    gr.initializers.push_back(g::TensorData::from_vector<float>("W", {8, 5}, random_floats(40, 14)));
    gr.nodes.push_back(node("MatMul", {"x", "W"}, {"h"}));
    gr.nodes.push_back(node("Add", {"h", "r"}, {"y"}));
    gr.outputs.push_back(value("y", DType::f32, {}));
    om::Session plain(gr, {ArithmeticMode::Fast, false}), fused(gr, {ArithmeticMode::Fast, true});
    REQUIRE(fused.graph().nodes.size() == 1);
    CHECK(fused.graph().nodes[0].op_type == "FusedMatMul");
    size_t rn = 1;
    for (int64_t d : rd) rn *= size_t(d);
    const std::vector<Feed> feeds{Feed::of("x", {2, 3, 8}, random_floats(48, 15)), Feed::of("r", rd, random_floats(rn, 16))};
    const Out a = run(plain, feeds)[0], b = run(fused, feeds)[0];
    CHECK(a.dims == b.dims);
    CHECK(a.bytes == b.bytes);
  }
}

TEST_CASE("constant weights packed once per session give the same bits as repacking per run") {
  // MatMul, Gemm (transB) and FusedMatMul (bias, activation, perm_b) with constant weights,
  // and a MatMul whose weight is an overridable input (never packed).
  g::Graph gr;
  gr.inputs.push_back(sym_value("x", DType::f32, {"batch", "24"}));
  gr.initializers.push_back(g::TensorData::from_vector<float>("W1", {24, 40}, random_floats(960, 20)));
  gr.initializers.push_back(g::TensorData::from_vector<float>("b1", {40}, random_floats(40, 21)));
  gr.initializers.push_back(g::TensorData::from_vector<float>("W2", {33, 40}, random_floats(1320, 22)));
  gr.initializers.push_back(g::TensorData::from_vector<float>("b2", {33}, random_floats(33, 23)));
  gr.initializers.push_back(g::TensorData::from_vector<float>("W3", {33, 17}, random_floats(561, 24)));
  gr.nodes.push_back(node("MatMul", {"x", "W1"}, {"h"}));
  gr.nodes.push_back(node("Add", {"h", "b1"}, {"hb"}));
  gr.nodes.push_back(node("Relu", {"hb"}, {"r"}));
  gr.nodes.push_back(node("Gemm", {"r", "W2", "b2"}, {"g"}, {Attribute::of_int("transB", 1)}));
  gr.nodes.push_back(node("MatMul", {"g", "W3"}, {"y"}));
  gr.outputs.push_back(value("y", DType::f32, {}));
  for (auto mode : {ArithmeticMode::Exact, ArithmeticMode::Fast}) {
    om::SessionOptions packed{mode, true}, unpacked{mode, true};
    unpacked.prepack_weights = false;
    om::Session a(gr, packed), b(gr, unpacked);
    om::Session c(gr, {mode, false});  // the nodes as written: Gemm's own kernel, packed too
    for (int64_t batch : {1, 7, 64, 7}) {  // several plans share the packed weights
      CAPTURE(batch);
      auto feeds = std::vector<Feed>{Feed::of("x", {batch, 24}, random_floats(size_t(batch) * 24, uint32_t(30 + batch)))};
      const Out y = run(a, feeds)[0];
      CHECK(y.bytes == run(b, feeds)[0].bytes);
      CHECK(y.bytes == run(c, feeds)[0].bytes);
      CHECK(a.last_plan_stats().packed_weights == 3);
      CHECK(b.last_plan_stats().packed_weights == 0);
      CHECK(c.last_plan_stats().packed_weights == 3);
    }
  }
  // Packed under one ISA, run under another (the kernels repack a foreign layout per block):
  // the Exact bits stay those of the unpacked session.
  {
    using om::kernels::Isa;
    const Isa original = om::kernels::active_isa();
    om::SessionOptions unpacked{ArithmeticMode::Exact, true};
    unpacked.prepack_weights = false;
    om::Session a(gr, {ArithmeticMode::Exact, true}), b(gr, unpacked);
    auto feeds = std::vector<Feed>{Feed::of("x", {9, 24}, random_floats(216, 50))};
    (void)run(a, feeds);  // plan (and pack) under the original ISA
    for (Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512, Isa::Neon}) {
      if (!om::kernels::isa_supported(isa)) continue;
      CAPTURE(om::kernels::isa_name(isa));
      REQUIRE(om::kernels::force_isa(isa));
      CHECK(run(a, feeds)[0].bytes == run(b, feeds)[0].bytes);
    }
    om::kernels::force_isa(original);
  }
  // The same with the weight transposed by a folded Transpose read through perm_b.
  g::Graph t;
  t.inputs.push_back(value("x", DType::f32, {5, 24}));
  t.inputs.push_back(value("w", DType::f32, {40, 24}));
  t.nodes.push_back(node("Transpose", {"w"}, {"wt"}, {perm({1, 0})}));
  t.nodes.push_back(node("MatMul", {"x", "wt"}, {"y"}));
  t.outputs.push_back(value("y", DType::f32, {}));
  auto feeds = std::vector<Feed>{Feed::of("x", {5, 24}, random_floats(120, 40)), Feed::of("w", {40, 24}, random_floats(960, 41))};
  om::SessionOptions o{ArithmeticMode::Exact, true};
  om::Session s(t, o);
  CHECK(run(s, feeds)[0].bytes == run_graph(t, feeds, {ArithmeticMode::Exact, false})[0].bytes);
  CHECK(s.last_plan_stats().packed_weights == 0);  // w is an input: nothing constant to pack
  // A constant transposed weight: folded to an initializer at creation, then packed.
  g::Graph tc = t;
  tc.inputs.pop_back();
  tc.initializers.push_back(g::TensorData::from_vector<float>("w", {40, 24}, random_floats(960, 41)));
  om::Session sc(tc, o);
  feeds.pop_back();
  CHECK(run(sc, feeds)[0].bytes == run_graph(tc, feeds, {ArithmeticMode::Exact, false})[0].bytes);
  CHECK(sc.last_plan_stats().packed_weights == 1);
  feeds.push_back(Feed::of("w", {40, 24}, random_floats(960, 41)));
  CHECK(run(s, feeds)[0].bytes == run_graph(t, feeds, {ArithmeticMode::Exact, false})[0].bytes);
}
