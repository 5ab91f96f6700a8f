// Gradients of the small layers against central finite differences: the composed activations
// (ops/activation_extra.h, on values kept away from every kink: 0, +-1, +-3, 6), Tensor::flatten,
// nn::Conv1d and the 1-D pools.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "autograd/gradcheck.h"

using Ts = std::vector<om::Tensor>;

namespace {
om::Tensor off_kinks() {
  return om::from_vector<float>({-7.0f, -3.6f, -2.5f, -1.7f, -0.6f, -0.2f, 0.3f, 0.8f, 1.4f, 2.6f, 4.1f, 6.5f}, {3, 4});
}
}  // namespace

TEST_CASE("gradients of relu6, hardtanh, hardswish, silu, softplus, mish") {
  const om::Tensor x = off_kinks();
  CHECK(gc::gradcheck([](const Ts& t) { return om::relu6(t[0]); }, {x}) == 0);
  CHECK(gc::gradcheck([](const Ts& t) { return om::hardtanh(t[0]); }, {x}) == 0);
  CHECK(gc::gradcheck([](const Ts& t) { return om::hardtanh(t[0], -2.0, 3.0); }, {x}) == 0);
  CHECK(gc::gradcheck([](const Ts& t) { return om::hardswish(t[0]); }, {x}) == 0);
  CHECK(gc::gradcheck([](const Ts& t) { return om::silu(t[0]); }, {x}) == 0);
  CHECK(gc::gradcheck([](const Ts& t) { return om::softplus(t[0]); }, {x}) == 0);
  CHECK(gc::gradcheck([](const Ts& t) { return om::mish(t[0]); }, {x}) == 0);
  // on a non-contiguous input
  CHECK(gc::gradcheck([](const Ts& t) { return om::mish(t[0].t()); }, {x}) == 0);
}

TEST_CASE("the composed activations' values are PyTorch's formulas") {
  const om::Tensor x = off_kinks();
  const std::vector<float> v = x.to_vector<float>();
  const auto r6 = om::relu6(x).to_vector<float>(), ht = om::hardtanh(x).to_vector<float>(), hs = om::hardswish(x).to_vector<float>();
  const auto si = om::silu(x).to_vector<float>(), mi = om::mish(x).to_vector<float>(), sp = om::softplus(om::mul(x, 20.0)).to_vector<float>();
  for (size_t i = 0; i < v.size(); ++i) {
    const double a = v[i];
    CHECK(r6[i] == doctest::Approx(std::min(std::max(a, 0.0), 6.0)));
    CHECK(ht[i] == doctest::Approx(std::min(std::max(a, -1.0), 1.0)));
    CHECK(hs[i] == doctest::Approx(a * std::min(std::max(a + 3, 0.0), 6.0) / 6).epsilon(1e-5));
    CHECK(si[i] == doctest::Approx(a / (1 + std::exp(-a))).epsilon(1e-5));
    CHECK(mi[i] == doctest::Approx(a * std::tanh(std::log1p(std::exp(a)))).epsilon(1e-5));
    CHECK(std::isfinite(sp[i]));  // softplus(130) does not overflow
    CHECK(sp[i] == doctest::Approx(std::max(20 * a, 0.0) + std::log1p(std::exp(-std::fabs(20 * a)))).epsilon(1e-5));
  }
  CHECK_THROWS_AS((void)om::hardtanh(x, 1.0, 1.0), om::Error);
}

TEST_CASE("Tensor::flatten: shapes, negative dims, gradient") {
  om::Generator g(28);
  const om::Tensor x = gc::random({2, 3, 4, 5}, g);
  CHECK(x.flatten().shape() == om::Shape{120});
  CHECK(x.flatten(1).shape() == om::Shape{2, 60});
  CHECK(x.flatten(1, 2).shape() == om::Shape{2, 12, 5});
  CHECK(x.flatten(-2, -1).shape() == om::Shape{2, 3, 20});
  CHECK(om::scalar_tensor(3.0).flatten().shape() == om::Shape{1});
  CHECK_THROWS_AS((void)x.flatten(2, 1), om::Error);
  CHECK(gc::gradcheck([](const Ts& t) { return om::tanh(t[0].t().flatten(0, 1)); }, {gc::random({3, 4}, g)}) == 0);
}

