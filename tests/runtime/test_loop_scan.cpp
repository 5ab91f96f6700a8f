// Loop and Scan, and If with a condition computed at run time: bodies planned once and run per
// iteration with loop-carried values in the arena, scan outputs stacked, the iteration cap, and
// the shapes a fixed memory plan refuses (docs/onnx.md, "Control flow").
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <string>
#include <thread>

#include "onemodel/io/onnx.h"
#include "oracle_case.h"
#include "runtime/runtime_helpers.h"

using namespace rt;

namespace {

g::Graph body_graph(const std::string& name, std::vector<g::ValueInfo> ins, std::vector<g::Node> nodes, std::vector<g::ValueInfo> outs) {
  g::Graph b;
  b.name = name;
  b.opsets.clear();
  b.inputs = std::move(ins);
  b.nodes = std::move(nodes);
  b.outputs = std::move(outs);
  return b;
}

g::TensorData i64_scalar(const std::string& name, int64_t v) { return g::TensorData::from_vector<int64_t>(name, {}, {v}); }
g::TensorData bool_scalar(const std::string& name, bool v) {
  g::TensorData t = g::TensorData::from_vector<uint8_t>(name, {}, {uint8_t(v)});
  t.dtype = DType::boolean;
  return t;
}
Feed i64_feed(const std::string& name, int64_t v) { return Feed::of(name, {}, std::vector<int64_t>{v}); }

// A while loop: v = v * 2 + x until the sum of v reaches `limit` (a graph input) or M (a graph
// input) iterations ran; also returns the iteration count carried as a value.
g::Graph doubling_loop() {
  g::Graph gr;
  gr.inputs = {value("M", DType::i64, {}), value("x", DType::f32, {2, 3}), value("limit", DType::f32, {4})};
  gr.initializers = {g::TensorData::from_vector<float>("two", {}, {2.0f}), bool_scalar("go", true), i64_scalar("zero", 0),
                     i64_scalar("one", 1)};
  // The limit is a small float input: it decides no shape, so it stays a run-time value.
  gr.nodes.push_back(node("ReduceMax", {"limit"}, {"lim"}, {g::Attribute::of_int("keepdims", 0)}));
  g::Graph body = body_graph("body", {value("i", DType::i64, {}), value("c", DType::boolean, {}), value("v", DType::f32, {2, 3}), value("n", DType::i64, {})},
                             {node("Mul", {"v", "two"}, {"v2"}), node("Add", {"v2", "x"}, {"v_out"}), node("ReduceSum", {"v_out"}, {"s"}, {g::Attribute::of_int("keepdims", 0)}),
                              node("Less", {"s", "lim"}, {"c_out"}), node("Add", {"n", "one"}, {"n_out"})},
                             {value("c_out", DType::boolean, {}), value("v_out", DType::f32, {2, 3}), value("n_out", DType::i64, {})});
  gr.nodes.push_back(node("Loop", {"M", "go", "x", "zero"}, {"v_final", "count"}, {g::Attribute::of_graph("body", std::move(body))}));
  gr.outputs = {value("v_final", DType::f32, {2, 3}), value("count", DType::i64, {})};
  return gr;
}

// The same loop computed directly.
std::pair<std::vector<float>, int64_t> doubling_reference(int64_t M, const std::vector<float>& x, float limit) {
  std::vector<float> v = x;
  int64_t n = 0;
  bool c = true;
  for (int64_t i = 0; i < M && c; ++i) {
    float s = 0;
    for (size_t k = 0; k < v.size(); ++k) {
      v[k] = v[k] * 2.0f + x[k];
      s += v[k];
    }
    c = s < limit;
    ++n;
  }
  return {v, n};
}

const std::vector<float> kX = {0.5f, -0.25f, 1.0f, 0.125f, 0.75f, -0.5f};

std::string plan_error(const g::Graph& gr, const std::vector<Feed>& feeds, om::SessionOptions opt = {}) {
  om::Session s;
  const om::Status created = om::Session::create(gr, opt, &s);
  if (!created.is_ok()) return created.message();
  std::vector<om::TensorView> in = views(feeds);
  std::vector<om::TensorView> out(s.output_names().size());
  const om::Status st = s.try_run(in.data(), in.size(), out.data(), out.size());
  return st.is_ok() ? std::string() : st.message();
}

// The graph with these feeds as an ONNX Runtime oracle case (tools/trace_oracle): the expected
// outputs are this Session's.
void oracle_case(const std::string& name, const g::Graph& gr, const std::vector<Feed>& feeds, const std::string& set = "") {
  om::Session s(gr);
  const std::vector<Out> y = run(s, feeds);
  std::vector<g::TensorData> in, expected;
  for (const Feed& f : feeds) in.push_back(g::TensorData::copy_of(f.name, f.dtype, f.dims, f.bytes.data(), f.bytes.size()));
  for (size_t i = 0; i < y.size(); ++i)
    expected.push_back(g::TensorData::copy_of(gr.outputs[i].name, y[i].dtype, y[i].dims, y[i].bytes.data(), y[i].bytes.size()));
  if (set.empty()) oracle::write_oracle_case(name, gr, in, expected);
  else oracle::add_oracle_inputs(name, set, in, expected);
}

}  // namespace

