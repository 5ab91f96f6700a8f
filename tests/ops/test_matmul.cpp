// matmul with torch semantics and linear, against double references.
#include "ops/ref.h"

namespace {

void check_matmul(const om::Tensor& a, const om::Tensor& b) {
  INFO(a.to_string(), " @ ", b.to_string());
  const ref::Nd want = ref::matmul(ref::of(a), ref::of(b));
  for (om::ArithmeticMode mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
    om::ArithmeticModeGuard guard(mode);
    ref::check_close(om::matmul(a, b), want, 1e-5, 1e-5);
  }
}

}  // namespace

TEST_CASE("matmul: 2-D, batched, broadcast batch dims, 1-D on either or both sides") {
  om::Generator g(21);
  const std::vector<std::pair<om::Shape, om::Shape>> cases = {
      {{3, 4}, {4, 5}},        {{1, 1}, {1, 1}},        {{17, 33}, {33, 9}},     {{2, 3, 4}, {2, 4, 5}},
      {{2, 3, 4}, {4, 5}},     {{3, 4}, {2, 4, 5}},     {{2, 1, 3, 4}, {5, 4, 2}}, {{4}, {4, 5}},
      {{3, 4}, {4}},           {{4}, {4}},              {{4}, {2, 4, 5}},        {{2, 3, 4}, {4}},
      {{1, 4}, {3, 4, 2}},     {{3, 0}, {0, 2}},        {{0, 3}, {3, 2}},        {{65, 70}, {70, 31}},
  };
  for (const auto& c : cases) check_matmul(ref::random(c.first, g), ref::random(c.second, g));
  // K = 0 gives zeros.
  om::Tensor z = om::matmul(om::ones({3, 0}), om::ones({0, 2}));
  CHECK(z.to_vector<float>() == std::vector<float>(6, 0.0f));
  // dot product value
  CHECK(om::matmul(om::from_vector<float>({1, 2, 3}), om::from_vector<float>({4, 5, 6})).item<float>() == 32.0f);
}

TEST_CASE("matmul reads transposed, sliced, flipped and expanded operands in place") {
  om::Generator g(22);
  om::Tensor w = ref::random({5, 4}, g);
  om::Tensor x = ref::random({3, 4}, g);
  check_matmul(x, w.t());                                // transposed weight
  check_matmul(w.t().t(), x.t());                        // [5, 4] @ [4, 3]
  om::Tensor big = ref::random({6, 10}, g);
  check_matmul(big.slice(1, 1, 9, 2), ref::random({4, 3}, g));  // column stride 2
  check_matmul(big.slice(0, 1, 4), big.t().slice(1, 2, 5));     // offsets
  check_matmul(x.flip(0), w.t().flip(1));
  check_matmul(ref::random({4}, g).expand({2, 3, 4}), ref::random({2, 4, 5}, g));
  check_matmul(ref::random({2, 3, 4}, g).permute({0, 2, 1}), ref::random({3, 2}, g));
  check_matmul(ref::random({3, 2, 4}, g).transpose(0, 1), ref::random({4, 5}, g));
  check_matmul(big.select(1, 3), big.slice(1, 3, 8));  // 1-D strided @ 2-D
}

TEST_CASE("matmul errors") {
  om::Error e = testutil::error_of([] { om::matmul(om::zeros({2, 3}), om::zeros({4, 5})); });
  CHECK(e.kind() == om::ErrorKind::ShapeMismatch);
  INFO(e.what());
  CHECK(testutil::contains(e.what(), "om::matmul"));
  CHECK(testutil::contains(e.what(), "[2, 3]"));
  CHECK(testutil::contains(e.what(), "[4, 5]"));
  CHECK(testutil::error_of([] { om::matmul(om::zeros({2, 2, 3}), om::zeros({3, 3, 4})); }).kind() == om::ErrorKind::ShapeMismatch);
  CHECK(testutil::error_of([] { om::matmul(om::scalar_tensor(1), om::zeros({3})); }).kind() == om::ErrorKind::InvalidArgument);
  CHECK(testutil::error_of([] { om::matmul(om::zeros({3}, om::DType::i64), om::zeros({3}, om::DType::i64)); }).kind() ==
        om::ErrorKind::DTypeMismatch);
}

TEST_CASE("linear = x W^T + b for 1-D, 2-D and 3-D inputs") {
  om::Generator g(23);
  om::Tensor w = ref::random({5, 4}, g), b = ref::random({5}, g);
  ref::Nd wt = ref::zeros({4, 5});
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 5; ++j) wt.at({i, j}) = ref::of(w).at({j, i});
  for (const om::Shape& xs : {om::Shape{4}, om::Shape{3, 4}, om::Shape{2, 3, 4}}) {
    om::Tensor x = ref::random(xs, g);
    const ref::Nd xw = ref::matmul(ref::of(x), wt);
    ref::check_close(om::linear(x, w), xw, 1e-5, 1e-5);
    ref::check_close(om::linear(x, w, b), ref::binary(xw, ref::of(b), [](double p, double q) { return p + q; }), 1e-5, 1e-5);
  }
  CHECK(testutil::error_of([&] { om::linear(om::zeros({3, 4}), om::zeros({4})); }).kind() == om::ErrorKind::InvalidArgument);
  CHECK(testutil::error_of([&] { om::linear(om::zeros({3, 3}), w); }).kind() == om::ErrorKind::ShapeMismatch);
}
