// fuse_matmul_chain (docs/graph-passes.md): a chain of elementwise nodes after a MatMul or a
// FusedMatMul runs on the product's rows just written, with the separate nodes' bits in both
// modes on every ISA: constant weights (packed by the plan: the rows go in blocks) and two
// activations as operands, batched products, a bias, a folded scale, a folded output Transpose,
// a residual (Fast sessions fuse it), a product that is also a graph output, a chain that
// broadcasts the product to a higher rank, and a hostile chain read from a file.
#include <doctest/doctest.h>

#include <cmath>

#include "onemodel/kernels/kernels.h"
#include "runtime/runtime_helpers.h"

namespace {

using namespace rt;
using g::Attribute;
using g::TensorData;
using om::ArithmeticMode;

TensorData scalar(const std::string& name, float v) { return TensorData::from_vector(name, {}, std::vector<float>{v}); }

TensorData weights(const std::string& name, std::vector<int64_t> dims, uint32_t seed) {
  size_t n = 1;
  for (int64_t d : dims) n *= size_t(d);
  return TensorData::from_vector(name, dims, random_floats(n, seed, -1.0f, 1.0f));
}

// Plain and optimised sessions of `gr` give the same bytes on every ISA this CPU runs; with
// `fused`, the optimised graph is one FusedMatMul carrying the chain.
// One thread, so a part is every row (the row blocks do not depend on the core count).
void check(const g::Graph& gr, const std::vector<Feed>& feeds, ArithmeticMode mode, bool fused = true) {
  om::SessionOptions o{mode, false};
  o.threads = 1;
  om::Session plain(gr, o);
  o.optimize = true;
  om::Session opt(gr, o);
  if (fused) {
    REQUIRE(opt.graph().nodes.size() == 1);
    CHECK(opt.graph().nodes[0].op_type == "FusedMatMul");
    CHECK(opt.graph().nodes[0].attr("ops") != nullptr);
  }
  for_each_isa([&](om::kernels::Isa) {
    const std::vector<Out> a = run(plain, feeds), b = run(opt, feeds);
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      CHECK(a[i].dims == b[i].dims);
      CHECK(a[i].bytes == b[i].bytes);
    }
  });
}

Feed input(const std::string& name, std::vector<int64_t> dims, uint32_t seed) {
  size_t n = 1;
  for (int64_t d : dims) n *= size_t(d);
  return Feed::of(name, dims, random_floats(n, seed, -3.0f, 3.0f));
}

const ArithmeticMode kModes[] = {ArithmeticMode::Exact, ArithmeticMode::Fast};

}  // namespace

TEST_CASE("fuse_matmul_chain: constant weights, with and without a bias, a scale, rows in several blocks") {
  // x [3, 1200, 24] (3600 rows of 40 columns once the batch is folded): the plan packs W, so the
  // kernel writes blocks of 1632 rows and runs the chain on each; x [7, 24]: one block.
  for (const std::vector<int64_t>& x_dims : {std::vector<int64_t>{3, 1200, 24}, std::vector<int64_t>{7, 24}})
    for (int form = 0; form < 3; ++form)  // plain MatMul; + bias (FusedMatMul); + a scalar Mul (alpha)
      for (bool single : {false, true})
        for (ArithmeticMode mode : kModes) {
          CAPTURE(x_dims.size());
          CAPTURE(form);
          CAPTURE(single);
          CAPTURE(int(mode));
          g::Graph gr;
          gr.inputs.push_back(value("x", om::DType::f32, x_dims));
          gr.initializers = {weights("w", {24, 40}, 5), weights("b", {40}, 6), scalar("s", 0.75f)};
          gr.nodes.push_back(node("MatMul", {"x", "w"}, {"p"}));
          std::string cur = "p";
          if (form == 1) gr.nodes.push_back(node("Add", {"p", "b"}, {"pb"})), cur = "pb";
          if (form == 2) gr.nodes.push_back(node("Mul", {"p", "s"}, {"ps"})), cur = "ps";
          add_activation_chain(gr, cur, single);
          check(gr, {input("x", x_dims, 7)}, mode);
        }
}