TEST_CASE("Loop: a trip count and a condition computed from data, one plan for every trip count") {
  const g::Graph gr = doubling_loop();
  for (om::ArithmeticMode mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
    om::Session s(gr, {mode});
    for (int64_t M : {0, 1, 3, 10})
      for (float limit : {-100.0f, 5.0f, 40.0f, 1e9f}) {
        CAPTURE(M);
        CAPTURE(limit);
        const std::vector<Out> y = run(s, {i64_feed("M", M), Feed::of("x", {2, 3}, kX), Feed::of("limit", {4}, std::vector<float>(4, limit))});
        const auto ref = doubling_reference(M, kX, limit);
        CHECK(y[0].as<float>() == ref.first);
        CHECK(y[1].as<int64_t>() == std::vector<int64_t>{ref.second});
      }
    // The trip count and the limit are read at run time: every run shares one plan.
    CHECK(s.cached_plan_count() == 1);
  }
  oracle_case("loops_while", gr, {i64_feed("M", 10), Feed::of("x", {2, 3}, kX), Feed::of("limit", {4}, std::vector<float>(4, 40.0f))});
  oracle_case("loops_while", gr, {i64_feed("M", 3), Feed::of("x", {2, 3}, kX), Feed::of("limit", {4}, std::vector<float>(4, 1e9f))}, "trip_count_3");
}

TEST_CASE("Loop: the iteration cap stops a loop that would run on, naming the option") {
  const g::Graph gr = doubling_loop();
  om::SessionOptions opt;
  opt.max_loop_iterations = 50;
  const std::vector<Feed> feeds = {i64_feed("M", INT64_MAX), Feed::of("x", {2, 3}, std::vector<float>(6, 0.0f)),
                                   Feed::of("limit", {4}, std::vector<float>(4, 1.0f))};
  const std::string e = plan_error(gr, feeds, opt);
  CHECK(e.find("SessionOptions::max_loop_iterations = 50") != std::string::npos);
  CHECK(e.find("Loop") != std::string::npos);
  // Within the cap the same session runs.
  om::Session s(gr, opt);
  const std::vector<Out> y = run(s, {i64_feed("M", 50), feeds[1], feeds[2]});
  CHECK(y[1].as<int64_t>() == std::vector<int64_t>{50});
}

