// The window pools (MaxPool, AveragePool over one 2-D plane; PoolWindowKernel in
// kernels_internal.h) written once: the reference element loop, and the row driver each ISA's
// file instantiates with its vector Ops and flags: small_gemm.h's interface plus pick(v, m) (the
// selection below), max(v, m) (v > m ? v : m), add(a, b) (one rounding), div, load_even(p) (lanes
// p[0], p[2], ... from 2L floats) and load_even_n(p, n) (the first n of them, reading 2n - 1
// floats), and any_nan(v) (some lane is NaN). The scalar table's one-lane instantiation is the
// reference table.
//
// One output is the reference's walk over its window's in-bounds taps in (kh, kw) order:
//   max: the first tap's value, then per tap m = pick(v, m) (v > m, or v is the first NaN);
//   average: s = +0, then s = s + v per tap (one rounding each), then s / count.
// The driver splits each output row into the border columns (some tap outside the row: the
// element loop) and the interior (every kw tap inside), where lanes along the row run the same
// steps. Each output's steps, their order and their operands are the element loop's, so every
// ISA gives the reference's bits (NaN propagation included). Everything is always_inline: each
// ISA file holds its own copy (no out-of-line symbol shared across flags).
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "onemodel/kernels/conv.h"

namespace om::kernels::pool {

// v replaces m when larger, or when v is the first NaN (a NaN m stays): bitwise forms, so the
// compiler turns the loops below into compares and a blend.
__attribute__((always_inline)) inline float pick(float v, float m) {
  const bool take = (v > m) | ((v != v) & (m == m));
  return take ? v : m;
}

// The in-bounds taps [kh_lo, kh_hi) of output row oh (ih grows with kh, so they are one run).
struct TapRows {
  int64_t lo = 0, hi = 0;
};
__attribute__((always_inline)) inline TapRows tap_rows(const ConvGeom& g, int64_t oh) {
  TapRows r{0, g.kH};
  const int64_t top = oh * g.sH - g.pad_t;
  while (r.lo < r.hi && top + r.lo * g.dH < 0) ++r.lo;
  while (r.hi > r.lo && top + (r.hi - 1) * g.dH >= g.H) --r.hi;
  return r;
}

// f(offset) for each in-bounds tap of output (oh, ow)'s window in (kh, kw) order, the offset
// row-major in the plane.
template <class F>
__attribute__((always_inline)) inline void for_each_tap(const ConvGeom& g, int64_t oh, int64_t ow, F f) {
  for (int64_t kh = 0; kh < g.kH; ++kh) {
    const int64_t ih = oh * g.sH - g.pad_t + kh * g.dH;
    if (ih < 0 || ih >= g.H) continue;
    for (int64_t kw = 0; kw < g.kW; ++kw) {
      const int64_t iw = ow * g.sW - g.pad_l + kw * g.dW;
      if (iw >= 0 && iw < g.W) f(ih * g.W + iw);
    }
  }
}

// Output (oh, ow) of a max pool on one plane, and the row-major plane offset of the tap it took
// (-1 for a window without an in-bounds tap, whose value is -inf).
__attribute__((always_inline)) inline float max_at(const ConvGeom& g, const float* plane, int64_t oh, int64_t ow, int64_t* at_out) {
  float m = -std::numeric_limits<float>::infinity();
  int64_t at = -1;
  for_each_tap(g, oh, ow, [&](int64_t o) {
    const float v = plane[o];
    if (at < 0 || v > m || (v != v && m == m)) {  // the first tap, or pick(v, m) takes v
      m = v;
      at = o;
    }
  });
  if (at_out) *at_out = at;
  return m;
}

// Output (oh, ow) of an average pool on one plane: the window's in-bounds sum over its count.
__attribute__((always_inline)) inline float avg_at(const ConvGeom& g, const PoolWindow& w, const float* plane, int64_t oh, int64_t ow) {
  float s = 0.0f;
  for_each_tap(g, oh, ow, [&](int64_t o) { s = s + plane[o]; });
  const int64_t cnt = avg_pool_count(g, w.pad_b, w.pad_r, w.count_include_pad, oh, ow);
  return cnt > 0 ? s / float(cnt) : 0.0f;
}

// How a vector of outputs loads its inputs: whole vectors (stride 1: L floats; stride 2: 2L,
// the even ones kept), masked to `cnt` lanes (strides 1 and 2: reads stay inside the window's
// inputs), or gathered lane by lane (other strides).
enum class Load { Whole, Masked, Gather };

template <class Ops, int SW, Load How>
__attribute__((always_inline)) inline typename Ops::V load_taps(const float* p, int64_t s, int64_t cnt) {
  constexpr int64_t L = int64_t(Ops::L);
  if (How == Load::Whole) return SW == 1 ? Ops::load(p) : Ops::load_even(p);
  if (How == Load::Masked) return SW == 1 ? Ops::load_n(p, size_t(cnt)) : Ops::load_even_n(p, size_t(cnt));
  alignas(64) float lane[L];
  for (int64_t j = 0; j < L; ++j) lane[j] = j < cnt ? p[j * s] : 0.0f;
  return Ops::load(lane);
}

// The inputs of one output row's in-bounds tap rows: `rows` of them, `step` floats apart.
struct TapGrid {
  int64_t rows, step;
};

// One vector of outputs: `cnt` lanes whose window inputs start at p0 (tap (r.lo, 0)), stride s.
// Max runs Ops::max (v > m ? v : m, which is pick for numbers) with a sum of the same inputs
// beside it, which is NaN when an input is (or infinities cancel); such a vector runs again with
// pick, so a NaN costs nothing until it appears. KW > 0 fixes the window's width at compile time
// (the tap loop unrolls). The average divides by `div` (per-lane counts) when given.
template <class Ops, bool Max, int SW, int KW, Load How>
__attribute__((always_inline)) inline typename Ops::V lanes(const ConvGeom& g, TapGrid r, const float* p0, int64_t s,
                                                            int64_t cnt, const float* div) {
  using V = typename Ops::V;
  const int64_t kW = KW > 0 ? KW : g.kW;
  V acc = Ops::zero(), sum = Ops::zero();  // acc from +0: the average's start
  for (int64_t t = 0; t < r.rows; ++t) {
    const float* q = p0 + t * r.step;
    for (int64_t kw = 0; kw < kW; ++kw) {
      const V v = load_taps<Ops, SW, How>(q + kw * g.dW, s, cnt);
      if (Max) {
        sum = Ops::add(sum, v);
        acc = t == 0 && kw == 0 ? v : Ops::max(v, acc);
      } else {
        acc = Ops::add(acc, v);
      }
    }
  }
  if (!Max) {
    if (div) acc = Ops::div(acc, How == Load::Whole ? Ops::load(div) : Ops::load_n(div, size_t(cnt)));
    return acc;
  }
  if (!Ops::any_nan(sum)) return acc;
  for (int64_t t = 0; t < r.rows; ++t)
    for (int64_t kw = 0; kw < kW; ++kw) {
      const V v = load_taps<Ops, SW, How>(p0 + t * r.step + kw * g.dW, s, cnt);
      acc = t == 0 && kw == 0 ? v : Ops::pick(v, acc);
    }
  return acc;
}

// U whole vectors side by side (outputs i, i + L, ...): independent chains, so the latency of
// one vector's max or add chain hides behind the others'. Each lane's steps are lanes()'s.
template <class Ops, bool Max, int SW, int KW, int U>
__attribute__((always_inline)) inline void whole_block(const ConvGeom& g, TapGrid r, const float* p0, const float* div,
                                                       float* y) {
  using V = typename Ops::V;
  constexpr int64_t L = int64_t(Ops::L), S = SW;
  const int64_t kW = KW > 0 ? KW : g.kW;
  V acc[U], sum[U];
  _Pragma("GCC unroll 8") for (int u = 0; u < U; ++u) acc[u] = sum[u] = Ops::zero();
  for (int64_t t = 0; t < r.rows; ++t) {
    const float* q = p0 + t * r.step;
    for (int64_t kw = 0; kw < kW; ++kw) {
      _Pragma("GCC unroll 8") for (int u = 0; u < U; ++u) {
        const float* p = q + kw * g.dW + u * L * S;
        const V v = SW == 1 ? Ops::load(p) : Ops::load_even(p);
        if (Max) {
          sum[u] = Ops::add(sum[u], v);
          acc[u] = t == 0 && kw == 0 ? v : Ops::max(v, acc[u]);
        } else {
          acc[u] = Ops::add(acc[u], v);
        }
      }
    }
  }
  _Pragma("GCC unroll 8") for (int u = 0; u < U; ++u) {
    if (Max && Ops::any_nan(sum[u])) acc[u] = lanes<Ops, Max, SW, KW, Load::Whole>(g, r, p0 + u * L * S, S, L, nullptr);
    if (!Max && div) acc[u] = Ops::div(acc[u], Ops::load(div + u * L));
    Ops::store(y + u * L, acc[u]);
  }
}

// 2-wide, stride-2 max windows (dW 1) on ISAs whose Ops set kPairMax and give
// pair_max(p, probe): lane j of its result holds p[2j + 1] > p[2j] ? p[2j + 1] : p[2j] (the row's
// result over its two taps), in the ISA's lane order, which pair_order(v) puts right; probe
// accumulates a sum of p[0, 2L), NaN when one of them is. Rows are then combined in the same
// lane order (max; a vector whose inputs hold a NaN runs again through lanes()' masked loads,
// which read nothing past the 2L floats). The element loop's rule (the first tap, then pick)
// yields the window's first NaN if it holds one, else its first tap attaining the maximum
// (signed zeros included), so it equals the rule applied, in kh order, to each tap row's own
// result over kw: each output keeps its bits.
template <class Ops, class = void>
struct HasPairMax : std::false_type {};
template <class Ops>
struct HasPairMax<Ops, std::void_t<decltype(Ops::kPairMax)>> : std::bool_constant<Ops::kPairMax> {};

// The whole vectors of outputs [0, n); returns how many outputs it wrote.
template <class Ops>
__attribute__((always_inline)) inline int64_t max_pairs_span(const ConvGeom& g, TapGrid r, const float* src, int64_t n,
                                                             float* y) {
  using V = typename Ops::V;
  constexpr int64_t L = int64_t(Ops::L);
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    const float* p = src + 2 * i;
    V probe = Ops::zero();
    V acc = Ops::pair_max(p, probe);
    for (int64_t t = 1; t < r.rows; ++t) acc = Ops::max(Ops::pair_max(p + t * r.step, probe), acc);
    if (Ops::any_nan(probe)) Ops::store(y + i, lanes<Ops, true, 2, 2, Load::Masked>(g, r, p, 2, L, nullptr));
    else Ops::store(y + i, Ops::pair_order(acc));
  }
  return i;
}

