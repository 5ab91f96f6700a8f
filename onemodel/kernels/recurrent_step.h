// kernels.h's f32_recurrent_step written once over an ISA's lanes (exact/math_impl.h's
// interface) and Io (L, loadu, storeu): one call per item and step over the whole vectors of the
// hidden size, one loop per activation with the gate arithmetic fused in; the elements past the last whole vector take
// the one-lane form of the same operations (tail, compiled once with the baseline flags in
// kernels/recurrent.cpp). Each ISA's file (kernels/<isa>/recurrent_<isa>.cpp) instantiates run()
// with its flags. Only the recurrent operators call it, so a program registering none of them
// links none of this.
#pragma once
#include <cstddef>

#include "onemodel/kernels/exact/math.h"
#include "onemodel/kernels/exact/math_impl.h"
#include "onemodel/kernels/fast_softmax.h"
#include "onemodel/kernels/kernels.h"

namespace om::kernels::recurrent {

constexpr size_t kBlock = 256;  // elements per block: three gate buffers of 1 KB on the stack

// The gate maps of Fast sessions (RecurrentStep::fast). The exact forms (exact/math_impl.h) run
// exp with the subnormal-safe two-factor scale, 1/(1 + t) by Newton steps that keep 1 + t's
// rounding error, and tanh's polynomial and exp branches side by side: they were a fifth of an
// LSTM's time. Here exp is the Fast softmax's (fast::exp_le0: the same reduction and polynomial,
// one scale factor, 0 below -87) and the reciprocal one division:
//   sigmoid(x) = 1 / (1 + t), t = exp(-|x|) (x < 0: t / (1 + t));
//   tanh(x) = sign(x) (1 - t) / (1 + t), t = exp(-2|x|), and below |x| = 1/8 the series
//   x - x^3/3 + 2x^5/15 (whose next term is under 3e-8 of x there), where 1 - t would cancel.
// NaN passes through. The operations are the same on every lane width, so every ISA gives the
// one-lane form's bits (tests/kernels/test_recurrent.cpp), within a few 1e-7 of the exact values.
template <class V, class Io>
struct FastGateMaps {
  using F = typename V::F;
  static F sigmoid(F x) {
    const F one = V::set(1.0f);
    const F t = fast::exp_le0<V>(V::neg_abs(x));
    const F r = Io::div(one, V::add(one, t));
    return V::select(V::isnan(x), x, V::select(V::lt(x, V::set(0.0f)), V::mul(t, r), r));
  }
  static F tanh(F x) {
    const F one = V::set(1.0f), a = V::abs(x);
    const F t = fast::exp_le0<V>(V::mul(a, V::set(-2.0f)));
    const F big = V::copysign_pos(Io::div(V::sub(one, t), V::add(one, t)), x);
    const F s = V::mul(x, x);
    const F small = V::fma(V::mul(x, s), V::fma(s, V::set(2.0f / 15.0f), V::set(-1.0f / 3.0f)), x);
    return V::select(V::isnan(x), x, V::select(V::lt(a, V::set(0.125f)), small, big));
  }
};

// Elements [j0, j1) of the step, j0 and j1 - j0 multiples of Io::L, a block at a time. Within a
// block each activation is its own loop over L1-resident buffers, the cheap arithmetic around it
// fused in: one transcendental per loop keeps its constants in registers, which several inlined
// side by side cannot (they spill, and run slower than separate passes).
template <class V, class Io, class Math>
__attribute__((always_inline)) inline void range(const RecurrentStep& s, size_t j0, size_t j1) {
  using F = typename V::F;
  constexpr size_t L = Io::L;
  const size_t n = s.n;
  alignas(64) float ta[kBlock], tb[kBlock], tc[kBlock];
  // u_k: gate block k's chain plus its bias, one rounding.
  auto u = [&](size_t k, size_t j) { return V::add(Io::loadu(s.gates + k * n + j), Io::loadu(s.bias + k * n + j)); };
  auto put_h = [&](size_t j, F h) {
    Io::storeu(s.h + j, h);
    if (s.y) Io::storeu(s.y + j, h);
  };
  // GRU's new state: (1 - z)*hn + z*h', each product rounded, then the sum.
  auto blend = [](F z, F hn, F hp) { return V::add(V::mul(V::sub(V::set(1.0f), z), hn), V::mul(z, hp)); };
  for (size_t b0 = j0; b0 < j1; b0 += kBlock) {
    const size_t b1 = b0 + kBlock < j1 ? b0 + kBlock : j1;
    auto each = [&](auto f) {
      for (size_t j = b0; j < b1; j += L) f(j);
    };
    // Element j's slot in a block buffer.
    auto ld = [&](const float* t, size_t j) { return Io::loadu(t + (j - b0)); };
    auto st = [&](float* t, size_t j, F v) { Io::storeu(t + (j - b0), v); };
    switch (s.form) {
      case RecurrentForm::Lstm:  // ta = i, tb = f, tc = g; then ta = o
        each([&](size_t j) {
          F ui = u(0, j);
          if (s.peep) ui = V::add(ui, V::mul(Io::loadu(s.peep + j), Io::loadu(s.c + j)));  // the previous cell state
          st(ta, j, Math::sigmoid(ui));
        });
        each([&](size_t j) {
          F uf = u(2, j);
          if (s.peep) uf = V::add(uf, V::mul(Io::loadu(s.peep + 2 * n + j), Io::loadu(s.c + j)));
          st(tb, j, Math::sigmoid(uf));
        });
        each([&](size_t j) { st(tc, j, Math::tanh(u(3, j))); });
        each([&](size_t j) {
          const F c = V::add(V::mul(ld(tb, j), Io::loadu(s.c + j)), V::mul(ld(ta, j), ld(tc, j)));
          Io::storeu(s.c + j, c);
          F uo = u(1, j);
          if (s.peep) uo = V::add(uo, V::mul(Io::loadu(s.peep + n + j), c));  // o sees the new one
          st(ta, j, Math::sigmoid(uo));
        });
        each([&](size_t j) { put_h(j, V::mul(ld(ta, j), Math::tanh(Io::loadu(s.c + j)))); });
        break;
      case RecurrentForm::GruGates:
        each([&](size_t j) { Io::storeu(s.gates + j, Math::sigmoid(u(0, j))); });
        each([&](size_t j) { Io::storeu(s.rh + j, V::mul(Math::sigmoid(u(1, j)), Io::loadu(s.h + j))); });
        break;
      case RecurrentForm::GruHidden:
        each([&](size_t j) {
          const F hn = Math::tanh(V::add(Io::loadu(s.x_h + j), Io::loadu(s.bias + 2 * n + j)));
          put_h(j, blend(Io::loadu(s.gates + j), hn, Io::loadu(s.h + j)));
        });
        break;
      case RecurrentForm::GruLinearBeforeReset:  // ta = z, tb = r
        each([&](size_t j) { st(ta, j, Math::sigmoid(u(0, j))); });
        each([&](size_t j) { st(tb, j, Math::sigmoid(u(1, j))); });
        each([&](size_t j) {
          const F xin = V::add(Io::loadu(s.x_h + j), Io::loadu(s.bias + 2 * n + j));
          const F rec = V::add(Io::loadu(s.gates + 2 * n + j), Io::loadu(s.rec_bias + j));
          put_h(j, blend(ld(ta, j), Math::tanh(V::add(xin, V::mul(ld(tb, j), rec))), Io::loadu(s.h + j)));
        });
        break;
      case RecurrentForm::Rnn: each([&](size_t j) { put_h(j, Math::tanh(u(0, j))); }); break;
    }
  }
}

// The one-lane form of range() over elements [j0, j1) (kernels/recurrent.cpp).
void tail(const RecurrentStep& s, size_t j0, size_t j1);

template <class V, class Io>
__attribute__((always_inline)) inline void run(const RecurrentStep& s) {
  const size_t nv = s.n / Io::L * Io::L;
  if (s.fast) range<V, Io, FastGateMaps<V, Io>>(s, 0, nv);
  else range<V, Io, exact::MathImpl<V>>(s, 0, nv);
  if (Io::L > 1 && nv < s.n) tail(s, nv, s.n);
}

}  // namespace om::kernels::recurrent