TEST_CASE("Loop: nested loops count toward one cap per run, so they cannot multiply past it") {
  // for i < M: for j < M: w += 1 — M * M inner iterations plus M outer ones.
  g::Graph inner = body_graph("inner", {value("j", DType::i64, {}), value("ci", DType::boolean, {}), value("w", DType::f32, {})},
                              {node("Identity", {"ci"}, {"ci_out"}), node("Add", {"w", "one"}, {"w_out"})},
                              {value("ci_out", DType::boolean, {}), value("w_out", DType::f32, {})});
  g::Graph outer = body_graph("outer", {value("i", DType::i64, {}), value("c", DType::boolean, {}), value("v", DType::f32, {})},
                              {node("Identity", {"c"}, {"c_out"}), node("Loop", {"M", "", "v"}, {"v_out"}, {g::Attribute::of_graph("body", std::move(inner))})},
                              {value("c_out", DType::boolean, {}), value("v_out", DType::f32, {})});
  g::Graph gr;
  gr.inputs = {value("M", DType::i64, {}), value("v0", DType::f32, {})};
  gr.initializers = {g::TensorData::from_vector<float>("one", {}, {1.0f})};
  gr.nodes.push_back(node("Loop", {"M", "", "v0"}, {"v"}, {g::Attribute::of_graph("body", std::move(outer))}));
  gr.outputs = {value("v", DType::f32, {})};
  om::SessionOptions opt;
  opt.max_loop_iterations = 10000;
  om::Session s(gr, opt);
  // 90 * 90 + 90 = 8190 iterations: within the cap.
  CHECK(run(s, {i64_feed("M", 90), Feed::of("v0", {}, std::vector<float>{0})})[0].as<float>() == std::vector<float>{8100});
  // 1000 * 1000: each loop alone is within the cap, together they are not.
  std::vector<Feed> feeds = {i64_feed("M", 1000), Feed::of("v0", {}, std::vector<float>{0})};
  std::vector<om::TensorView> in = views(feeds);
  std::vector<om::TensorView> out(1);
  const om::Status st = s.try_run(in.data(), in.size(), out.data(), out.size());
  REQUIRE_FALSE(st.is_ok());
  CHECK(st.message().find("SessionOptions::max_loop_iterations = 10000") != std::string::npos);
  CHECK(st.message().find("in all") != std::string::npos);
}

TEST_CASE("Loop: scan outputs stacked per iteration, values swapped between iterations, a nested loop") {
  // Outer loop, M = 4 (constant), condition passed through: a and b swap each iteration
  // (a_out = b, b_out = a + x) and the scan output collects a; an inner loop inside adds x
  // three times to a carried value that starts at a.
  g::Graph inner = body_graph("inner", {value("j", DType::i64, {}), value("ci", DType::boolean, {}), value("w", DType::f32, {3})},
                              {node("Identity", {"ci"}, {"ci_out"}), node("Add", {"w", "x"}, {"w_out"})},
                              {value("ci_out", DType::boolean, {}), value("w_out", DType::f32, {3})});
  g::Graph outer = body_graph(
      "outer", {value("i", DType::i64, {}), value("c", DType::boolean, {}), value("a", DType::f32, {3}), value("b", DType::f32, {3})},
      {node("Identity", {"c"}, {"c_out"}), node("Add", {"a", "x"}, {"b_out"}), node("Identity", {"b"}, {"a_out"}),
       node("Loop", {"three", "", "a"}, {"w_final"}, {g::Attribute::of_graph("body", std::move(inner))}), node("Identity", {"a"}, {"col"}),
       node("Cast", {"i"}, {"fi"}, {g::Attribute::of_int("to", int64_t(DType::f32))}), node("Mul", {"w_final", "fi"}, {"wi"})},
      {value("c_out", DType::boolean, {}), value("a_out", DType::f32, {3}), value("b_out", DType::f32, {3}), value("col", DType::f32, {3}),
       value("wi", DType::f32, {3})});
  g::Graph gr;
  gr.inputs = {value("x", DType::f32, {3}), value("a0", DType::f32, {3})};
  gr.initializers = {i64_scalar("four", 4), i64_scalar("three", 3)};
  gr.nodes.push_back(node("Neg", {"a0"}, {"b0"}));
  gr.nodes.push_back(node("Loop", {"four", "", "a0", "b0"}, {"a_final", "b_final", "cols", "ws"}, {g::Attribute::of_graph("body", std::move(outer))}));
  gr.outputs = {value("a_final", DType::f32, {3}), value("b_final", DType::f32, {3}), value("cols", DType::f32, {4, 3}), value("ws", DType::f32, {4, 3})};
  REQUIRE(g::verify(gr).is_ok());
  const std::vector<float> x = {1.0f, 2.0f, -3.0f}, a0 = {0.5f, 0.25f, 4.0f};
  std::vector<float> a = a0, b(3), cols, ws;
  for (int k = 0; k < 3; ++k) b[size_t(k)] = -a0[size_t(k)];
  for (int i = 0; i < 4; ++i) {
    for (int k = 0; k < 3; ++k) {
      cols.push_back(a[size_t(k)]);
      float w = a[size_t(k)];
      for (int j = 0; j < 3; ++j) w += x[size_t(k)];
      ws.push_back(w * float(i));
    }
    const std::vector<float> next_b = {a[0] + x[0], a[1] + x[1], a[2] + x[2]};
    a = b;
    b = next_b;
  }
  for (om::ArithmeticMode mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact})
    for (bool optimize : {true, false}) {
      om::SessionOptions opt;
      opt.mode = mode;
      opt.optimize = optimize;
      om::Session s(gr, opt);
      const std::vector<Out> y = run(s, {Feed::of("x", {3}, x), Feed::of("a0", {3}, a0)});
      CHECK(y[0].as<float>() == a);
      CHECK(y[1].as<float>() == b);
      CHECK(y[2].dims == std::vector<int64_t>{4, 3});
      CHECK(y[2].as<float>() == cols);
      CHECK(y[3].as<float>() == ws);
    }
  // The ONNX round trip keeps the bodies, and the file runs the same.
  const std::vector<uint8_t> bytes = om::onnx::write(gr);
  const g::Graph back = om::onnx::read(bytes);
  CHECK(om::onnx::write(back) == bytes);
  om::Session s(back);
  CHECK(run(s, {Feed::of("x", {3}, x), Feed::of("a0", {3}, a0)})[2].as<float>() == cols);
  oracle_case("loops_nested_swap_scan", gr, {Feed::of("x", {3}, x), Feed::of("a0", {3}, a0)});
}

