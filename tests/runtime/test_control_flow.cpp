// If: subgraphs in the IR (outer-scope names, verification, the ONNX round trip), the branch a
// plan-time condition chooses planned inline, and hostile control flow refused cleanly (Loop,
// Scan and run-time conditions: test_loop_scan.cpp).
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "onemodel/io/format_v1.h"
#include "onemodel/io/onnx.h"
#include "runtime/runtime_helpers.h"

using namespace rt;

namespace {

g::ValueInfo untyped(const std::string& name) {
  g::ValueInfo v;
  v.name = name;
  v.has_shape = false;
  return v;
}

// A branch computing `op` of the enclosing graph's `x` (read by name) into `out`.
g::Graph branch(const std::string& op, const std::string& out, const std::string& x = "x") {
  g::Graph b;
  b.name = out + "_graph";
  b.opsets.clear();
  b.nodes.push_back(node(op, {x}, {out}));
  b.outputs.push_back(untyped(out));
  return b;
}

g::Node if_node(const std::string& cond, g::Graph then_g, g::Graph else_g, std::vector<std::string> outs = {"y"}) {
  return node("If", {cond}, std::move(outs),
              {g::Attribute::of_graph("then_branch", std::move(then_g)), g::Attribute::of_graph("else_branch", std::move(else_g))});
}

// y = If(c) { Neg(x) } else { Relu(x) }, c a bool graph input.
g::Graph if_on_input() {
  g::Graph gr;
  gr.inputs = {value("c", DType::boolean, {}), value("x", DType::f32, {2, 3})};
  gr.nodes.push_back(if_node("c", branch("Neg", "t"), branch("Relu", "r")));
  gr.outputs = {value("y", DType::f32, {2, 3})};
  return gr;
}

Feed cond_feed(bool c) {
  Feed f = Feed::of("c", {}, std::vector<uint8_t>{uint8_t(c)});
  f.dtype = DType::boolean;
  return f;
}

const std::vector<float> kX = {-1.5f, 2.0f, -0.25f, 0.0f, 3.0f, -4.0f};

std::string error_of(const g::Graph& gr, om::SessionOptions opt = {}) {
  om::Session s;
  const om::Status st = om::Session::create(gr, opt, &s);
  return st.is_ok() ? std::string() : st.message();
}

}  // namespace

TEST_CASE("If on a bool graph input: each value gets its plan, running the branch it chooses") {
  om::Session s(if_on_input());
  for (bool c : {true, false, true}) {
    const std::vector<Out> y = run(s, {cond_feed(c), Feed::of("x", {2, 3}, kX)});
    REQUIRE(y.size() == 1);
    CHECK(y[0].dims == std::vector<int64_t>{2, 3});
    const std::vector<float> v = y[0].as<float>();
    for (size_t i = 0; i < kX.size(); ++i) CHECK(v[i] == (c ? -kX[i] : std::max(kX[i], 0.0f)));
  }
  CHECK(s.cached_plan_count() == 2);
  // The chosen branch's one kernel is the plan's only step.
  CHECK(s.last_plan_stats().steps == 1);
}

TEST_CASE("If whose condition follows from shapes is folded: branches of different shapes, nested Ifs") {
  // y = If(Shape(x)[0] == 2) { If(true) { Neg(x) } else { ... } } else { Flatten(x) }: the
  // branches give [2, 3] and [N*3... ] shapes; only the chosen one is planned.
  g::Graph gr;
  gr.inputs = {sym_value("x", DType::f32, {"N", "3"})};
  gr.initializers = {g::TensorData::from_vector<int64_t>("zero", {}, {0}), g::TensorData::from_vector<int64_t>("two", {}, {2}),
                     g::TensorData::from_vector<uint8_t>("yes", {}, {1})};
  gr.initializers.back().dtype = DType::boolean;
  gr.nodes.push_back(node("Shape", {"x"}, {"s"}));
  gr.nodes.push_back(node("Gather", {"s", "zero"}, {"n"}, {g::Attribute::of_int("axis", 0)}));
  gr.nodes.push_back(node("Equal", {"n", "two"}, {"is2"}));
  g::Graph inner_then = branch("Neg", "neg");
  g::Graph outer_then;
  outer_then.opsets.clear();
  outer_then.nodes.push_back(if_node("yes", std::move(inner_then), branch("Relu", "never"), {"inner"}));
  outer_then.outputs.push_back(untyped("inner"));
  g::Graph outer_else;
  outer_else.opsets.clear();
  outer_else.nodes.push_back(node("Flatten", {"x"}, {"flat"}, {g::Attribute::of_int("axis", 0)}));
  outer_else.outputs.push_back(untyped("flat"));
  gr.nodes.push_back(if_node("is2", std::move(outer_then), std::move(outer_else)));
  gr.outputs = {untyped("y")};
  gr.outputs[0].has_type = true;
  REQUIRE(g::verify(gr).is_ok());
  om::Session s(gr);
  const std::vector<Out> a = run(s, {Feed::of("x", {2, 3}, kX)});
  CHECK(a[0].dims == std::vector<int64_t>{2, 3});
  CHECK(a[0].as<float>()[1] == -2.0f);
  const std::vector<float> x4(12, 1.5f);
  const std::vector<Out> b = run(s, {Feed::of("x", {4, 3}, x4)});
  CHECK(b[0].dims == std::vector<int64_t>{1, 12});
  CHECK(b[0].as<float>() == x4);
  for (om::ArithmeticMode mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
    om::Session m(gr, {mode});
    CHECK(run(m, {Feed::of("x", {2, 3}, kX)})[0].as<float>() == a[0].as<float>());
  }
}

