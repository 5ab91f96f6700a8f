// The transformer passes (docs/graph-passes.md): attention fusion (Fast only) on the tracer's
// pattern, with and without mask and scale, on PyTorch's scaled_dot_product_attention export
// pattern and on long sequences (the fused kernel's arena stays far below the [L, L] scores);
// the QKV merge gives identical bits in both modes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "onemodel/kernels/kernels.h"
#include "runtime/runtime_helpers.h"

namespace {

using namespace rt;
using g::Attribute;

size_t changes_of(const om::Session& s, const std::string& pass) {
  for (const auto& r : s.pass_reports())
    if (r.name == pass) return r.changes;
  return 0;
}

int count(const g::Graph& gr, const std::string& op) {
  return int(std::count_if(gr.nodes.begin(), gr.nodes.end(), [&](const g::Node& n) { return n.op_type == op; }));
}

enum class Form { Tracer, NoMaskNoScale, Sdpa };

// q, k, v [B, H, L, D] inputs; mask [B, 1, L, L] input.
g::Graph attention_graph(Form form, int64_t B, int64_t H, int64_t L, int64_t D) {
  g::Graph gr;
  gr.name = "attention";
  for (const char* n : {"q", "k", "v"}) gr.inputs.push_back(value(n, DType::f32, {B, H, L, D}));
  const float scale = 1.0f / std::sqrt(float(D));
  if (form == Form::Sdpa) {
    gr.inputs.push_back(value("mask", DType::f32, {L, L}));
    const float half = std::sqrt(scale);
    gr.initializers.push_back(g::TensorData::from_vector<float>("c", {}, {half}));
    gr.nodes.push_back(node("Mul", {"q", "c"}, {"qs"}));
    gr.nodes.push_back(node("Transpose", {"k"}, {"kt"}, {Attribute::of_ints("perm", {0, 1, 3, 2})}));
    gr.nodes.push_back(node("Mul", {"kt", "c"}, {"kts"}));
    gr.nodes.push_back(node("MatMul", {"qs", "kts"}, {"s"}));
    gr.nodes.push_back(node("Add", {"s", "mask"}, {"sm"}));
    gr.nodes.push_back(node("Softmax", {"sm"}, {"p"}, {Attribute::of_int("axis", -1)}));
  } else {
    gr.nodes.push_back(node("Transpose", {"k"}, {"kt"}, {Attribute::of_ints("perm", {0, 1, 3, 2})}));
    gr.nodes.push_back(node("MatMul", {"q", "kt"}, {"s"}));
    if (form == Form::Tracer) {
      gr.inputs.push_back(value("mask", DType::f32, {B, 1, L, L}));
      gr.initializers.push_back(g::TensorData::from_vector<float>("scale", {}, {scale}));
      gr.nodes.push_back(node("Mul", {"s", "scale"}, {"s1"}));
      gr.nodes.push_back(node("Add", {"mask", "s1"}, {"s2"}));
      gr.nodes.push_back(node("Softmax", {"s2"}, {"p"}, {Attribute::of_int("axis", -1)}));
    } else {
      gr.nodes.push_back(node("Softmax", {"s"}, {"p"}, {Attribute::of_int("axis", -1)}));
    }
  }
  gr.nodes.push_back(node("MatMul", {"p", "v"}, {"y"}));
  gr.outputs.push_back(value("y", DType::f32, {}));
  return gr;
}

std::vector<Feed> feeds_for(Form form, int64_t B, int64_t H, int64_t L, int64_t D) {
  const size_t n = size_t(B * H * L * D);
  std::vector<Feed> f = {Feed::of("q", {B, H, L, D}, random_floats(n, 1)), Feed::of("k", {B, H, L, D}, random_floats(n, 2)),
                         Feed::of("v", {B, H, L, D}, random_floats(n, 3))};
  if (form == Form::Tracer) {
    std::vector<float> m = random_floats(size_t(B * L * L), 4);
    for (size_t i = 0; i < m.size(); i += 7) m[i] = -1e30f;  // some keys masked out
    f.push_back(Feed::of("mask", {B, 1, L, L}, m));
  }
  if (form == Form::Sdpa) f.push_back(Feed::of("mask", {L, L}, random_floats(size_t(L * L), 5)));
  return f;
}

double scaled_diff(const Out& a, const Out& b) {
  const auto x = a.as<float>(), y = b.as<float>();
  REQUIRE(x.size() == y.size());
  double m = 0, s = 1;
  for (size_t i = 0; i < x.size(); ++i) {
    m = std::max(m, double(std::fabs(x[i] - y[i])));
    s = std::max(s, double(std::fabs(y[i])));
  }
  return m / s;
}

}  // namespace

