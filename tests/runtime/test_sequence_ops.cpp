// Sequences and optionals (docs/onnx.md, "Sequences and optionals"): every sequence operator
// through Session::run_values against values computed here, the structure cache (one lowered
// plan per sequence length and per integer input deciding a position), the refusals (positions
// out of range, values not known when planning, empty optionals, unrolling caps) as clean
// errors naming the node, and the kinds kept by the ONNX writer and reader.
#include <doctest/doctest.h>

#include <set>

#include "onemodel/core/tensor.h"
#include "onemodel/io/format_v1.h"
#include "onemodel/io/onnx.h"
#include "onemodel/runtime/value.h"
#include "runtime/runtime_helpers.h"

using namespace rt;
using g::ValueKind;

namespace {

g::ValueInfo of_kind(std::string name, DType dt, ValueKind kind) {
  g::ValueInfo v;
  v.name = std::move(name);
  v.dtype = dt;
  v.kind = kind;
  v.has_shape = false;
  return v;
}

g::TensorData i64_scalar(const std::string& name, int64_t v) { return g::TensorData::from_vector<int64_t>(name, {}, {v}); }

om::Tensor floats(std::vector<float> v, om::Shape shape) { return om::from_vector<float>(v, shape); }

std::vector<float> values_of(const om::Tensor& t) { return t.contiguous().to_vector<float>(); }

// The error a session over g gives on these inputs (creation or run), "" when it runs.
std::string error_of(const g::Graph& gr, const std::vector<std::pair<std::string, om::Value>>& in, om::SessionOptions opt = {}) {
  try {
    om::Session s(gr, opt);
    s.run_values(in);
  } catch (const om::Error& e) {
    return e.what();
  }
  return "";
}

// x [2, 3] -> the sequence {x, x + 1, x * 2}; graph inputs/outputs as given.
g::Graph three_elements(std::vector<g::Node> tail, std::vector<g::ValueInfo> outputs, std::vector<g::ValueInfo> more_inputs = {}) {
  g::Graph gr;
  gr.inputs = {value("x", DType::f32, {2, 3})};
  for (auto& v : more_inputs) gr.inputs.push_back(v);
  gr.initializers.push_back(g::TensorData::from_vector<float>("one", {}, {1.0f}));
  gr.initializers.push_back(g::TensorData::from_vector<float>("two", {}, {2.0f}));
  gr.nodes.push_back(node("Add", {"x", "one"}, {"x1"}));
  gr.nodes.push_back(node("Mul", {"x", "two"}, {"x2"}));
  gr.nodes.push_back(node("SequenceConstruct", {"x", "x1", "x2"}, {"s"}));
  for (auto& n : tail) gr.nodes.push_back(std::move(n));
  gr.outputs = std::move(outputs);
  return gr;
}

const std::vector<float> kX = {1, 2, 3, 4, 5, 6};

std::vector<float> plus(std::vector<float> v, float a) {
  for (float& f : v) f += a;
  return v;
}
std::vector<float> times(std::vector<float> v, float a) {
  for (float& f : v) f *= a;
  return v;
}

}  // namespace

// The operators each case below exercises: every sequence operator of the registry must be among
// them (the one-node registry walks skip these operators and defer to this file).
TEST_CASE("every sequence operator of the registry has cases here") {
  const std::set<std::string> covered = {"SequenceConstruct", "SequenceEmpty",      "SequenceAt",       "SequenceInsert",
                                         "SequenceErase",     "SequenceLength",     "SplitToSequence",  "ConcatFromSequence",
                                         "SequenceMap",       "Optional",           "OptionalHasElement", "OptionalGetElement"};
  size_t n = 0;
  for (const g::OpDef* op : g::all_ops()) {
    if (!(op->flags & g::kOpSequence)) continue;
    CAPTURE(std::string(op->op_type));
    CHECK(covered.count(op->op_type) == 1);
    ++n;
  }
  CHECK(n == covered.size());
}

