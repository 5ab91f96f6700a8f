// Test helpers: double-precision references for the eager operators, written from the
// operators' definitions with plain index arithmetic (no library code in the references).
#pragma once
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "onemodel/onemodel.h"
#include "test_util.h"

using testutil::contains;
using testutil::error_of;

namespace ref {

using Shape = om::Shape;

struct Nd {
  Shape shape;
  std::vector<double> v;
  double& at(const std::vector<int64_t>& idx);
  double at(const std::vector<int64_t>& idx) const;
};

inline int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

inline std::vector<int64_t> unravel(int64_t flat, const Shape& s) {
  std::vector<int64_t> idx(s.size());
  for (size_t k = s.size(); k-- > 0;) {
    idx[k] = flat % s[k];
    flat /= s[k];
  }
  return idx;
}

inline int64_t ravel(const std::vector<int64_t>& idx, const Shape& s) {
  int64_t f = 0;
  for (size_t k = 0; k < s.size(); ++k) f = f * s[k] + idx[k];
  return f;
}

inline double& Nd::at(const std::vector<int64_t>& idx) { return v[size_t(ravel(idx, shape))]; }
inline double Nd::at(const std::vector<int64_t>& idx) const { return v[size_t(ravel(idx, shape))]; }

inline Nd zeros(const Shape& s) { return Nd{s, std::vector<double>(size_t(numel(s)), 0.0)}; }

// The logical elements of an f32 tensor, in row-major order, as doubles.
inline Nd of(const om::Tensor& t) {
  Nd r{t.shape(), {}};
  for (float f : t.to_vector<float>()) r.v.push_back(double(f));
  return r;
}

inline om::Tensor tensor(const Nd& n) {
  std::vector<float> f(n.v.begin(), n.v.end());
  return om::from_vector<float>(f, n.shape);
}

// Uniform values in [lo, hi) from a seeded generator (a fresh contiguous f32 tensor).
inline om::Tensor random(const Shape& s, om::Generator& g, double lo = -2.0, double hi = 2.0) {
  om::Tensor t = om::rand(s, g);
  return om::add(om::mul(t, hi - lo), lo);
}

// Index of an input element read at output index `out` under numpy broadcasting.
inline std::vector<int64_t> broadcast_index(const std::vector<int64_t>& out, const Shape& in) {
  std::vector<int64_t> idx(in.size());
  const size_t lead = out.size() - in.size();
  for (size_t k = 0; k < in.size(); ++k) idx[k] = in[k] == 1 ? 0 : out[lead + k];
  return idx;
}

inline Shape broadcast(const Shape& a, const Shape& b) {
  const size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t k = 0; k < r; ++k) {
    const int64_t da = k < r - a.size() ? 1 : a[k - (r - a.size())];
    const int64_t db = k < r - b.size() ? 1 : b[k - (r - b.size())];
    out[k] = da == 1 ? db : da;
  }
  return out;
}

inline Nd binary(const Nd& a, const Nd& b, const std::function<double(double, double)>& f) {
  Nd out = zeros(broadcast(a.shape, b.shape));
  for (int64_t i = 0; i < numel(out.shape); ++i) {
    const auto idx = unravel(i, out.shape);
    out.v[size_t(i)] = f(a.at(broadcast_index(idx, a.shape)), b.at(broadcast_index(idx, b.shape)));
  }
  return out;
}

inline Nd unary(const Nd& a, const std::function<double(double)>& f) {
  Nd out = a;
  for (double& x : out.v) x = f(x);
  return out;
}

// Checks shape and every element: |got - want| <= atol + rtol * |want|.
inline void check_close(const om::Tensor& got, const Nd& want, double rtol = 1e-5, double atol = 1e-6) {
  REQUIRE(got.shape() == want.shape);
  const std::vector<float> g = got.to_vector<float>();
  int reported = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const double w = want.v[i];
    const bool ok = (std::isnan(w) && std::isnan(g[i])) || (std::isinf(w) && double(g[i]) == w) ||
                    std::fabs(double(g[i]) - w) <= atol + rtol * std::fabs(w);
    if (!ok && reported++ < 5) FAIL_CHECK("element " << i << ": got " << g[i] << ", want " << w);
  }
  CHECK(reported == 0);
}

// torch.matmul in double: 1-D operands promoted and their dims dropped, batch dims broadcast.
inline Nd matmul(const Nd& a, const Nd& b) {
  Nd a2 = a, b2 = b;
  if (a.shape.size() == 1) a2.shape = {1, a.shape[0]};
  if (b.shape.size() == 1) b2.shape = {b.shape[0], 1};
  const int64_t M = a2.shape[a2.shape.size() - 2], K = a2.shape.back(), N = b2.shape.back();
  const Shape ba(a2.shape.begin(), a2.shape.end() - 2), bb(b2.shape.begin(), b2.shape.end() - 2);
  const Shape batch = broadcast(ba, bb);
  Shape full = batch;
  full.push_back(M);
  full.push_back(N);
  Nd out = zeros(full);
  for (int64_t i = 0; i < numel(full); ++i) {
    const auto idx = unravel(i, full);
    const std::vector<int64_t> bidx(idx.begin(), idx.end() - 2);
    std::vector<int64_t> ia = broadcast_index(bidx, ba), ib = broadcast_index(bidx, bb);
    ia.push_back(idx[idx.size() - 2]);
    ia.push_back(0);
    ib.push_back(0);
    ib.push_back(idx.back());
    double s = 0;
    for (int64_t k = 0; k < K; ++k) {
      ia.back() = k;
      ib[ib.size() - 2] = k;
      s += a2.at(ia) * b2.at(ib);
    }
    out.v[size_t(i)] = s;
  }
  Shape final_shape = batch;
  if (a.shape.size() != 1) final_shape.push_back(M);
  if (b.shape.size() != 1) final_shape.push_back(N);
  out.shape = final_shape;
  return out;
}

// Sum (or mean) over `axis`, keeping it as size 1 when keepdim.
inline Nd reduce(const Nd& x, int64_t axis, bool keepdim, bool mean) {
  Shape s = x.shape;
  s[size_t(axis)] = 1;
  Nd out = zeros(s);
  for (int64_t i = 0; i < numel(x.shape); ++i) {
    auto idx = unravel(i, x.shape);
    idx[size_t(axis)] = 0;
    out.at(idx) += x.v[size_t(i)];
  }
  if (mean)
    for (double& v : out.v) v /= double(x.shape[size_t(axis)]);
  if (!keepdim) out.shape.erase(out.shape.begin() + axis);
  return out;
}

inline Nd softmax(const Nd& x, int64_t axis, bool log) {
  Nd out = x;
  const int64_t n = x.shape[size_t(axis)];
  for (int64_t i = 0; i < numel(x.shape); ++i) {
    auto idx = unravel(i, x.shape);
    if (idx[size_t(axis)] != 0) continue;
    double m = -INFINITY;
    for (int64_t k = 0; k < n; ++k) {
      idx[size_t(axis)] = k;
      m = std::max(m, x.at(idx));
    }
    double s = 0;
    for (int64_t k = 0; k < n; ++k) {
      idx[size_t(axis)] = k;
      s += std::exp(x.at(idx) - m);
    }
    for (int64_t k = 0; k < n; ++k) {
      idx[size_t(axis)] = k;
      out.at(idx) = log ? x.at(idx) - m - std::log(s) : std::exp(x.at(idx) - m) / s;
    }
  }
  return out;
}

inline double gelu(double x, bool tanh_mode) {
  if (tanh_mode) return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
}

}  // namespace ref
