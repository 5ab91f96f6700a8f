// The exact-mode softmax / log-softmax of one row, shared by the vector ISAs. The sequence is the
// exact contract (docs/exactness.md): y = exp(x - max) with the library's exp (vector lanes, then
// the scalar tail), s = the fixed-order exact sum of y, then y / s or (x - max) - log(s). Every
// ISA runs this same code on its own lane width, so the bits are the same everywhere.
// y must not overlap x (log-softmax reads x after writing y).
#pragma once
#include <cstddef>

#include "onemodel/kernels/exact/math.h"

namespace om::kernels::exact {

// V: lane operations (exact/math_impl.h); Io: L, loadu, storeu, div; MathV: MathImpl<V>;
// sum: the ISA's exact sum kernel.
template <class V, class Io, class MathV, class SumFn>
void softmax_row(const float* x, float* y, size_t n, bool log, float m, SumFn sum) {
  constexpr size_t L = Io::L;
  const typename V::F vm = V::set(m);
  size_t i = 0;
  for (; i + L <= n; i += L) Io::storeu(y + i, MathV::exp(V::sub(Io::loadu(x + i), vm)));
  for (; i < n; ++i) y[i] = exact::exp(x[i] - m);
  const float s = sum(y, n);
  if (log) {
    const float ls = exact::log(s);
    const typename V::F vls = V::set(ls);
    for (i = 0; i + L <= n; i += L) Io::storeu(y + i, V::sub(V::sub(Io::loadu(x + i), vm), vls));
    for (; i < n; ++i) y[i] = (x[i] - m) - ls;
  } else {
    const typename V::F vs = V::set(s);
    for (i = 0; i + L <= n; i += L) Io::storeu(y + i, Io::div(Io::loadu(y + i), vs));
    for (; i < n; ++i) y[i] = y[i] / s;
  }
}

// An ISA's exact rows: softmax_row on each row with the row maximum `max` gives.
template <class V, class Io, class MathV, class MaxFn, class SumFn>
__attribute__((always_inline)) inline void softmax_rows(const float* x, float* y, size_t rows, size_t n, bool log,
                                                        MaxFn max, SumFn sum) {
  for (size_t r = 0; r < rows; ++r) softmax_row<V, Io, MathV>(x + r * n, y + r * n, n, log, max(x + r * n, n), sum);
}

}  // namespace om::kernels::exact