TEST_CASE("SequenceConstruct, SequenceAt (negative positions), SequenceLength and ConcatFromSequence run in one lowered plan") {
  g::Graph gr = three_elements(
      {node("SequenceAt", {"s", "minus_one"}, {"last"}), node("SequenceLength", {"s"}, {"len"}),
       node("ConcatFromSequence", {"s"}, {"cat"}, {g::Attribute::of_int("axis", 1)}),
       node("ConcatFromSequence", {"s"}, {"stacked"}, {g::Attribute::of_int("axis", 0), g::Attribute::of_int("new_axis", 1)})},
      {value("last", DType::f32, {2, 3}), value("len", DType::i64, {}), value("cat", DType::f32, {2, 9}),
       value("stacked", DType::f32, {3, 2, 3}), of_kind("s", DType::f32, ValueKind::Sequence)});
  gr.initializers.push_back(i64_scalar("minus_one", -1));
  om::Session s(gr);
  const std::vector<om::Value> out = s.run_values({{"x", om::Value(floats(kX, {2, 3}))}});
  REQUIRE(out.size() == 5);
  CHECK(values_of(out[0].tensor()) == times(kX, 2));
  CHECK(out[1].tensor().to_vector<int64_t>() == std::vector<int64_t>{3});
  CHECK(out[2].tensor().shape() == om::Shape{2, 9});
  CHECK(values_of(out[2].tensor()) == std::vector<float>{1, 2, 3, 2, 3, 4, 2, 4, 6, 4, 5, 6, 5, 6, 7, 8, 10, 12});
  CHECK(out[3].tensor().shape() == om::Shape{3, 2, 3});
  REQUIRE(out[4].is_sequence());
  REQUIRE(out[4].elements().size() == 3);
  CHECK(values_of(out[4].elements()[1]) == plus(kX, 1));
  // The same graph through try_run is refused for its sequence output, naming the way.
  std::vector<om::TensorView> in(1), outs(5);
  in[0].dtype = DType::f32;
  const int64_t dims[] = {2, 3};
  in[0].dims = dims;
  in[0].rank = 2;
  in[0].data = const_cast<float*>(kX.data());
  const om::Status st = s.try_run(in.data(), 1, outs.data(), outs.size());
  CHECK(!st.is_ok());
  CHECK(st.message().find("run_values") != std::string::npos);
}

TEST_CASE("SequenceInsert, SequenceErase and SequenceEmpty keep ONNX's positions") {
  g::Graph gr = three_elements({node("SequenceInsert", {"s", "x", "zero"}, {"ins_front"}), node("SequenceErase", {"ins_front", "one_i"}, {"erased"}),
                                node("SequenceErase", {"erased"}, {"erased_last"}), node("SequenceEmpty", {}, {"empty"}, {g::Attribute::of_int("dtype", 1)}),
                                node("SequenceInsert", {"empty", "x2"}, {"single"}), node("SequenceLength", {"erased_last"}, {"n"})},
                               {of_kind("erased_last", DType::f32, ValueKind::Sequence), of_kind("single", DType::f32, ValueKind::Sequence),
                                value("n", DType::i64, {})});
  gr.initializers.push_back(i64_scalar("zero", 0));
  gr.initializers.push_back(i64_scalar("one_i", 1));
  om::Session s(gr);
  const std::vector<om::Value> out = s.run_values({{"x", om::Value(floats(kX, {2, 3}))}});
  // {x, x, x1, x2} -> erase 1 -> {x, x1, x2} -> erase last -> {x, x1}
  REQUIRE(out[0].elements().size() == 2);
  CHECK(values_of(out[0].elements()[0]) == kX);
  CHECK(values_of(out[0].elements()[1]) == plus(kX, 1));
  REQUIRE(out[1].elements().size() == 1);
  CHECK(values_of(out[1].elements()[0]) == times(kX, 2));
  CHECK(out[2].tensor().to_vector<int64_t>() == std::vector<int64_t>{2});
}