// A run of output rows the same span serves: `count` rows, each starting src_pitch input floats
// and y_pitch output floats after the one before (rows of one plane whose windows all lie inside
// it, or consecutive output rows of one band of padded lines). The dispatch on stride and width
// then happens once per run, not once per row: rows of a few vectors (a 64-wide plane at stride 2
// is two AVX-512 vectors) spent more time choosing their loop than in it.
struct RowRun {
  int64_t count = 1, src_pitch = 0, y_pitch = 0;
};

// Outputs y[0, n) of each row of the run: output i's tap (t, kw) input is
// src[t * r.step + kw * dW + i * sW]. The first `wide` outputs may read 2L floats from their first
// tap on (stride 2's whole loads). `div` (average only, nullable): output i's count at div[i], the
// same for every row of the run.
template <class Ops, bool Max, int SW, int KW>
__attribute__((always_inline)) inline void span(const ConvGeom& g, TapGrid r, const float* src, int64_t n, int64_t wide,
                                                const float* div, float* y, RowRun run) {
  constexpr int64_t L = int64_t(Ops::L);
  const int64_t s = SW > 0 ? SW : g.sW;
  const int64_t whole = SW == 1 ? n / L * L : SW == 2 ? std::min(n, wide) / L * L : 0;
  constexpr int U = L > 1 ? 4 : 1;
  const int64_t rows = L > 1 ? run.count : 1;  // the one-lane table runs row by row (less code)
  for (int64_t row = 0; row < rows; ++row, src += run.src_pitch, y += run.y_pitch) {
    int64_t i = 0;
    if constexpr (Max && SW == 2 && KW == 2 && HasPairMax<Ops>::value)
      if (g.dW == 1) i = max_pairs_span<Ops>(g, r, src, n, y);
    if (SW == 1 || SW == 2) {
      for (; i + U * L <= whole; i += U * L) whole_block<Ops, Max, SW, KW, U>(g, r, src + i * s, div ? div + i : nullptr, y + i);
      for (; i < whole; i += L) whole_block<Ops, Max, SW, KW, 1>(g, r, src + i * s, div ? div + i : nullptr, y + i);
    }
    for (; i < n; i += L) {
      const int64_t cnt = std::min(L, n - i);
      const float* d = div ? div + i : nullptr;
      const auto acc = SW > 0 ? lanes<Ops, Max, SW, KW, Load::Masked>(g, r, src + i * s, s, cnt, d)
                              : lanes<Ops, Max, SW, KW, Load::Gather>(g, r, src + i * s, s, cnt, d);
      if (cnt == L) Ops::store(y + i, acc);
      else Ops::store_n(y + i, acc, size_t(cnt));
    }
  }
}

