// exp log sqrt abs pow clamp, comparisons, where, max/min, argmax/argmin and topk against
// plain references.
#include <doctest/doctest.h>

#include <cmath>

#include "onemodel/onemodel.h"
#include "test_util.h"

namespace {
std::vector<float> v(const om::Tensor& t) { return t.contiguous().to_vector<float>(); }
}  // namespace

TEST_CASE("exp log sqrt abs pow clamp elementwise") {
  om::Tensor x = om::from_vector<float>({0.25f, 1, 4, 9}, {2, 2});
  const auto e = v(om::exp(x)), l = v(om::log(x)), s = v(om::sqrt(x));
  const std::vector<float> xs = {0.25f, 1, 4, 9};
  for (size_t i = 0; i < 4; ++i) {
    CHECK(e[i] == doctest::Approx(std::exp(xs[i])).epsilon(1e-6));
    CHECK(l[i] == doctest::Approx(std::log(xs[i])).epsilon(1e-6));
    CHECK(s[i] == doctest::Approx(std::sqrt(xs[i])).epsilon(1e-6));
  }
  CHECK(v(om::abs(om::from_vector<float>({-2, 0, 3}))) == std::vector<float>{2, 0, 3});
  CHECK(v(om::pow(x, 2.0)) == std::vector<float>{0.0625f, 1, 16, 81});
  CHECK(v(om::pow(om::from_vector<float>({2, 3}), om::from_vector<float>({3, 2}))) == std::vector<float>{8, 9});
  om::Tensor y = om::from_vector<float>({-3, -0.5f, 0.5f, 3});
  CHECK(v(om::clamp(y, -1.0, 1.0)) == std::vector<float>{-1, -0.5f, 0.5f, 1});
  CHECK(v(om::clamp(y, 0.0)) == std::vector<float>{0, 0, 0.5f, 3});
  CHECK(v(om::clamp(y, std::nullopt, 0.0)) == std::vector<float>{-3, -0.5f, 0, 0});
  CHECK(testutil::contains(testutil::error_of([&] { om::clamp(y, 2.0, 1.0); }).what(), "om::clamp"));
  CHECK(testutil::contains(testutil::error_of([&] { om::exp(om::from_vector<int64_t>({1})); }).what(), "om::exp"));
}

TEST_CASE("comparisons give bool tensors with broadcasting; where selects") {
  om::Tensor a = om::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  om::Tensor b = om::from_vector<float>({2, 2, 5});
  auto bools = [](const om::Tensor& t) {
    CHECK(t.dtype() == om::DType::boolean);
    std::vector<int> out;
    for (int64_t x : t.to(om::DType::i64).to_vector<int64_t>()) out.push_back(int(x));
    return out;
  };
  CHECK(bools(om::eq(a, b)) == std::vector<int>{0, 1, 0, 0, 0, 0});
  CHECK(bools(om::ne(a, b)) == std::vector<int>{1, 0, 1, 1, 1, 1});
  CHECK(bools(a < b) == std::vector<int>{1, 0, 1, 0, 0, 0});
  CHECK(bools(a <= b) == std::vector<int>{1, 1, 1, 0, 0, 0});
  CHECK(bools(a > b) == std::vector<int>{0, 0, 0, 1, 1, 1});
  CHECK(bools(a >= 3.0) == std::vector<int>{0, 0, 1, 1, 1, 1});
  CHECK(bools(om::eq(om::from_vector<int64_t>({1, 2}), om::from_vector<int64_t>({1, 3}))) == std::vector<int>{1, 0});
  CHECK_FALSE(om::gt(a.requires_grad_(), b).requires_grad());  // no gradient through a comparison
  om::Tensor w = om::where(a > b, a, om::zeros({1}));
  CHECK(v(w) == std::vector<float>{0, 0, 0, 4, 5, 6});
  CHECK(testutil::contains(testutil::error_of([&] { om::where(a, a, a); }).what(), "bool"));
  CHECK(testutil::contains(testutil::error_of([&] { om::eq(a, om::from_vector<int64_t>({1})); }).what(), "om::eq"));
}

TEST_CASE("max and min: elementwise, whole tensor, along a dim; argmax argmin; topk") {
  om::Tensor a = om::from_vector<float>({1, 5, 3, 7, 2, 7}, {2, 3});
  om::Tensor b = om::from_vector<float>({4, 4, 4});
  CHECK(v(om::max(a, b)) == std::vector<float>{4, 5, 4, 7, 4, 7});
  CHECK(v(om::min(a, b)) == std::vector<float>{1, 4, 3, 4, 2, 4});
  CHECK(om::max(a).item<float>() == 7);
  CHECK(om::min(a).item<float>() == 1);
  auto [mv, mi] = om::max(a, 1);
  CHECK(v(mv) == std::vector<float>{5, 7});
  CHECK(mi.to_vector<int64_t>() == std::vector<int64_t>{1, 0});  // first of the tied 7s
  auto [nv, ni] = om::min(a, 0, true);
  CHECK(nv.shape() == om::Shape{1, 3});
  CHECK(v(nv) == std::vector<float>{1, 2, 3});
  CHECK(ni.to_vector<int64_t>() == std::vector<int64_t>{0, 1, 0});
  CHECK(om::argmax(a).item<int64_t>() == 3);
  CHECK(om::argmin(a).item<int64_t>() == 0);
  CHECK(om::argmax(a, 0).to_vector<int64_t>() == std::vector<int64_t>{1, 0, 1});
  CHECK(om::argmax(om::from_vector<float>({1, NAN, 3})).item<int64_t>() == 1);  // NaN is the largest
  auto [tv, ti] = om::topk(a, 2);
  CHECK(tv.shape() == om::Shape{2, 2});
  CHECK(v(tv) == std::vector<float>{5, 3, 7, 7});
  CHECK(ti.to_vector<int64_t>() == std::vector<int64_t>{1, 2, 0, 2});
  auto [sv, si] = om::topk(a, 1, 0, false);
  CHECK(v(sv) == std::vector<float>{1, 2, 3});
  CHECK(si.to_vector<int64_t>() == std::vector<int64_t>{0, 1, 0});
  CHECK(testutil::contains(testutil::error_of([&] { om::topk(a, 4); }).what(), "k = 4"));
  CHECK(testutil::contains(testutil::error_of([&] { om::max(om::zeros({0})); }).what(), "empty"));
}