TEST_CASE("SplitToSequence by a constant split, and SequenceMap over a sequence and a tensor") {
  g::Graph body;
  body.name = "map_body";
  body.inputs = {of_kind("e", DType::f32, ValueKind::Tensor), of_kind("factor", DType::f32, ValueKind::Tensor)};
  body.nodes.push_back(node("Mul", {"e", "factor"}, {"ek"}));
  body.nodes.push_back(node("ReduceSum", {"ek"}, {"total"}, {g::Attribute::of_int("keepdims", 0)}));
  body.outputs = {of_kind("ek", DType::f32, ValueKind::Tensor), of_kind("total", DType::f32, ValueKind::Tensor)};
  body.inputs[0].has_type = body.inputs[1].has_type = false;
  g::Graph gr;
  gr.inputs = {value("x", DType::f32, {2, 3}), value("k", DType::f32, {})};
  gr.initializers.push_back(g::TensorData::from_vector<int64_t>("split", {2}, {1, 2}));
  gr.nodes.push_back(node("SplitToSequence", {"x", "split"}, {"parts"}, {g::Attribute::of_int("axis", 1)}));
  gr.nodes.push_back(node("SequenceMap", {"parts", "k"}, {"scaled", "sums"}, {g::Attribute::of_graph("body", body)}));
  gr.outputs = {of_kind("scaled", DType::f32, ValueKind::Sequence), of_kind("sums", DType::f32, ValueKind::Sequence)};
  om::Session s(gr);
  const std::vector<om::Value> out = s.run_values({{"x", om::Value(floats(kX, {2, 3}))}, {"k", om::Value(om::full({}, 10.0))}});
  REQUIRE(out[0].elements().size() == 2);
  CHECK(out[0].elements()[0].shape() == om::Shape{2, 1});
  CHECK(values_of(out[0].elements()[0]) == std::vector<float>{10, 40});
  CHECK(values_of(out[0].elements()[1]) == std::vector<float>{20, 30, 50, 60});
  REQUIRE(out[1].elements().size() == 2);
  CHECK(values_of(out[1].elements()[0]) == std::vector<float>{50});
  CHECK(values_of(out[1].elements()[1]) == std::vector<float>{160});
}

TEST_CASE("sequence inputs: one lowered plan per length, an integer input that decides a position is part of the key") {
  g::Graph gr;
  gr.inputs = {of_kind("seq", DType::f32, ValueKind::Sequence), value("pos", DType::i64, {})};
  gr.nodes.push_back(node("SequenceAt", {"seq", "pos"}, {"y"}));
  gr.nodes.push_back(node("SequenceLength", {"seq"}, {"n"}));
  gr.outputs = {value("y", DType::f32, {}), value("n", DType::i64, {})};
  gr.outputs[0].has_shape = false;
  om::Session s(gr);
  auto seq = [](int n) {
    std::vector<om::Tensor> v;
    for (int i = 0; i < n; ++i) v.push_back(floats(std::vector<float>(size_t(i + 1), float(i)), {i + 1}));  // sizes differ
    return om::Value::sequence(v);
  };
  auto pos = [](int64_t p) { return om::Value(om::from_vector<int64_t>({p}, om::Shape{})); };
  auto out = s.run_values({{"seq", seq(3)}, {"pos", pos(1)}});
  CHECK(values_of(out[0].tensor()) == std::vector<float>{1, 1});
  CHECK(out[1].tensor().to_vector<int64_t>() == std::vector<int64_t>{3});
  out = s.run_values({{"seq", seq(3)}, {"pos", pos(-1)}});
  CHECK(values_of(out[0].tensor()) == std::vector<float>{2, 2, 2});
  CHECK(s.cached_plan_count() == 2);
  out = s.run_values({{"seq", seq(5)}, {"pos", pos(4)}});
  CHECK(values_of(out[0].tensor()) == std::vector<float>{4, 4, 4, 4, 4});
  CHECK(s.cached_plan_count() == 3);
  out = s.run_values({{"seq", seq(3)}, {"pos", pos(1)}});  // cached
  CHECK(s.cached_plan_count() == 3);
  // Out of range: a clean error naming the node, the position and the length.
  const std::string e = error_of(gr, {{"seq", seq(2)}, {"pos", pos(2)}});
  CHECK(e.find("SequenceAt") != std::string::npos);
  CHECK(e.find("position 2 is outside [-2, 1]") != std::string::npos);
  // Wrong kinds and dtypes are refused naming the input.
  CHECK(error_of(gr, {{"seq", om::Value(floats(kX, {6}))}, {"pos", pos(0)}}).find("input 'seq' is sequence") != std::string::npos);
  CHECK(error_of(gr, {{"seq", om::Value::sequence({om::full({2}, 1.0, DType::i64)})}, {"pos", pos(0)}}).find("must be f32") != std::string::npos);
  // A plan's worth of least recently used structures at most.
  om::SessionOptions opt;
  opt.max_cached_plans = 2;
  om::Session small(gr, opt);
  for (int n = 1; n <= 4; ++n) small.run_values({{"seq", seq(n)}, {"pos", pos(0)}});
  CHECK(small.cached_plan_count() == 2);
}

