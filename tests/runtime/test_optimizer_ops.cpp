// The training-domain optimizer steps (Adagrad, Momentum, Adam) against hand-computed updates;
// the ONNX backend node tests (tests/conformance) cover them further.
#include <doctest/doctest.h>

#include "runtime_helpers.h"

using namespace rt;
using g::Attribute;

namespace {

// One step over one scalar tensor: R = 0.1, T as given, X = 1, G = 0.5, states as given.
std::vector<float> step(const std::string& op, int64_t T, std::vector<float> states, std::vector<Attribute> attrs, size_t outputs) {
  g::Graph gr;
  gr.name = "step";
  gr.opsets.push_back(g::OpsetImport{"ai.onnx.preview.training", 1});
  gr.initializers.push_back(g::TensorData::from_vector<float>("R", {}, {0.1f}));
  gr.initializers.push_back(g::TensorData::from_vector<int64_t>("T", {}, {T}));
  std::vector<std::string> ins = {"R", "T", "X", "G"};
  std::vector<Feed> feeds = {Feed::of("X", {1}, std::vector<float>{1.0f}), Feed::of("G", {1}, std::vector<float>{0.5f})};
  for (size_t i = 0; i < states.size(); ++i) {
    const std::string name = "S" + std::to_string(i);
    feeds.push_back(Feed::of(name, {1}, std::vector<float>{states[i]}));
    ins.push_back(name);
  }
  for (const Feed& f : feeds) gr.inputs.push_back(value(f.name, DType::f32, {1}));
  std::vector<std::string> outs;
  for (size_t o = 0; o < outputs; ++o) outs.push_back("y" + std::to_string(o));
  g::Node n = node(op, ins, outs, std::move(attrs));
  n.domain = "ai.onnx.preview.training";
  gr.nodes.push_back(n);
  for (const std::string& o : outs) {
    g::ValueInfo v;
    v.name = o;
    gr.outputs.push_back(v);
  }
  std::vector<float> r;
  for (const Out& o : run_graph(gr, feeds)) r.push_back(o.as<float>()[0]);
  return r;
}

}  // namespace

TEST_CASE("Momentum: the first step takes the whole gradient; nesterov looks ahead") {
  const std::vector<Attribute> standard = {Attribute::of_float("alpha", 0.9f), Attribute::of_float("beta", 0.1f),
                                           Attribute::of_string("mode", "standard"), Attribute::of_float("norm_coefficient", 0.0f)};
  auto r = step("Momentum", 1, {0.2f}, standard, 2);
  CHECK(r[1] == doctest::Approx(0.23f));           // V' = 0.9 * 0.2 + 0.1 * 0.5
  CHECK(r[0] == doctest::Approx(1.0f - 0.023f));   // X' = X - R V'
  r = step("Momentum", 0, {0.2f}, standard, 2);
  CHECK(r[1] == doctest::Approx(0.68f));           // beta = 1 at T = 0
  std::vector<Attribute> nesterov = standard;
  nesterov[2] = Attribute::of_string("mode", "nesterov");
  r = step("Momentum", 1, {0.2f}, nesterov, 2);
  CHECK(r[0] == doctest::Approx(1.0f - 0.1f * (0.5f + 0.9f * 0.23f)));
}

TEST_CASE("Adagrad and Adam updates") {
  auto r = step("Adagrad", 0, {0.25f}, {Attribute::of_float("epsilon", 0.0f)}, 2);
  CHECK(r[1] == doctest::Approx(0.5f));                   // H' = H + G^2
  CHECK(r[0] == doctest::Approx(1.0f - 0.1f * 0.5f / 0.70710678f));
  r = step("Adam", 1, {0.0f, 0.0f}, {Attribute::of_float("epsilon", 0.0f)}, 3);
  CHECK(r[1] == doctest::Approx(0.05f));                  // V' = 0.1 G
  CHECK(r[2] == doctest::Approx(0.00025f));               // H' = 0.001 G^2
  CHECK(r[0] == doctest::Approx(0.9f));                   // the bias-corrected first step moves by R
}

TEST_CASE("Optimizer steps: malformed nodes are refused naming the rule") {
  CHECK_THROWS_WITH_AS(step("Adagrad", 0, {0.25f, 1.0f}, {}, 1), doctest::Contains("groups of n tensors"), om::Error);
  CHECK_THROWS_WITH_AS(step("Momentum", 0, {0.25f}, {Attribute::of_string("mode", "heavy")}, 1), doctest::Contains("mode must be"),
                       om::Error);
  CHECK_THROWS_WITH_AS(step("Momentum", 0, {0.25f}, {Attribute::of_string("mode", "standard")}, 1),
                       doctest::Contains("the attribute alpha is required"), om::Error);
}