template <class Ops, bool Max, int SW>
__attribute__((always_inline)) inline void span_kw(const ConvGeom& g, TapGrid r, const float* src, int64_t n, int64_t wide,
                                                   const float* div, float* y, RowRun run) {
  if (g.kW == 2) span<Ops, Max, SW, 2>(g, r, src, n, wide, div, y, run);
  else if (g.kW == 3) span<Ops, Max, SW, 3>(g, r, src, n, wide, div, y, run);
  else span<Ops, Max, SW, 0>(g, r, src, n, wide, div, y, run);
}

template <class Ops, bool Max>
__attribute__((always_inline)) inline void span_forms(const ConvGeom& g, TapGrid r, const float* src, int64_t n, int64_t wide,
                                                      const float* div, float* y, RowRun run) {
  if (g.sW == 1) span_kw<Ops, Max, 1>(g, r, src, n, n, div, y, run);
  else if (g.sW == 2) span_kw<Ops, Max, 2>(g, r, src, n, wide, div, y, run);
  else span<Ops, Max, 0, 0>(g, r, src, n, 0, div, y, run);
}

// Vector ISAs call the forms out of line (one copy per Ops and kind, shared by the two callers
// below): every form inlined at each call site cost the AArch64 program kilobytes, and a call per
// run of rows is nothing. Ops lives in each ISA file's unnamed namespace, so no copy is shared
// across flags. The one-lane table has one caller (no padded lines) and inlines them there.
template <class Ops, bool Max>
__attribute__((noinline)) void span_out(const ConvGeom& g, TapGrid r, const float* src, int64_t n, int64_t wide,
                                        const float* div, float* y, RowRun run) {
  span_forms<Ops, Max>(g, r, src, n, wide, div, y, run);
}
template <class Ops, bool Max>
__attribute__((always_inline)) inline void span_any(const ConvGeom& g, TapGrid r, const float* src, int64_t n, int64_t wide,
                                                    const float* div, float* y, RowRun run) {
  if constexpr (Ops::L > 1) span_out<Ops, Max>(g, r, src, n, wide, div, y, run);
  else span_forms<Ops, Max>(g, r, src, n, wide, div, y, run);
}

