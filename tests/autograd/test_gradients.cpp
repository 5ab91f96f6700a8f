// Every differentiable operator's gradient against central finite differences.
#include "autograd/gradcheck.h"

using gc::gradcheck;
using Ts = std::vector<om::Tensor>;

TEST_CASE("gradcheck itself notices a wrong gradient") {
  om::Generator g(0);
  gc::Options quiet;
  quiet.report = false;
  om::Tensor x = gc::random({3, 2}, g, 0.5, 2.0);
  // d/dx (x * detach(x)) is x by autograd but 2x numerically: every element must disagree.
  CHECK(gc::gradcheck([](const Ts& t) { return om::mul(t[0], t[0].detach()); }, {x}, quiet) == 6);
  CHECK(gc::gradcheck([](const Ts& t) { return om::mul(t[0], t[0]); }, {x}, quiet) == 0);
}

TEST_CASE("gradients of add sub mul div with broadcasting") {
  om::Generator g(1);
  const std::vector<std::pair<om::Shape, om::Shape>> shapes = {
      {{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{2, 3}, {2, 1}}, {{3}, {2, 3}}, {{4, 1, 3}, {2, 1}},
      {{}, {2, 3}},     {{2, 3}, {}},  {{}, {}},         {{2, 1, 4}, {1, 3, 1}},
  };
  for (const auto& s : shapes) {
    INFO(om::shape_str(s.first), " ", om::shape_str(s.second));
    om::Tensor a = gc::random(s.first, g), b = gc::random(s.second, g, 0.5, 2.0);
    gradcheck([](const Ts& x) { return om::add(x[0], x[1]); }, {a, b});
    gradcheck([](const Ts& x) { return om::sub(x[0], x[1]); }, {a, b});
    gradcheck([](const Ts& x) { return om::mul(x[0], x[1]); }, {a, b});
    gradcheck([](const Ts& x) { return om::div(x[0], x[1]); }, {a, b});
  }
}

TEST_CASE("gradients with scalar operands, a reused input and a constant operand") {
  om::Generator g(2);
  om::Tensor a = gc::random({3, 4}, g);
  gradcheck([](const Ts& x) { return om::add(x[0], 2.5); }, {a});
  gradcheck([](const Ts& x) { return om::sub(x[0], 1.0); }, {a});
  gradcheck([](const Ts& x) { return om::mul(x[0], -3.0); }, {a});
  gradcheck([](const Ts& x) { return om::div(x[0], 4.0); }, {a});
  gradcheck([](const Ts& x) { return 2.0 * x[0] - x[0] / 3.0; }, {a});
  gradcheck([](const Ts& x) { return om::neg(x[0]); }, {a});
  gradcheck([](const Ts& x) { return om::mul(x[0], x[0]); }, {a});  // both operands the same leaf
  gradcheck([](const Ts& x) { return om::div(x[0], om::add(om::mul(x[0], x[0]), 1.0)); }, {a});
  om::Tensor c = gc::random({4}, g);  // no gradient wanted: a plain constant
  gradcheck([c](const Ts& x) { return om::mul(om::sub(x[0], c), c); }, {a});
  gradcheck([c](const Ts& x) { return om::div(c, om::add(om::mul(x[0], x[0]), 1.0)); }, {a});
}

TEST_CASE("gradients of the activations") {
  om::Generator g(3);
  om::Tensor x = gc::away_from_zero({4, 5}, g);
  gradcheck([](const Ts& t) { return om::relu(t[0]); }, {x});
  gradcheck([](const Ts& t) { return om::sigmoid(t[0]); }, {x});
  gradcheck([](const Ts& t) { return om::tanh(t[0]); }, {x});
  gradcheck([](const Ts& t) { return om::gelu(t[0]); }, {x});
  gradcheck([](const Ts& t) { return om::gelu(t[0], om::GeluApproximate::Tanh); }, {x});
  om::Tensor wide = gc::random({40}, g, -5, 5);
  gradcheck([](const Ts& t) { return om::gelu(t[0]); }, {wide});
  gradcheck([](const Ts& t) { return om::gelu(t[0], om::GeluApproximate::Tanh); }, {wide});
  gradcheck([](const Ts& t) { return om::sigmoid(t[0]); }, {wide});
  gradcheck([](const Ts& t) { return om::tanh(om::mul(t[0], 0.5)); }, {wide});
  // on a non-contiguous input
  gradcheck([](const Ts& t) { return om::tanh(t[0].t()); }, {x});
}

TEST_CASE("gradients of matmul: 2-D, batched, broadcast batch, 1-D either side and both") {
  om::Generator g(4);
  const std::vector<std::pair<om::Shape, om::Shape>> cases = {
      {{3, 4}, {4, 5}}, {{2, 3, 4}, {2, 4, 5}}, {{2, 3, 4}, {4, 5}}, {{3, 4}, {2, 4, 5}},
      {{2, 1, 3, 4}, {3, 4, 2}}, {{4}, {4, 5}}, {{3, 4}, {4}}, {{4}, {4}}, {{4}, {2, 4, 3}}, {{2, 3, 4}, {4}},
  };
  for (const auto& c : cases) {
    INFO(om::shape_str(c.first), " @ ", om::shape_str(c.second));
    gradcheck([](const Ts& x) { return om::matmul(x[0], x[1]); }, {gc::random(c.first, g), gc::random(c.second, g)});
  }
  // transposed operands inside the function
  gradcheck([](const Ts& x) { return om::matmul(x[0].t(), x[1].t()); }, {gc::random({4, 3}, g), gc::random({5, 4}, g)});
  gradcheck([](const Ts& x) { return om::linear(x[0], x[1], x[2]); },
            {gc::random({2, 3, 4}, g), gc::random({5, 4}, g), gc::random({5}, g)});
}

TEST_CASE("gradients of sum and mean (all, each axis, keepdim)") {
  om::Generator g(5);
  om::Tensor x = gc::random({2, 3, 4}, g);
  gradcheck([](const Ts& t) { return om::sum(t[0]); }, {x});
  gradcheck([](const Ts& t) { return om::mean(t[0]); }, {x});
  gradcheck([](const Ts& t) { return om::sum(om::scalar_tensor(2.0) * t[0]); }, {gc::random({}, g)});
  for (int64_t axis = -3; axis < 3; ++axis) {
    for (bool keep : {false, true}) {
      INFO("axis ", axis, " keepdim ", keep);
      gradcheck([=](const Ts& t) { return om::sum(t[0], axis, keep); }, {x});
      gradcheck([=](const Ts& t) { return om::mean(t[0], axis, keep); }, {x});
    }
  }
  gradcheck([](const Ts& t) { return om::mean(t[0].permute({2, 0, 1}), 1); }, {x});
}

TEST_CASE("gradients of softmax and log_softmax along every dim") {
  om::Generator g(6);
  om::Tensor x = gc::random({2, 3, 4}, g);
  for (int64_t axis = 0; axis < 3; ++axis) {
    INFO("axis ", axis);
    gradcheck([=](const Ts& t) { return om::softmax(t[0], axis); }, {x});
    gradcheck([=](const Ts& t) { return om::log_softmax(t[0], axis); }, {x});
    gradcheck([=](const Ts& t) { return om::softmax(t[0].transpose(0, 2), axis); }, {x});
  }
  gradcheck([](const Ts& t) { return om::log_softmax(t[0], -1); }, {gc::random({5}, g)});
}

TEST_CASE("gradients through views: permute transpose slice select expand flip reshape squeeze unsqueeze") {
  om::Generator g(7);
  om::Tensor x = gc::random({3, 4, 2}, g);
  gradcheck([](const Ts& t) { return t[0].permute({2, 0, 1}); }, {x});
  gradcheck([](const Ts& t) { return om::mul(t[0].permute({1, 2, 0}), t[0].permute({1, 2, 0})); }, {x});
  gradcheck([](const Ts& t) { return t[0].transpose(0, 2); }, {x});
  gradcheck([](const Ts& t) { return t[0].slice(1, 1, 4, 2); }, {x});
  gradcheck([](const Ts& t) { return t[0].slice(0, -2, 100); }, {x});
  gradcheck([](const Ts& t) { return om::add(t[0].slice(1, 0, 2), t[0].slice(1, 2, 4)); }, {x});  // overlapping use
  gradcheck([](const Ts& t) { return t[0].select(1, -1); }, {x});
  gradcheck([](const Ts& t) { return om::mul(t[0].select(0, 0), t[0].select(0, 2)); }, {x});
  gradcheck([](const Ts& t) { return t[0].flip(1); }, {x});
  gradcheck([](const Ts& t) { return t[0].flip(0).flip(2); }, {x});
  gradcheck([](const Ts& t) { return t[0].reshape({4, -1}); }, {x});                 // view
  gradcheck([](const Ts& t) { return t[0].transpose(0, 1).reshape({-1}); }, {x});   // copying reshape
  gradcheck([](const Ts& t) { return t[0].unsqueeze(1).expand({3, 5, 4, 2}); }, {x});
  gradcheck([](const Ts& t) { return t[0].expand({2, 3, 4, 2}); }, {x});
  gradcheck([](const Ts& t) { return t[0].slice(2, 0, 1).expand({3, 4, 6}); }, {x});
  gradcheck([](const Ts& t) { return t[0].slice(0, 1, 2).squeeze(); }, {x});
  gradcheck([](const Ts& t) { return t[0].slice(0, 1, 2).squeeze(0); }, {x});
  gradcheck([](const Ts& t) { return t[0].unsqueeze(-1); }, {x});
  gradcheck([](const Ts& t) { return t[0].t().contiguous(); }, {gc::random({3, 5}, g)});
  gradcheck([](const Ts& t) { return t[0].clone(); }, {x});
  gradcheck([](const Ts& t) { return t[0].t().clone(); }, {gc::random({3, 5}, g)});
}

TEST_CASE("gradients of concat") {
  om::Generator g(8);
  om::Tensor a = gc::random({2, 3}, g), b = gc::random({2, 1}, g), c = gc::random({2, 4}, g);
  gradcheck([](const Ts& t) { return om::cat({t[0], t[1], t[2]}, 1); }, {a, b, c});
  gradcheck([](const Ts& t) { return om::cat({t[0].t(), t[1].t()}, 0); }, {a, b});
  gradcheck([](const Ts& t) { return om::cat({t[0], t[0]}, -1); }, {a});
  om::Tensor k = gc::random({2, 3}, g);
  gradcheck([k](const Ts& t) { return om::cat({k, t[0], k}, 0); }, {a});  // constants around
}

TEST_CASE("gradients of stack and index_select (repeated indices accumulate)") {
  om::Generator g(18);
  om::Tensor a = gc::random({2, 3}, g), b = gc::random({2, 3}, g);
  gradcheck([](const Ts& t) { return om::stack({t[0], t[1]}, 0); }, {a, b});
  gradcheck([](const Ts& t) { return om::stack({t[0], t[1], t[0]}, -1); }, {a, b});
  const om::Tensor idx = om::from_vector<int64_t>({2, 0, 2, -3});
  om::Tensor x = gc::random({2, 3, 4}, g);
  gradcheck([idx](const Ts& t) { return om::index_select(t[0], 1, idx); }, {x});
  gradcheck([](const Ts& t) { return om::index_select(t[0], 0, om::from_vector<int32_t>({1, 1})); }, {x});
  gradcheck([](const Ts& t) { return om::index_select(t[0].transpose(0, 2), -1, om::from_vector<int64_t>({1})); }, {x});
}

TEST_CASE("gradients of nll_loss and cross_entropy") {
  om::Generator g(9);
  om::Tensor logits = gc::random({5, 4}, g);
  om::Tensor target = om::from_vector<int64_t>({3, 0, 2, 2, 1});
  om::Tensor masked = om::from_vector<int64_t>({3, -100, 2, -100, 1});
  for (om::Reduction r : {om::Reduction::Mean, om::Reduction::Sum, om::Reduction::None}) {
    gradcheck([r](const Ts& t) { return om::nll_loss(om::log_softmax(t[0], 1), t[1], r); }, {logits, target});
    gradcheck([r](const Ts& t) { return om::nll_loss(om::log_softmax(t[0], 1), t[1], r); }, {logits, masked});
    gradcheck([r](const Ts& t) { return om::cross_entropy(t[0], t[1], r); }, {logits, target});
    gradcheck([r](const Ts& t) { return om::nll_loss(t[0], t[1], r, 2); }, {logits, target});
  }
  gradcheck([](const Ts& t) { return om::mse_loss(t[0], t[1]); }, {gc::random({3, 4}, g), gc::random({3, 4}, g)});
}

TEST_CASE("casts: f16 round trips pass the gradient, integer casts carry none") {
  om::Tensor x = om::from_vector<float>({0.5f, -1.25f, 3.0f}).requires_grad_();
  om::Tensor w = om::from_vector<float>({1.0f, 2.0f, -3.0f});
  om::sum(om::mul(x.to(om::DType::f16).to(om::DType::f32), w)).backward();
  CHECK(x.grad().to_vector<float>() == w.to_vector<float>());
  om::Tensor y = om::from_vector<float>({1.5f, -2.5f}).requires_grad_();
  // y * 2 + float(int(y)): only the first term has a gradient.
  om::Tensor z = om::add(om::mul(y, 2.0), y.to(om::DType::i64).to(om::DType::f32));
  CHECK(z.to_vector<float>() == std::vector<float>{4.0f, -7.0f});
  om::sum(z).backward();
  CHECK(y.grad().to_vector<float>() == std::vector<float>{2.0f, 2.0f});
}
