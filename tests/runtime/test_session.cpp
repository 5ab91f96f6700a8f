// Session: creation-time validation, input validation messages, the plan cache, allocation-free
// runs, the step profile, output buffers, and exact-mode bit equality across ISAs (with EXACT_HASH lines that
// tools/exactness.sh compares between x86 and AArch64).
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "onemodel/kernels/kernels.h"
#include "runtime_helpers.h"

using namespace rt;
using om::graph::Attribute;

namespace {

// x[batch, 8] -> MatMul W1[8,16] + b1 -> Relu -> MatMul W2[16,4] + b2 -> Softmax, and a
// reshape of the logits through a Shape chain.
g::Graph mlp(uint32_t seed) {
  g::Graph gr;
  gr.inputs.push_back(sym_value("x", DType::f32, {"batch", "8"}));
  gr.initializers.push_back(g::TensorData::from_vector<float>("W1", {8, 16}, random_floats(128, seed)));
  gr.initializers.push_back(g::TensorData::from_vector<float>("b1", {16}, random_floats(16, seed + 1)));
  gr.initializers.push_back(g::TensorData::from_vector<float>("W2", {16, 4}, random_floats(64, seed + 2)));
  gr.initializers.push_back(g::TensorData::from_vector<float>("b2", {4}, random_floats(4, seed + 3)));
  gr.initializers.push_back(g::TensorData::from_vector<int64_t>("idx0", {1}, {0}));
  gr.initializers.push_back(g::TensorData::from_vector<int64_t>("tail", {2}, {2, 2}));
  gr.nodes.push_back(node("MatMul", {"x", "W1"}, {"h0"}));
  gr.nodes.push_back(node("Add", {"h0", "b1"}, {"h1"}));
  gr.nodes.push_back(node("Relu", {"h1"}, {"h2"}));
  gr.nodes.push_back(node("MatMul", {"h2", "W2"}, {"l0"}));
  gr.nodes.push_back(node("Add", {"l0", "b2"}, {"logits"}));
  gr.nodes.push_back(node("Softmax", {"logits"}, {"probs"}, {Attribute::of_int("axis", -1)}));
  gr.nodes.push_back(node("Shape", {"logits"}, {"s"}));
  gr.nodes.push_back(node("Gather", {"s", "idx0"}, {"b"}));
  gr.nodes.push_back(node("Concat", {"b", "tail"}, {"target"}, {Attribute::of_int("axis", 0)}));
  gr.nodes.push_back(node("Reshape", {"probs", "target"}, {"grid"}));
  gr.outputs.push_back(value("probs", DType::f32, {}));
  gr.outputs.push_back(value("grid", DType::f32, {}));
  return gr;
}

// Transcendental-heavy model: Gelu, Tanh, Sigmoid, LayerNorm-like mean/var by reductions.
g::Graph norm_gelu(uint32_t seed) {
  g::Graph gr;
  gr.inputs.push_back(sym_value("x", DType::f32, {"batch", "12"}));
  gr.initializers.push_back(g::TensorData::from_vector<float>("W", {12, 12}, random_floats(144, seed)));
  gr.initializers.push_back(g::TensorData::from_vector<int64_t>("ax", {1}, {-1}));
  gr.initializers.push_back(g::TensorData::from_vector<float>("eps", {}, {1e-5f}));
  gr.nodes.push_back(node("ReduceMean", {"x", "ax"}, {"mu"}));
  gr.nodes.push_back(node("Sub", {"x", "mu"}, {"xc"}));
  gr.nodes.push_back(node("Mul", {"xc", "xc"}, {"sq"}));
  gr.nodes.push_back(node("ReduceMean", {"sq", "ax"}, {"var"}));
  gr.nodes.push_back(node("Add", {"var", "eps"}, {"ve"}));
  gr.nodes.push_back(node("Sqrt", {"ve"}, {"sd"}));
  gr.nodes.push_back(node("Div", {"xc", "sd"}, {"n"}));
  gr.nodes.push_back(node("MatMul", {"n", "W"}, {"h"}));
  gr.nodes.push_back(node("Gelu", {"h"}, {"g"}));
  gr.nodes.push_back(node("Tanh", {"g"}, {"t"}));
  gr.nodes.push_back(node("Sigmoid", {"t"}, {"s"}));
  gr.nodes.push_back(node("LogSoftmax", {"s"}, {"y"}, {Attribute::of_int("axis", 1)}));
  gr.nodes.push_back(node("ReduceSum", {"y"}, {"total"}, {Attribute::of_int("keepdims", 0)}));
  gr.outputs.push_back(value("y", DType::f32, {}));
  gr.outputs.push_back(value("total", DType::f32, {}));
  return gr;
}


}  // namespace

