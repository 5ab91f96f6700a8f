// The depthwise convolution plane kernel (DepthwisePlaneKernel in kernels_internal.h) written once
// over the small vector interface of small_gemm.h (plus add(a, b), one rounding, and relu(a),
// UnaryOp::Relu's rule: x < 0 ? 0 : x with NaN and -0 kept), instantiated by
// each ISA file with its own Ops and compiled with that file's flags; the scalar table
// instantiates it with one-lane Ops and is the reference.
//
// Every output keeps its chain in registers over all taps: acc = +0, then
// acc = fma(src_t, w_t, acc) for the taps t in order, then acc + bias (when given). Lanes are
// output columns, so the chain of one output never depends on the vector width or on how rows
// are grouped: the bits are those of the scalar form on every ISA. Up to eight rows run side by
// side, so short rows (8 or 16 outputs) still give the fma units independent chains; the loops
// over them are unrolled by pragma so the accumulators stay in registers.
#pragma once
#include <cstddef>
#include <type_traits>

#include "onemodel/kernels/kernels_internal.h"

namespace om::kernels::dw {

// R rows, the columns [i, i + L) (or the first `tail` of them when Partial).
template <class Ops, size_t R, bool Partial>
inline void block(const DepthwisePlane& p, size_t r0, size_t i, size_t tail) {
  using V = typename Ops::V;
  V acc[R];
  _Pragma("GCC unroll 8") for (size_t r = 0; r < R; ++r) acc[r] = Ops::zero();
  for (size_t t = 0; t < p.taps; ++t) {
    const V wv = Ops::bcast(p.w + t);
    const float* s = p.src + p.tap_off[t] + ptrdiff_t(r0) * p.row_step + ptrdiff_t(i);
    _Pragma("GCC unroll 8") for (size_t r = 0; r < R; ++r) {
      const float* q = s + ptrdiff_t(r) * p.row_step;
      acc[r] = Ops::fma(Partial ? Ops::load_n(q, tail) : Ops::load(q), wv, acc[r]);
    }
  }
  if (p.bias) {
    const V bv = Ops::bcast(p.bias);
    _Pragma("GCC unroll 8") for (size_t r = 0; r < R; ++r) acc[r] = Ops::add(acc[r], bv);
  }
  if (p.relu)
    _Pragma("GCC unroll 8") for (size_t r = 0; r < R; ++r) acc[r] = Ops::relu(acc[r]);
  _Pragma("GCC unroll 8") for (size_t r = 0; r < R; ++r) {
    float* o = p.out + (r0 + r) * p.n + i;
    if (Partial) Ops::store_n(o, acc[r], tail);
    else Ops::store(o, acc[r]);
  }
}

template <class Ops, size_t R>
inline void rows(const DepthwisePlane& p, size_t r0) {
  constexpr size_t L = Ops::L;
  size_t i = 0;
  for (; i + L <= p.n; i += L) block<Ops, R, false>(p, r0, i, L);
  if (i < p.n) block<Ops, R, true>(p, r0, i, p.n - i);
}

// Rows exactly half a vector wide (8 floats under AVX-512): two rows per vector, so the fma units
// see full vectors. For Ops declaring kHalfRows, with load_halves(lo, hi) (lanes [0, L/2) from lo,
// the rest from hi) and store_halves(lo, hi, v). A lane still holds one output's chain, so the
// bits do not change.
template <class Ops, class = void>
struct HasHalves : std::false_type {};
template <class Ops>
struct HasHalves<Ops, std::void_t<decltype(Ops::kHalfRows)>> : std::bool_constant<Ops::kHalfRows> {};

// Rows [r0, r0 + 2R) of a plane with n == L/2.
template <class Ops, size_t R>
inline void pair_block(const DepthwisePlane& p, size_t r0) {
  using V = typename Ops::V;
  V acc[R];
  _Pragma("GCC unroll 8") for (size_t r = 0; r < R; ++r) acc[r] = Ops::zero();
  for (size_t t = 0; t < p.taps; ++t) {
    const V wv = Ops::bcast(p.w + t);
    const float* s = p.src + p.tap_off[t] + ptrdiff_t(r0) * p.row_step;
    _Pragma("GCC unroll 8") for (size_t r = 0; r < R; ++r) {
      const float* q = s + ptrdiff_t(2 * r) * p.row_step;
      acc[r] = Ops::fma(Ops::load_halves(q, q + p.row_step), wv, acc[r]);
    }
  }
  if (p.bias) {
    const V bv = Ops::bcast(p.bias);
    _Pragma("GCC unroll 8") for (size_t r = 0; r < R; ++r) acc[r] = Ops::add(acc[r], bv);
  }
  if (p.relu) _Pragma("GCC unroll 8") for (size_t r = 0; r < R; ++r) acc[r] = Ops::relu(acc[r]);
  _Pragma("GCC unroll 8") for (size_t r = 0; r < R; ++r) {
    float* o = p.out + (r0 + 2 * r) * p.n;
    Ops::store_halves(o, o + p.n, acc[r]);
  }
}

template <class Ops>
void plane(const DepthwisePlane& p) {
  size_t r = 0;
  if constexpr (HasHalves<Ops>::value) {
    if (2 * p.n == Ops::L) {
      for (; r + 16 <= p.rows; r += 16) pair_block<Ops, 8>(p, r);
      for (; r + 8 <= p.rows; r += 8) pair_block<Ops, 4>(p, r);
      for (; r + 4 <= p.rows; r += 4) pair_block<Ops, 2>(p, r);
      for (; r + 2 <= p.rows; r += 2) pair_block<Ops, 1>(p, r);
    }
  }
  for (; r + 8 <= p.rows; r += 8) rows<Ops, 8>(p, r);
  for (; r + 4 <= p.rows; r += 4) rows<Ops, 4>(p, r);
  for (; r + 2 <= p.rows; r += 2) rows<Ops, 2>(p, r);
  for (; r < p.rows; ++r) rows<Ops, 1>(p, r);
}

}  // namespace om::kernels::dw