TEST_CASE("fuse_matmul_chain: batched products of two activations, and a folded output Transpose") {
  for (bool single : {false, true})
    for (ArithmeticMode mode : kModes) {
      CAPTURE(single);
      CAPTURE(int(mode));
      g::Graph gr;  // attention's scores: [2, 4, 9, 8] x [2, 4, 8, 11]
      gr.inputs = {value("a", om::DType::f32, {2, 4, 9, 8}), value("b", om::DType::f32, {2, 4, 8, 11})};
      gr.nodes.push_back(node("MatMul", {"a", "b"}, {"p"}));
      add_activation_chain(gr, "p", single);
      check(gr, {input("a", {2, 4, 9, 8}, 8), input("b", {2, 4, 8, 11}, 9)}, mode);

      g::Graph tr;  // [2, 9, 8] x W [8, 16], then [1, 0, 2]: perm_y, rows written with a stride
      tr.inputs = {value("x", om::DType::f32, {2, 9, 8})};
      tr.initializers = {weights("w", {8, 16}, 10)};
      tr.nodes.push_back(node("MatMul", {"x", "w"}, {"p"}));
      tr.nodes.push_back(node("Transpose", {"p"}, {"pt"}, {Attribute::of_ints("perm", {1, 0, 2})}));
      add_activation_chain(tr, "pt", single);
      check(tr, {input("x", {2, 9, 8}, 11)}, mode);
    }
}

TEST_CASE("fuse_matmul_chain: after a residual Add (fused in Fast sessions), of the product's shape or broadcast") {
  for (bool broadcast : {false, true})
    for (bool single : {false, true})
      for (ArithmeticMode mode : kModes) {
        CAPTURE(broadcast);
        CAPTURE(single);
        CAPTURE(int(mode));
        g::Graph gr;
        const std::vector<int64_t> r_dims = broadcast ? std::vector<int64_t>{1, 40} : std::vector<int64_t>{30, 40};
        gr.inputs = {value("x", om::DType::f32, {30, 24}), value("r", om::DType::f32, r_dims)};
        gr.initializers = {weights("w", {24, 40}, 12), weights("b", {40}, 13)};
        gr.nodes.push_back(node("MatMul", {"x", "w"}, {"p"}));
        gr.nodes.push_back(node("Add", {"p", "b"}, {"pb"}));
        gr.nodes.push_back(node("Add", {"pb", "r"}, {"sum"}));
        const std::vector<Feed> feeds{input("x", {30, 24}, 14), input("r", r_dims, 15)};
        g::Graph product = gr;  // the optimised product and residual alone, then the chain alone
        product.outputs.push_back(value("sum", om::DType::f32, {}));
        g::Graph chain;
        chain.inputs = {value("sum", om::DType::f32, {30, 40})};
        add_activation_chain(chain, "sum", single);
        add_activation_chain(gr, "sum", single);
        if (mode == ArithmeticMode::Exact) {
          // Exact sessions keep the residual Add (fuse_matmul_residual is Fast only), so the
          // chain follows an Add there and is not the product's.
          check(gr, feeds, mode, false);
          continue;
        }
        // Fast sessions start the product's chains from a same-shaped R (other bits than the
        // unfused Add), so the reference is that optimised product, then the chain.
        om::Session opt(gr, {mode, true}), first(product, {mode, true}), then(chain, {mode, false});
        REQUIRE(opt.graph().nodes.size() == 1);
        CHECK(opt.graph().nodes[0].attr("ops") != nullptr);
        for_each_isa([&](om::kernels::Isa) {
          const Out sum = run(first, feeds)[0];
          const Out want = run(then, {Feed::of("sum", sum.dims, sum.as<float>())})[0], got = run(opt, feeds)[0];
          CHECK(want.dims == got.dims);
          CHECK(want.bytes == got.bytes);
        });
      }
}

TEST_CASE("fuse_matmul_chain: a product that is also a graph output, and a chain that raises the rank, stay apart") {
  g::Graph shared;
  shared.inputs = {value("x", om::DType::f32, {5, 24})};
  shared.initializers = {weights("w", {24, 40}, 16)};
  shared.nodes.push_back(node("MatMul", {"x", "w"}, {"p"}));
  shared.outputs.push_back(value("p", om::DType::f32, {}));
  add_activation_chain(shared, "p", false);
  const std::vector<Feed> feeds{input("x", {5, 24}, 17)};
  for (ArithmeticMode mode : kModes) {
    om::Session opt(shared, {mode, true});
    CHECK(count_of(opt.graph(), "FusedElementwise") == 1);
    check(shared, feeds, mode, false);
  }
  g::Graph wide;  // a [1, 1, 1] constant after a [5, 40] product: the chain's output is [1, 5, 40]
  wide.inputs = {value("x", om::DType::f32, {5, 24})};
  wide.initializers = {weights("w", {24, 40}, 16), TensorData::from_vector("k3", {1, 1, 1}, std::vector<float>{0.5f})};
  wide.nodes.push_back(node("MatMul", {"x", "w"}, {"p"}));
  wide.nodes.push_back(node("Mul", {"p", "k3"}, {"m"}));
  wide.nodes.push_back(node("Relu", {"m"}, {"y"}));
  wide.outputs.push_back(value("y", om::DType::f32, {}));
  for (ArithmeticMode mode : kModes) {
    om::Session opt(wide, {mode, true});
    CHECK(count_of(opt.graph(), "FusedElementwise") == 1);
    CHECK(run(opt, feeds)[0].dims == std::vector<int64_t>{1, 5, 40});
    check(wide, feeds, mode, false);
  }
}

