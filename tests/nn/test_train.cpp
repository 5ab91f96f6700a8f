// Optimizers: exact update rules checked by hand, and a small MLP trained end to end.
#include <doctest/doctest.h>

#include <cmath>

#include "onemodel/onemodel.h"

namespace {

// A scalar loss whose gradient is `g` exactly: sum(p * g).
void set_grad(om::Tensor& p, const std::vector<float>& g) {
  om::sum(om::mul(p, om::from_vector<float>(g, p.shape()))).backward();
}

}  // namespace

TEST_CASE("SGD: plain, weight decay, momentum with dampening, nesterov") {
  om::Tensor p = om::from_vector<float>({1.0f, -2.0f}).requires_grad_();
  om::optim::SGD plain({p}, 0.1);
  set_grad(p, {0.5f, 1.0f});
  plain.step();
  CHECK(p.to_vector<float>() == std::vector<float>{1.0f - 0.1f * 0.5f, -2.0f - 0.1f * 1.0f});
  plain.zero_grad();
  CHECK(p.grad().to_vector<float>() == std::vector<float>{0, 0});

  // momentum 0.9, dampening 0.5, weight decay 0.1, two steps with gradient 1, computed in double
  om::Tensor q = om::from_vector<float>({2.0f}).requires_grad_();
  om::optim::SGD sgd({q}, om::optim::SGDOptions(0.1).momentum(0.9).dampening(0.5).weight_decay(0.1));
  double x = 2.0, buf = 0;
  for (int step = 0; step < 3; ++step) {
    q.zero_grad();
    set_grad(q, {1.0f});
    sgd.step();
    const double d = 1.0 + 0.1 * x;
    buf = step == 0 ? d : 0.9 * buf + 0.5 * d;  // the first step takes the gradient as it is
    x -= 0.1 * buf;
    CHECK(q.item<float>() == doctest::Approx(x).epsilon(1e-6));
  }
  om::Tensor r = om::from_vector<float>({1.0f}).requires_grad_();
  om::optim::SGD nest({r}, om::optim::SGDOptions(0.5).momentum(0.5).nesterov(true));
  double y = 1.0, nb = 0;
  for (int step = 0; step < 3; ++step) {
    r.zero_grad();
    set_grad(r, {2.0f});
    nest.step();
    nb = step == 0 ? 2.0 : 0.5 * nb + 2.0;
    y -= 0.5 * (2.0 + 0.5 * nb);
    CHECK(r.item<float>() == doctest::Approx(y).epsilon(1e-6));
  }
  // parameters without a gradient are skipped; the update bumps the storage version
  om::Tensor unused = om::ones({2}).requires_grad_();
  om::optim::SGD s2({unused}, 1.0);
  s2.step();
  CHECK(unused.to_vector<float>() == std::vector<float>{1, 1});
  const uint64_t v = p.storage().version();
  set_grad(p, {1.0f, 1.0f});
  plain.step();
  CHECK(p.storage().version() > v);
  CHECK_THROWS_AS(om::optim::SGD({p}, -1.0), om::Error);
  CHECK_THROWS_AS(om::optim::SGD({om::ones({3}).t().expand({2, 3})}, 0.1), om::Error);
}

TEST_CASE("options in libtorch's style: chained setters, getters, an lr alone converts") {
  const om::optim::SGDOptions o = om::optim::SGDOptions(0.2).momentum(0.9).nesterov(true);
  CHECK(o.lr() == 0.2);
  CHECK(o.momentum() == 0.9);
  CHECK(o.nesterov());
  CHECK(o.dampening() == 0);
  const om::optim::AdamWOptions w = om::optim::AdamWOptions(3e-4).betas({0.9, 0.98}).weight_decay(0.05);
  CHECK(std::get<1>(w.betas()) == 0.98);
  CHECK(w.weight_decay() == 0.05);
  // One option list, two defaults: Adam's weight decay is 0, AdamW's 1e-2 (PyTorch's).
  CHECK(om::optim::AdamOptions().weight_decay() == 0);
  CHECK(om::optim::AdamWOptions().weight_decay() == 1e-2);
  CHECK(om::optim::AdamWOptions(0.1).eps() == 1e-8);
  CHECK(om::optim::RMSpropOptions().alpha() == 0.99);
  om::Tensor p = om::zeros({1}).requires_grad_();
  om::optim::SGD sgd({p}, 0.3);  // SGD(params, lr), as libtorch's
  CHECK(sgd.lr() == 0.3);
  CHECK(sgd.options().momentum() == 0);
}

