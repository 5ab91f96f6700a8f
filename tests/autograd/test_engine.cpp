// Autograd semantics: accumulation, requires_grad_, grad mode, detach, stores and scopes.
#include <ostream>  // doctest prints the shared_ptrs CHECKs compare through operator<<

#include "autograd/gradcheck.h"
#include "onemodel/autograd/grad.h"
#include "test_util.h"

using testutil::contains;
using testutil::error_of;

namespace {

}  // namespace

TEST_CASE("gradients accumulate into .grad() across backward calls; zero_grad resets") {
  om::Tensor x = om::from_vector<float>({1, 2, 3}).requires_grad_();
  CHECK_FALSE(x.grad().defined());  // undefined until a backward pass reaches the leaf
  om::sum(om::mul(x, x)).backward();
  CHECK(x.grad().to_vector<float>() == std::vector<float>{2, 4, 6});
  om::sum(om::mul(x, 3.0)).backward();
  CHECK(x.grad().to_vector<float>() == std::vector<float>{5, 7, 9});
  // The same graph twice: only with retain_graph (as PyTorch)
  om::Tensor loss = om::sum(x);
  loss.backward({}, true);
  loss.backward();
  CHECK(x.grad().to_vector<float>() == std::vector<float>{7, 9, 11});
  CHECK_THROWS_AS(loss.backward(), om::Error);
  CHECK(x.grad().to_vector<float>() == std::vector<float>{7, 9, 11});
  x.zero_grad();
  CHECK(x.grad().to_vector<float>() == std::vector<float>{0, 0, 0});
  om::mean(x).backward();
  CHECK(x.grad().get<float>({0}) == doctest::Approx(1.0 / 3));
}

TEST_CASE("a diamond graph sums the gradients of every path") {
  om::Tensor x = om::from_vector<float>({2.0f}).requires_grad_();
  om::Tensor a = om::mul(x, 3.0);       // 3x
  om::Tensor b = om::mul(x, x);         // x^2
  om::Tensor y = om::mul(a, b);         // 3x^3
  om::Tensor z = om::add(y, om::add(a, b));  // 3x^3 + 3x + x^2
  om::sum(z).backward();
  CHECK(x.grad().item<float>() == doctest::Approx(9 * 4 + 3 + 4));
}

TEST_CASE("backward with an explicit output gradient") {
  om::Tensor x = om::from_vector<float>({1, 2, 3, 4}, {2, 2}).requires_grad_();
  om::Tensor y = om::mul(x, x);
  y.backward(om::from_vector<float>({1, 0, 0, 2}, {2, 2}));
  CHECK(x.grad().to_vector<float>() == std::vector<float>{2, 0, 0, 16});
  om::Error e = error_of([&] { y.backward(); });
  CHECK(e.kind() == om::ErrorKind::InvalidArgument);
  CHECK(error_of([&] { y.backward(om::ones({4})); }).kind() == om::ErrorKind::ShapeMismatch);
  CHECK(error_of([] { om::sum(om::ones({3})).backward(); }).kind() == om::ErrorKind::InvalidArgument);
}

TEST_CASE("requires_grad_ semantics") {
  om::Tensor x = om::ones({3});
  CHECK_FALSE(x.requires_grad());
  CHECK(&x.requires_grad_() == &x);
  CHECK(x.requires_grad());
  om::Tensor y = om::add(x, 1.0);
  CHECK(y.requires_grad());
  CHECK(om::add(om::ones({3}), 1.0).requires_grad() == false);
  // only leaves can change the flag; only f32 can require gradients
  CHECK(error_of([&] { y.requires_grad_(false); }).kind() == om::ErrorKind::InvalidArgument);
  CHECK(error_of([] { om::ones({2}, om::DType::i64).requires_grad_(); }).kind() == om::ErrorKind::DTypeMismatch);
  om::ones({2}, om::DType::i64).requires_grad_(false);  // turning it off is always fine
  x.requires_grad_(false);
  CHECK_FALSE(om::add(x, 1.0).requires_grad());
  // A leaf that does not require gradients gets none, the other does.
  om::Tensor a = om::from_vector<float>({2}).requires_grad_();
  om::Tensor b = om::from_vector<float>({5});
  om::sum(om::mul(a, b)).backward();
  CHECK(a.grad().item<float>() == 5.0f);
  CHECK_FALSE(b.grad().defined());
  // A view of a leaf is not a leaf
  om::Tensor v = a.reshape({1, 1});
  CHECK(v.requires_grad());
  CHECK(error_of([&] { v.requires_grad_(); }).kind() == om::ErrorKind::InvalidArgument);
}

TEST_CASE("NoGradGuard and GradMode") {
  CHECK(om::GradMode::is_enabled());
  om::Tensor x = om::ones({2}).requires_grad_();
  {
    om::NoGradGuard guard;
    CHECK_FALSE(om::GradMode::is_enabled());
    om::Tensor y = om::mul(x, 2.0);
    CHECK_FALSE(y.requires_grad());
    CHECK(y.to_vector<float>() == std::vector<float>{2, 2});
    {
      om::NoGradGuard nested;
      CHECK_FALSE(om::GradMode::is_enabled());
    }
    CHECK_FALSE(om::GradMode::is_enabled());  // the outer guard still holds
    CHECK(error_of([&] { om::sum(y).backward(); }).kind() == om::ErrorKind::InvalidArgument);
  }
  CHECK(om::GradMode::is_enabled());
  CHECK(om::mul(x, 2.0).requires_grad());
  om::GradMode::set_enabled(false);
  CHECK_FALSE(om::mul(x, 2.0).requires_grad());
  om::GradMode::set_enabled(true);
  // A guard restores the state it found, even when it was already off.
  om::GradMode::set_enabled(false);
  { om::NoGradGuard g; }
  CHECK_FALSE(om::GradMode::is_enabled());
  om::GradMode::set_enabled(true);
}