TEST_CASE("creation lists every unknown operator, and every operator without an exact kernel") {
  g::Graph gr;
  gr.inputs.push_back(value("x", DType::f32, {2}));
  gr.nodes.push_back(node("Frobnicate", {"x"}, {"a"}));
  gr.nodes.push_back(node("Relu", {"a"}, {"b"}));
  gr.nodes.push_back(node("Twiddle", {"b"}, {"c"}));
  gr.nodes.push_back(node("Frobnicate", {"c"}, {"y"}));
  gr.outputs.push_back(value("y", DType::f32, {2}));
  try {
    om::Session s(gr);
    FAIL("expected an error");
  } catch (const om::Error& e) {
    CHECK(e.kind() == om::ErrorKind::Unsupported);
    CHECK(std::string(e.what()).find("Frobnicate, Twiddle") != std::string::npos);
  }
  g::Graph p;
  p.inputs.push_back(value("x", DType::f32, {1, 4, 1}));
  p.nodes.push_back(node("DFT", {"x"}, {"y"}));
  p.outputs.push_back(value("y", DType::f32, {1, 4, 2}));
  CHECK_NOTHROW(om::Session(p, {om::ArithmeticMode::Fast}));
  CHECK_THROWS_WITH_AS(om::Session(p, {om::ArithmeticMode::Exact}), doctest::Contains("these have none: DFT"), om::Error);
  om::Session empty;
  CHECK(!empty.try_run(nullptr, 0, nullptr, 0).is_ok());
}

TEST_CASE("run validates inputs: names, dtypes, ranks, static sizes, shared symbols") {
  g::Graph gr;
  gr.inputs.push_back(sym_value("a", DType::f32, {"batch", "3"}));
  gr.inputs.push_back(sym_value("b", DType::f32, {"batch", "3"}));
  gr.nodes.push_back(node("Add", {"a", "b"}, {"y"}));
  gr.outputs.push_back(value("y", DType::f32, {}));
  om::Session s(gr);
  auto ok_a = Feed::of("a", {2, 3}, random_floats(6, 1));
  auto ok_b = Feed::of("b", {2, 3}, random_floats(6, 2));
  auto expect = [&](std::vector<Feed> feeds, const std::string& text) {
    CAPTURE(text);
    auto in = views(feeds);
    std::vector<om::TensorView> out(1);
    om::Status st = s.try_run(in.data(), in.size(), out.data(), 1);
    REQUIRE(!st.is_ok());
    CHECK(st.message().find(text) != std::string::npos);
  };
  Feed wrong_name = ok_b;
  wrong_name.name = "c";
  expect({ok_a, wrong_name}, "no input named 'c'; the inputs are: a, b");
  expect({ok_a}, "got 1 inputs, the model takes 2");
  expect({ok_a, Feed::of<int64_t>("b", {2, 3}, {1, 2, 3, 4, 5, 6})}, "input 'b' expects dtype f32, got i64");
  expect({ok_a, Feed::of("b", {6}, random_floats(6, 3))}, "input 'b' expects rank 2 [batch, 3], got rank 1 [6]");
  expect({ok_a, Feed::of("b", {3, 2}, random_floats(6, 3))}, "input 'b' expects [batch, 3], got [3, 2] (axis 1 is fixed at 3)");
  expect({ok_a, Feed::of("b", {1, 3}, random_floats(3, 3))}, "axis 'batch' is 2 in input 'a' but 1 in input 'b'");
  CHECK_THROWS_AS(run(s, {ok_a, wrong_name}), om::Error);
  // Positional inputs work too.
  std::vector<Feed> both{ok_a, ok_b};
  auto in = views(both);
  in[0].name = in[1].name = nullptr;
  std::vector<om::TensorView> out(1);
  CHECK(s.try_run(in.data(), 2, out.data(), 1).is_ok());
}