TEST_CASE("Optional, OptionalHasElement and OptionalGetElement: present and empty optionals") {
  g::Graph gr;
  gr.inputs = {of_kind("o", DType::f32, ValueKind::Optional)};
  gr.inputs[0].has_shape = true;
  gr.inputs[0].shape = {g::Dim::fixed(2)};
  gr.nodes.push_back(node("OptionalHasElement", {"o"}, {"has"}));
  gr.nodes.push_back(node("Optional", {}, {"none"}));
  gr.nodes.back().attributes.push_back([] {
    g::Attribute a;
    a.name = "type";
    a.type = g::AttrType::TypeProto;
    a.tp = std::make_shared<g::ValueInfo>(of_kind("", DType::f32, ValueKind::Tensor));
    return a;
  }());
  gr.nodes.push_back(node("OptionalHasElement", {"none"}, {"none_has"}));
  gr.outputs = {value("has", DType::boolean, {}), value("none_has", DType::boolean, {}), of_kind("o", DType::f32, ValueKind::Optional)};
  om::Session s(gr);
  auto out = s.run_values({{"o", om::Value::optional(floats({1, 2}, {2}))}});
  CHECK(out[0].tensor().to(DType::u8).to_vector<uint8_t>() == std::vector<uint8_t>{1});
  CHECK(out[1].tensor().to(DType::u8).to_vector<uint8_t>() == std::vector<uint8_t>{0});
  CHECK(values_of(out[2].tensor()) == std::vector<float>{1, 2});
  out = s.run_values({{"o", om::Value::none()}});
  CHECK(out[0].tensor().to(DType::u8).to_vector<uint8_t>() == std::vector<uint8_t>{0});
  CHECK(out[2].is_none());
  CHECK_THROWS_AS(out[2].tensor(), om::Error);
  // OptionalGetElement of an empty optional: refused naming the node.
  g::Graph get = gr;
  get.nodes.push_back(node("OptionalGetElement", {"o"}, {"v"}));
  get.outputs = {value("v", DType::f32, {2})};
  CHECK(error_of(get, {{"o", om::Value::optional(floats({1, 2}, {2}))}}) == "");
  const std::string e = error_of(get, {{"o", om::Value::none()}});
  CHECK(e.find("OptionalGetElement") != std::string::npos);
  CHECK(e.find("empty optional") != std::string::npos);
}

