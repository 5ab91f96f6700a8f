// AdamW, RMSprop, learning-rate schedules and clip_grad_norm_ against hand-computed PyTorch steps.
#include <doctest/doctest.h>

#include <cmath>

#include "onemodel/onemodel.h"
#include "test_util.h"

namespace {
// Sets p's gradient to `g` (one backward of sum(p * g)).
void set_grad(om::Tensor& p, const std::vector<float>& g) {
  p.zero_grad();
  om::sum(om::mul(p, om::from_vector<float>(g, p.shape()))).backward();
}
}  // namespace

TEST_CASE("AdamW: decoupled weight decay, then the Adam step (PyTorch's rule)") {
  om::Tensor p = om::from_vector<float>({1.0f, -2.0f}).requires_grad_();
  om::optim::AdamWOptions o;
  o.lr(0.1);
  o.weight_decay(0.5);
  om::optim::AdamW opt({p}, o);
  double x[2] = {1.0, -2.0}, m[2] = {0, 0}, v[2] = {0, 0};
  const std::vector<std::vector<float>> grads = {{0.5f, -1.0f}, {0.2f, 0.3f}, {-0.4f, 0.1f}};
  for (size_t t = 1; t <= grads.size(); ++t) {
    set_grad(p, grads[t - 1]);
    opt.step();
    for (int k = 0; k < 2; ++k) {
      const double g = grads[t - 1][size_t(k)];
      x[k] *= 1 - 0.1 * 0.5;
      m[k] = 0.9 * m[k] + 0.1 * g;
      v[k] = 0.999 * v[k] + 0.001 * g * g;
      const double mh = m[k] / (1 - std::pow(0.9, double(t))), vh = v[k] / (1 - std::pow(0.999, double(t)));
      x[k] -= 0.1 * mh / (std::sqrt(vh) + 1e-8);
      CHECK(p.to_vector<float>()[size_t(k)] == doctest::Approx(x[k]).epsilon(1e-5));
    }
  }
  CHECK(opt.steps() == 3);
}

TEST_CASE("RMSprop: plain, centered, with momentum and weight decay (PyTorch's rule)") {
  for (bool centered : {false, true}) {
    for (double mom : {0.0, 0.9}) {
      CAPTURE(centered);
      CAPTURE(mom);
      om::Tensor p = om::from_vector<float>({0.5f, -1.5f}).requires_grad_();
      om::optim::RMSpropOptions o;
      o.lr(0.01);
      o.alpha(0.9);
      o.momentum(mom);
      o.centered(centered);
      o.weight_decay(0.1);
      om::optim::RMSprop opt({p}, o);
      double x[2] = {0.5, -1.5}, sq[2] = {0, 0}, ga[2] = {0, 0}, buf[2] = {0, 0};
      const std::vector<std::vector<float>> grads = {{1.0f, -0.5f}, {0.3f, 0.2f}, {-0.7f, 0.4f}};
      for (const auto& gv : grads) {
        set_grad(p, gv);
        opt.step();
        for (int k = 0; k < 2; ++k) {
          const double g = gv[size_t(k)] + 0.1 * x[k];
          sq[k] = 0.9 * sq[k] + 0.1 * g * g;
          double avg;
          if (centered) {
            ga[k] = 0.9 * ga[k] + 0.1 * g;
            avg = std::sqrt(sq[k] - ga[k] * ga[k]) + 1e-8;
          } else {
            avg = std::sqrt(sq[k]) + 1e-8;
          }
          if (mom > 0) {
            buf[k] = mom * buf[k] + g / avg;
            x[k] -= 0.01 * buf[k];
          } else {
            x[k] -= 0.01 * g / avg;
          }
          CHECK(p.to_vector<float>()[size_t(k)] == doctest::Approx(x[k]).epsilon(1e-5));
        }
      }
    }
  }
}