TEST_CASE("attention fusion: the tracer's pattern, no mask and no scale, and PyTorch's SDPA export become one kernel in Fast only") {
  for (Form form : {Form::Tracer, Form::NoMaskNoScale, Form::Sdpa}) {
    CAPTURE(int(form));
    for (int64_t L : {5, 40, 300}) {
      CAPTURE(L);
      const g::Graph gr = attention_graph(form, 2, 3, L, 8);
      const std::vector<Feed> feeds = feeds_for(form, 2, 3, L, 8);
      om::SessionOptions plain;
      plain.optimize = false;
      om::Session ref(gr, plain), fast(gr, {om::ArithmeticMode::Fast}), exact(gr, {om::ArithmeticMode::Exact});
      CHECK(changes_of(fast, "fuse_attention") == 1);
      CHECK(count(fast.graph(), "Attention") == 1);
      CHECK(count(fast.graph(), "Softmax") == 0);
      CHECK(count(exact.graph(), "Attention") == 0);  // Exact: the separate operators run
      CHECK(scaled_diff(run(fast, feeds)[0], run(ref, feeds)[0]) < 1e-5);
      om::SessionOptions exact_plain = plain;
      exact_plain.mode = om::ArithmeticMode::Exact;
      om::Session exact_ref(gr, exact_plain);
      CHECK(run(exact, feeds)[0].bytes == run(exact_ref, feeds)[0].bytes);
    }
  }
}

TEST_CASE("attention fusion leaves the pattern alone when an intermediate is read elsewhere") {
  g::Graph gr = attention_graph(Form::NoMaskNoScale, 1, 2, 4, 8);
  g::ValueInfo p;
  p.name = "p";
  gr.outputs.push_back(p);  // the probabilities are an output too
  om::Session fast(gr, {om::ArithmeticMode::Fast});
  CHECK(changes_of(fast, "fuse_attention") == 0);
}

TEST_CASE("the fused attention does not materialise the [L, L] scores: arena at L = 1024") {
  const int64_t B = 1, H = 1, L = 1024, D = 64;
  const g::Graph gr = attention_graph(Form::NoMaskNoScale, B, H, L, D);
  const std::vector<Feed> feeds = feeds_for(Form::NoMaskNoScale, B, H, L, D);
  om::SessionOptions plain;
  plain.optimize = false;
  om::Session ref(gr, plain), fast(gr, {om::ArithmeticMode::Fast});
  const auto want = run(ref, feeds), got = run(fast, feeds);
  CHECK(scaled_diff(got[0], want[0]) < 1e-5);
  const size_t fused = fast.last_plan_stats().arena_bytes, separate = ref.last_plan_stats().arena_bytes;
  const size_t scores = size_t(L * L) * sizeof(float);
  std::printf("attention L=%lld: arena fused %zu bytes, separate %zu bytes, [L, L] scores %zu bytes\n", static_cast<long long>(L), fused,
              separate, scores);
  CHECK(fused < scores / 4);
  CHECK(separate >= scores);
}

TEST_CASE("QKV merge: three projections of one input become one GEMM with identical bits in both modes") {
  const int64_t M = 7, K = 16, N = 16;
  g::Graph gr;
  gr.name = "qkv";
  gr.inputs.push_back(value("x", DType::f32, {2, M, K}));
  for (int i = 0; i < 3; ++i) {
    const std::string w = "w" + std::to_string(i), b = "b" + std::to_string(i), p = "p" + std::to_string(i), y = "y" + std::to_string(i);
    gr.initializers.push_back(g::TensorData::from_vector(w, {K, N + i}, random_floats(size_t(K * (N + i)), uint32_t(10 + i))));
    gr.initializers.push_back(g::TensorData::from_vector(b, {N + i}, random_floats(size_t(N + i), uint32_t(20 + i))));
    gr.nodes.push_back(node("MatMul", {"x", w}, {p}));
    gr.nodes.push_back(node("Add", {p, b}, {y}));
    gr.outputs.push_back(value(y, DType::f32, {}));
  }
  const std::vector<Feed> feeds = {Feed::of("x", {2, M, K}, random_floats(size_t(2 * M * K), 30))};
  for (om::ArithmeticMode mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
    om::SessionOptions on{mode}, off{mode};
    off.optimize = false;
    om::Session merged(gr, on), plain(gr, off);
    CHECK(changes_of(merged, "merge_qkv_projections") == 3);
    CHECK(count(merged.graph(), "FusedMatMul") == 1);
    CHECK(count(merged.graph(), "Slice") == 3);
    const auto a = run(merged, feeds), b = run(plain, feeds);
    REQUIRE(a.size() == 3);
    for (size_t i = 0; i < 3; ++i) {
      CHECK(a[i].dims == b[i].dims);
      CHECK(a[i].bytes == b[i].bytes);
    }
  }
}