TEST_CASE("subgraphs survive the ONNX round trip byte for byte, and the passes keep what branches read") {
  g::Graph gr = if_on_input();
  // An Identity whose output only a branch reads: removing it would strand the branch.
  gr.nodes.insert(gr.nodes.begin(), node("Identity", {"x"}, {"x_copy"}));
  gr.nodes.back() = if_node("c", branch("Neg", "t", "x_copy"), branch("Relu", "r", "x_copy"));
  const std::vector<uint8_t> bytes = om::onnx::write(gr);
  const g::Graph back = om::onnx::read(bytes);
  CHECK(om::onnx::write(back) == bytes);
  REQUIRE(back.nodes.size() == 2);
  const g::Attribute* then_b = back.nodes[1].attr("then_branch");
  REQUIRE(then_b);
  CHECK(then_b->type == g::AttrType::Graph);
  CHECK(then_b->g->nodes.at(0).op_type == "Neg");
  CHECK(g::outer_reads(back.nodes[1]) == std::vector<std::string>{"x_copy"});
  om::Session s(back);
  CHECK(run(s, {cond_feed(true), Feed::of("x", {2, 3}, kX)})[0].as<float>()[0] == 1.5f);
  // The library format v1 has no place for subgraphs: saving says so.
  const om::Result<std::vector<uint8_t>> om_bytes = om::format_v1::write_bytes(back);
  REQUIRE_FALSE(om_bytes.is_ok());
  CHECK(om_bytes.status().message().find("cannot hold") != std::string::npos);
}

TEST_CASE("hostile control flow is refused with an error naming the problem") {
  SUBCASE("a branch reads a name no enclosing graph defines") {
    g::Graph gr = if_on_input();
    gr.nodes[0] = if_node("c", branch("Neg", "t", "nowhere"), branch("Relu", "r"));
    const std::string e = error_of(gr);
    CHECK(e.find("'nowhere'") != std::string::npos);
    CHECK(e.find("then_branch") != std::string::npos);
  }
  SUBCASE("a branch reads a value defined after the If") {
    g::Graph gr = if_on_input();
    gr.nodes[0] = if_node("c", branch("Neg", "t", "late"), branch("Relu", "r"));
    gr.nodes.push_back(node("Relu", {"x"}, {"late"}));
    CHECK(error_of(gr).find("'late'") != std::string::npos);
  }
  SUBCASE("a branch redefines a name of the enclosing graph") {
    g::Graph gr = if_on_input();
    gr.nodes[0] = if_node("c", branch("Neg", "x"), branch("Relu", "r"));
    CHECK(error_of(gr).find("redefines") != std::string::npos);
  }
  SUBCASE("branches with another output count than the node") {
    g::Graph gr = if_on_input();
    g::Graph two = branch("Neg", "t");
    two.outputs.push_back(untyped("x"));
    gr.nodes[0] = if_node("c", std::move(two), branch("Relu", "r"));
    const std::string e = error_of(gr);
    CHECK(e.find("then_branch has 2 outputs") != std::string::npos);
  }
  SUBCASE("a condition computed from run-time data is no error: both branches are planned") {
    g::Graph gr = if_on_input();
    // A float input too large to be a value input, reduced to the scalar the condition compares
    // (tests/runtime/test_loop_scan.cpp runs such Ifs).
    gr.inputs[0] = value("f", DType::f32, {100});
    gr.nodes.insert(gr.nodes.begin(), node("Greater", {"m", "m"}, {"c"}));
    gr.nodes.insert(gr.nodes.begin(), node("ReduceMax", {"f"}, {"m"}, {g::Attribute::of_int("keepdims", 0)}));
    CHECK(error_of(gr).empty());
  }
  SUBCASE("a condition of several elements") {
    g::Graph gr = if_on_input();
    gr.inputs[0] = value("c", DType::boolean, {2});
    om::Session s(gr);
    Feed c = Feed::of("c", {2}, std::vector<uint8_t>{1, 0});
    c.dtype = DType::boolean;
    std::vector<Feed> feeds = {c, Feed::of("x", {2, 3}, kX)};
    std::vector<om::TensorView> in = views(feeds);
    std::vector<om::TensorView> out(1);
    const om::Status st = s.try_run(in.data(), in.size(), out.data(), out.size());
    REQUIRE_FALSE(st.is_ok());
    CHECK(st.message().find("the condition must be one bool") != std::string::npos);
  }
  SUBCASE("a missing branch") {
    g::Graph gr = if_on_input();
    gr.nodes[0].attributes.pop_back();
    CHECK(error_of(gr).find("else_branch") != std::string::npos);
  }
}