// Planes with border columns (a tap left or right of the input) run on padded lines when a
// window's rows fit this many floats of stack: a band of input rows copied between pads of -inf
// (max: neither max nor pick takes it over a value, and an all-pad window is the element loop's
// -inf) or +0 (average: the sum starts at +0 and is never -0, so adding +0 changes no bit), and
// rows above or below the input as whole lines of pads. Then every output of a row with an
// in-bounds tap row runs in lanes over its kH tap lines. A band holds as many lines as fit and
// serves every output row whose taps it holds, so each input row is copied about once, not once
// per output row reading it: when the lines of one output row were copied just before its loads,
// the unaligned tap loads straddled those fresh stores and stalled on store forwarding (a 3x3
// stride-1 max pool ran at a fifth of a memcpy). The one-lane (scalar) form keeps the element
// loop for the borders instead: no stack buffer where stacks are small.
constexpr int64_t kPoolLineFloats = 6144;

// l[0, line) = pad_l pads, in[0, W), pads to the end: whole vectors inline, tails element by
// element (a library call per piece costs more than the copy on rows this short, and masked
// stores are slow on some x86 cores).
template <class Ops>
__attribute__((always_inline)) inline void fill_line(float* l, const float* in, int64_t W, int64_t pad_l, int64_t line,
                                                     float pad) {
  constexpr int64_t L = int64_t(Ops::L);
  const auto pv = Ops::bcast(&pad);
  auto fill = [&](int64_t b, int64_t e) {
    int64_t j = b;
    for (; j + L <= e; j += L) Ops::store(l + j, pv);
    for (; j < e; ++j) l[j] = pad;
  };
  fill(0, pad_l);
  int64_t j = 0;
  for (; j + L <= W; j += L) Ops::store(l + pad_l + j, Ops::load(in + j));
  for (; j < W; ++j) l[pad_l + j] = in[j];
  fill(pad_l + W, line);
}