TEST_CASE("detach cuts the graph") {
  om::Tensor x = om::from_vector<float>({3}).requires_grad_();
  om::Tensor y = om::mul(x, x);                 // 9, dy/dx = 6
  om::Tensor z = om::mul(y.detach(), x);        // y treated as a constant: dz/dx = 9
  CHECK_FALSE(y.detach().requires_grad());
  om::sum(z).backward({}, true);                // z is used again below: keep its graph
  CHECK(x.grad().item<float>() == 9.0f);
  x.zero_grad();
  om::sum(om::add(z, y)).backward();            // 9 + 6
  CHECK(x.grad().item<float>() == 15.0f);
  // A detached leaf can start its own graph.
  om::Tensor d = y.detach().requires_grad_();
  om::sum(om::mul(d, 2.0)).backward();
  CHECK(d.grad().item<float>() == 2.0f);
}

TEST_CASE("a leaf's gradient survives per-step StoreScopes of a training loop") {
  om::Store store(1 << 16);
  om::StoreGuard guard(store);
  om::Tensor w = om::from_vector<float>({1, -2}).requires_grad_();  // grad buffer allocated here
  for (int step = 0; step < 3; ++step) {
    om::StoreScope scope;
    om::Tensor x = om::from_vector<float>({3, 4});
    om::Tensor loss = om::sum(om::mul(om::relu(om::mul(w, x)), 2.0));
    loss.backward();
    om::Tensor filler = om::full({64}, 123.0);  // reuse memory after the step's tensors
    (void)filler;
  }
  CHECK(w.grad().to_vector<float>() == std::vector<float>{18, 0});
  CHECK(store.used() > 0);
  // A leaf made inside a scope owns a gradient that dies with that scope.
  om::Tensor inner;
  {
    om::StoreScope scope;
    inner = om::ones({2}).requires_grad_();
    om::sum(inner).backward();
    CHECK(inner.grad().to_vector<float>() == std::vector<float>{1, 1});
  }
  CHECK(error_of([&] { inner.grad().to_vector<float>(); }).kind() == om::ErrorKind::UseAfterRelease);
}

TEST_CASE("backward refuses a graph whose intermediate values were released") {
  om::Store store(1 << 16);
  om::StoreGuard guard(store);
  om::Tensor w = om::ones({3}).requires_grad_();
  om::Tensor h;
  {
    om::StoreScope scope;
    h = om::sigmoid(w);  // its saved output lives in the scope
  }
  om::Tensor loss = om::sum(om::mul(w, 2.0));  // a live graph still works
  loss.backward();
  CHECK(w.grad().to_vector<float>() == std::vector<float>{2, 2, 2});
  om::Error e = error_of([&] { om::sum(h).backward(); });
  CHECK(e.kind() == om::ErrorKind::UseAfterRelease);
}

TEST_CASE("records carry the operator, inputs and attributes") {
  om::Tensor x = om::ones({2, 3}).requires_grad_();
  om::Tensor s = x.slice(1, 1, 3);
  const om::detail::TensorImpl* impl = s.impl();
  REQUIRE(impl->grad_fn);
  CHECK(impl->grad_fn->op == om::OpId::Slice);
  CHECK(impl->grad_fn->inputs.size() == 1);
  CHECK(impl->grad_fn->inputs[0].impl() == x.impl());
  const om::SliceAttrs& sa = impl->grad_fn->attrs_of<om::OpId::Slice>();
  CHECK(sa.dim == 1);
  CHECK(sa.start == 1);
  CHECK(sa.end == 3);
  CHECK(sa.step == 1);
  CHECK(impl->grad_fn->output_shape == om::Shape{2, 2});
  CHECK(om::sum(x, 1, true).impl()->grad_fn->op == om::OpId::Sum);
  const om::Tensor r = om::sum(x, 1, true);
  const om::ReduceAttrs& ra = r.impl()->grad_fn->attrs_of<om::OpId::Sum>();
  CHECK_FALSE(ra.all);
  CHECK(ra.axis == 1);
  CHECK(ra.keepdim);
  // A record built with another operator's attribute struct is refused (ops.def names one).
  om::Tensor y = om::ones({2}).requires_grad_();
  om::Tensor out = om::ones({2});
  CHECK(om::record_op(om::OpId::Slice, {y}, out, om::FlipAttrs{0}).kind() == om::ErrorKind::Internal);
  CHECK(om::record_op(om::OpId::Flip, {y}, out, om::FlipAttrs{0}).is_ok());
  CHECK(std::string(om::op_name(om::OpId::Relu)) == "om::relu");
  CHECK_FALSE(om::op_traceable(om::OpId::NllLoss));
  CHECK(om::op_arity(om::OpId::Concat) == -1);
}
