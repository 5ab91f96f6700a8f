// gradcheck: compares backward() with central finite differences.
// The scalar loss is sum(f(x) * w) with fixed random weights w (so every output element
// matters with a different weight), accumulated in double from the f32 forward values.
#pragma once
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "onemodel/onemodel.h"

namespace gc {

using Fn = std::function<om::Tensor(const std::vector<om::Tensor>&)>;

struct Options {
  double eps = 1e-2;
  double atol = 2e-3;
  double rtol = 2e-3;
  uint64_t seed = 77;
  bool report = true;  // false: only count mismatches (for testing the checker itself)
};

// Random values in [lo, hi) (a fresh contiguous f32 tensor).
inline om::Tensor random(const om::Shape& s, om::Generator& g, double lo = -2.0, double hi = 2.0) {
  om::NoGradGuard ng;
  return om::add(om::mul(om::rand(s, g), hi - lo), lo);
}

// Random values with |x| in [0.2, 2): keeps finite differences away from kinks (relu at 0).
inline om::Tensor away_from_zero(const om::Shape& s, om::Generator& g) {
  std::vector<float> v(static_cast<size_t>(om::shape_numel(s)));
  for (float& x : v) {
    const float m = 0.2f + 1.8f * g.uniform();
    x = g.uniform() < 0.5f ? -m : m;
  }
  return om::from_vector<float>(v, s);
}

inline double weighted_sum(const om::Tensor& y, const std::vector<float>& w) {
  const std::vector<float> v = y.to_vector<float>();
  double s = 0;
  for (size_t i = 0; i < v.size(); ++i) s += double(v[i]) * double(w[i]);
  return s;
}

// Checks d loss / d input for every f32 input (others, e.g. i64 targets, are passed as they
// are). Inputs are copied into fresh leaves, so callers may pass views.
// Returns the number of mismatching gradient elements.
inline int gradcheck(const Fn& fn, const std::vector<om::Tensor>& inputs, const Options& opt = {}) {
  int total = 0;
  std::vector<om::Tensor> leaves;
  for (const om::Tensor& x : inputs) {
    om::Tensor c = x.dtype() == om::DType::f32 ? x.contiguous().clone() : x;
    if (c.dtype() == om::DType::f32) c.requires_grad_();
    leaves.push_back(c);
  }
  om::Tensor y = fn(leaves);
  REQUIRE(y.requires_grad());
  om::Generator g(opt.seed);
  std::vector<float> w(static_cast<size_t>(y.numel()));
  for (float& v : w) v = 2.0f * g.uniform() - 1.0f;
  om::Tensor wt = om::from_vector<float>(w, y.shape());
  om::sum(om::mul(y, wt)).backward();

  for (size_t i = 0; i < leaves.size(); ++i) {
    if (leaves[i].dtype() != om::DType::f32) continue;
    om::Tensor grad = leaves[i].grad();
    REQUIRE_MESSAGE(grad.defined(), "input " << i << " got no gradient");
    REQUIRE(grad.shape() == leaves[i].shape());
    const std::vector<float> analytic = grad.to_vector<float>();
    std::vector<om::Tensor> probe;
    for (const om::Tensor& l : leaves) probe.push_back(l.dtype() == om::DType::f32 ? l.detach().clone() : l);
    om::Tensor& x = probe[i];
    float* px = x.mutable_data<float>();
    int reported = 0;
    for (int64_t j = 0; j < x.numel(); ++j) {
      const float orig = px[j];
      px[j] = float(orig + opt.eps);
      const double fp = weighted_sum(fn(probe), w);
      px[j] = float(orig - opt.eps);
      const double fm = weighted_sum(fn(probe), w);
      px[j] = orig;
      const double numeric = (fp - fm) / (2 * opt.eps);
      const double a = analytic[size_t(j)];
      if (std::fabs(a - numeric) > opt.atol + opt.rtol * std::fabs(numeric)) {
        if (opt.report && reported < 5)
          FAIL_CHECK("input " << i << " element " << j << ": backward " << a << ", finite difference " << numeric);
        ++reported;
      }
    }
    if (opt.report) CHECK_MESSAGE(reported == 0, "input " << i << ": " << reported << " mismatching elements");
    total += reported;
  }
  return total;
}

}  // namespace gc
