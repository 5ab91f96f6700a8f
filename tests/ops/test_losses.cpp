// The losses against direct evaluations of PyTorch's definitions, and ctc_loss against a
// brute-force sum over every alignment.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>

#include "onemodel/onemodel.h"
#include "test_util.h"

namespace {
std::vector<float> v(const om::Tensor& t) { return t.contiguous().to_vector<float>(); }

std::vector<std::vector<double>> log_softmax_rows(const std::vector<float>& x, int n, int c) {
  std::vector<std::vector<double>> out(static_cast<size_t>(n), std::vector<double>(static_cast<size_t>(c)));
  for (int i = 0; i < n; ++i) {
    double m = -1e300, s = 0;
    for (int k = 0; k < c; ++k) m = std::max(m, double(x[size_t(i * c + k)]));
    for (int k = 0; k < c; ++k) s += std::exp(double(x[size_t(i * c + k)]) - m);
    for (int k = 0; k < c; ++k) out[size_t(i)][size_t(k)] = double(x[size_t(i * c + k)]) - m - std::log(s);
  }
  return out;
}
}  // namespace

TEST_CASE("cross_entropy: class weights, ignore_index, label smoothing as PyTorch defines them") {
  const std::vector<float> x = {0.1f, 1.2f, -0.3f, 2.0f, 0.5f, -1.0f, 0.0f, 0.3f, 0.7f, -0.2f, 1.1f, 0.4f};
  const int n = 4, c = 3;
  const std::vector<int64_t> t = {1, -100, 2, 0};
  const std::vector<float> w = {0.5f, 2.0f, 1.5f};
  const auto lp = log_softmax_rows(x, n, c);
  om::Tensor logits = om::from_vector<float>(x, {n, c}), target = om::from_vector<int64_t>(t);
  for (double eps : {0.0, 0.1}) {
    for (bool weighted : {false, true}) {
      CAPTURE(eps);
      CAPTURE(weighted);
      double nll_sum = 0, smooth_sum = 0, wsum = 0;
      std::vector<double> per(size_t(n), 0.0);
      for (int i = 0; i < n; ++i) {
        if (t[size_t(i)] == -100) continue;
        const double wt = weighted ? w[size_t(t[size_t(i)])] : 1.0;
        double sm = 0;
        for (int k = 0; k < c; ++k) sm -= (weighted ? w[size_t(k)] : 1.0) * lp[size_t(i)][size_t(k)];
        const double nl = -wt * lp[size_t(i)][size_t(t[size_t(i)])];
        per[size_t(i)] = (1 - eps) * nl + eps / c * sm;
        nll_sum += nl;
        smooth_sum += sm;
        wsum += wt;
      }
      om::CrossEntropyOptions o;
      if (weighted) o.weight = om::from_vector<float>(w);
      o.label_smoothing = eps;
      o.reduction = om::Reduction::None;
      const auto got = v(om::cross_entropy(logits, target, o));
      for (int i = 0; i < n; ++i) CHECK(got[size_t(i)] == doctest::Approx(per[size_t(i)]).epsilon(1e-5));
      o.reduction = om::Reduction::Sum;
      CHECK(om::cross_entropy(logits, target, o).item<float>() == doctest::Approx((1 - eps) * nll_sum + eps / c * smooth_sum).epsilon(1e-5));
      o.reduction = om::Reduction::Mean;
      // PyTorch: the NLL part divides by the weight sum (count); the smoothing part by the weight
      // sum with weights, by the row count (ignored rows included) without.
      const double mean = (1 - eps) * nll_sum / wsum + eps / c * smooth_sum / (weighted ? wsum : double(n));
      CHECK(om::cross_entropy(logits, target, o).item<float>() == doctest::Approx(mean).epsilon(1e-5));
    }
  }
  // nll_loss with class weights: weighted mean
  om::Tensor lpt = om::log_softmax(logits, 1);
  double num = 0, den = 0;
  for (int i = 0; i < n; ++i)
    if (t[size_t(i)] != -100) {
      num -= w[size_t(t[size_t(i)])] * lp[size_t(i)][size_t(t[size_t(i)])];
      den += w[size_t(t[size_t(i)])];
    }
  CHECK(om::nll_loss(lpt, target, om::Reduction::Mean, -100, om::from_vector<float>(w)).item<float>() == doctest::Approx(num / den).epsilon(1e-5));
  CHECK(testutil::contains(testutil::error_of([&] { om::cross_entropy(logits, target, om::CrossEntropyOptions{om::Reduction::Mean, om::ones({2})}); }).what(),
                           "weight must be f32 [3]"));
}

