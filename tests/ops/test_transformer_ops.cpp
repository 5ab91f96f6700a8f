// Eager transformer operators against straightforward double references.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "onemodel/onemodel.h"

namespace {
std::vector<float> rnd(size_t n, uint64_t seed) {
  om::Generator g(seed);
  std::vector<float> v(n);
  for (auto& x : v) x = 4.0f * g.uniform() - 2.0f;
  return v;
}
}  // namespace

TEST_CASE("layer_norm matches a double reference over one and two trailing axes") {
  const std::vector<float> xv = rnd(2 * 3 * 4, 1), wv = rnd(12, 2), bv = rnd(12, 3);
  om::Tensor x = om::from_vector<float>(xv, {2, 3, 4});
  for (int k : {1, 2}) {
    const int64_t n = k == 1 ? 4 : 12;
    om::Shape ns = k == 1 ? om::Shape{4} : om::Shape{3, 4};
    om::Tensor w = om::from_vector<float>(std::vector<float>(wv.begin(), wv.begin() + n), ns);
    om::Tensor b = om::from_vector<float>(std::vector<float>(bv.begin(), bv.begin() + n), ns);
    const std::vector<float> y = om::layer_norm(x, ns, w, b, 1e-5).to_vector<float>();
    for (size_t r = 0; r < xv.size() / size_t(n); ++r) {
      double m = 0, var = 0;
      for (int64_t i = 0; i < n; ++i) m += xv[r * size_t(n) + size_t(i)];
      m /= double(n);
      for (int64_t i = 0; i < n; ++i) var += std::pow(xv[r * size_t(n) + size_t(i)] - m, 2);
      var /= double(n);
      for (int64_t i = 0; i < n; ++i) {
        const double ref = (xv[r * size_t(n) + size_t(i)] - m) / std::sqrt(var + 1e-5) * wv[size_t(i)] + bv[size_t(i)];
        CHECK(std::fabs(y[r * size_t(n) + size_t(i)] - ref) <= 1e-6 * std::max(1.0, std::fabs(ref)));
      }
    }
  }
  CHECK_THROWS_WITH_AS(om::layer_norm(x, {5}), doctest::Contains("normalized_shape [5]"), om::Error);
}

TEST_CASE("embedding picks rows for i64 and i32 indices of any rank and names a bad index") {
  om::Tensor w = om::from_vector<float>({0, 1, 10, 11, 20, 21}, {3, 2});
  om::Tensor y = om::embedding(om::from_vector<int64_t>({2, 0, 1, 2}, {2, 1, 2}), w);
  CHECK(y.shape() == om::Shape{2, 1, 2, 2});
  CHECK(y.to_vector<float>() == std::vector<float>{20, 21, 0, 1, 10, 11, 20, 21});
  CHECK(om::embedding(om::from_vector<int32_t>({1}, {1}), w).to_vector<float>() == std::vector<float>{10, 11});
  CHECK(om::embedding(om::scalar_tensor(2, om::DType::i64), w).shape() == om::Shape{2});
  CHECK_THROWS_WITH_AS(om::embedding(om::from_vector<int64_t>({0, 3}), w), doctest::Contains("index 3"), om::Error);
  CHECK_THROWS_WITH_AS(om::embedding(om::from_vector<int64_t>({0, 3}), w), doctest::Contains("3 rows"), om::Error);
  CHECK_THROWS_WITH_AS(om::embedding(om::from_vector<int64_t>({-1}), w), doctest::Contains("index -1"), om::Error);
}

TEST_CASE("dropout: training scales the kept elements by 1/(1-p), evaluation is the identity") {
  om::Tensor x = om::ones({1000});
  om::Generator g(3);
  const std::vector<float> y = om::dropout(x, 0.2, true, g).to_vector<float>();
  size_t kept = 0;
  for (float v : y) {
    CHECK((v == 0.0f || std::fabs(v - 1.25f) < 1e-6f));
    kept += v != 0.0f;
  }
  CHECK(kept > 740);
  CHECK(kept < 860);
  om::Generator g2(3);
  CHECK(om::dropout(x, 0.2, true, g2).to_vector<float>() == y);  // the generator fixes the mask
  CHECK(om::dropout(x, 0.2, false).impl() == x.impl());
  CHECK_THROWS_AS(om::dropout(x, 1.0, true), om::Error);
}

TEST_CASE("attention matches a direct computation with masks and causal") {
  const int64_t B = 2, H = 3, L = 5, D = 4;
  const std::vector<float> qv = rnd(size_t(B * H * L * D), 4), kv = rnd(size_t(B * H * L * D), 5), vv = rnd(size_t(B * H * L * D), 6);
  const std::vector<float> mv = rnd(size_t(B * L * L), 7);
  om::Tensor q = om::from_vector<float>(qv, {B, H, L, D}), k = om::from_vector<float>(kv, {B, H, L, D}), v = om::from_vector<float>(vv, {B, H, L, D});
  om::Tensor m = om::from_vector<float>(mv, {B, L, L});
  for (bool causal : {false, true}) {
    const std::vector<float> y = om::attention(q, k, v, m, 0, causal).to_vector<float>();
    const double scale = 1.0 / std::sqrt(double(D));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < L; ++i) {
          std::vector<double> s(static_cast<size_t>(L), 0.0);
          double mx = -1e300;
          for (int64_t j = 0; j < L; ++j) {
            double acc = 0;
            for (int64_t d = 0; d < D; ++d) acc += double(qv[size_t(((b * H + h) * L + i) * D + d)]) * kv[size_t(((b * H + h) * L + j) * D + d)];
            s[size_t(j)] = acc * scale + mv[size_t((b * L + i) * L + j)] + (causal && j > i ? -1e30 : 0.0);
            mx = std::max(mx, s[size_t(j)]);
          }
          double tot = 0;
          for (auto& e : s) tot += (e = std::exp(e - mx));
          for (int64_t d = 0; d < D; ++d) {
            double o = 0;
            for (int64_t j = 0; j < L; ++j) o += s[size_t(j)] / tot * vv[size_t(((b * H + h) * L + j) * D + d)];
            CHECK(std::fabs(y[size_t(((b * H + h) * L + i) * D + d)] - o) <= 1e-5 * std::max(1.0, std::fabs(o)));
          }
        }
  }
  CHECK_THROWS_WITH_AS(om::attention(q, k, v, om::zeros({L, L + 1})), doctest::Contains("additive mask"), om::Error);
}
