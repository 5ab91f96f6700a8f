// Fast-mode softmax pieces shared by the vector ISAs. Not part of the exact contract: results
// may differ between ISAs and from Exact mode in the last bits (relative error ~2e-7).
#pragma once
#include <cstddef>
#include <cstdint>

#include "onemodel/kernels/exact/constants.h"
#include "onemodel/kernels/exact/math.h"

namespace om::kernels::fast {

// Below this the fast exp returns 0: exp(-87) is still a normal float, so 2^k needs no second
// scale factor, and anything smaller is below 1e-37 of the row sum (which is >= 1).
constexpr float kExpLe0Min = -87.0f;

// exp(x) for x <= 0 or x = -inf (never NaN): the exact kernels' argument reduction with the
// degree-6 Taylor polynomial (truncation error < 1.3e-7 on |r| <= ln2/2), one scale factor and
// no special-case selects. V is a lane-operations struct as in exact/math_impl.h.
template <class V>
inline typename V::F exp_le0(typename V::F x) {
  using F = typename V::F;
  namespace c = exact::c;
  const F xc = V::maxgt(x, V::set(kExpLe0Min));
  const F magic = V::set(c::kRoundMagic);
  const F kf = V::sub(V::add(V::mul(xc, V::set(c::kLog2e)), magic), magic);
  F r = V::fma(kf, V::set(-c::kLn2Hi), xc);
  r = V::fma(kf, V::set(-c::kLn2Lo), r);
  F p = V::set(c::kExpPoly[6]);
  for (int i = 5; i >= 0; --i) p = V::fma(p, r, V::set(c::kExpPoly[i]));
  const F scale = V::as_float(V::ishl(V::iadd(V::to_int(kf), V::seti(127)), 23));
  // x < min (including -inf) gives exactly 0.
  return V::select(V::lt(x, V::set(kExpLe0Min)), V::set(0.0f), V::mul(p, scale));
}

// One softmax / log-softmax row in Fast mode, given its finite maximum m (the caller's first
// pass). Two more passes instead of the exact form's three: exp(x - m) is stored (softmax) and
// summed in two independent vector accumulators in the same pass, then y is scaled by 1/sum
// (softmax) or y = (x - m) - log(sum). Io provides the vector width L, loadu, storeu and hsum (any order).
template <class V, class Io>
void softmax_row(const float* x, float* y, size_t n, bool log, float m) {
  using F = typename V::F;
  constexpr size_t L = Io::L;
  const F vm = V::set(m);
  F s0 = V::set(0.0f), s1 = s0;
  size_t i = 0;
  for (; i + 2 * L <= n; i += 2 * L) {
    const F e0 = exp_le0<V>(V::sub(Io::loadu(x + i), vm));
    const F e1 = exp_le0<V>(V::sub(Io::loadu(x + i + L), vm));
    if (!log) {
      Io::storeu(y + i, e0);
      Io::storeu(y + i + L, e1);
    }
    s0 = V::add(s0, e0);
    s1 = V::add(s1, e1);
  }
  for (; i + L <= n; i += L) {
    const F e = exp_le0<V>(V::sub(Io::loadu(x + i), vm));
    if (!log) Io::storeu(y + i, e);
    s0 = V::add(s0, e);
  }
  float s = Io::hsum(V::add(s0, s1));
  for (; i < n; ++i) {
    const float e = exp_le0<exact::ScalarLanes>(x[i] - m);
    if (!log) y[i] = e;
    s += e;
  }
  if (log) {
    const float ls = exact::log(s);
    const F vls = V::set(ls);
    for (i = 0; i + L <= n; i += L) Io::storeu(y + i, V::sub(V::sub(Io::loadu(x + i), vm), vls));
    for (; i < n; ++i) y[i] = (x[i] - m) - ls;
  } else {
    const float inv = 1.0f / s;
    const F vinv = V::set(inv);
    for (i = 0; i + L <= n; i += L) Io::storeu(y + i, V::mul(Io::loadu(y + i), vinv));
    for (; i < n; ++i) y[i] *= inv;
  }
}

// An ISA's Fast-mode rows: each row's maximum by `max`; a row whose maximum is NaN or infinite
// takes `exact_rows` (its NaN results are the same). always_inline: compiled in each ISA folder.
template <class V, class Io, class MaxFn, class ExactRowsFn>
__attribute__((always_inline)) inline void softmax_rows(const float* x, float* y, size_t rows, size_t n, bool log,
                                                        MaxFn max, ExactRowsFn exact_rows) {
  for (size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    const float m = max(xr, n);
    if (m - m == 0.0f) {
      softmax_row<V, Io>(xr, yr, n, log, m);
    } else {
      exact_rows(xr, yr, 1, n, log);
    }
  }
}

}  // namespace om::kernels::fast