TEST_CASE("attention fusion reads the head split and writes the head merge through strides, over several key blocks") {
  const int64_t B = 2, L = 300, H = 2, D = 8, E = H * D;
  g::Graph gr;
  gr.name = "heads";
  gr.inputs.push_back(value("x", DType::f32, {B, L, E}));
  gr.inputs.push_back(value("mask", DType::f32, {L, L}));
  gr.initializers.push_back(g::TensorData::from_vector<int64_t>("split", {4}, {B, L, H, D}));
  gr.initializers.push_back(g::TensorData::from_vector<int64_t>("merge", {3}, {B, L, E}));
  gr.initializers.push_back(g::TensorData::from_vector<float>("scale", {}, {0.35f}));
  gr.nodes.push_back(node("Tanh", {"x"}, {"xk"}));
  gr.nodes.push_back(node("Sigmoid", {"x"}, {"xv"}));
  const char* srcs[3] = {"x", "xk", "xv"};
  const char* names[3] = {"q", "k", "v"};
  for (int i = 0; i < 3; ++i) {
    gr.nodes.push_back(node("Reshape", {srcs[i], "split"}, {std::string(names[i]) + "r"}));
    gr.nodes.push_back(node("Transpose", {std::string(names[i]) + "r"}, {names[i]}, {Attribute::of_ints("perm", {0, 2, 1, 3})}));
  }
  gr.nodes.push_back(node("Transpose", {"k"}, {"kt"}, {Attribute::of_ints("perm", {0, 1, 3, 2})}));
  gr.nodes.push_back(node("MatMul", {"q", "kt"}, {"s"}));
  gr.nodes.push_back(node("Mul", {"s", "scale"}, {"s1"}));
  gr.nodes.push_back(node("Add", {"s1", "mask"}, {"s2"}));
  gr.nodes.push_back(node("Softmax", {"s2"}, {"p"}, {Attribute::of_int("axis", -1)}));
  gr.nodes.push_back(node("MatMul", {"p", "v"}, {"o"}));
  gr.nodes.push_back(node("Transpose", {"o"}, {"ot"}, {Attribute::of_ints("perm", {0, 2, 1, 3})}));
  gr.nodes.push_back(node("Reshape", {"ot", "merge"}, {"y"}));
  gr.outputs.push_back(value("y", DType::f32, {}));
  std::vector<float> mask(size_t(L * L), 0.0f);
  for (int64_t i = 0; i < L; ++i)
    for (int64_t j = i + 1; j < L; ++j) mask[size_t(i * L + j)] = -1e30f;  // causal
  const std::vector<Feed> feeds = {Feed::of("x", {B, L, E}, random_floats(size_t(B * L * E), 9)), Feed::of("mask", {L, L}, mask)};
  om::SessionOptions plain;
  plain.optimize = false;
  om::Session ref(gr, plain), fast(gr, {om::ArithmeticMode::Fast});
  CHECK(count(fast.graph(), "Attention") == 1);
  CHECK(count(fast.graph(), "Transpose") == 0);  // split, K^T and merge all absorbed
  CHECK(scaled_diff(run(fast, feeds)[0], run(ref, feeds)[0]) < 1e-5);
}

TEST_CASE("QKV merge joins Gemm projections (transB = 1, with and without bias) with identical bits") {
  const int64_t M = 5, K = 12;
  for (bool bias : {true, false}) {
    g::Graph gr;
    gr.name = "qkv_gemm";
    gr.inputs.push_back(value("x", DType::f32, {M, K}));
    for (int i = 0; i < 3; ++i) {
      const std::string w = "w" + std::to_string(i), b = "b" + std::to_string(i), y = "y" + std::to_string(i);
      const int64_t N = 10 + i;
      gr.initializers.push_back(g::TensorData::from_vector(w, {N, K}, random_floats(size_t(N * K), uint32_t(40 + i))));
      std::vector<std::string> ins = {"x", w};
      if (bias) {
        gr.initializers.push_back(g::TensorData::from_vector(b, {N}, random_floats(size_t(N), uint32_t(50 + i))));
        ins.push_back(b);
      }
      gr.nodes.push_back(node("Gemm", ins, {y}, {Attribute::of_int("transB", 1)}));
      gr.outputs.push_back(value(y, DType::f32, {}));
    }
    const std::vector<Feed> feeds = {Feed::of("x", {M, K}, random_floats(size_t(M * K), 60))};
    for (om::ArithmeticMode mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
      om::SessionOptions on{mode}, off{mode};
      off.optimize = false;
      om::Session merged(gr, on), plain(gr, off);
      CHECK(changes_of(merged, "merge_qkv_projections") == 3);
      // fuse_matmul_epilogue made each Gemm a FusedMatMul (perm_b for transB), then they were joined.
      CHECK(count(merged.graph(), "Gemm") == 0);
      CHECK(count(merged.graph(), "FusedMatMul") == 1);
      const auto a = run(merged, feeds), b = run(plain, feeds);
      for (size_t i = 0; i < 3; ++i) CHECK(a[i].bytes == b[i].bytes);
    }
  }
}