// dst[0, n) = the maxima over `taps` vectors `stride` floats apart: column i's over
// src[i + t * stride] in t order, by pick where the inputs may hold a NaN; a last partial vector
// is stored masked. Both steps of the row maxima below.
template <class Ops, bool Pick>
__attribute__((always_inline)) inline void max_over_taps(const float* src, int64_t taps, int64_t stride, int64_t n,
                                                        float* dst) {
  using V = typename Ops::V;
  constexpr int64_t L = int64_t(Ops::L);
  for (int64_t i = 0; i < n; i += L) {
    V acc = Ops::load(src + i);
    for (int64_t t = 1; t < taps; ++t) {
      const V v = Ops::load(src + t * stride + i);
      acc = Pick ? Ops::pick(v, acc) : Ops::max(v, acc);
    }
    if (i + L <= n) Ops::store(dst + i, acc);
    else Ops::store_n(dst + i, acc, size_t(n - i));
  }
}

// Max pools on padded lines with column stride 1 go by row maxima: a band line holds, for every
// output column, the maximum over kw of one padded input row, and an output is the maximum over
// kh of its kH such lines. At row stride 1 that is kW + kH loads and kW + kH - 2 maxima per
// output where the per-output form takes kH kW and kH kW - 1 (6 and 4 against 9 and 8 on a 3x3
// window), and no NaN probe per output. At column stride 2 the per-output form's even loads were
// faster (3x3 over [32, 64, 64] on AVX2: 40 against 48 us), so it keeps them. The element loop's
// rule yields the window's first NaN, else its first tap attaining the maximum (signed zeros
// included); each row's result is that of its own taps, and the rule over the rows' results in
// kh order is again the window's, so the bits are the same. An input row whose probe sum is NaN
// takes its maxima by pick and makes its band combine rows by pick too; otherwise both steps are
// plain max. The band's padded lines (at `pl`, `line` floats apart) are all copied before any is
// read, for the reason the band exists (kPoolLineFloats); its row maxima go to `h`, lines of hl
// floats (whole vectors, inside the padded lines' slack). Returns whether the band holds a NaN.
template <class Ops>
__attribute__((always_inline)) inline bool row_max_band(const ConvGeom& g, const float* plane, int64_t band0, int64_t band1,
                                                       int64_t line, int64_t hl, float* pl, float* h) {
  using V = typename Ops::V;
  constexpr int64_t L = int64_t(Ops::L);
  const float pad = -std::numeric_limits<float>::infinity();
  for (int64_t ip = band0; ip < band1; ++ip) {
    const int64_t ih = ip - g.pad_t;
    const bool inside = ih >= 0 && ih < g.H;
    fill_line<Ops>(pl + (ip - band0) * line, plane + (inside ? ih * g.W : 0), inside ? g.W : 0, g.pad_l, line, pad);
  }
  bool nan = false;
  for (int64_t ip = band0; ip < band1; ++ip) {
    const int64_t ih = ip - g.pad_t;
    bool row_nan = false;
    if (ih >= 0 && ih < g.H) {
      const float* in = plane + ih * g.W;
      V probe = Ops::zero();  // NaN when the row holds one (or inf - inf: then only slower)
      int64_t j = 0;
      for (; j + L <= g.W; j += L) probe = Ops::add(probe, Ops::load(in + j));
      if (j < g.W) probe = Ops::add(probe, Ops::load_n(in + j, size_t(g.W - j)));
      row_nan = Ops::any_nan(probe);
    }
    nan |= row_nan;
    const float* src = pl + (ip - band0) * line;
    if (row_nan) max_over_taps<Ops, true>(src, g.kW, g.dW, hl, h + (ip - band0) * hl);
    else max_over_taps<Ops, false>(src, g.kW, g.dW, hl, h + (ip - band0) * hl);
  }
  return nan;
}

