// The eager convolutional operators against double-precision references written from their
// definitions (PyTorch semantics), and their argument checks.
#include <algorithm>

#include "ops/ref.h"

namespace {

std::vector<float> rnd(size_t n, uint64_t seed) {
  om::Generator g(seed);
  std::vector<float> v(n);
  for (float& x : v) x = 4.0f * g.uniform() - 2.0f;
  return v;
}

size_t count(const om::Shape& s) { return size_t(ref::numel(s)); }

}  // namespace

TEST_CASE("conv2d matches the direct double sum: asymmetric padding, stride, dilation, groups") {
  const om::Shape xs{2, 4, 7, 6}, ws{6, 2, 3, 2};
  const std::vector<float> xv = rnd(count(xs), 1), wv = rnd(count(ws), 2), bv = rnd(6, 3);
  const om::Tensor y = om::conv2d(om::from_vector<float>(xv, xs), om::from_vector<float>(wv, ws), om::from_vector<float>(bv), {2, 1},
                                  {1, 0, 2, 1}, {1, 2}, 2);
  // OH = (7 + 3 - 3) / 2 + 1 = 4, OW = (6 + 1 - 3) / 1 + 1 = 5
  REQUIRE(y.shape() == om::Shape{2, 6, 4, 5});
  const std::vector<float> yv = y.to_vector<float>();
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t m = 0; m < 6; ++m)
      for (int64_t oh = 0; oh < 4; ++oh)
        for (int64_t ow = 0; ow < 5; ++ow) {
          double acc = bv[size_t(m)];
          const int64_t gi = m / 3;
          for (int64_t c = 0; c < 2; ++c)
            for (int64_t kh = 0; kh < 3; ++kh)
              for (int64_t kw = 0; kw < 2; ++kw) {
                const int64_t ih = oh * 2 - 1 + kh, iw = ow - 0 + kw * 2;
                if (ih < 0 || ih >= 7 || iw < 0 || iw >= 6) continue;
                acc += double(xv[size_t(((n * 4 + gi * 2 + c) * 7 + ih) * 6 + iw)]) * wv[size_t(((m * 2 + c) * 3 + kh) * 2 + kw)];
              }
          CHECK(yv[size_t(((n * 6 + m) * 4 + oh) * 5 + ow)] == doctest::Approx(acc).epsilon(1e-5));
        }
}

TEST_CASE("conv_transpose2d scatters each input through the kernel") {
  const om::Shape xs{1, 2, 3, 2}, ws{2, 3, 3, 3};
  const std::vector<float> xv = rnd(count(xs), 4), wv = rnd(count(ws), 5);
  const om::Tensor y = om::conv_transpose2d(om::from_vector<float>(xv, xs), om::from_vector<float>(wv, ws), om::Tensor(), 2, 1, 1);
  // (3 - 1) * 2 + 3 - 2 + 1 = 6, (2 - 1) * 2 + 3 - 2 + 1 = 4
  REQUIRE(y.shape() == om::Shape{1, 3, 6, 4});
  std::vector<double> r(size_t(3 * 6 * 4), 0.0);
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 2; ++j)
        for (int64_t m = 0; m < 3; ++m)
          for (int64_t kh = 0; kh < 3; ++kh)
            for (int64_t kw = 0; kw < 3; ++kw) {
              const int64_t oh = i * 2 - 1 + kh, ow = j * 2 - 1 + kw;
              if (oh < 0 || oh >= 6 || ow < 0 || ow >= 4) continue;
              r[size_t((m * 6 + oh) * 4 + ow)] += double(xv[size_t((c * 3 + i) * 2 + j)]) * wv[size_t(((c * 3 + m) * 3 + kh) * 3 + kw)];
            }
  const std::vector<float> yv = y.to_vector<float>();
  for (size_t i = 0; i < r.size(); ++i) CHECK(yv[i] == doctest::Approx(r[i]).epsilon(1e-5));
}

TEST_CASE("batch_norm2d: training uses batch statistics and updates the running buffers as PyTorch") {
  const om::Shape xs{3, 2, 2, 2};
  const std::vector<float> xv = rnd(count(xs), 6);
  om::Tensor rm = om::from_vector<float>({0.5f, -0.5f}), rv = om::from_vector<float>({2.0f, 0.5f});
  const om::Tensor w = om::from_vector<float>({1.5f, -1.0f}), b = om::from_vector<float>({0.1f, 0.2f});
  const om::Tensor y = om::batch_norm2d(om::from_vector<float>(xv, xs), rm, rv, w, b, true, 0.1, 1e-5);
  const std::vector<float> yv = y.to_vector<float>();
  for (int64_t c = 0; c < 2; ++c) {
    double s = 0, ss = 0;
    for (int64_t n = 0; n < 3; ++n)
      for (int64_t i = 0; i < 4; ++i) s += xv[size_t((n * 2 + c) * 4 + i)];
    const double mu = s / 12;
    for (int64_t n = 0; n < 3; ++n)
      for (int64_t i = 0; i < 4; ++i) ss += (xv[size_t((n * 2 + c) * 4 + i)] - mu) * (xv[size_t((n * 2 + c) * 4 + i)] - mu);
    const double var = ss / 12;
    for (int64_t n = 0; n < 3; ++n)
      for (int64_t i = 0; i < 4; ++i) {
        const size_t k = size_t((n * 2 + c) * 4 + i);
        CHECK(yv[k] == doctest::Approx((xv[k] - mu) / std::sqrt(var + 1e-5) * (c ? -1.0 : 1.5) + (c ? 0.2 : 0.1)).epsilon(1e-5));
      }
    CHECK(rm.to_vector<float>()[size_t(c)] == doctest::Approx(0.9 * (c ? -0.5 : 0.5) + 0.1 * mu));
    CHECK(rv.to_vector<float>()[size_t(c)] == doctest::Approx(0.9 * (c ? 0.5 : 2.0) + 0.1 * ss / 11));  // unbiased
  }
  // Evaluation: the running statistics, buffers untouched.
  const std::vector<float> rm_before = rm.to_vector<float>();
  const om::Tensor e = om::batch_norm2d(om::from_vector<float>(xv, xs), rm, rv, w, b, false);
  CHECK(rm.to_vector<float>() == rm_before);
  const std::vector<float> ev = e.to_vector<float>();
  for (size_t k = 0; k < xv.size(); ++k) {
    const size_t c = (k / 4) % 2;
    const double r = (xv[k] - rm_before[c]) / std::sqrt(double(rv.to_vector<float>()[c]) + 1e-5) * (c ? -1.0 : 1.5) + (c ? 0.2 : 0.1);
    CHECK(ev[k] == doctest::Approx(r).epsilon(1e-5));
  }
}