TEST_CASE("Scan: axes, reverse directions, several states and outputs") {
  // States: a running sum s [2] and a running product p [2]; scanned: x [2, T] along axis 1
  // forwards and z [T, 2] backwards; outputs: s after each step stacked along axis 1, and p
  // stacked backwards along axis 0.
  const int64_t T = 5;
  g::Graph body = body_graph("scan_body",
                             {value("s", DType::f32, {2}), value("p", DType::f32, {2}), value("xs", DType::f32, {2}), value("zs", DType::f32, {2})},
                             {node("Add", {"s", "xs"}, {"s_out"}), node("Mul", {"p", "zs"}, {"p_out"}), node("Identity", {"s_out"}, {"s_col"}),
                              node("Identity", {"p_out"}, {"p_row"})},
                             {value("s_out", DType::f32, {2}), value("p_out", DType::f32, {2}), value("s_col", DType::f32, {2}), value("p_row", DType::f32, {2})});
  g::Graph gr;
  gr.inputs = {value("s0", DType::f32, {2}), value("p0", DType::f32, {2}), value("x", DType::f32, {2, T}), value("z", DType::f32, {T, 2})};
  gr.nodes.push_back(node("Scan", {"s0", "p0", "x", "z"}, {"s", "p", "ss", "ps"},
                          {g::Attribute::of_graph("body", std::move(body)), g::Attribute::of_int("num_scan_inputs", 2),
                           g::Attribute::of_ints("scan_input_axes", {1, 0}), g::Attribute::of_ints("scan_input_directions", {0, 1}),
                           g::Attribute::of_ints("scan_output_axes", {-1, 0}), g::Attribute::of_ints("scan_output_directions", {0, 1})}));
  gr.outputs = {value("s", DType::f32, {2}), value("p", DType::f32, {2}), value("ss", DType::f32, {2, T}), value("ps", DType::f32, {T, 2})};
  const std::vector<float> s0 = {1, -1}, p0 = {1, 2};
  std::vector<float> x(2 * T), z(T * 2);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.25f * float(i) - 1.0f;
  for (size_t i = 0; i < z.size(); ++i) z[i] = 0.5f + 0.125f * float(i);
  std::vector<float> s = s0, p = p0, ss(2 * T), ps(T * 2);
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t k = 0; k < 2; ++k) {
      s[size_t(k)] += x[size_t(k * T + t)];
      p[size_t(k)] *= z[size_t((T - 1 - t) * 2 + k)];
      ss[size_t(k * T + t)] = s[size_t(k)];
      ps[size_t((T - 1 - t) * 2 + k)] = p[size_t(k)];
    }
  }
  for (om::ArithmeticMode mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
    om::Session sess(gr, {mode});
    const std::vector<Out> y = run(sess, {Feed::of("s0", {2}, s0), Feed::of("p0", {2}, p0), Feed::of("x", {2, T}, x), Feed::of("z", {T, 2}, z)});
    CHECK(y[0].as<float>() == s);
    CHECK(y[1].as<float>() == p);
    CHECK(y[2].dims == std::vector<int64_t>{2, T});
    CHECK(y[2].as<float>() == ss);
    CHECK(y[3].as<float>() == ps);
  }
  oracle_case("loops_scan_axes", gr, {Feed::of("s0", {2}, s0), Feed::of("p0", {2}, p0), Feed::of("x", {2, T}, x), Feed::of("z", {T, 2}, z)});
}