TEST_CASE("mse, l1, smooth_l1, huber and binary_cross_entropy_with_logits") {
  const std::vector<float> a = {0.5f, -1.0f, 2.0f, 0.1f}, b = {0.0f, 1.0f, 2.5f, 0.1f};
  om::Tensor ta = om::from_vector<float>(a), tb = om::from_vector<float>(b);
  std::vector<double> mse, l1, sl1, hub;
  for (size_t i = 0; i < 4; ++i) {
    const double d = double(a[i]) - b[i], ad = std::fabs(d);
    mse.push_back(d * d);
    l1.push_back(ad);
    sl1.push_back(ad < 0.6 ? 0.5 * d * d / 0.6 : ad - 0.3);
    hub.push_back(ad < 0.6 ? 0.5 * d * d : 0.6 * (ad - 0.3));
  }
  auto check_all = [](const om::Tensor& none, const om::Tensor& sum, const om::Tensor& mean, const std::vector<double>& ref) {
    double s = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
      CHECK(v(none)[i] == doctest::Approx(ref[i]).epsilon(1e-6));
      s += ref[i];
    }
    CHECK(sum.item<float>() == doctest::Approx(s).epsilon(1e-6));
    CHECK(mean.item<float>() == doctest::Approx(s / double(ref.size())).epsilon(1e-6));
  };
  using R = om::Reduction;
  check_all(om::mse_loss(ta, tb, R::None), om::mse_loss(ta, tb, R::Sum), om::mse_loss(ta, tb), mse);
  check_all(om::l1_loss(ta, tb, R::None), om::l1_loss(ta, tb, R::Sum), om::l1_loss(ta, tb), l1);
  check_all(om::smooth_l1_loss(ta, tb, R::None, 0.6), om::smooth_l1_loss(ta, tb, R::Sum, 0.6), om::smooth_l1_loss(ta, tb, R::Mean, 0.6), sl1);
  check_all(om::huber_loss(ta, tb, R::None, 0.6), om::huber_loss(ta, tb, R::Sum, 0.6), om::huber_loss(ta, tb, R::Mean, 0.6), hub);
  // BCE with logits, pos_weight per class
  const std::vector<float> x = {0.3f, -2.0f, 40.0f, -40.0f}, y = {1, 0, 0.5f, 1}, pw = {2, 1};
  std::vector<double> bce;
  for (size_t i = 0; i < 4; ++i) {
    const double s = 1 / (1 + std::exp(-double(x[i]))), p = pw[i % 2];
    const double lsig = x[i] > 0 ? -std::log1p(std::exp(-double(x[i]))) : double(x[i]) - std::log1p(std::exp(double(x[i])));
    const double l1s = lsig - double(x[i]);  // log(1 - sigmoid(x))
    (void)s;
    bce.push_back(-(p * y[i] * lsig + (1 - y[i]) * l1s));
  }
  om::Tensor tx = om::from_vector<float>(x, {2, 2}), ty = om::from_vector<float>(y, {2, 2}), tp = om::from_vector<float>(pw);
  check_all(om::binary_cross_entropy_with_logits(tx, ty, R::None, tp).reshape({4}), om::binary_cross_entropy_with_logits(tx, ty, R::Sum, tp),
            om::binary_cross_entropy_with_logits(tx, ty, R::Mean, tp), bce);
}

namespace {
// -log of the sum over every path of length T whose collapse (merge repeats, drop blanks) is
// `label`, of the product of the path's probabilities.
double ctc_brute(const std::vector<float>& lp, int T, int N, int C, int b, int Tb, const std::vector<int64_t>& label, int blank) {
  double total = 0;
  std::vector<int> path(size_t(Tb), 0);
  std::function<void(int)> rec = [&](int t) {
    if (t == Tb) {
      std::vector<int64_t> out;
      int prev = -1;
      for (int s : path) {
        if (s != prev && s != blank) out.push_back(s);
        prev = s;
      }
      if (out != label) return;
      double lsum = 0;
      for (int u = 0; u < Tb; ++u) lsum += lp[size_t((u * N + b) * C + path[size_t(u)])];
      total += std::exp(lsum);
      return;
    }
    for (int c = 0; c < C; ++c) {
      path[size_t(t)] = c;
      rec(t + 1);
    }
  };
  (void)T;
  rec(0);
  return -std::log(total);
}
}  // namespace

