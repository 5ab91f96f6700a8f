// Safety nets met by users: backward twice, null TensorView dims, and a training loop written
// without StoreScope staying bounded in the growing default store.
#include <doctest/doctest.h>

#include "onemodel/onemodel.h"
#include "test_util.h"

using testutil::contains;

TEST_CASE("backward twice through one graph is refused unless retain_graph is given") {
  om::Tensor w = om::tensor({1.f, 2.f}).requires_grad_();
  om::Tensor h = om::mul(w, w);
  om::Tensor loss = om::sum(h);
  loss.backward();
  CHECK(w.grad().to_vector<float>() == std::vector<float>{2, 4});
  om::Error e = testutil::error_of([&] { loss.backward(); });
  CHECK(e.kind() == om::ErrorKind::InvalidArgument);
  CHECK(contains(e.what(), "retain_graph"));
  // A new loss over a released intermediate is refused too (its records are gone).
  CHECK_THROWS_AS(om::sum(h).backward(), om::Error);
  CHECK(w.grad().to_vector<float>() == std::vector<float>{2, 4});  // nothing was added

  om::Tensor loss2 = om::sum(om::mul(w, w));
  loss2.backward({}, true);
  loss2.backward({}, true);
  loss2.backward();
  CHECK(w.grad().to_vector<float>() == std::vector<float>{8, 16});
  CHECK_THROWS_AS(loss2.backward(), om::Error);
}

TEST_CASE("Session::run refuses a TensorView with a rank and null dims") {
  om::Tracer tracer = om::Tracer::begin();
  om::Tensor x = tracer.input("x", om::ones({2, 3}), {"batch", ""});
  om::TracedModel m = tracer.finish({{"y", om::relu(x)}});
  om::Session s(m);
  om::TensorView in;
  in.name = "x";
  in.rank = 2;
  in.dims = nullptr;
  float data[6] = {};
  in.data = data;
  om::TensorView out;
  om::Error e = testutil::error_of([&] { s.run(&in, 1, &out, 1); });
  CHECK(e.kind() == om::ErrorKind::InvalidArgument);
  CHECK(contains(e.what(), "dims is null"));
  CHECK_FALSE(s.try_run(nullptr, 1, &out, 1).is_ok());
  CHECK_FALSE(s.try_run(&in, 1, nullptr, 1).is_ok());
}

namespace {
size_t train_without_scopes(om::Store& store, int epochs) {
  om::StoreGuard guard(store);
  om::Generator gen(7);
  auto model = std::make_shared<om::nn::Sequential>(
      std::make_shared<om::nn::Linear>(4, 32), std::make_shared<om::nn::ReLU>(), std::make_shared<om::nn::Linear>(32, 3));
  om::optim::SGD sgd(model->parameters(), om::optim::SGDOptions(0.05).momentum(0.9));
  om::Tensor x = om::randn({64, 4}, gen);
  om::Tensor y = om::tensor({0, 1, 2, 0, 1, 2, 0, 1}).expand({8, 8}).reshape({64});
  size_t high = 0;
  for (int epoch = 0; epoch < epochs; ++epoch) {
    for (int step = 0; step < 20; ++step) {  // written the PyTorch way: no StoreScope
      om::Tensor loss = om::cross_entropy((*model)(x), y);
      sgd.zero_grad();
      loss.backward();
      sgd.step();
    }
    high = std::max(high, store.capacity());
  }
  return high;
}
}  // namespace

TEST_CASE("a training loop without StoreScope stays bounded in a growing store") {
  om::Store store(64 << 10);  // small blocks so reuse is exercised many times
  const size_t high = train_without_scopes(store, 60);
  // Parameters, gradients and momentum are ~4 KB; one step's activations ~60 KB. Without block
  // reuse 60 epochs took hundreds of megabytes.
  CHECK(high <= size_t(512) << 10);
  CHECK(store.used() <= size_t(256) << 10);
}

TEST_CASE("the default store reuses blocks too; a fixed store keeps its single block") {
  const size_t before = om::Store::default_store().capacity();
  const size_t high = train_without_scopes(om::Store::default_store(), 60);
  CHECK(high <= before + (size_t(16) << 20));  // a few 4 MB blocks at most

  om::Store fixed = om::Store::fixed(1 << 20);
  {
    om::StoreGuard guard(fixed);
    for (int i = 0; i < 100; ++i) om::Tensor t = om::ones({64});
  }
  CHECK(fixed.capacity() == size_t(1) << 20);
  CHECK(fixed.used() == 100 * 256);  // today's behaviour: released only by a scope
}