TEST_CASE("If with a condition computed at run time: both branches planned, each run takes one") {
  // y = If(ReduceSum(x) > 0) { Neg(x) * 2 } else { Relu(x) + 1 }; x [100] is too large to be a
  // value input, so the condition is known only when running.
  g::Graph gr;
  gr.inputs = {value("x", DType::f32, {100})};
  gr.initializers = {g::TensorData::from_vector<float>("zero", {}, {0.0f}), g::TensorData::from_vector<float>("two", {}, {2.0f}),
                     g::TensorData::from_vector<float>("one", {}, {1.0f})};
  gr.nodes.push_back(node("ReduceSum", {"x"}, {"sum"}, {g::Attribute::of_int("keepdims", 0)}));
  gr.nodes.push_back(node("Greater", {"sum", "zero"}, {"c"}));
  g::Graph then_g = body_graph("then", {}, {node("Neg", {"x"}, {"n"}), node("Mul", {"n", "two"}, {"t"})}, {value("t", DType::f32, {100})});
  g::Graph else_g = body_graph("else", {}, {node("Relu", {"x"}, {"r"}), node("Add", {"r", "one"}, {"e"})}, {value("e", DType::f32, {100})});
  gr.nodes.push_back(node("If", {"c"}, {"y"}, {g::Attribute::of_graph("then_branch", std::move(then_g)), g::Attribute::of_graph("else_branch", std::move(else_g))}));
  gr.nodes.push_back(node("Sigmoid", {"y"}, {"z"}));
  gr.outputs = {value("z", DType::f32, {100})};
  std::vector<float> pos(100), neg(100);
  for (size_t i = 0; i < 100; ++i) {
    pos[i] = float(i % 7) - 2.0f;
    neg[i] = -pos[i];
  }
  for (om::ArithmeticMode mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
    om::Session s(gr, {mode});
    // The reference: the same branch's graph without the If.
    auto direct = [&](bool then_side, const std::vector<float>& x) {
      g::Graph d;
      d.inputs = gr.inputs;
      d.initializers = gr.initializers;
      if (then_side) d.nodes = {node("Neg", {"x"}, {"n"}), node("Mul", {"n", "two"}, {"y"})};
      else d.nodes = {node("Relu", {"x"}, {"r"}), node("Add", {"r", "one"}, {"y"})};
      d.nodes.push_back(node("Sigmoid", {"y"}, {"z"}));
      d.outputs = gr.outputs;
      om::Session ds(d, {mode});
      return run(ds, {Feed::of("x", {100}, x)})[0].bytes;
    };
    for (int round = 0; round < 2; ++round) {
      CHECK(run(s, {Feed::of("x", {100}, pos)})[0].bytes == direct(true, pos));
      CHECK(run(s, {Feed::of("x", {100}, neg)})[0].bytes == direct(false, neg));
    }
    CHECK(s.cached_plan_count() == 1);
    // Nothing allocated per run, whichever branch runs.
    std::vector<Feed> fp = {Feed::of("x", {100}, pos)}, fn = {Feed::of("x", {100}, neg)};
    auto ip = views(fp), in_n = views(fn);
    std::vector<om::TensorView> out(1);
    const size_t before = g_allocations.load();
    for (int i = 0; i < 5; ++i) {
      CHECK(s.try_run(ip.data(), 1, out.data(), 1).is_ok());
      CHECK(s.try_run(in_n.data(), 1, out.data(), 1).is_ok());
    }
    CHECK(g_allocations.load() - before == 0);
  }
  oracle_case("loops_if_run_time", gr, {Feed::of("x", {100}, pos)});
  oracle_case("loops_if_run_time", gr, {Feed::of("x", {100}, neg)}, "else");
  SUBCASE("branches of different shapes need a condition known when planning") {
    g::Graph bad = gr;
    bad.nodes[2].attributes[1] = g::Attribute::of_graph(
        "else_branch", body_graph("else", {}, {node("ReduceMax", {"x"}, {"e"}, {g::Attribute::of_int("keepdims", 1)})}, {value("e", DType::f32, {1})}));
    bad.outputs[0].shape.clear();
    bad.outputs[0].has_shape = false;
    const std::string e = plan_error(bad, {Feed::of("x", {100}, pos)});
    CHECK(e.find("from then_branch and") != std::string::npos);
    CHECK(e.find("equal shapes") != std::string::npos);
  }
}

