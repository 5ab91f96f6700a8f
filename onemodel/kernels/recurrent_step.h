// kernels.h's f32_recurrent_step written once over an ISA's lanes (exact/math_impl.h's
// interface) and Io (L, loadu, storeu): one loop over the whole vectors of the hidden size, each
// element taking every gate's operations at once; the elements past the last whole vector take
// the one-lane form of the same operations (tail, compiled once with the baseline flags in
// kernels/recurrent.cpp). Each ISA's file (kernels/<isa>/recurrent_<isa>.cpp) instantiates run()
// with its flags. Only the recurrent operators call it, so a program registering none of them
// links none of this.
#pragma once
#include <cstddef>

#include "onemodel/kernels/exact/math.h"
#include "onemodel/kernels/kernels.h"

namespace om::kernels::recurrent {

// Elements [j0, j1) of the step, j0 and j1 - j0 multiples of Io::L.
template <class V, class Io>
__attribute__((always_inline)) inline void range(const RecurrentStep& s, size_t j0, size_t j1) {
  using F = typename V::F;
  using Math = exact::MathImpl<V>;
  constexpr size_t L = Io::L;
  const size_t n = s.n;
  // u_k: gate block k's chain plus its bias, one rounding.
  auto u = [&](size_t k, size_t j) { return V::add(Io::loadu(s.gates + k * n + j), Io::loadu(s.bias + k * n + j)); };
  auto put_h = [&](size_t j, F h) {
    Io::storeu(s.h + j, h);
    if (s.y) Io::storeu(s.y + j, h);
  };
  // GRU's new state: (1 - z)*hn + z*h', each product rounded, then the sum.
  auto blend = [](F z, F hn, F hp) { return V::add(V::mul(V::sub(V::set(1.0f), z), hn), V::mul(z, hp)); };
  switch (s.form) {
    case RecurrentForm::Lstm:
      for (size_t j = j0; j < j1; j += L) {
        const F cp = Io::loadu(s.c + j);
        F ui = u(0, j), uf = u(2, j);
        if (s.peep) {  // i and f see the previous cell state
          ui = V::add(ui, V::mul(Io::loadu(s.peep + j), cp));
          uf = V::add(uf, V::mul(Io::loadu(s.peep + 2 * n + j), cp));
        }
        const F i = Math::sigmoid(ui), f = Math::sigmoid(uf), g = Math::tanh(u(3, j));
        const F c = V::add(V::mul(f, cp), V::mul(i, g));
        F uo = u(1, j);
        if (s.peep) uo = V::add(uo, V::mul(Io::loadu(s.peep + n + j), c));  // o sees the new one
        Io::storeu(s.c + j, c);
        put_h(j, V::mul(Math::sigmoid(uo), Math::tanh(c)));
      }
      return;
    case RecurrentForm::GruGates:
      for (size_t j = j0; j < j1; j += L) {
        Io::storeu(s.gates + j, Math::sigmoid(u(0, j)));
        Io::storeu(s.rh + j, V::mul(Math::sigmoid(u(1, j)), Io::loadu(s.h + j)));
      }
      return;
    case RecurrentForm::GruHidden:
      for (size_t j = j0; j < j1; j += L) {
        const F hn = Math::tanh(V::add(Io::loadu(s.x_h + j), Io::loadu(s.bias + 2 * n + j)));
        put_h(j, blend(Io::loadu(s.gates + j), hn, Io::loadu(s.h + j)));
      }
      return;
    case RecurrentForm::GruLinearBeforeReset:
      for (size_t j = j0; j < j1; j += L) {
        const F z = Math::sigmoid(u(0, j)), r = Math::sigmoid(u(1, j));
        const F xin = V::add(Io::loadu(s.x_h + j), Io::loadu(s.bias + 2 * n + j));
        const F rec = V::add(Io::loadu(s.gates + 2 * n + j), Io::loadu(s.rec_bias + j));
        put_h(j, blend(z, Math::tanh(V::add(xin, V::mul(r, rec))), Io::loadu(s.h + j)));
      }
      return;
    case RecurrentForm::Rnn:
      for (size_t j = j0; j < j1; j += L) put_h(j, Math::tanh(u(0, j)));
      return;
  }
}

// The one-lane form of range() over elements [j0, j1) (kernels/recurrent.cpp).
void tail(const RecurrentStep& s, size_t j0, size_t j1);

template <class V, class Io>
__attribute__((always_inline)) inline void run(const RecurrentStep& s) {
  const size_t nv = s.n / Io::L * Io::L;
  range<V, Io>(s, 0, nv);
  if (Io::L > 1 && nv < s.n) tail(s, nv, s.n);
}

}  // namespace om::kernels::recurrent