TEST_CASE("plans are cached per input-shape signature; runs after planning allocate nothing") {
  for (auto mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
    om::Session s(mlp(5), {mode});
    auto f2 = {Feed::of("x", {2, 8}, random_floats(16, 7))};
    auto f5 = {Feed::of("x", {5, 8}, random_floats(40, 8))};
    auto r2 = run(s, f2);
    CHECK(s.cached_plan_count() == 1);
    auto r5 = run(s, f5);
    CHECK(s.cached_plan_count() == 2);
    CHECK(r2[1].dims == std::vector<int64_t>{2, 2, 2});
    CHECK(r5[1].dims == std::vector<int64_t>{5, 2, 2});
    CHECK(hash_outputs(run(s, f2)) == hash_outputs(r2));
    CHECK(s.cached_plan_count() == 2);
    auto st = s.last_plan_stats();
    MESSAGE(om::msg("mlp batch 2 (", mode == om::ArithmeticMode::Exact ? "exact" : "fast", "): arena ", st.arena_bytes,
                    " bytes, live-bytes lower bound ", st.lower_bound_bytes, ", ", st.steps, " steps, ", st.folded_nodes, " folded, ",
                    st.aliased_nodes, " aliased"));
    CHECK(st.arena_bytes >= st.lower_bound_bytes);
    CHECK(st.lower_bound_bytes > 0);

    std::vector<Feed> feeds(f5);
    auto in = views(feeds);
    std::vector<om::TensorView> out(2);
    s.run(in.data(), 1, out.data(), 2);  // planned already; warm any lazy state
    const size_t before = g_allocations.load();
    for (int i = 0; i < 20; ++i) {
      om::Status status = s.try_run(in.data(), 1, out.data(), 2);
      CHECK(status.is_ok());
    }
    const size_t after = g_allocations.load();
    CHECK(after - before == 0);
  }
}

TEST_CASE("step profile: one entry per step of the last plan, counting its runs, allocation-free") {
  om::SessionOptions options;
  options.profile = true;
  om::Session s(mlp(5), options);
  std::vector<Feed> f2 = {Feed::of("x", {2, 8}, random_floats(16, 7))}, f5 = {Feed::of("x", {5, 8}, random_floats(40, 8))};
  auto in2 = views(f2), in5 = views(f5);
  std::vector<om::TensorView> out(2);
  CHECK(s.step_profile().empty());  // nothing has run yet
  for (int i = 0; i < 3; ++i) s.run(in2.data(), 1, out.data(), 2);
  s.run(in5.data(), 1, out.data(), 2);  // a second plan: its own counts
  const size_t before = g_allocations.load();
  for (int i = 0; i < 4; ++i) CHECK(s.try_run(in5.data(), 1, out.data(), 2).is_ok());
  CHECK(g_allocations.load() - before == 0);
  const auto steps = s.step_profile();
  REQUIRE(steps.size() == s.last_plan_stats().steps);
  REQUIRE(!steps.empty());
  double total = 0;
  for (const auto& st : steps) {
    CHECK(st.runs == 5);
    CHECK(!st.op.empty());
    CHECK(!st.node.empty());
    CHECK(st.total_us >= 0.0);
    total += st.total_us;
  }
  CHECK(total > 0.0);
  for (int i = 0; i < 2; ++i) s.run(in2.data(), 1, out.data(), 2);  // back to the first plan
  CHECK(s.step_profile()[0].runs == 5);

  om::Session plain(mlp(5));  // profiling is off by default
  plain.run(in2.data(), 1, out.data(), 2);
  CHECK(plain.step_profile().empty());
}