TEST_CASE("Adam follows PyTorch's update with bias correction") {
  om::Tensor p = om::from_vector<float>({0.5f, -1.0f, 2.0f}).requires_grad_();
  om::optim::AdamOptions o;
  o.lr(0.01);
  o.weight_decay(0.01);
  om::optim::Adam adam({p}, o);
  double x[3] = {0.5, -1.0, 2.0}, m[3] = {0, 0, 0}, v[3] = {0, 0, 0};
  const float grads[4][3] = {{0.1f, -0.2f, 0.3f}, {1.0f, 0.5f, -0.5f}, {-0.3f, 0.0f, 2.0f}, {0.2f, 0.2f, 0.2f}};
  for (int t = 1; t <= 4; ++t) {
    p.zero_grad();
    set_grad(p, {grads[t - 1][0], grads[t - 1][1], grads[t - 1][2]});
    adam.step();
    const std::vector<float> got = p.to_vector<float>();
    for (int k = 0; k < 3; ++k) {
      const double g = grads[t - 1][k] + 0.01 * x[k];
      m[k] = 0.9 * m[k] + 0.1 * g;
      v[k] = 0.999 * v[k] + 0.001 * g * g;
      const double mhat = m[k] / (1 - std::pow(0.9, t)), vhat = v[k] / (1 - std::pow(0.999, t));
      x[k] -= 0.01 * mhat / (std::sqrt(vhat) + 1e-8);
      CHECK(got[size_t(k)] == doctest::Approx(x[k]).epsilon(1e-5));
    }
  }
  CHECK(adam.steps() == 4);
  CHECK_THROWS_AS(om::optim::Adam({p}, om::optim::AdamOptions(0.1).betas({1.0, 0.999})), om::Error);
}

TEST_CASE("a small MLP trained with SGD on generated data: the loss falls substantially") {
  om::Store store(1 << 20);
  om::StoreGuard guard(store);
  om::Generator gen(42);
  auto model = std::make_shared<om::nn::Sequential>(std::vector<std::shared_ptr<om::nn::Module>>{
      std::make_shared<om::nn::Linear>(2, 16, true, gen), std::make_shared<om::nn::Tanh>(),
      std::make_shared<om::nn::Linear>(16, 16, true, gen), std::make_shared<om::nn::ReLU>(),
      std::make_shared<om::nn::Linear>(16, 1, true, gen)});
  om::optim::SGD sgd(model->parameters(), om::optim::SGDOptions(0.05).momentum(0.9));
  // y = sin(2 x0) + x0 x1 on [-1, 1]^2
  const int64_t n = 128;
  om::Tensor x = om::sub(om::mul(om::rand({n, 2}, gen), 2.0), 1.0);
  std::vector<float> yv;
  for (int64_t i = 0; i < n; ++i) {
    const float a = x.get<float>({i, 0}), b = x.get<float>({i, 1});
    yv.push_back(std::sin(2 * a) + a * b);
  }
  om::Tensor y = om::from_vector<float>(yv, {n, 1});
  const size_t used_before = store.used();
  float first = 0, last = 0;
  for (int step = 0; step < 300; ++step) {
    om::StoreScope scope;  // every step's activations and gradients of non-leaves come back here
    sgd.zero_grad();
    om::Tensor loss = om::mse_loss((*model)(x), y);
    loss.backward();
    sgd.step();
    const float l = loss.item<float>();
    if (step == 0) first = l;
    last = l;
    CHECK(std::isfinite(l));
  }
  INFO("loss ", first, " -> ", last);
  CHECK(last < 0.05f * first);
  CHECK(store.used() == used_before);  // the training loop does not grow the store
  // eval: no gradient needed
  om::NoGradGuard ng;
  CHECK_FALSE((*model)(x).requires_grad());
}

TEST_CASE("Adam trains a classifier with cross_entropy") {
  om::Generator gen(7);
  auto model = std::make_shared<om::nn::Sequential>(std::vector<std::shared_ptr<om::nn::Module>>{
      std::make_shared<om::nn::Linear>(2, 16, true, gen), std::make_shared<om::nn::GELU>(), std::make_shared<om::nn::Linear>(16, 3, true, gen)});
  om::optim::Adam adam(model->parameters(), om::optim::AdamOptions(0.05));
  // Three classes by angle sector.
  const int64_t n = 90;
  om::Tensor x = om::randn({n, 2}, gen);
  std::vector<int64_t> labels;
  for (int64_t i = 0; i < n; ++i) {
    const double ang = std::atan2(x.get<float>({i, 1}), x.get<float>({i, 0})) + M_PI;
    labels.push_back(std::min<int64_t>(2, int64_t(ang / (2 * M_PI / 3))));
  }
  om::Tensor t = om::from_vector<int64_t>(labels);
  float first = 0, last = 0;
  for (int step = 0; step < 150; ++step) {
    adam.zero_grad();
    om::Tensor loss = om::cross_entropy((*model)(x), t);
    loss.backward();
    adam.step();
    if (step == 0) first = loss.item<float>();
    last = loss.item<float>();
  }
  INFO("loss ", first, " -> ", last);
  CHECK(last < 0.3f * first);
}