// The planes of x [N*C, H, W] into y [N*C, OH, OW] (g.N * g.C planes).
template <class Ops, bool Max>
__attribute__((always_inline)) inline void planes(const ConvGeom& g, const PoolWindow& w, const float* x, float* y) {
  constexpr int64_t L = int64_t(Ops::L);
  const int64_t HW = g.H * g.W, P = g.OH * g.OW;
  // Interior columns [c0, c1): ow * sW - pad_l >= 0 and ow * sW - pad_l + (kW - 1) * dW < W.
  const int64_t c0 = std::min(g.OW, (g.pad_l + g.sW - 1) / g.sW);
  const int64_t last = g.W - 1 - (g.kW - 1) * g.dW + g.pad_l;  // the largest ow * sW allowed
  const int64_t c1 = last < 0 ? c0 : std::max(c0, std::min(g.OW, last / g.sW + 1));
  // Stride 2: the interior outputs whose 2L-float reads (one past their last tap) stay in the row.
  const int64_t wide = last - 1 < 0 ? 0 : std::max(int64_t(0), std::min(c1, (last - 1) / 2 + 1) - c0);
  // A padded line holds columns -pad_l .. the last one any output reads, plus 2L floats of slack.
  const int64_t line = std::max(g.pad_l + g.W, (g.OW - 1) * g.sW + (g.kW - 1) * g.dW + 1) + 2 * L;
  // A window spans `reach` padded rows; a band holds `band` (at least one window's). Padded row
  // ip is input row ip - pad_t; output row oh's taps are padded rows oh * sH + kh * dH.
  const int64_t reach = (g.kH - 1) * g.dH + 1, band = kPoolLineFloats / line;
  const int64_t padded_end = (g.OH - 1) * g.sH + reach;  // one past the last padded row read
  const bool use_lines = L > 1 && (c0 > 0 || c1 < g.OW) && reach <= band;
  // Row maxima (row_max_band): padded lines, then as many lines of hl floats.
  const int64_t hl = (g.OW + L - 1) / L * L, row_band = kPoolLineFloats / (line + hl);
  const bool use_row_max = Max && use_lines && g.sW == 1 && reach <= row_band;
  alignas(64) float lines[L > 1 ? kPoolLineFloats : 1];
  // The average's counts per output column of the current row: ch(oh) * cw(ow) (avg_pool_count),
  // exact in float (far below 2^24) and so the bits of float(ch * cw).
  alignas(64) float counts[L > 1 ? kPoolLineFloats / 2 : 1], cols[L > 1 ? kPoolLineFloats / 2 : 1];
  const bool use_counts = !Max && L > 1 && g.OW <= kPoolLineFloats / 2;
  bool empty_col = false;  // a column window without a counted element (all pad)
  if (use_counts)
    for (int64_t ow = 0; ow < g.OW; ++ow) {
      cols[ow] = float(avg_pool_axis_count(g.W, g.kW, g.sW, g.dW, g.pad_l, w.pad_r, w.count_include_pad, ow));
      empty_col |= cols[ow] == 0.0f;
    }
  // Rows [full0, full1) have every tap row inside the plane; when no column has a border either,
  // their outputs are one run of rows.
  const int64_t full0 = std::min(g.OH, (g.pad_t + g.sH - 1) / g.sH);
  const int64_t last_h = g.H - 1 - (g.kH - 1) * g.dH + g.pad_t;  // the largest oh * sH allowed
  const int64_t full1 = last_h < 0 ? full0 : std::max(full0, std::min(g.OH, last_h / g.sH + 1));
  const bool whole_rows = L > 1 && c0 == 0 && c1 == g.OW && full1 > full0;
  const float pad = Max ? -std::numeric_limits<float>::infinity() : 0.0f;
  for (int64_t nc = 0; nc < g.N * g.C; ++nc) {
    const float* plane = x + nc * HW;
    float* out = y + nc * P;
    int64_t band0 = 0, band1 = 0;  // the padded rows [band0, band1) in `lines`
    bool band_nan = false;
    for (int64_t oh = 0; oh < g.OH; ++oh) {
      float* row = out + oh * g.OW;
      const TapRows r = tap_rows(g, oh);
      const float* first_row = plane + (oh * g.sH - g.pad_t + r.lo * g.dH) * g.W;
      const TapGrid grid{r.hi - r.lo, g.dH * g.W};
      if (r.lo < r.hi && use_row_max) {
        const int64_t top = oh * g.sH;
        if (top < band0 || top + reach > band1) {
          band0 = top;
          band1 = std::min(padded_end, top + row_band);
          band_nan = row_max_band<Ops>(g, plane, band0, band1, line, hl, lines, lines + row_band * line);
        }
        const float* h = lines + row_band * line + (top - band0) * hl;
        if (band_nan) max_over_taps<Ops, true>(h, g.kH, g.dH * hl, g.OW, row);
        else max_over_taps<Ops, false>(h, g.kH, g.dH * hl, g.OW, row);
        continue;
      }
      if (r.lo < r.hi && use_lines) {
        const int64_t top = oh * g.sH;  // the padded row of tap row 0
        if (top < band0 || top + reach > band1) {
          band0 = top;
          band1 = std::min(padded_end, top + band);
          for (int64_t ip = band0; ip < band1; ++ip) {
            const int64_t ih = ip - g.pad_t;
            const bool inside = ih >= 0 && ih < g.H;
            fill_line<Ops>(lines + (ip - band0) * line, inside ? plane + ih * g.W : plane, inside ? g.W : 0, g.pad_l, line, pad);
          }
        }
        const bool divide = use_counts && !empty_col;
        auto row_count = [&](int64_t o) {
          return avg_pool_axis_count(g.H, g.kH, g.sH, g.dH, g.pad_t, w.pad_b, w.count_include_pad, o);
        };
        const int64_t ch = divide ? row_count(oh) : 0;
        // The run: the following rows whose taps the band holds (an average's with the same row count).
        auto joins = [&](int64_t o) {
          const TapRows t = tap_rows(g, o);
          return o * g.sH + reach <= band1 && t.lo < t.hi && (Max || row_count(o) == ch);
        };
        int64_t end = oh + 1;
        if (Max || divide)
          while (end < g.OH && joins(end)) ++end;
        if (divide)
          for (int64_t ow = 0; ow < g.OW; ++ow) counts[ow] = float(ch) * cols[ow];
        span_any<Ops, Max>(g, TapGrid{g.kH, g.dH * line}, lines + (top - band0) * line, g.OW, g.OW, divide ? counts : nullptr,
                           row, RowRun{end - oh, g.sH * line, g.OW});
        if (!Max && !divide)
          for (int64_t ow = 0; ow < g.OW; ++ow) {
            const int64_t cnt = avg_pool_count(g, w.pad_b, w.pad_r, w.count_include_pad, oh, ow);
            row[ow] = cnt > 0 ? row[ow] / float(cnt) : 0.0f;
          }
        oh = end - 1;
        continue;
      }
      const bool inner = r.lo < r.hi && c1 > c0;
      for (int64_t ow = 0; ow < g.OW; ++ow) {
        if (inner && ow == c0) ow = c1;
        if (ow >= g.OW) break;
        row[ow] = Max ? max_at(g, plane, oh, ow, nullptr) : avg_at(g, w, plane, oh, ow);
      }
      if (!inner) continue;
      // Rows [full0, full1) without border columns: one run (the same count for every output).
      const RowRun run = whole_rows && oh == full0 ? RowRun{full1 - full0, g.sH * g.W, g.OW} : RowRun{};
      const int64_t n = c1 - c0;
      float* dst = row + c0;
      const float cnt = Max ? 1.0f : float(avg_pool_count(g, w.pad_b, w.pad_r, w.count_include_pad, oh, c0));
      if (use_counts) std::fill(counts, counts + n, cnt);  // every interior output has the same count
      span_any<Ops, Max>(g, grid, first_row + (c0 * g.sW - g.pad_l), n, wide, use_counts ? counts : nullptr, dst, run);
      if (!Max && !use_counts)
        for (int64_t k = 0; k < run.count; ++k)
          for (int64_t i = 0; i < n; ++i) dst[k * g.OW + i] = dst[k * g.OW + i] / cnt;
      oh += run.count - 1;
    }
  }
}

template <class Ops>
__attribute__((always_inline)) inline void window(const ConvGeom& g, const PoolWindow& w, const float* x, float* y) {
  if (w.max) planes<Ops, true>(g, w, x, y);
  else planes<Ops, false>(g, w, x, y);
}

}  // namespace om::kernels::pool