TEST_CASE("Loop: concurrent runs of one Session keep their counters apart") {
  const g::Graph gr = doubling_loop();
  om::Session s(gr);
  const std::vector<float> limits = {3.0f, 20.0f, 300.0f, 1e9f};
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (size_t t = 0; t < limits.size(); ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < 20; ++r) {
        const int64_t M = 2 + (r + int(t)) % 9;
        std::vector<Feed> feeds = {i64_feed("M", M), Feed::of("x", {2, 3}, kX), Feed::of("limit", {4}, std::vector<float>(4, limits[t]))};
        std::vector<om::TensorView> in = views(feeds);
        // Outputs copied into the caller's buffers inside run(): another run may reuse the arena after it.
        std::vector<float> v(6);
        int64_t n = -1;
        std::vector<om::TensorView> out(2);
        out[0].data = v.data();
        out[0].capacity = v.size() * sizeof(float);
        out[1].data = &n;
        out[1].capacity = sizeof n;
        if (!s.try_run(in.data(), in.size(), out.data(), out.size()).is_ok()) ++bad;
        const auto ref = doubling_reference(M, kX, limits[t]);
        if (v != ref.first || n != ref.second) ++bad;
      }
    });
  for (auto& th : threads) th.join();
  CHECK(bad.load() == 0);
}