TEST_CASE("outputs copy into caller buffers; graph inputs and constants as outputs") {
  om::Session s(mlp(9));
  auto feeds = std::vector<Feed>{Feed::of("x", {3, 8}, random_floats(24, 10))};
  auto ref = run(s, feeds);
  auto in = views(feeds);
  std::vector<float> probs(12), grid(12);
  std::vector<om::TensorView> out(2);
  out[0].data = probs.data();
  out[0].capacity = probs.size() * 4;
  out[1].data = grid.data();
  out[1].capacity = grid.size() * 4;
  s.run(in.data(), 1, out.data(), 2);
  CHECK(probs == ref[0].as<float>());
  CHECK(out[1].rank == 3);
  out[1].capacity = 8;
  CHECK_THROWS_WITH_AS(s.run(in.data(), 1, out.data(), 2), doctest::Contains("needs 48 bytes, its buffer holds 8"), om::Error);

  g::Graph gr;
  gr.inputs.push_back(value("x", DType::f32, {2}));
  gr.initializers.push_back(g::TensorData::from_vector<float>("k", {2}, {4, 5}));
  gr.nodes.push_back(node("Identity", {"x"}, {"y"}));
  gr.outputs.push_back(value("y", DType::f32, {}));
  gr.outputs.push_back(value("k", DType::f32, {}));
  gr.outputs.push_back(value("x", DType::f32, {}));
  auto r = run_graph(gr, {Feed::of<float>("x", {2}, {1, 2})});
  CHECK(r[0].as<float>() == std::vector<float>{1, 2});
  CHECK(r[1].as<float>() == std::vector<float>{4, 5});
  CHECK(r[2].as<float>() == std::vector<float>{1, 2});
}

TEST_CASE("Exact Pow: an integer exponent equals the same exponent as f32; an integer base with a fractional exponent is refused") {
  g::Graph gr;
  gr.inputs.push_back(value("x", DType::f32, {4}));
  gr.initializers.push_back(g::TensorData::from_vector<int32_t>("k", {}, {3}));
  gr.initializers.push_back(g::TensorData::from_vector<float>("kf", {}, {3.0f}));
  gr.nodes.push_back(node("Pow", {"x", "k"}, {"a"}));
  gr.nodes.push_back(node("Pow", {"x", "kf"}, {"b"}));
  gr.outputs.push_back(value("a", DType::f32, {4}));
  gr.outputs.push_back(value("b", DType::f32, {4}));
  const auto out = run_graph(gr, {Feed::of("x", {4}, std::vector<float>{1.5f, -2.0f, 0.1f, 7.0f})}, {om::ArithmeticMode::Exact});
  CHECK(out[0].bytes == out[1].bytes);
  g::Graph ii;  // an integer base with integral f32 exponents: exact integers
  ii.inputs.push_back(value("x", DType::i64, {3}));
  ii.initializers.push_back(g::TensorData::from_vector<float>("e", {3}, {2.0f, 3.0f, -1.0f}));
  ii.nodes.push_back(node("Pow", {"x", "e"}, {"y"}));
  ii.outputs.push_back(value("y", DType::i64, {3}));
  CHECK(run_graph(ii, {Feed::of("x", {3}, std::vector<int64_t>{7, -3, 5})}, {om::ArithmeticMode::Exact})[0].as<int64_t>() == std::vector<int64_t>{49, -27, 0});
  g::Graph ib;
  ib.inputs.push_back(value("x", DType::i64, {2}));
  ib.initializers.push_back(g::TensorData::from_vector<float>("e", {}, {0.5f}));
  ib.nodes.push_back(node("Pow", {"x", "e"}, {"y"}));
  ib.outputs.push_back(value("y", DType::i64, {2}));
  om::Session s(ib, {om::ArithmeticMode::Exact});
  const std::vector<int64_t> xs{4, 9};
  om::TensorView in;
  in.name = "x";
  in.dtype = DType::i64;
  const int64_t dims[] = {2};
  in.dims = dims;
  in.rank = 1;
  in.data = const_cast<int64_t*>(xs.data());
  om::TensorView y;
  const om::Status st = s.try_run(&in, 1, &y, 1);
  REQUIRE(!st.is_ok());
  CHECK(st.message().find("exponent 0.5 (element 0) has no exact kernel (it needs the C library's pow)") != std::string::npos);
}