TEST_CASE("ctc_loss equals a brute-force sum over all alignments; reductions; zero_infinity") {
  const int T = 5, N = 3, C = 4;
  om::Generator g(5);
  om::Tensor lpt = om::log_softmax(om::randn({T, N, C}, g), 2);
  const std::vector<float> lp = lpt.to_vector<float>();
  const std::vector<std::vector<int64_t>> labels = {{1, 1}, {2, 3, 1}, {}};
  const std::vector<int64_t> in_len = {5, 4, 3}, tg_len = {2, 3, 0};
  for (int blank : {0, 3}) {
    CAPTURE(blank);
    std::vector<std::vector<int64_t>> lab = labels;
    if (blank == 3) lab = {{1, 1}, {2, 0, 1}, {}};
    std::vector<int64_t> flat;
    for (const auto& l : lab) flat.insert(flat.end(), l.begin(), l.end());
    om::CtcOptions o;
    o.blank = blank;
    o.reduction = om::Reduction::None;
    const auto got = v(om::ctc_loss(lpt, om::from_vector<int64_t>(flat), in_len, tg_len, o));
    std::vector<double> ref;
    for (int b = 0; b < N; ++b) {
      ref.push_back(ctc_brute(lp, T, N, C, b, int(in_len[size_t(b)]), lab[size_t(b)], blank));
      CHECK(got[size_t(b)] == doctest::Approx(ref.back()).epsilon(1e-5));
    }
    o.reduction = om::Reduction::Sum;
    CHECK(om::ctc_loss(lpt, om::from_vector<int64_t>(flat), in_len, tg_len, o).item<float>() ==
          doctest::Approx(ref[0] + ref[1] + ref[2]).epsilon(1e-5));
    o.reduction = om::Reduction::Mean;  // each divided by its target length (at least 1), then averaged
    CHECK(om::ctc_loss(lpt, om::from_vector<int64_t>(flat), in_len, tg_len, o).item<float>() ==
          doctest::Approx((ref[0] / 2 + ref[1] / 3 + ref[2] / 1) / 3).epsilon(1e-5));
  }
  // padded [N, S] targets give the same result as the concatenation
  om::Tensor padded = om::from_vector<int64_t>({1, 1, 0, 2, 3, 1, 0, 0, 0}, {3, 3});
  om::CtcOptions o;
  CHECK(om::ctc_loss(lpt, padded, in_len, tg_len, o).item<float>() ==
        om::ctc_loss(lpt, om::from_vector<int64_t>({1, 1, 2, 3, 1}), in_len, tg_len, o).item<float>());
  // infeasible: "1 1" needs 3 frames; with 2 the loss is infinite, or 0 with zero_infinity
  om::Tensor x = om::log_softmax(om::randn({2, 1, 3}, g), 2).requires_grad_();
  o.reduction = om::Reduction::Sum;
  CHECK(std::isinf(om::ctc_loss(x, om::from_vector<int64_t>({1, 1}), {2}, {2}, o).item<float>()));
  o.zero_infinity = true;
  om::Tensor l = om::ctc_loss(x, om::from_vector<int64_t>({1, 1}), {2}, {2}, o);
  CHECK(l.item<float>() == 0.0f);
  l.backward();
  for (float gv : x.grad().to_vector<float>()) CHECK(gv == 0.0f);
  CHECK(testutil::contains(testutil::error_of([&] { om::ctc_loss(lpt, padded, {5, 4}, {2, 3}, o); }).what(), "one input length"));
  CHECK(testutil::contains(testutil::error_of([&] { om::ctc_loss(lpt, om::from_vector<int64_t>({0, 1, 2, 3, 1}), in_len, tg_len); }).what(),
                           "blank"));
}