TEST_CASE("hostile loops are refused with errors naming the problem") {
  SUBCASE("a loop-carried value that changes shape") {
    g::Graph body = body_graph("body", {value("i", DType::i64, {}), value("c", DType::boolean, {}), value("v", DType::f32, {2})},
                               {node("Identity", {"c"}, {"c_out"}), node("Concat", {"v", "v"}, {"v_out"}, {g::Attribute::of_int("axis", 0)})},
                               {value("c_out", DType::boolean, {}), value("v_out", DType::f32, {4})});
    g::Graph gr;
    gr.inputs = {value("v0", DType::f32, {2})};
    gr.initializers = {i64_scalar("M", 3)};
    gr.nodes.push_back(node("Loop", {"M", "", "v0"}, {"v"}, {g::Attribute::of_graph("body", std::move(body))}));
    gr.outputs = {value("v", DType::f32, {2})};
    const std::string e = plan_error(gr, {Feed::of("v0", {2}, std::vector<float>{1, 2})});
    CHECK(e.find("loop-carried value 0 ('v0')") != std::string::npos);
    CHECK(e.find("keep its shape") != std::string::npos);
  }
  SUBCASE("scan outputs whose count depends on data") {
    g::Graph gr = doubling_loop();
    g::Graph& body = *gr.nodes[1].attributes[0].g;
    body.nodes.push_back(node("Identity", {"v_out"}, {"col"}));
    body.outputs.push_back(value("col", DType::f32, {2, 3}));
    gr.nodes[1].outputs.push_back("cols");
    gr.outputs.push_back(value("cols", DType::f32, {}));
    gr.outputs.back().has_shape = false;
    const std::string e = plan_error(gr, {i64_feed("M", 3), Feed::of("x", {2, 3}, kX), Feed::of("limit", {4}, std::vector<float>(4, 1.0f))});
    CHECK(e.find("scan outputs stack one slice per iteration") != std::string::npos);
  }
  SUBCASE("a body with the wrong number of inputs") {
    g::Graph gr = doubling_loop();
    gr.nodes[1].attributes[0].g->inputs.push_back(value("extra", DType::f32, {}));
    const std::string e = plan_error(gr, {});
    CAPTURE(e);
    CHECK(e.find("need a body with 4 inputs") != std::string::npos);
    CHECK(e.find("the body has 5 inputs") != std::string::npos);
  }
  SUBCASE("a Scan whose scanned inputs differ in length") {
    g::Graph body = body_graph("b", {value("s", DType::f32, {}), value("sa", DType::f32, {}), value("sb", DType::f32, {})},
                               {node("Add", {"s", "sa"}, {"s_out"})}, {value("s_out", DType::f32, {})});
    g::Graph gr;
    gr.inputs = {value("s0", DType::f32, {}), value("a", DType::f32, {3}), value("b", DType::f32, {4})};
    gr.nodes.push_back(node("Scan", {"s0", "a", "b"}, {"s"}, {g::Attribute::of_graph("body", std::move(body)), g::Attribute::of_int("num_scan_inputs", 2)}));
    gr.outputs = {value("s", DType::f32, {})};
    const std::string e = plan_error(gr, {Feed::of("s0", {}, std::vector<float>{0}), Feed::of("a", {3}, std::vector<float>(3, 1.0f)),
                                          Feed::of("b", {4}, std::vector<float>(4, 1.0f))});
    CAPTURE(e);
    CHECK(e.find("every scanned input needs the same number") != std::string::npos);
  }
  SUBCASE("a Scan axis out of range") {
    g::Graph body = body_graph("b", {value("s", DType::f32, {}), value("sa", DType::f32, {})}, {node("Add", {"s", "sa"}, {"s_out"})},
                               {value("s_out", DType::f32, {})});
    g::Graph gr;
    gr.inputs = {value("s0", DType::f32, {}), value("a", DType::f32, {3})};
    gr.nodes.push_back(node("Scan", {"s0", "a"}, {"s"}, {g::Attribute::of_graph("body", std::move(body)), g::Attribute::of_int("num_scan_inputs", 1),
                                                          g::Attribute::of_ints("scan_input_axes", {4})}));
    gr.outputs = {value("s", DType::f32, {})};
    const std::string e = plan_error(gr, {Feed::of("s0", {}, std::vector<float>{0}), Feed::of("a", {3}, std::vector<float>(3, 1.0f))});
    CAPTURE(e);
    CHECK(e.find("the axis must be in [-1, 0]") != std::string::npos);
  }
}