TEST_CASE("FusedMatMul: a hostile chain read from a file is refused naming the node and the step") {
  g::Graph gr;
  gr.inputs = {value("x", om::DType::f32, {5, 24})};
  gr.initializers = {weights("w", {24, 40}, 18)};
  g::Node n = node("FusedMatMul", {"x", "w"}, {"y"},
                   {Attribute::of_ints("ops", {9999}), Attribute::of_ints("operands", {0, -2}), Attribute::of_floats("consts", {0, 0})});
  n.domain = g::kOnemodelDomain;
  gr.nodes.push_back(n);
  gr.outputs.push_back(value("y", om::DType::f32, {}));
  om::Session s;
  const om::Status st = om::Session::create(gr, {}, &s);
  CHECK_FALSE(st.is_ok());
  CHECK(st.message().find("FusedMatMul") != std::string::npos);
  CHECK(st.message().find("step 0: unknown op code 9999") != std::string::npos);
}

TEST_CASE("fuse_matmul_epilogue: a Gemm (PyTorch's Linear) becomes a FusedMatMul taking its activation and the chain, same bits") {
  // C: 0 absent, 1 a bias [N], 2 [N] with beta 0 (ignored), 3 absent with alpha 0.5 (the
  // activation stays after alpha: it joins the chain instead), 4 [1, N] and 5 [M, N] (kept as
  // Gemms: FusedMatMul's bias is [N]).
  const int64_t M = 37, K = 24, N = 40;
  for (int c_form = 0; c_form < 6; ++c_form)
    for (int trans = 0; trans < 4; ++trans)
      for (bool single : {false, true})
        for (ArithmeticMode mode : kModes) {
          const bool ta = trans & 1, tb = trans & 2;
          CAPTURE(c_form);
          CAPTURE(trans);
          CAPTURE(single);
          CAPTURE(int(mode));
          g::Graph gr;
          gr.inputs = {value("a", om::DType::f32, ta ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K})};
          gr.initializers = {weights("w", tb ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N}, 20)};
          std::vector<Attribute> attrs{Attribute::of_int("transA", ta), Attribute::of_int("transB", tb)};
          std::vector<std::string> ins{"a", "w"};
          const std::vector<int64_t> c_dims = c_form == 4 ? std::vector<int64_t>{1, N} : c_form == 5 ? std::vector<int64_t>{M, N}
                                                                                                    : std::vector<int64_t>{N};
          if (c_form == 1 || c_form == 2 || c_form >= 4) {
            gr.initializers.push_back(weights("c", c_dims, 21));
            ins.push_back("c");
          }
          if (c_form == 2) attrs.push_back(Attribute::of_float("beta", 0.0f));
          if (c_form == 3) attrs.push_back(Attribute::of_float("alpha", 0.5f));
          gr.nodes.push_back(node("Gemm", ins, {"g"}, attrs));
          gr.nodes.push_back(node("Relu", {"g"}, {"r"}));
          add_activation_chain(gr, "r", single);
          const std::vector<Feed> feeds{input("a", ta ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K}, 22)};
          check(gr, feeds, mode, c_form < 4);
          om::Session opt(gr, {mode, true});
          CHECK(count_of(opt.graph(), "Gemm") == (c_form < 4 ? 0 : 1));
          if (c_form < 4)  // the Relu in the GEMM's epilogue, or (after alpha) the chain's first step
            CHECK(opt.graph().nodes[0].attr("activation")->s == (c_form == 3 ? "Identity" : "Relu"));
        }
}

TEST_CASE("fuse_matmul_epilogue: a Gemm whose A is not 2-D is refused as before, by either node") {
  g::Graph gr;
  gr.inputs = {value("a", om::DType::f32, {2, 5, 24})};
  gr.initializers = {weights("w", {40, 24}, 23), weights("b", {40}, 24)};
  gr.nodes.push_back(node("Gemm", {"a", "w", "b"}, {"y"}, {Attribute::of_int("transB", 1)}));
  gr.outputs.push_back(value("y", om::DType::f32, {}));
  for (bool optimize : {false, true}) {
    om::Session s;
    const om::Status st = om::Session::create(gr, {ArithmeticMode::Fast, optimize}, &s);
    CAPTURE(st.message());
    CHECK_FALSE(st.is_ok());
    CHECK(st.message().find("'Gemm_y'") != std::string::npos);
    CHECK(st.message().find("[2, 5, 24]") != std::string::npos);
  }
}
