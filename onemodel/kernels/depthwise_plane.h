// The depthwise convolution plane kernel (DepthwisePlaneKernel in kernels_internal.h) written once
// over the small vector interface of small_gemm.h (plus add(a, b), one rounding, and relu(a),
// UnaryOp::Relu's rule: x < 0 ? 0 : x with NaN and -0 kept), instantiated by
// each ISA file with its own Ops and compiled with that file's flags; the scalar table
// instantiates it with one-lane Ops and is the reference.
//
// Every output keeps its chain in registers over all taps: acc = +0, then
// acc = fma(src_t, w_t, acc) for the taps t in order, then acc + bias (when given). Lanes are
// output columns, so the chain of one output never depends on the vector width or on how rows
// are grouped: the bits are those of the scalar form on every ISA. Up to eight vectors run side
// by side, taken along the rows and across them, so short rows (8 or 16 outputs) and planes of
// two or three rows still give the fma units independent chains; the loops over them are
// unrolled by pragma so the accumulators stay in registers.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "onemodel/kernels/kernels_internal.h"

namespace om::kernels::dw {

// The K vectors at q + kw (kw < K): K unaligned loads, or on ISAs that shift vectors (Ops::shift:
// AVX-512's valignd) one load at q and one masked load of the K - 1 floats after that vector,
// the others shifted out of the two. An unaligned 64-byte load spans two cache lines at fifteen
// offsets in sixteen; the shifts take the loads off the critical port (docs/performance.md,
// "Depthwise layers: shifted taps"). The lanes are the same floats, so the same operands and bits.
template <class Ops, class = void>
struct HasShift : std::false_type {};
template <class Ops>
struct HasShift<Ops, std::void_t<decltype(Ops::kShift)>> : std::bool_constant<Ops::kShift> {};

template <class Ops, size_t K, int k = 1>
inline void shifted(typename Ops::V (&v)[K], typename Ops::V next) {
  if constexpr (k < int(K)) {
    v[k] = Ops::template shift<k>(v[0], next);
    shifted<Ops, K, k + 1>(v, next);
  }
}

template <class Ops, size_t K>
inline void row_taps(const float* q, typename Ops::V (&v)[K]) {
  if constexpr (HasShift<Ops>::value) {
    v[0] = Ops::load(q);
    shifted<Ops, K>(v, Ops::load_n(q + Ops::L, K - 1));  // no lane past the last tap is read
  } else {
    _Pragma("GCC unroll 5") for (size_t kw = 0; kw < K; ++kw) v[kw] = Ops::load(q + kw);
  }
}

// U vectors of outputs side by side, each output its own chain. The rows from r0 are read as
// one run of vectors, nv whole ones per row: vector v0 + k lies in row r0 + (v0 + k) / nv at
// columns from ((v0 + k) % nv) L. When Partial, vector k is instead the last, partial one of row
// r0 + v0 + k: the `tail` columns from nv L. A run crosses rows, so a plane of two or three rows
// still gives the fma units eight independent chains (PP-LCNet's 2x96 and 3x96 5x5 layers had
// two, and waited on the fma latency). K > 0: the plane's taps are a KxK window of adjacent
// columns (DepthwisePlane::unit), read a kernel row at a time by row_taps; the order is still
// (kh, kw).
template <class Ops, size_t U, bool Partial, size_t K = 0>
inline void block(const DepthwisePlane& p, size_t r0, size_t nv, size_t v0, size_t tail) {
  static_assert(!Partial || K == 0, "a partial vector reads its taps one by one");
  using V = typename Ops::V;
  constexpr size_t L = Ops::L;
  ptrdiff_t in[U];
  size_t out[U];
  size_t r = Partial ? r0 + v0 : r0 + v0 / nv, c = Partial ? nv : v0 % nv;  // c: the vector's index in its row
  _Pragma("GCC unroll 8") for (size_t k = 0; k < U; ++k) {
    in[k] = ptrdiff_t(r) * p.row_step + ptrdiff_t(c * L);
    out[k] = r * p.n + c * L;
    if (Partial || ++c == nv) c = Partial ? nv : 0, ++r;
  }
  V acc[U];
  _Pragma("GCC unroll 8") for (size_t k = 0; k < U; ++k) acc[k] = Ops::zero();
  if constexpr (K > 0) {
    for (size_t kh = 0; kh < K; ++kh) {
      const float* s = p.src + p.tap_off[0] + ptrdiff_t(kh) * p.row_step;
      V wv[K];
      _Pragma("GCC unroll 5") for (size_t kw = 0; kw < K; ++kw) wv[kw] = Ops::bcast(p.w + K * kh + kw);
      _Pragma("GCC unroll 8") for (size_t k = 0; k < U; ++k) {
        V v[K];
        row_taps<Ops, K>(s + in[k], v);
        _Pragma("GCC unroll 5") for (size_t kw = 0; kw < K; ++kw) acc[k] = Ops::fma(v[kw], wv[kw], acc[k]);
      }
    }
  } else {
    for (size_t t = 0; t < p.taps; ++t) {
      const V wv = Ops::bcast(p.w + t);
      const float* s = p.src + p.tap_off[t];
      _Pragma("GCC unroll 8") for (size_t k = 0; k < U; ++k) {
        acc[k] = Ops::fma(Partial ? Ops::load_n(s + in[k], tail) : Ops::load(s + in[k]), wv, acc[k]);
      }
    }
  }
  if (p.bias) {
    const V bv = Ops::bcast(p.bias);
    _Pragma("GCC unroll 8") for (size_t k = 0; k < U; ++k) acc[k] = Ops::add(acc[k], bv);
  }
  if (p.relu)
    _Pragma("GCC unroll 8") for (size_t k = 0; k < U; ++k) acc[k] = Ops::relu(acc[k]);
  _Pragma("GCC unroll 8") for (size_t k = 0; k < U; ++k) {
    if (Partial) Ops::store_n(p.out + out[k], acc[k], tail);
    else Ops::store(p.out + out[k], acc[k]);
  }
}

// Vectors [v, count) of the run from row r0 (block's numbering), U at a time, then the rest by
// halves: on the vector tables (U = 8) eight chains wherever the run has eight vectors left.
template <class Ops, size_t U, bool Partial, size_t K = 0>
inline void run(const DepthwisePlane& p, size_t r0, size_t nv, size_t v, size_t count, size_t tail) {
  for (; v + U <= count; v += U) block<Ops, U, Partial, K>(p, r0, nv, v, tail);
  if constexpr (U > 1)
    if (v < count) run<Ops, U / 2, Partial, K>(p, r0, nv, v, count, tail);
}

// Rows [r0, r1): their whole vectors as one run, then their partial last vectors as another.
template <class Ops>
inline void rows(const DepthwisePlane& p, size_t r0, size_t r1) {
  constexpr size_t L = Ops::L;
  const size_t nv = p.n / L, tail = p.n - nv * L, count = (r1 - r0) * nv;
  if constexpr (HasShift<Ops>::value) {
    if (p.unit == 3) run<Ops, 8, false, 3>(p, r0, nv, 0, count, 0);
    else if (p.unit == 5) run<Ops, 8, false, 5>(p, r0, nv, 0, count, 0);
    else run<Ops, 8, false>(p, r0, nv, 0, count, 0);
  } else {
    // The one-lane table (the reference, and the microcontroller's kernels) takes outputs in
    // twos: four block sizes of it cost the Cortex-M program 1 KB of its tight flash.
    run<Ops, (Ops::L > 1 ? 8 : 2), false>(p, r0, nv, 0, count, 0);
  }
  if constexpr (L > 1)
    if (tail) run<Ops, 8, true>(p, r0, nv, 0, r1 - r0, tail);
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

// The KxK window forms (K = 3: most depthwise layers; K = 5: PP-LCNet's and MobileNetV3's;
// DepthwisePlane::unit): the taps of output row r at column i are buffer rows r .. r + K - 1 (kh,
// in row_step units) at columns i .. i + K - 1 (kw) of the padded buffer. R output rows take their
// taps from R + K - 1 input rows, each loaded once per kw and used by every output row it feeds,
// instead of once per (output row, tap): K (R + K - 1) loads for K^2 R multiply-adds, not K^2 R (a
// 5x5 layer's unaligned loads, one per multiply-add, held it at a quarter of the fma peak). Input
// rows run in order and kw within each, so every output still gets its taps in (kh, kw) order: the
// chain, and so the bits, of block(). taps() below is that block; block_unit and rows_unit run it
// over a plane.

// R output rows at one vector of columns: q[ir] points at the kw = 0 tap of input row ir, out at
// the first output of row 0, rows out_step apart. Edge (the in-place 3x3 form's vectors at a
// plane's left or right edge): only the inputs at offsets [first, last) from q[ir] lie in the
// row; each tap loads those lanes and +0 for the others (the padded form's zeros, so the same
// operands), and the first `cnt` outputs are stored.
template <class Ops, size_t K, size_t R, bool Edge = false>
inline void taps(const float* const (&q)[R + K - 1], const typename Ops::V (&wv)[K * K], const float* bias, bool relu,
                 float* out, ptrdiff_t out_step, ptrdiff_t first = 0, ptrdiff_t last = 0, size_t cnt = 0) {
  using V = typename Ops::V;
  using Range = typename Ops::Range;
  Range m[K]{};  // per kw, the lanes inside the row (Edge only)
  if (Edge)
    _Pragma("GCC unroll 5") for (size_t kw = 0; kw < K; ++kw) m[kw] = Ops::range(first - ptrdiff_t(kw), last - ptrdiff_t(kw));
  V acc[R];
  _Pragma("GCC unroll 8") for (size_t r = 0; r < R; ++r) acc[r] = Ops::zero();
  _Pragma("GCC unroll 12") for (size_t ir = 0; ir < R + K - 1; ++ir) {
    V v[K];
    if constexpr (Edge) {
      _Pragma("GCC unroll 5") for (size_t kw = 0; kw < K; ++kw) v[kw] = Ops::load_range(q[ir] + kw, m[kw]);
    } else {
      row_taps<Ops, K>(q[ir], v);
    }
    _Pragma("GCC unroll 5") for (size_t kh = 0; kh < K; ++kh) {
      if (ir < kh || ir - kh >= R) continue;  // resolved at compile time: both are constants
      V& a = acc[ir - kh];
      _Pragma("GCC unroll 5") for (size_t kw = 0; kw < K; ++kw) a = Ops::fma(v[kw], wv[K * kh + kw], a);
    }
  }
  if (bias) {
    const V bv = Ops::bcast(bias);
    _Pragma("GCC unroll 8") for (size_t r = 0; r < R; ++r) acc[r] = Ops::add(acc[r], bv);
  }
  if (relu) _Pragma("GCC unroll 8") for (size_t r = 0; r < R; ++r) acc[r] = Ops::relu(acc[r]);
  _Pragma("GCC unroll 8") for (size_t r = 0; r < R; ++r) {
    if (Edge && cnt < Ops::L) Ops::store_n(out + ptrdiff_t(r) * out_step, acc[r], cnt);
    else Ops::store(out + ptrdiff_t(r) * out_step, acc[r]);
  }
}

template <class Ops, size_t K, size_t R>
inline void block_unit(const DepthwisePlane& p, const typename Ops::V (&wv)[K * K], size_t r0, size_t i) {
  const float* s = p.src + p.tap_off[0] + ptrdiff_t(r0) * p.row_step + ptrdiff_t(i);
  const float* q[R + K - 1];
  _Pragma("GCC unroll 12") for (size_t ir = 0; ir < R + K - 1; ++ir) q[ir] = s + ptrdiff_t(ir) * p.row_step;
  taps<Ops, K, R>(q, wv, p.bias, p.relu, p.out + r0 * p.n + i, ptrdiff_t(p.n));
}

// Rows [r0, r0 + R): whole vectors by block_unit, the partial last ones by block().
template <class Ops, size_t K, size_t R>
inline void rows_unit(const DepthwisePlane& p, const typename Ops::V (&wv)[K * K], size_t r0) {
  constexpr size_t L = Ops::L;
  size_t i = 0;
  for (; i + L <= p.n; i += L) block_unit<Ops, K, R>(p, wv, r0, i);
  if (i < p.n) block<Ops, R, true>(p, r0, p.n / L, 0, p.n - i);
}

// The rows of a plane in blocks of four by the KxK form; returns the first row left.
template <class Ops, size_t K>
inline size_t unit_rows(const DepthwisePlane& p) {
  typename Ops::V wv[K * K];
  for (size_t t = 0; t < K * K; ++t) wv[t] = Ops::bcast(p.w + t);
  size_t r = 0;
  for (; r + 4 <= p.rows; r += 4) rows_unit<Ops, K, 4>(p, wv, r);
  return r;
}

// The in-place form (DepthwisePlane::same_3x3): a 3x3 stride-1 undilated layer with one pad on
// every side reads the input plane itself, with no padded copy. Rows above and below the plane
// read `zeros`; a vector of outputs whose taps cross the left or right edge (or a last, partial
// vector) loads only the lanes inside the row (Ops::load_range: masked loads where the ISA has
// them), +0 in the others. Every output gets the padded form's inputs in the same (kh, kw) order,
// so the same bits. (These vectors were once computed from a zero-filled copy of their inputs on
// the stack: a memset and a memcpy per input row cost ten times the vector's arithmetic, and on
// a 128-wide plane they were two vectors in eight.)
template <class Ops, size_t R>
inline void edge_3x3(const float* const (&rp)[R + 2], const typename Ops::V (&wv)[9], const DepthwisePlane& p, size_t r0,
                     size_t i) {
  const float* q[R + 2];
  // q[ir] is column i - 1 of row ir, which may lie before the row; load_range reads none of it.
  for (size_t ir = 0; ir < R + 2; ++ir) q[ir] = reinterpret_cast<const float*>(uintptr_t(rp[ir] + i) - sizeof(float));
  const size_t cnt = std::min(Ops::L, p.n - i);
  taps<Ops, 3, R, true>(q, wv, p.bias, p.relu, p.out + r0 * p.n + i, ptrdiff_t(p.n), 1 - ptrdiff_t(i),
                         ptrdiff_t(p.n + 1 - i), cnt);
}

template <class Ops, size_t R>
inline void same_rows_3x3(const DepthwisePlane& p, const typename Ops::V (&wv)[9], size_t r0) {
  constexpr size_t L = Ops::L;
  const float* rp[R + 2];  // input rows r0 - 1 .. r0 + R, a zero row outside the plane
  for (size_t ir = 0; ir < R + 2; ++ir) {
    const ptrdiff_t r = ptrdiff_t(r0 + ir) - 1;
    rp[ir] = r < 0 || r >= ptrdiff_t(p.rows) ? p.zeros + 1 : p.src + r * ptrdiff_t(p.n);
  }
  edge_3x3<Ops, R>(rp, wv, p, r0, 0);
  size_t i = L;
  for (; i + L + 1 <= p.n; i += L) {
    const float* q[R + 2];
    _Pragma("GCC unroll 10") for (size_t ir = 0; ir < R + 2; ++ir) q[ir] = rp[ir] + i - 1;
    taps<Ops, 3, R>(q, wv, p.bias, p.relu, p.out + r0 * p.n + i, ptrdiff_t(p.n));
  }
  for (; i < p.n; i += L) edge_3x3<Ops, R>(rp, wv, p, r0, i);
}

template <class Ops>
void plane(const DepthwisePlane& p) {
  size_t r = 0;
  if (p.same_3x3) {
    typename Ops::V wv[9];
    for (size_t t = 0; t < 9; ++t) wv[t] = Ops::bcast(p.w + t);
    for (; r + 4 <= p.rows; r += 4) same_rows_3x3<Ops, 4>(p, wv, r);
    for (; r < p.rows; ++r) same_rows_3x3<Ops, 1>(p, wv, r);
    return;
  }
  // The shared-row forms take blocks of four rows: a plane of two or three is one run, and
  // broadcasting its weights for them would be a fifth of its time.
  const bool four_rows = p.rows >= 4 && p.n >= Ops::L;
  if (four_rows && p.unit == 3) r = unit_rows<Ops, 3>(p);
  // The 5x5 form on vector ISAs only: the one-lane table has no loads to share.
  if constexpr (Ops::L > 1)
    if (four_rows && p.unit == 5) r = unit_rows<Ops, 5>(p);
  if constexpr (HasHalves<Ops>::value) {
    if (2 * p.n == Ops::L) {
      for (; r + 16 <= p.rows; r += 16) pair_block<Ops, 8>(p, r);
      for (; r + 8 <= p.rows; r += 8) pair_block<Ops, 4>(p, r);
      for (; r + 4 <= p.rows; r += 4) pair_block<Ops, 2>(p, r);
      for (; r + 2 <= p.rows; r += 2) pair_block<Ops, 1>(p, r);
    }
  }
  if (r < p.rows) rows<Ops>(p, r, p.rows);
}

}  // namespace om::kernels::dw
