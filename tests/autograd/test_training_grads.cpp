// Gradients of the math, selection and loss operators against central finite differences.
#include "autograd/gradcheck.h"

using gc::gradcheck;
using Ts = std::vector<om::Tensor>;

TEST_CASE("gradients of exp log sqrt abs pow clamp") {
  om::Generator g(11);
  om::Tensor x = gc::random({3, 4}, g), pos = gc::random({3, 4}, g, 0.5, 2.0), nz = gc::away_from_zero({3, 4}, g);
  gradcheck([](const Ts& t) { return om::exp(t[0]); }, {x});
  gradcheck([](const Ts& t) { return om::log(t[0]); }, {pos});
  gradcheck([](const Ts& t) { return om::sqrt(t[0]); }, {pos});
  gradcheck([](const Ts& t) { return om::abs(t[0]); }, {nz});
  gradcheck([](const Ts& t) { return om::pow(t[0], 3.0); }, {x});
  gradcheck([](const Ts& t) { return om::pow(t[0], t[1]); }, {pos, gc::random({4}, g, -1.0, 2.0)});
  gradcheck([](const Ts& t) { return om::clamp(t[0], -0.1, 0.1); }, {nz});
  gradcheck([](const Ts& t) { return om::clamp(t[0], std::nullopt, 0.1); }, {nz});
}

TEST_CASE("gradients of where, elementwise max/min, max/min reductions and topk") {
  om::Generator g(12);
  om::Tensor a = gc::random({3, 4}, g), b = gc::random({4}, g);
  gradcheck([](const Ts& t) { return om::where(om::gt(t[0], t[1]), t[0], t[1]); }, {a, b});
  gradcheck([](const Ts& t) { return om::where(om::gt(t[0], 0.0), t[0] * 2.0, om::zeros({1})); }, {a});
  gradcheck([](const Ts& t) { return om::max(t[0], t[1]); }, {a, b});
  gradcheck([](const Ts& t) { return om::min(t[0], t[1]); }, {a, b});
  gradcheck([](const Ts& t) { return om::max(t[0]); }, {a});
  gradcheck([](const Ts& t) { return om::min(t[0]); }, {a});
  gradcheck([](const Ts& t) { return om::max(t[0], 1).first; }, {a});
  gradcheck([](const Ts& t) { return om::min(t[0], 0, true).first; }, {a});
  gradcheck([](const Ts& t) { return om::topk(t[0], 2, 1).first; }, {a});
  gradcheck([](const Ts& t) { return om::topk(t[0], 2, 0, false).first; }, {a});
  // ties: max of equal values shares the gradient (PyTorch)
  om::Tensor x = om::from_vector<float>({1, 3, 3}).requires_grad_();
  om::max(x).backward();
  CHECK(x.grad().to_vector<float>() == std::vector<float>{0, 0.5f, 0.5f});
  om::Tensor p = om::from_vector<float>({2}).requires_grad_(), q = om::from_vector<float>({2}).requires_grad_();
  om::max(p, q).backward();
  CHECK(p.grad().item<float>() == 0.5f);
  CHECK(q.grad().item<float>() == 0.5f);
}

TEST_CASE("gradients of the losses, every reduction") {
  om::Generator g(13);
  om::Tensor logits = gc::random({4, 5}, g);
  om::Tensor target = om::from_vector<int64_t>({1, 0, 4, 2});
  om::Tensor ignored = om::from_vector<int64_t>({1, -100, 4, 2});
  om::Tensor w = om::from_vector<float>({0.5f, 1, 2, 1.5f, 0.25f});
  for (om::Reduction r : {om::Reduction::Mean, om::Reduction::Sum, om::Reduction::None}) {
    CAPTURE(int(r));
    om::CrossEntropyOptions o;
    o.reduction = r;
    gradcheck([&](const Ts& t) { return om::cross_entropy(t[0], target, o); }, {logits});
    o.weight = w;
    gradcheck([&](const Ts& t) { return om::cross_entropy(t[0], ignored, o); }, {logits});
    o.label_smoothing = 0.2;
    gradcheck([&](const Ts& t) { return om::cross_entropy(t[0], ignored, o); }, {logits});
    o.weight = om::Tensor();
    gradcheck([&](const Ts& t) { return om::cross_entropy(t[0], ignored, o); }, {logits});
    gradcheck([&](const Ts& t) { return om::nll_loss(om::log_softmax(t[0], 1), ignored, r, -100, w); }, {logits});
    om::Tensor a = gc::random({3, 4}, g), b = gc::random({3, 4}, g);
    gradcheck([&](const Ts& t) { return om::mse_loss(t[0], t[1], r); }, {a, b});
    gradcheck([&](const Ts& t) { return om::l1_loss(t[0], t[1], r); }, {a, b});
    gradcheck([&](const Ts& t) { return om::smooth_l1_loss(t[0], t[1], r, 0.7); }, {a, b});
    gradcheck([&](const Ts& t) { return om::huber_loss(t[0], t[1], r, 0.7); }, {a, b});
    om::Tensor y = gc::random({3, 4}, g, 0.0, 1.0), pw = om::from_vector<float>({1, 2, 0.5f, 3});
    gradcheck([&](const Ts& t) { return om::binary_cross_entropy_with_logits(t[0], t[1], r); }, {a, y});
    gradcheck([&](const Ts& t) { return om::binary_cross_entropy_with_logits(t[0], t[1], r, pw); }, {a, y});
  }
}

TEST_CASE("ctc_loss gradient, composed with log_softmax, every reduction") {
  om::Generator g(14);
  om::Tensor x = gc::random({6, 2, 4}, g);
  om::Tensor targets = om::from_vector<int64_t>({1, 2, 2, 3, 0, 0}, {2, 3});
  for (om::Reduction r : {om::Reduction::Mean, om::Reduction::Sum, om::Reduction::None}) {
    om::CtcOptions o;
    o.reduction = r;
    gradcheck([&](const Ts& t) { return om::ctc_loss(om::log_softmax(t[0], 2), targets, {6, 5}, {3, 1}, o); }, {x});
    // directly with respect to log_probs (the true gradient)
    gradcheck([&](const Ts& t) { return om::ctc_loss(t[0], targets, {6, 5}, {3, 1}, o); }, {x});
  }
}