TEST_CASE("fast and exact agree within 1e-5; exact is bit-identical on every ISA here") {
  using om::kernels::Isa;
  const Isa original = om::kernels::active_isa();
  struct M { const char* name; g::Graph graph; std::vector<Feed> feeds; };
  std::vector<M> models;
  models.push_back({"mlp", mlp(21), {Feed::of("x", {7, 8}, random_floats(56, 22))}});
  models.push_back({"norm_gelu", norm_gelu(31), {Feed::of("x", {5, 12}, random_floats(60, 32, -3, 3))}});
  {
    // Batched attention-like block: Q K^T, scale, softmax, V.
    g::Graph gr;
    gr.inputs.push_back(sym_value("q", DType::f32, {"b", "2", "6", "4"}));
    gr.initializers.push_back(g::TensorData::from_vector<float>("k", {2, 6, 4}, random_floats(48, 41)));
    gr.initializers.push_back(g::TensorData::from_vector<float>("v", {2, 6, 4}, random_floats(48, 42)));
    gr.initializers.push_back(g::TensorData::from_vector<float>("scale", {}, {0.5f}));
    gr.nodes.push_back(node("Transpose", {"k"}, {"kt"}, {Attribute::of_ints("perm", {0, 2, 1})}));
    gr.nodes.push_back(node("MatMul", {"q", "kt"}, {"s0"}));
    gr.nodes.push_back(node("Mul", {"s0", "scale"}, {"s1"}));
    gr.nodes.push_back(node("Softmax", {"s1"}, {"p"}, {Attribute::of_int("axis", -1)}));
    gr.nodes.push_back(node("MatMul", {"p", "v"}, {"y"}));
    gr.outputs.push_back(value("y", DType::f32, {}));
    models.push_back({"attention", gr, {Feed::of("q", {3, 2, 6, 4}, random_floats(144, 43))}});
  }
  {
    // Pow as exported models write it: squares and roots of a written-out LayerNorm, a general
    // exponent, an integer-typed exponent (Exact: the library's pow, no C library).
    g::Graph gr;
    gr.inputs.push_back(sym_value("x", DType::f32, {"n", "9"}));
    gr.initializers.push_back(g::TensorData::from_vector<float>("two", {}, {2.0f}));
    gr.initializers.push_back(g::TensorData::from_vector<float>("half", {}, {0.5f}));
    gr.initializers.push_back(g::TensorData::from_vector<float>("e", {9}, random_floats(9, 52, -2.5f, 2.5f)));
    gr.initializers.push_back(g::TensorData::from_vector<int64_t>("k", {}, {-3}));
    gr.nodes.push_back(node("Abs", {"x"}, {"a"}));
    gr.nodes.push_back(node("Pow", {"x", "two"}, {"p2"}));
    gr.nodes.push_back(node("Pow", {"a", "half"}, {"p5"}));
    gr.nodes.push_back(node("Pow", {"a", "e"}, {"pe"}));
    gr.nodes.push_back(node("Pow", {"x", "k"}, {"pk"}));
    gr.nodes.push_back(node("Sum", {"p2", "p5", "pe", "pk"}, {"y"}));
    gr.outputs.push_back(value("y", DType::f32, {}));
    models.push_back({"pow", gr, {Feed::of("x", {6, 9}, random_floats(54, 53, 0.5f, 3.0f))}});
  }
  for (auto& m : models) {
    CAPTURE(m.name);
    auto fast = run_graph(m.graph, m.feeds, {om::ArithmeticMode::Fast});
    std::vector<uint64_t> hashes;
    for (Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512, Isa::Neon}) {
      if (!om::kernels::isa_supported(isa)) continue;
      REQUIRE(om::kernels::force_isa(isa));
      auto exact = run_graph(m.graph, m.feeds, {om::ArithmeticMode::Exact});
      const uint64_t h = hash_outputs(exact);
      hashes.push_back(h);
      std::printf("EXACT_HASH runtime_%s %s %016llx\n", m.name, om::kernels::isa_name(isa), static_cast<unsigned long long>(h));
      for (size_t o = 0; o < fast.size(); ++o) {
        auto a = fast[o].as<float>(), b = exact[o].as<float>();
        REQUIRE(a.size() == b.size());
        for (size_t i = 0; i < a.size(); ++i) CHECK(std::fabs(a[i] - b[i]) <= 1e-5f * std::max(1.0f, std::fabs(b[i])));
      }
    }
    for (uint64_t h : hashes) CHECK(h == hashes[0]);
  }
  om::kernels::force_isa(original);
}

