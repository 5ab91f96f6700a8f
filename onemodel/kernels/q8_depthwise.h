// The integer depthwise convolution's two steps (ConvInteger and QLinearConv with one input
// channel per group, graph/ops/quant.cpp). A depthwise output is a short sum over one plane's
// taps, with no channel dimension for a GEMM to reduce over, so it runs as its own loop:
//
// 1. q8_pair_rows lays input rows out as 32-bit words holding two 16-bit values: the input minus
//    its zero point at one position of row r (low half) and of row r + dilation (high half). The
//    columns are split by phase (column mod stride), so the positions one output row reads for a
//    tap column are consecutive words whatever the stride.
// 2. q8_pair_dot multiplies such words by words of two weights (taps (kh, kw) and (kh + 1, kw),
//    their zero point subtracted) and adds both products into a 32-bit lane: vpmaddwd on x86
//    (vpdpwssd where the CPU has VNNI), a widening multiply and a pairwise add on NEON. |x - zx| and |w - zw| are at most 255, so a
//    pair's sum (at most 2 x 255 x 255) fits 32 bits and nothing saturates; the sums over the taps
//    wrap modulo 2^32 like the i32 accumulator. Integers, so every ISA gives the scalar
//    reference's bits by construction (tests/kernels/test_q8_gemm.cpp).
#pragma once
#include <cstddef>
#include <cstdint>

namespace om::kernels {

// out[i * out_stride + c] = uint16(a_i[c * step] - zero) | (b_i[c * step] - zero) << 16 for
// rows i < rows and c < n, with a_i = a + i * in_stride (b_i likewise), the bytes read as s8 when
// is_signed, else u8.
void q8_pair_rows(const uint8_t* a, const uint8_t* b, size_t rows, size_t in_stride, size_t step, int32_t zero,
                  bool is_signed, size_t n, uint32_t* out, size_t out_stride);

// acc[i * n + j] = sum over t < taps of lo(s) lo(w[t]) + hi(s) hi(w[t]) with s = src[t][i *
// src_stride + j], for rows i < rows and j < n, the halves as int16, the sum modulo 2^32.
void q8_pair_dot(const uint32_t* const* src, const uint32_t* w, size_t taps, size_t n, size_t rows, size_t src_stride,
                 int32_t* acc);

// A word of two int16 values.
inline uint32_t q8_pair(int32_t lo, int32_t hi) { return uint32_t(uint16_t(lo)) | uint32_t(uint16_t(hi)) << 16; }

namespace q8 {

// q8_pair_rows's loop, compiled by each ISA file with its own flags (always_inline: no file calls
// another ISA's copy); the stride-1 loop vectorises.
template <typename T>
__attribute__((always_inline)) inline void pair_row_as(const uint8_t* a, const uint8_t* b, size_t step, int32_t zero,
                                                       size_t n, uint32_t* out) {
  const T* x = reinterpret_cast<const T*>(a);
  const T* y = reinterpret_cast<const T*>(b);
  if (step == 1) {
    for (size_t c = 0; c < n; ++c)
      out[c] = uint32_t(uint16_t(int32_t(x[c]) - zero)) | uint32_t(int32_t(y[c]) - zero) << 16;
    return;
  }
  for (size_t c = 0; c < n; ++c)
    out[c] = uint32_t(uint16_t(int32_t(x[c * step]) - zero)) | uint32_t(int32_t(y[c * step]) - zero) << 16;
}

__attribute__((always_inline)) inline void pair_rows(const uint8_t* a, const uint8_t* b, size_t rows, size_t in_stride,
                                                     size_t step, int32_t zero, bool is_signed, size_t n, uint32_t* out,
                                                     size_t out_stride) {
  for (size_t i = 0; i < rows; ++i) {
    const size_t at = i * in_stride;
    if (is_signed) pair_row_as<int8_t>(a + at, b + at, step, zero, n, out + i * out_stride);
    else pair_row_as<uint8_t>(a + at, b + at, step, zero, n, out + i * out_stride);
  }
}

// One word's two products, summed modulo 2^32: the reference and every ISA's tail.
__attribute__((always_inline)) inline uint32_t pair_product(uint32_t s, uint32_t w) {
  return uint32_t(int32_t(int16_t(s & 0xFFFF)) * int32_t(int16_t(w & 0xFFFF))) +
         uint32_t(int32_t(int16_t(s >> 16)) * int32_t(int16_t(w >> 16)));
}

// q8_pair_dot's loop over an ISA's vector Ops: V, L lanes, zero(), bcast(word), load(p),
// load_n(p, count) and store_n(p, v, count) (the first count lanes; nothing read or written past
// them), store(p, v), and dot(acc, x, w): acc plus each lane's two products (vpmaddwd and an add,
// or the VNNI vpdpwssd that does both). Four output rows at a time, each tap's weight word
// broadcast once for them: four independent sums hide the multiply-add's latency, which one
// row of a small plane (one vector) would wait on. The last fewer than L columns run masked.
template <class Ops, size_t R, bool Partial>
__attribute__((always_inline)) inline void pair_dot_block(const uint32_t* const* src, const uint32_t* w, size_t taps,
                                                          size_t off, size_t src_stride, size_t count, int32_t* acc,
                                                          size_t n) {
  using V = typename Ops::V;
  V s[R];
  _Pragma("GCC unroll 4") for (size_t r = 0; r < R; ++r) s[r] = Ops::zero();
  for (size_t t = 0; t < taps; ++t) {
    const V wv = Ops::bcast(w[t]);
    const uint32_t* p = src[t] + off;
    _Pragma("GCC unroll 4") for (size_t r = 0; r < R; ++r)
      s[r] = Ops::dot(s[r], Partial ? Ops::load_n(p + r * src_stride, count) : Ops::load(p + r * src_stride), wv);
  }
  _Pragma("GCC unroll 4") for (size_t r = 0; r < R; ++r) {
    if (Partial) Ops::store_n(acc + r * n, s[r], count);
    else Ops::store(acc + r * n, s[r]);
  }
}

template <class Ops, size_t R>
__attribute__((always_inline)) inline void pair_dot_rows(const uint32_t* const* src, const uint32_t* w, size_t taps,
                                                         size_t n, size_t i, size_t src_stride, int32_t* acc) {
  constexpr size_t L = Ops::L;
  size_t j = 0;
  for (; j + L <= n; j += L) pair_dot_block<Ops, R, false>(src, w, taps, i * src_stride + j, src_stride, L, acc + i * n + j, n);
  if (j < n) pair_dot_block<Ops, R, true>(src, w, taps, i * src_stride + j, src_stride, n - j, acc + i * n + j, n);
}

template <class Ops>
__attribute__((always_inline)) inline void pair_dot(const uint32_t* const* src, const uint32_t* w, size_t taps, size_t n,
                                                    size_t rows, size_t src_stride, int32_t* acc) {
  size_t i = 0;
  for (; i + 4 <= rows; i += 4) pair_dot_rows<Ops, 4>(src, w, taps, n, i, src_stride, acc);
  for (; i < rows; ++i) pair_dot_rows<Ops, 1>(src, w, taps, n, i, src_stride, acc);
}

}  // namespace q8
}  // namespace om::kernels