TEST_CASE("If with sequence branches is inlined on a condition known when planning; a Loop carrying a sequence is unrolled") {
  // Loop: M iterations appending iter * x; the trip count is a graph input (part of the key).
  g::Graph body;
  body.name = "loop_body";
  body.inputs = {value("i", DType::i64, {}), value("c", DType::boolean, {}), of_kind("acc", DType::f32, ValueKind::Sequence)};
  body.nodes.push_back(node("Identity", {"c"}, {"c_out"}));
  body.nodes.push_back(node("Cast", {"i"}, {"fi"}, {g::Attribute::of_int("to", 1)}));
  body.nodes.push_back(node("Mul", {"x", "fi"}, {"xi"}));
  body.nodes.push_back(node("SequenceInsert", {"acc", "xi"}, {"acc_out"}));
  body.outputs = {value("c_out", DType::boolean, {}), of_kind("acc_out", DType::f32, ValueKind::Sequence), value("xi", DType::f32, {2, 3})};
  g::Graph gr;
  gr.inputs = {value("x", DType::f32, {2, 3}), value("M", DType::i64, {})};
  gr.nodes.push_back(node("SequenceEmpty", {}, {"start"}));
  gr.nodes.push_back(node("Loop", {"M", "", "start"}, {"all", "stacked"}, {g::Attribute::of_graph("body", body)}));
  gr.nodes.push_back(node("SequenceLength", {"all"}, {"n"}));
  gr.outputs = {of_kind("all", DType::f32, ValueKind::Sequence), value("stacked", DType::f32, {}), value("n", DType::i64, {})};
  gr.outputs[1].has_shape = false;
  om::Session s(gr);
  auto m = [](int64_t v) { return om::Value(om::from_vector<int64_t>({v}, om::Shape{})); };
  auto out = s.run_values({{"x", om::Value(floats(kX, {2, 3}))}, {"M", m(3)}});
  REQUIRE(out[0].elements().size() == 3);
  CHECK(values_of(out[0].elements()[2]) == times(kX, 2));
  CHECK(out[1].tensor().shape() == om::Shape{3, 2, 3});
  CHECK(out[2].tensor().to_vector<int64_t>() == std::vector<int64_t>{3});
  // A hostile trip count stops at SessionOptions::max_loop_iterations with an error naming it.
  om::SessionOptions capped;
  capped.max_loop_iterations = 100;
  const std::string e = error_of(gr, {{"x", om::Value(floats(kX, {2, 3}))}, {"M", m(int64_t(1) << 60)}}, capped);
  CHECK(e.find("max_loop_iterations") != std::string::npos);
  CHECK(e.find("Loop") != std::string::npos);

  // If: the branch giving sequences is chosen from a bool graph input.
  auto branch = [](const char* out, const char* from) {
    g::Graph b;
    b.name = out;
    b.nodes.push_back(node("SequenceConstruct", {from}, {out}));
    b.outputs = {of_kind(out, DType::f32, ValueKind::Sequence)};
    return b;
  };
  g::Graph gi;
  gi.inputs = {value("c", DType::boolean, {}), value("a", DType::f32, {2}), value("b", DType::f32, {2})};
  gi.nodes.push_back(node("If", {"c"}, {"r"}, {g::Attribute::of_graph("then_branch", branch("t", "a")), g::Attribute::of_graph("else_branch", branch("e", "b"))}));
  gi.outputs = {of_kind("r", DType::f32, ValueKind::Sequence)};
  om::Session si(gi);
  auto flag = [](bool v) { return om::Value(om::from_vector<uint8_t>({uint8_t(v)}, om::Shape{}).to(DType::boolean)); };
  auto r = si.run_values({{"c", flag(true)}, {"a", om::Value(floats({1, 2}, {2}))}, {"b", om::Value(floats({3, 4}, {2}))}});
  CHECK(values_of(r[0].elements()[0]) == std::vector<float>{1, 2});
  r = si.run_values({{"c", flag(false)}, {"a", om::Value(floats({1, 2}, {2}))}, {"b", om::Value(floats({3, 4}, {2}))}});
  CHECK(values_of(r[0].elements()[0]) == std::vector<float>{3, 4});
  // A condition computed from float data is not known when planning: refused naming the node.
  g::Graph gd = gi;
  gd.inputs[0] = value("g", DType::f32, {});
  gd.nodes.insert(gd.nodes.begin(), node("Cast", {"g"}, {"c"}, {g::Attribute::of_int("to", 9)}));
  const std::string ed = error_of(gd, {{"a", om::Value(floats({1, 2}, {2}))}, {"b", om::Value(floats({3, 4}, {2}))},
                                       {"g", om::Value(floats({0.5f}, {}))}});
  CHECK(ed.find("If") != std::string::npos);
  CHECK(ed.find("not known when planning") != std::string::npos);
}