TEST_CASE("a graph input that decides shapes: one plan per (shapes, values), runs after planning allocate nothing") {
  // y = Reshape(x, shape) with `shape` a graph input: its values join the plan key.
  g::Graph gr;
  gr.name = "reshape_by_input";
  gr.inputs.push_back(sym_value("x", DType::f32, {"n"}));
  gr.inputs.push_back(value("shape", DType::i64, {2}));
  gr.nodes.push_back(node("Reshape", {"x", "shape"}, {"y"}));
  g::ValueInfo y;
  y.name = "y";
  gr.outputs.push_back(y);
  om::SessionOptions opt;
  opt.max_cached_plans = 2;
  om::Session s(gr, opt);
  std::vector<Feed> a = {Feed::of("x", {6}, random_floats(6, 3)), Feed::of<int64_t>("shape", {2}, {2, 3})};
  std::vector<Feed> b = {Feed::of("x", {6}, random_floats(6, 3)), Feed::of<int64_t>("shape", {2}, {3, -1})};
  std::vector<Feed> c = {Feed::of("x", {6}, random_floats(6, 3)), Feed::of<int64_t>("shape", {2}, {1, 6})};
  CHECK(run(s, a)[0].dims == std::vector<int64_t>{2, 3});
  CHECK(run(s, b)[0].dims == std::vector<int64_t>{3, 2});
  CHECK(s.cached_plan_count() == 2);
  CHECK(run(s, a)[0].dims == std::vector<int64_t>{2, 3});  // cached: same shapes and values
  CHECK(s.last_plan_stats().plan_number == 1);
  // Both signatures planned: alternating runs allocate nothing.
  std::vector<om::TensorView> ia = views(a), ib = views(b);
  std::vector<om::TensorView> out(1);
  const size_t before = g_allocations.load();
  for (int i = 0; i < 10; ++i) {
    CHECK(s.try_run(ia.data(), 2, out.data(), 1).is_ok());
    CHECK(s.try_run(ib.data(), 2, out.data(), 1).is_ok());
  }
  CHECK(g_allocations.load() - before == 0);
  // A third value evicts the least recently used plan (max_cached_plans = 2).
  CHECK(run(s, c)[0].dims == std::vector<int64_t>{1, 6});
  CHECK(s.cached_plan_count() == 2);
  CHECK(run(s, b)[0].dims == std::vector<int64_t>{3, 2});
  CHECK(s.last_plan_stats().plan_number == 2);  // b was used last before c came: kept
  CHECK(run(s, a)[0].dims == std::vector<int64_t>{2, 3});
  CHECK(s.last_plan_stats().plan_number == 4);  // a was evicted by c: planned again
}

TEST_CASE("errors the graph already shows are found at creation, naming an unnamed node by its output") {
  // A shape operand computed from float data cannot be known when planning.
  g::Graph gr;
  gr.inputs.push_back(sym_value("x", DType::f32, {"n"}));
  gr.inputs.push_back(sym_value("s", DType::f32, {"k"}));
  gr.nodes.push_back(node("Cast", {"s"}, {"shape"}, {Attribute::of_int("to", int64_t(DType::i64))}));
  gr.nodes.push_back(node("Reshape", {"x", "shape"}, {"y"}));
  gr.nodes.back().name.clear();
  g::ValueInfo y;
  y.name = "y";
  gr.outputs.push_back(y);
  om::Session s;
  om::Status st = om::Session::create(gr, {}, &s);
  REQUIRE(!st.is_ok());
  CHECK(st.message().find("Reshape node producing 'y'") != std::string::npos);
  CHECK(st.message().find("'shape'") != std::string::npos);
  CHECK(st.message().find("i64 graph input") != std::string::npos);

  // Static input shapes with operands of different dtypes: refused by the constructor.
  g::Graph bad;
  bad.inputs.push_back(value("a", DType::f32, {2}));
  bad.inputs.push_back(value("b", DType::i64, {2}));
  bad.nodes.push_back(node("Add", {"a", "b"}, {"z"}));
  bad.nodes.back().name.clear();
  g::ValueInfo z;
  z.name = "z";
  bad.outputs.push_back(z);
  st = om::Session::create(bad, {}, &s);
  REQUIRE(!st.is_ok());
  CHECK(st.kind() == om::ErrorKind::DTypeMismatch);
  CHECK(st.message().find("Add node producing 'z'") != std::string::npos);
}