TEST_CASE("pools: max with dilation and ceil_mode, average with and without counted padding") {
  const om::Shape xs{1, 1, 5, 5};
  std::vector<float> xv(25);
  for (size_t i = 0; i < 25; ++i) xv[i] = float(i);
  const om::Tensor x = om::from_vector<float>(xv, xs);
  CHECK(om::max_pool2d(x, 2).to_vector<float>() == std::vector<float>{6, 8, 16, 18});
  CHECK(om::max_pool2d(x, 2, 2, 0, 1, true).to_vector<float>() == std::vector<float>{6, 8, 9, 16, 18, 19, 21, 23, 24});
  CHECK(om::max_pool2d(x, 2, 1, 0, 2).to_vector<float>() == std::vector<float>{12, 13, 14, 17, 18, 19, 22, 23, 24});
  // 3x3 windows with padding 1 at the corner: 4 elements (0 1 5 6), 9 counted with padding.
  CHECK(om::avg_pool2d(x, 3, 2, 1, false, true).to_vector<float>()[0] == doctest::Approx(12.0 / 9));
  CHECK(om::avg_pool2d(x, 3, 2, 1, false, false).to_vector<float>()[0] == doctest::Approx(3.0));
  CHECK(om::global_avg_pool2d(x).to_vector<float>() == std::vector<float>{12});
  CHECK(om::global_avg_pool2d(x).shape() == om::Shape{1, 1, 1, 1});
}

TEST_CASE("resize2d: nearest floor(o * in / out), bilinear half-pixel and align_corners") {
  const om::Tensor x = om::from_vector<float>({1, 2, 3, 4}, {1, 1, 2, 2});
  CHECK(om::resize2d(x, 4, 4).to_vector<float>() == std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
  const std::vector<float> hp = om::resize2d(x, 4, 4, om::Interpolation::Bilinear).to_vector<float>();
  // PyTorch: F.interpolate(x, 4, mode='bilinear', align_corners=False) first row 1, 1.25, 1.75, 2
  CHECK(hp[0] == doctest::Approx(1.0));
  CHECK(hp[1] == doctest::Approx(1.25));
  CHECK(hp[2] == doctest::Approx(1.75));
  CHECK(hp[5] == doctest::Approx(1.25 + 0.5));
  const std::vector<float> ac = om::resize2d(x, 3, 3, om::Interpolation::Bilinear, true).to_vector<float>();
  CHECK(ac == std::vector<float>{1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4});
}

TEST_CASE("convolutional operators refuse bad arguments naming the call and the values") {
  const om::Tensor x = om::zeros({1, 3, 4, 4});
  CHECK(contains(error_of([&] { om::conv2d(x, om::zeros({2, 3, 5, 5})); }).what(), "om::conv2d"));
  CHECK(contains(error_of([&] { om::conv2d(x, om::zeros({2, 3, 5, 5})); }).what(), "larger than the padded input"));
  CHECK(contains(error_of([&] { om::conv2d(x, om::zeros({2, 1, 3, 3}), om::Tensor(), 1, 0, 1, 2); }).what(), "groups = 2"));
  CHECK(contains(error_of([&] { om::conv2d(x, om::zeros({2, 3, 3})); }).what(), "weight must be a 4-D"));
  CHECK(contains(error_of([&] { om::conv2d(x, om::zeros({2, 3, 3, 3}), om::Tensor(), 0); }).what(), "must be >= 1"));
  CHECK(contains(error_of([&] { om::conv2d(x, om::zeros({2, 3, 3, 3}), om::Tensor(), 1, -1); }).what(), "padding"));
  CHECK(contains(error_of([&] { om::conv_transpose2d(x, om::zeros({3, 2, 3, 3}), om::Tensor(), 1, 0, 1); }).what(), "output_padding"));
  CHECK(contains(error_of([&] { om::max_pool2d(x, 2, 2, 2); }).what(), "at most half the kernel"));
  CHECK(contains(error_of([&] { om::resize2d(x, 0, 3); }).what(), "om::resize2d"));
  CHECK(contains(error_of([&] { om::batch_norm2d(x, om::zeros({2}), om::ones({3}), om::ones({3}), om::zeros({3}), false); }).what(),
                 "running_mean must be [3]"));
  CHECK(contains(error_of([&] { om::batch_norm2d(om::zeros({1, 3, 1, 1}), om::zeros({3}), om::ones({3}), om::ones({3}), om::zeros({3}), true); }).what(),
                 "more than one value per channel"));
}