TEST_CASE("hostile sequence graphs: clean errors naming the node") {
  // A position computed from float data: not known when planning (only integer and bool
  // inputs are read to decide a structure).
  g::Graph gp = three_elements({node("Cast", {"q"}, {"pi"}, {g::Attribute::of_int("to", 7)}), node("SequenceAt", {"s", "pi"}, {"y"})},
                               {value("y", DType::f32, {2, 3})}, {value("q", DType::f32, {})});
  const std::string fp = error_of(gp, {{"x", om::Value(floats(kX, {2, 3}))}, {"q", om::Value(floats({-1.0f}, {}))}});
  CHECK(fp.find("SequenceAt") != std::string::npos);
  CHECK(fp.find("not known when planning") != std::string::npos);
  // Concat of an empty sequence; SequenceMap over sequences of different lengths; erase from empty.
  g::Graph ge;
  ge.nodes.push_back(node("SequenceEmpty", {}, {"e"}));
  ge.nodes.push_back(node("ConcatFromSequence", {"e"}, {"y"}, {g::Attribute::of_int("axis", 0)}));
  ge.outputs = {value("y", DType::f32, {})};
  CHECK(error_of(ge, {}).find("ConcatFromSequence") != std::string::npos);
  g::Graph gz;
  gz.nodes.push_back(node("SequenceEmpty", {}, {"e"}));
  gz.nodes.push_back(node("SequenceErase", {"e"}, {"y"}));
  gz.outputs = {of_kind("y", DType::f32, ValueKind::Sequence)};
  CHECK(error_of(gz, {}).find("erasing from an empty sequence") != std::string::npos);
  g::Graph body;
  body.name = "b";
  body.inputs = {of_kind("u", DType::f32, ValueKind::Tensor), of_kind("v", DType::f32, ValueKind::Tensor)};
  body.nodes.push_back(node("Add", {"u", "v"}, {"w"}));
  body.outputs = {of_kind("w", DType::f32, ValueKind::Tensor)};
  g::Graph gm;
  gm.inputs = {of_kind("a", DType::f32, ValueKind::Sequence), of_kind("b", DType::f32, ValueKind::Sequence)};
  gm.nodes.push_back(node("SequenceMap", {"a", "b"}, {"c"}, {g::Attribute::of_graph("body", body)}));
  gm.outputs = {of_kind("c", DType::f32, ValueKind::Sequence)};
  const std::string lens = error_of(gm, {{"a", om::Value::sequence({floats({1}, {1}), floats({2}, {1})})},
                                         {"b", om::Value::sequence({floats({1}, {1})})}});
  CHECK(lens.find("SequenceMap") != std::string::npos);
  CHECK(lens.find("one length") != std::string::npos);
  // Element shapes that do not broadcast fail in the lowered graph's planning, naming the node.
  const std::string shapes = error_of(gm, {{"a", om::Value::sequence({floats({1, 2}, {2})})}, {"b", om::Value::sequence({floats({1, 2, 3}, {3})})}});
  CHECK(shapes.find("Add") != std::string::npos);
  // A SplitToSequence without a constant split is refused naming the fix.
  g::Graph gs;
  gs.inputs = {value("x", DType::f32, {4})};
  gs.nodes.push_back(node("SplitToSequence", {"x"}, {"s"}));
  gs.outputs = {of_kind("s", DType::f32, ValueKind::Sequence)};
  CHECK(error_of(gs, {{"x", om::Value(floats({1, 2, 3, 4}, {4}))}}).find("1-D i64 split") != std::string::npos);
  // prepare and arena sizing need a structure: refused, pointing at run_values.
  om::Session s(gs);
  CHECK(!s.try_prepare(nullptr, 0).is_ok());
}

TEST_CASE("sequence and optional kinds survive the ONNX writer and reader; the library format keeps kinds") {
  g::Graph gr = three_elements({node("Optional", {"s"}, {"os"}), node("SequenceLength", {"s"}, {"n"})},
                               {of_kind("os", DType::f32, ValueKind::OptionalSequence), value("n", DType::i64, {})},
                               {of_kind("maybe", DType::f32, ValueKind::Optional)});
  const std::vector<uint8_t> bytes = om::onnx::write(gr);
  om::Result<g::Graph> back = om::onnx::read_bytes(bytes.data(), bytes.size());
  REQUIRE_MESSAGE(back.is_ok(), back.status().message());
  CHECK(back.value().inputs[1].kind == ValueKind::Optional);
  CHECK(back.value().outputs[0].kind == ValueKind::OptionalSequence);
  CHECK(om::onnx::write(back.value()) == bytes);  // equal graphs stay byte-identical
  om::Session s = om::Session::from_onnx(bytes);
  CHECK(s.inputs().size() == 2);
  CHECK(s.inputs()[1].kind == ValueKind::Optional);
  auto out = s.run_values({{"x", om::Value(floats(kX, {2, 3}))}, {"maybe", om::Value::none()}});
  CHECK(out[0].is_sequence());
  CHECK(out[0].elements().size() == 3);
  // The library format keeps each value's kind.
  auto lib = om::format_v1::write_bytes(gr);
  REQUIRE_MESSAGE(lib.is_ok(), lib.status().message());
  auto read = om::format_v1::read_bytes(lib.value().data(), lib.value().size());
  REQUIRE_MESSAGE(read.is_ok(), read.status().message());
  CHECK(read.value().outputs[0].kind == ValueKind::OptionalSequence);
  CHECK(read.value().inputs[1].kind == ValueKind::Optional);
}
