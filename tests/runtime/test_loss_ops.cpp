// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (graph/ops/loss.cpp) against references
// computed here in double: weights, ignore_index, the three reductions, i32 labels, the
// log_prob output, and the run-time error for a label outside [0, C). The ONNX backend node
// tests (tests/conformance) cover them further.
#include <doctest/doctest.h>

#include <cmath>

#include "runtime_helpers.h"

using namespace rt;
using g::Attribute;

namespace {

// scores [2, 3, 2] as a graph input, target [2, 2] and weight [3] as constants; outputs "y"
// (and "lp" when `log_prob`).
g::Graph loss_graph(const std::string& op, g::TensorData target, bool weight, std::vector<Attribute> attrs, bool log_prob = false) {
  g::Graph gr;
  gr.name = "loss";
  gr.inputs.push_back(value("x", DType::f32, {2, 3, 2}));
  gr.initializers.push_back(std::move(target));
  std::vector<std::string> ins = {"x", "t"};
  if (weight) {
    gr.initializers.push_back(g::TensorData::from_vector<float>("w", {3}, {0.5f, 2.0f, 1.25f}));
    ins.push_back("w");
  }
  std::vector<std::string> outs = {"y"};
  if (log_prob) outs.push_back("lp");
  gr.nodes.push_back(node(op, ins, outs, std::move(attrs)));
  for (const std::string& o : outs) {
    g::ValueInfo v;
    v.name = o;
    gr.outputs.push_back(v);
  }
  return gr;
}

const std::vector<int64_t> kLabels = {2, 0, -1, 1};  // [2, 2]; -1 is ignore_index where set
const double kWeight[3] = {0.5, 2.0, 1.25};

// -x[n, t, d] * w[t] per element (0 where ignored), and the weight sum of the rest.
std::vector<double> reference(const std::vector<float>& lp, bool weight, double* wsum) {
  std::vector<double> loss(4, 0.0);
  *wsum = 0;
  for (int n = 0; n < 2; ++n)
    for (int d = 0; d < 2; ++d) {
      const int64_t t = kLabels[size_t(n * 2 + d)];
      if (t < 0) continue;
      const double w = weight ? kWeight[t] : 1.0;
      loss[size_t(n * 2 + d)] = -double(lp[size_t((n * 3 + t) * 2 + d)]) * w;
      *wsum += w;
    }
  return loss;
}

}  // namespace

TEST_CASE("NegativeLogLikelihoodLoss: weight, ignore_index and the three reductions, both modes") {
  const std::vector<float> x = random_floats(12, 41);
  const auto target = [] { return g::TensorData::from_vector<int64_t>("t", {2, 2}, kLabels); };
  const Attribute ii = Attribute::of_int("ignore_index", -1);
  for (om::ArithmeticMode mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
    for (bool weight : {false, true}) {
      CAPTURE(weight);
      double wsum = 0;
      const std::vector<double> ref = reference(x, weight, &wsum);
      const auto none = run_graph(loss_graph("NegativeLogLikelihoodLoss", target(), weight, {ii, Attribute::of_string("reduction", "none")}),
                                  {Feed::of("x", {2, 3, 2}, x)}, {mode})[0];
      CHECK(none.dims == std::vector<int64_t>{2, 2});
      for (size_t i = 0; i < 4; ++i) CHECK(none.as<float>()[i] == doctest::Approx(ref[i]).epsilon(1e-6));
      const double sum = ref[0] + ref[1] + ref[2] + ref[3];
      const auto s = run_graph(loss_graph("NegativeLogLikelihoodLoss", target(), weight, {ii, Attribute::of_string("reduction", "sum")}),
                               {Feed::of("x", {2, 3, 2}, x)}, {mode})[0];
      CHECK(s.dims.empty());
      CHECK(s.as<float>()[0] == doctest::Approx(sum).epsilon(1e-6));
      // mean is the default: the sum over the weights of the elements not ignored.
      const auto m = run_graph(loss_graph("NegativeLogLikelihoodLoss", target(), weight, {ii}), {Feed::of("x", {2, 3, 2}, x)}, {mode})[0];
      CHECK(m.as<float>()[0] == doctest::Approx(sum / wsum).epsilon(1e-6));
    }
  }
}

TEST_CASE("NegativeLogLikelihoodLoss: a label outside [0, C) is an om::Error; all ignored gives 0/0") {
  const std::vector<float> x = random_floats(12, 42);
  const auto bad = g::TensorData::from_vector<int64_t>("t", {2, 2}, {0, 3, 1, 1});
  CHECK_THROWS_WITH_AS(run_graph(loss_graph("NegativeLogLikelihoodLoss", bad, false, {}), {Feed::of("x", {2, 3, 2}, x)}),
                       doctest::Contains("target value 3 at element 1 is not a class of [0, 3)"), om::Error);
  // An ignore_index outside [0, C) marks elements without indexing anything.
  const auto ignored = g::TensorData::from_vector<int64_t>("t", {2, 2}, {7, 7, 7, 7});
  const auto y = run_graph(loss_graph("NegativeLogLikelihoodLoss", ignored, true, {Attribute::of_int("ignore_index", 7)}),
                           {Feed::of("x", {2, 3, 2}, x)})[0];
  CHECK(std::isnan(y.as<float>()[0]));
}

TEST_CASE("SoftmaxCrossEntropyLoss: log_prob output and i32 labels, both modes") {
  const std::vector<float> x = random_floats(12, 43);
  // The log-softmax over axis 1 of [2, 3, 2], in double.
  std::vector<float> lp(12);
  std::vector<double> lpd(12);
  for (int n = 0; n < 2; ++n)
    for (int d = 0; d < 2; ++d) {
      double s = 0;
      for (int c = 0; c < 3; ++c) s += std::exp(double(x[size_t((n * 3 + c) * 2 + d)]));
      for (int c = 0; c < 3; ++c) {
        const size_t at = size_t((n * 3 + c) * 2 + d);
        lpd[at] = double(x[at]) - std::log(s);
        lp[at] = float(lpd[at]);
      }
    }
  double wsum = 0;
  const std::vector<double> ref = reference(lp, true, &wsum);
  const std::vector<int32_t> labels32(kLabels.begin(), kLabels.end());
  for (om::ArithmeticMode mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
    const auto out = run_graph(loss_graph("SoftmaxCrossEntropyLoss", g::TensorData::from_vector<int32_t>("t", {2, 2}, labels32), true,
                                          {Attribute::of_int("ignore_index", -1)}, true),
                               {Feed::of("x", {2, 3, 2}, x)}, {mode});
    REQUIRE(out.size() == 2);
    CHECK(out[0].as<float>()[0] == doctest::Approx((ref[0] + ref[1] + ref[2] + ref[3]) / wsum).epsilon(1e-5));
    CHECK(out[1].dims == std::vector<int64_t>{2, 3, 2});
    for (size_t i = 0; i < 12; ++i) CHECK(out[1].as<float>()[i] == doctest::Approx(lpd[i]).epsilon(1e-5));
    // Without output 1 the log-probabilities live in scratch: the same loss bits.
    const auto alone = run_graph(loss_graph("SoftmaxCrossEntropyLoss", g::TensorData::from_vector<int32_t>("t", {2, 2}, labels32), true,
                                            {Attribute::of_int("ignore_index", -1)}),
                                 {Feed::of("x", {2, 3, 2}, x)}, {mode});
    CHECK(alone[0].bytes == out[0].bytes);
  }
}