TEST_CASE("gradients of Conv1d (stride, padding, dilation, groups), MaxPool1d and AvgPool1d") {
  om::Generator g(29);
  auto conv = std::make_shared<om::nn::Conv1d>(2, 4, 3, 2, 1, 1, 2, true, g);
  auto dil = std::make_shared<om::nn::Conv1d>(2, 3, 2, 1, 0, 3, 1, false, g);
  const om::Tensor x = gc::random({2, 2, 9}, g);
  CHECK(gc::gradcheck([&](const Ts& t) { return (*conv)(t[0]); }, {x}) == 0);
  CHECK(gc::gradcheck([&](const Ts& t) { return (*dil)(t[0]); }, {x}) == 0);
  // through the weight and bias as inputs of the function
  CHECK(gc::gradcheck([&](const Ts& t) {
          return om::conv2d(t[0].unsqueeze(2), t[1].unsqueeze(2), t[2], om::Size2d(1, 2), om::Pad2d(0, 1), 1, 1).squeeze(2);
        }, {x, gc::random({3, 2, 3}, g), gc::random({3}, g)}) == 0);
  om::nn::AvgPool1d avg(3, 2, 1, false, false);
  CHECK(gc::gradcheck([&](const Ts& t) { return avg(t[0]); }, {x}) == 0);
  // distinct values so the maximum is unique under the finite-difference step
  std::vector<float> v(18);
  for (size_t i = 0; i < v.size(); ++i) v[i] = float((i * 7) % 18) * 0.1f;
  om::nn::MaxPool1d maxp(2);
  CHECK(gc::gradcheck([&](const Ts& t) { return maxp(t[0]); }, {om::from_vector<float>(v, {1, 2, 9})}) == 0);
}

TEST_CASE("cross_entropy and nll_loss over [N, C, d1, d2]: values per element, reductions, gradients") {
  om::Generator g(30);
  const om::Tensor x = gc::random({2, 3, 4, 5}, g);
  std::vector<int64_t> tv(40);
  for (size_t i = 0; i < tv.size(); ++i) tv[i] = int64_t((i * 5 + 1) % 3);
  const om::Tensor target = om::from_vector<int64_t>(tv, {2, 4, 5});
  // reference: the per-pixel loss by hand, -log_softmax at the target class
  const om::Tensor per = om::cross_entropy(x, target, om::Reduction::None);
  REQUIRE(per.shape() == om::Shape{2, 4, 5});
  const std::vector<float> lp = om::log_softmax(x, 1).contiguous().to_vector<float>(), pv = per.to_vector<float>();
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t p = 0; p < 20; ++p) {
      const int64_t cls = tv[size_t(n * 20 + p)];
      CHECK(pv[size_t(n * 20 + p)] == doctest::Approx(-lp[size_t((n * 3 + cls) * 20 + p)]).epsilon(1e-5));
    }
  CHECK(om::cross_entropy(x, target).item<float>() == doctest::Approx(om::mean(per).item<float>()).epsilon(1e-5));
  CHECK(om::cross_entropy(x, target, om::Reduction::Sum).item<float>() == doctest::Approx(om::sum(per).item<float>()).epsilon(1e-5));
  CHECK(om::nll_loss(om::log_softmax(x, 1), target, om::Reduction::None).shape() == om::Shape{2, 4, 5});
  CHECK(gc::gradcheck([&](const Ts& t) { return om::cross_entropy(t[0], target); }, {x}) == 0);
  CHECK(gc::gradcheck([&](const Ts& t) { return om::cross_entropy(t[0], target, om::Reduction::None); }, {x}) == 0);
  CHECK(gc::gradcheck([&](const Ts& t) { return om::nll_loss(om::log_softmax(t[0], 1), target, om::Reduction::Sum); }, {x}) == 0);
  // a target of the wrong shape names both shapes
  CHECK_THROWS_WITH_AS((void)om::cross_entropy(x, om::zeros({2, 4}, om::DType::i64)), doctest::Contains("the target must be i64 [2, 4, 5]"),
                       om::Error);
}