TEST_CASE("schedules: step, cosine annealing, linear warm-up then cosine") {
  om::Tensor p = om::zeros({1}).requires_grad_();
  {
    om::optim::SGD opt({p}, 1.0);
    om::optim::StepLR s(opt, 2, 0.5);
    const double want[] = {1.0, 0.5, 0.5, 0.25, 0.25};
    for (double w : want) {
      s.step();
      CHECK(opt.lr() == doctest::Approx(w));
    }
  }
  {
    om::optim::SGD opt({p}, 0.1);
    om::optim::CosineAnnealingLR s(opt, 4, 0.01);
    for (int e = 1; e <= 4; ++e) {
      s.step();
      CHECK(opt.lr() == doctest::Approx(0.01 + 0.09 * (1 + std::cos(M_PI * e / 4)) / 2));
    }
    CHECK(opt.lr() == doctest::Approx(0.01));
  }
  {
    om::optim::Adam opt({p}, om::optim::AdamOptions(0.2));
    // Warm-up then cosine, each created on the optimizer: both share its initial learning rate.
    auto warm = std::make_shared<om::optim::LinearLR>(opt, 0.25, 1.0, 4);
    CHECK(opt.lr() == doctest::Approx(0.05));
    auto cosine = std::make_shared<om::optim::CosineAnnealingLR>(opt, 10);
    om::optim::SequentialLR s(opt, {warm, cosine}, {4});
    CHECK(opt.lr() == doctest::Approx(0.05));  // epoch 0: start_factor * base
    const double want[] = {0.0875, 0.125, 0.1625, 0.2, 0.2 * (1 + std::cos(M_PI / 10)) / 2};
    for (double w : want) {
      s.step();
      CHECK(opt.lr() == doctest::Approx(w));
    }
    s.set_epoch(2);
    CHECK(opt.lr() == doctest::Approx(0.125));
  }
  {
    om::optim::SGD opt({p}, 1.0), other({p}, 1.0);
    om::optim::LinearLR decay(opt, 1.0, 0.5, 2);  // PyTorch's LinearLR also decays
    const double want[] = {0.75, 0.5, 0.5};
    for (double w : want) {
      decay.step();
      CHECK(opt.lr() == doctest::Approx(w));
    }
    auto a = std::make_shared<om::optim::StepLR>(opt, 1), b = std::make_shared<om::optim::StepLR>(other, 1);
    CHECK(testutil::contains(testutil::error_of([&] { om::optim::SequentialLR(opt, {a, a}, {}); }).what(), "2 schedules need 1 milestones, got 0"));
    CHECK(testutil::contains(testutil::error_of([&] { om::optim::SequentialLR(opt, {a, b}, {3}); }).what(), "schedule 1 drives another optimizer"));
    CHECK(testutil::contains(testutil::error_of([&] { om::optim::SequentialLR(opt, {a, a, a}, {3, 3}); }).what(), "milestone 1 (3)"));
    CHECK(testutil::contains(testutil::error_of([&] { om::optim::LinearLR(opt, 0.0); }).what(), "start_factor 0"));
  }
}

TEST_CASE("clip_grad_norm_ returns the total norm and scales gradients above max_norm") {
  om::Tensor a = om::zeros({2}).requires_grad_(), b = om::zeros({1}).requires_grad_(), unused = om::zeros({3}).requires_grad_();
  set_grad(a, {3, 0});
  set_grad(b, {4});
  CHECK(om::nn::utils::clip_grad_norm_({a, b, unused}, 10.0) == doctest::Approx(5.0));
  CHECK(a.grad().to_vector<float>() == std::vector<float>{3, 0});  // under the limit: unchanged
  CHECK(om::nn::utils::clip_grad_norm_({a, b}, 1.0) == doctest::Approx(5.0));
  const double c = 1.0 / (5.0 + 1e-6);
  CHECK(a.grad().to_vector<float>()[0] == doctest::Approx(3 * c));
  CHECK(b.grad().item<float>() == doctest::Approx(4 * c));
  set_grad(a, {3, -7});
  CHECK(om::nn::utils::clip_grad_norm_({a, b}, 100.0, INFINITY) == doctest::Approx(7.0));
  CHECK(testutil::contains(testutil::error_of([&] { om::nn::utils::clip_grad_norm_({a}, -1.0); }).what(), "max_norm"));
}