TEST_CASE("nesting deeper than kMaxSubgraphDepth is refused by verify and by the ONNX reader") {
  // Depth d: If(c) { depth d-1 } else { Relu(x) }, depth 0: Neg(x).
  auto nested = [](int depth) {
    g::Graph inner = branch("Neg", "o0");
    for (int d = 1; d <= depth; ++d) {
      g::Graph outer;
      outer.opsets.clear();
      outer.name = "level" + std::to_string(d);
      const std::string out = "o" + std::to_string(d);
      outer.nodes.push_back(if_node("c", std::move(inner), branch("Relu", "r" + std::to_string(d)), {out}));
      outer.outputs.push_back(untyped(out));
      inner = std::move(outer);
    }
    g::Graph gr;
    gr.inputs = {value("c", DType::boolean, {}), value("x", DType::f32, {2, 3})};
    gr.nodes = inner.nodes;
    gr.nodes[0].outputs = {"y"};
    gr.outputs = {value("y", DType::f32, {2, 3})};
    return gr;
  };
  const g::Graph ok = nested(g::kMaxSubgraphDepth - 1);
  CHECK(g::verify(ok).is_ok());
  om::Session s(ok);
  CHECK(run(s, {cond_feed(true), Feed::of("x", {2, 3}, kX)})[0].as<float>()[0] == 1.5f);
  CHECK(run(s, {cond_feed(false), Feed::of("x", {2, 3}, kX)})[0].as<float>()[0] == 0.0f);

  const g::Graph deep = nested(g::kMaxSubgraphDepth + 1);
  const om::Status v = g::verify(deep);
  REQUIRE_FALSE(v.is_ok());
  CHECK(v.message().find("kMaxSubgraphDepth") != std::string::npos);
  // The writer refuses it too (it verifies); the reader must refuse a file that nests far deeper
  // before recursing: such a file is built by wrapping the bytes of a GraphProto by hand.
  std::string graph_bytes;  // GraphProto { node { op_type "Relu" } }
  {
    const std::string node_msg = std::string("\x22\x04Relu", 6);  // NodeProto.op_type = 4
    graph_bytes = std::string("\x0a", 1) + char(node_msg.size()) + node_msg;
  }
  auto ld = [](int field, const std::string& payload) {
    std::string s(1, char((field << 3) | 2));
    size_t n = payload.size();
    do {
      s += char((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
      n >>= 7;
    } while (n);
    return s + payload;
  };
  for (int d = 0; d < 2000; ++d) {
    // GraphProto { node { op_type "If" attribute { name "then_branch" type GRAPH g <graph> } } }
    const std::string attr = ld(1, "then_branch") + std::string("\xa0\x01\x05", 3) + ld(6, graph_bytes);
    const std::string n = ld(4, "If") + ld(5, attr);
    graph_bytes = ld(1, n);
  }
  const std::string model = std::string("\x08\x09", 2) + ld(7, graph_bytes) + ld(8, std::string("\x10\x14", 2));
  const om::Result<g::Graph> r = om::onnx::read_bytes(reinterpret_cast<const uint8_t*>(model.data()), model.size());
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().message().find("nest deeper than") != std::string::npos);
}

TEST_CASE("a GEMM weight from a Constant node is packed once, like an initializer, with the same bits") {
  // Exporters that write subgraphs (Silero VAD v5) give weights as Constant nodes.
  const std::vector<float> w = {0.5f, -1.0f, 2.0f, 0.25f, 1.5f, -0.75f, 3.0f, -2.0f, 0.125f, 1.0f, -0.5f, 0.0f};
  auto graph_with = [&](bool as_constant) {
    g::Graph gr;
    gr.inputs = {value("x", DType::f32, {2, 4})};
    g::TensorData t = g::TensorData::from_vector("w", {4, 3}, w);
    if (as_constant) {
      t.name.clear();
      gr.nodes.push_back(node("Constant", {}, {"w"}, {g::Attribute::of_tensor("value", t)}));
    } else {
      gr.initializers.push_back(t);
    }
    gr.nodes.push_back(node("MatMul", {"x", "w"}, {"y"}));
    gr.outputs = {value("y", DType::f32, {2, 3})};
    return gr;
  };
  const std::vector<float> x = {1, 2, 3, 4, -1, -2, -3, -4};
  for (om::ArithmeticMode mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
    om::SessionOptions opt;
    opt.mode = mode;
    opt.optimize = false;  // keep the Constant node (folding would make it an initializer)
    om::Session c(graph_with(true), opt), i(graph_with(false), opt);
    const std::vector<Out> yc = run(c, {Feed::of("x", {2, 4}, x)});
    CHECK(c.last_plan_stats().packed_weights == 1);
    const std::vector<Out> yi = run(i, {Feed::of("x", {2, 4}, x)});
    CHECK(i.last_plan_stats().packed_weights == 1);
    CHECK(yc[0].bytes == yi[0].bytes);
  }
}