TEST_CASE("operators that read string attributes while running allocate nothing (Resize, Upsample, Pad)") {
  g::Graph resize = single_node("Resize", {value("x", DType::f32, {1, 2, 4, 4})},
                                {Attribute::of_string("mode", "linear"), Attribute::of_string("coordinate_transformation_mode", "pytorch_half_pixel")},
                                {g::TensorData::from_vector<float>("scales", {4}, {1, 1, 2, 1.5f})});
  resize.nodes[0].inputs = {"x", "", "scales"};  // no roi; nearest_mode and the other strings take their defaults
  const g::Graph upsample = single_node("Upsample", {value("x", DType::f32, {1, 2, 4, 4})}, {},
                                        {g::TensorData::from_vector<float>("scales", {4}, {1, 1, 2, 2})});
  const g::Graph pad = single_node("Pad", {value("x", DType::f32, {1, 2, 4, 4})}, {Attribute::of_string("mode", "reflect")},
                                   {g::TensorData::from_vector<int64_t>("pads", {8}, {0, 0, 1, 1, 0, 0, 2, 2})});
  for (const g::Graph* gr : {static_cast<const g::Graph*>(&resize), &upsample, &pad}) {
    CAPTURE(gr->nodes[0].op_type);
    om::Session s(*gr);
    std::vector<Feed> feeds{Feed::of("x", {1, 2, 4, 4}, random_floats(32, 3))};
    auto in = views(feeds);
    std::vector<om::TensorView> out(1);
    s.run(in.data(), 1, out.data(), 1);
    const size_t before = g_allocations.load();
    for (int i = 0; i < 5; ++i) CHECK(s.try_run(in.data(), 1, out.data(), 1).is_ok());
    CHECK(g_allocations.load() - before == 0);
  }
}

TEST_CASE("SessionOptions::arena: a caller-owned arena, sized by arena_bytes_for, no heap after creation") {
  g::Graph gr = mlp(41);
  gr.inputs[0] = value("x", DType::f32, {2, 8});  // static: planned at creation
  std::vector<Feed> feeds{Feed::of("x", {2, 8}, random_floats(16, 42))};
  auto in = views(feeds);
  om::Session probe(gr);
  size_t need = 0;
  REQUIRE(probe.try_arena_bytes_for(in.data(), in.size(), &need).is_ok());
  REQUIRE(need > 0);
  const auto want = run(probe, feeds);
  CHECK(need == probe.last_plan_stats().arena_bytes);

  std::shared_ptr<uint8_t> arena(static_cast<uint8_t*>(std::aligned_alloc(64, (need + 63) / 64 * 64 + 64)), [](uint8_t* p) { std::free(p); });
  om::SessionOptions opts;
  opts.arena = arena.get();
  opts.arena_bytes = need;
  om::Session s;
  REQUIRE(om::Session::create(gr, opts, &s).is_ok());
  CHECK(s.options().max_concurrent_runs == 1);
  std::vector<om::TensorView> out(2);
  const size_t before = g_allocations.load();
  for (int i = 0; i < 5; ++i) REQUIRE(s.try_run(in.data(), in.size(), out.data(), out.size()).is_ok());
  CHECK(g_allocations.load() - before == 0);
  for (size_t o = 0; o < out.size(); ++o) {
    CAPTURE(o);
    const auto* p = static_cast<const uint8_t*>(out[o].data);
    CHECK(p >= arena.get());
    CHECK(p + out[o].numel() * 4 <= arena.get() + need);
    REQUIRE(size_t(out[o].numel()) * 4 == want[o].bytes.size());
    CHECK(std::memcmp(p, want[o].bytes.data(), want[o].bytes.size()) == 0);
  }

  opts.arena_bytes = need - 1;
  om::Session small;
  const om::Status st = om::Session::create(gr, opts, &small);
  REQUIRE(!st.is_ok());
  CHECK(st.kind() == om::ErrorKind::OutOfMemory);
  CHECK(st.message().find(om::msg("needs ", need, " bytes")) != std::string::npos);
  CHECK(st.message().find(om::msg("arena_bytes gives ", need - 1)) != std::string::npos);

  opts.arena = arena.get() + 8;
  opts.arena_bytes = need;
  const om::Status misaligned = om::Session::create(gr, opts, &small);
  CHECK(misaligned.kind() == om::ErrorKind::InvalidArgument);
  CHECK(misaligned.message().find("not 64-byte aligned") != std::string::npos);
  opts.arena = nullptr;
  CHECK(om::Session::create(gr, opts, &small).kind() == om::ErrorKind::InvalidArgument);
}