TEST_CASE("Loop: a run-time If inside the body, on the iteration number") {
  // v = v + x on even iterations and v * 2 on odd ones, for M (a graph input) iterations; the If's
  // condition changes every iteration, so both branches are planned inside the body.
  g::Graph then_g = body_graph("even", {}, {node("Add", {"v", "x"}, {"t"})}, {value("t", DType::f32, {4})});
  g::Graph else_g = body_graph("odd", {}, {node("Mul", {"v", "two"}, {"e"})}, {value("e", DType::f32, {4})});
  g::Graph body = body_graph(
      "body", {value("i", DType::i64, {}), value("c", DType::boolean, {}), value("v", DType::f32, {4})},
      {node("Identity", {"c"}, {"c_out"}), node("Mod", {"i", "two_i"}, {"parity"}), node("Equal", {"parity", "zero"}, {"even"}),
       node("If", {"even"}, {"v_out"}, {g::Attribute::of_graph("then_branch", std::move(then_g)), g::Attribute::of_graph("else_branch", std::move(else_g))})},
      {value("c_out", DType::boolean, {}), value("v_out", DType::f32, {4})});
  g::Graph gr;
  gr.inputs = {value("M", DType::i64, {}), value("x", DType::f32, {4})};
  gr.initializers = {g::TensorData::from_vector<float>("two", {}, {2.0f}), i64_scalar("two_i", 2), i64_scalar("zero", 0)};
  gr.nodes.push_back(node("Loop", {"M", "", "x"}, {"v"}, {g::Attribute::of_graph("body", std::move(body))}));
  gr.outputs = {value("v", DType::f32, {4})};
  const std::vector<float> x = {1.0f, -0.5f, 0.25f, 3.0f};
  for (om::ArithmeticMode mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
    om::Session s(gr, {mode});
    for (int64_t M : {0, 1, 2, 5, 8}) {
      std::vector<float> v = x;
      for (int64_t i = 0; i < M; ++i)
        for (size_t k = 0; k < 4; ++k) v[k] = i % 2 == 0 ? v[k] + x[k] : v[k] * 2.0f;
      CAPTURE(M);
      CHECK(run(s, {i64_feed("M", M), Feed::of("x", {4}, x)})[0].as<float>() == v);
    }
    CHECK(s.cached_plan_count() == 1);
  }
  oracle_case("loops_if_in_body", gr, {i64_feed("M", 5), Feed::of("x", {4}, x)});
}

// A shape decided by the iteration number (a Slice whose end is i + 1, as ONNX's test_loop11):
// one plan cannot hold it, so the Session unrolls the Loop for the trip count given (an integer
// input, read when planning: one lowered plan per value); a trip count only known when running
// is refused naming both reasons.
TEST_CASE("Loop: a shape decided by the iteration number is unrolled for a trip count known when planning") {
  g::Graph body = body_graph("prefix_body", {value("i", DType::i64, {}), value("c", DType::boolean, {})},
                             {node("Identity", {"c"}, {"c_out"}), node("Add", {"i", "one"}, {"end"}), node("Unsqueeze", {"end", "axes"}, {"end1"}),
                              node("Slice", {"x", "zero1", "end1"}, {"prefix"}), node("ReduceSum", {"prefix"}, {"sum"}, {g::Attribute::of_int("keepdims", 0)})},
                             {value("c_out", DType::boolean, {}), value("sum", DType::f32, {})});
  g::Graph gr;
  gr.inputs = {value("M", DType::i64, {}), value("x", DType::f32, {5})};
  gr.initializers = {i64_scalar("one", 1), g::TensorData::from_vector<int64_t>("axes", {1}, {0}), g::TensorData::from_vector<int64_t>("zero1", {1}, {0})};
  gr.nodes.push_back(node("Loop", {"M", ""}, {"sums"}, {g::Attribute::of_graph("body", std::move(body))}));
  gr.outputs = {value("sums", DType::f32, {})};
  gr.outputs[0].has_shape = false;
  om::Session s(gr);
  const std::vector<float> x = {1, 2, 3, 4, 5};
  std::vector<Out> out = run(s, {i64_feed("M", 4), Feed::of("x", {5}, x)});
  CHECK(out[0].dims == std::vector<int64_t>{4});
  CHECK(out[0].as<float>() == std::vector<float>{1, 3, 6, 10});
  out = run(s, {i64_feed("M", 2), Feed::of("x", {5}, x)});
  CHECK(out[0].as<float>() == std::vector<float>{1, 3});
  CHECK(s.cached_plan_count() == 2);
  // The trip count from float data: not known when planning.
  g::Graph gf = gr;
  gf.inputs[0] = value("F", DType::f32, {});
  gf.nodes.insert(gf.nodes.begin(), node("Cast", {"F"}, {"M"}, {g::Attribute::of_int("to", 7)}));
  om::Session sf(gf);
  try {
    run(sf, {Feed::of("F", {}, std::vector<float>{3}), Feed::of("x", {5}, x)});
    FAIL("a trip count from float data was unrolled");
  } catch (const om::Error& e) {
    const std::string m = e.what();
    CHECK(m.find("Slice") != std::string::npos);
    CHECK(m.find("trip count") != std::string::npos);
  }
}
