// AVX-512 VNNI raw integer product (q8_gemm.h): vpdpbusd multiplies the four u8 of A' in each
// 32-bit lane by the four s8 of B' and adds them to the lane, wrapping like the i32 accumulator.
// A tile of 6 rows by 4 panels (64 columns) holds 24 accumulators; per group of 4 k it loads
// four 64-byte panel groups and broadcasts six rows' 4 bytes. Built with -mavx512vnni; the table
// uses it only where the CPU reports AVX512_VNNI (else the AVX2 product, the same bits). Built with
// -mavx512bw too, which every VNNI CPU has (the table checks both).
#include <immintrin.h>

#include "onemodel/kernels/q8_blocks.h"
#include "onemodel/kernels/q8_depthwise.h"

namespace om::kernels::avx512 {
namespace {

struct VnniTile {
  static constexpr int kRows = 6, kPanels = 4;
  template <int R, int P>
  static void run(const uint8_t* a, size_t lda, const int8_t* const* b, const Q8Walk& w, int32_t* c, size_t ldc) {
    __m512i acc[R][P];
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
      for (int p = 0; p < P; ++p) acc[r][p] = _mm512_setzero_si512();
    for (size_t t = 0; t < w.runs; ++t, a += w.run * 4) {
      const int8_t* bp[P];
#pragma GCC unroll 4
      for (int p = 0; p < P; ++p) bp[p] = b[p] + w.offsets[t];
      for (size_t q = 0; q < w.run; ++q) {
        __m512i bv[P];
#pragma GCC unroll 4
        for (int p = 0; p < P; ++p) bv[p] = _mm512_loadu_si512(bp[p] + ptrdiff_t(q) * w.stride);
#pragma GCC unroll 6
        for (int r = 0; r < R; ++r) {
          const __m512i av = _mm512_set1_epi32(int(q8::load_group(a + r * lda + q * 4)));
#pragma GCC unroll 4
          for (int p = 0; p < P; ++p) acc[r][p] = _mm512_dpbusd_epi32(acc[r][p], av, bv[p]);
        }
      }
    }
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
      for (int p = 0; p < P; ++p) _mm512_storeu_si512(c + r * ldc + p * 16, acc[r][p]);
  }
};

}  // namespace

void q8_dot__avx512vnni(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t ps, size_t groups,
                        size_t panels, int32_t* c, size_t ldc) {
  q8::dot<VnniTile>(a, lda, rows, b, ps, groups, panels, c, ldc);
}

void q8_dot_taps__avx512vnni(const uint8_t* a, size_t lda, size_t rows, const int8_t* const* panels, size_t npanels,
                             const Q8Walk& w, int32_t* c, size_t ldc, int8_t*) {
  q8::dot_taps<VnniTile>(a, lda, rows, panels, npanels, w, c, ldc);
}

// The integer convolutions' strip (q8_gemm.h's q8_interleave4), 64 columns per step: bytes
// paired, then pairs paired, within 128-bit lanes (lane L of wk holds columns 16L + 4k .. + 3),
// then a 4 x 4 transpose of the lanes puts 16 columns in order per vector; vpdpbusd against ones
// sums each word's four bytes as int8. The tail is masked (its loads read no byte past n).
void q8_interleave4__avx512vnni(const uint8_t* const rows[4], uint8_t flip, size_t n, uint32_t* out,
                                size_t panel_words, int32_t* sums) {
  const __m512i f = _mm512_set1_epi8(char(flip)), ones = _mm512_set1_epi8(1);
  // 128-bit lanes (pairs of 64-bit indices) of two sources: 0-3 the first's, 4-7 the second's.
  const __m512i lanes01 = _mm512_setr_epi64(0, 1, 2, 3, 8, 9, 10, 11), lanes23 = _mm512_setr_epi64(4, 5, 6, 7, 12, 13, 14, 15);
  const __m512i evens = _mm512_setr_epi64(0, 1, 4, 5, 8, 9, 12, 13), odds = _mm512_setr_epi64(2, 3, 6, 7, 10, 11, 14, 15);
  for (size_t c = 0; c < n; c += 64) {
    const size_t m = n - c < 64 ? n - c : 64;
    const __mmask64 k = m == 64 ? ~__mmask64(0) : (__mmask64(1) << m) - 1;
    __m512i r[4];
#pragma GCC unroll 4
    for (int t = 0; t < 4; ++t) r[t] = _mm512_xor_si512(_mm512_maskz_loadu_epi8(k, rows[t] + c), f);
    const __m512i p01lo = _mm512_unpacklo_epi8(r[0], r[1]), p01hi = _mm512_unpackhi_epi8(r[0], r[1]);
    const __m512i p23lo = _mm512_unpacklo_epi8(r[2], r[3]), p23hi = _mm512_unpackhi_epi8(r[2], r[3]);
    const __m512i w0 = _mm512_unpacklo_epi16(p01lo, p23lo), w1 = _mm512_unpackhi_epi16(p01lo, p23lo);
    const __m512i w2 = _mm512_unpacklo_epi16(p01hi, p23hi), w3 = _mm512_unpackhi_epi16(p01hi, p23hi);
    const __m512i t0 = _mm512_permutex2var_epi64(w0, lanes01, w1), t1 = _mm512_permutex2var_epi64(w2, lanes01, w3);
    const __m512i t2 = _mm512_permutex2var_epi64(w0, lanes23, w1), t3 = _mm512_permutex2var_epi64(w2, lanes23, w3);
    const __m512i v[4] = {_mm512_permutex2var_epi64(t0, evens, t1), _mm512_permutex2var_epi64(t0, odds, t1),
                          _mm512_permutex2var_epi64(t2, evens, t3), _mm512_permutex2var_epi64(t2, odds, t3)};
    for (size_t l = 0; l < 4 && 16 * l < m; ++l) {
      const size_t c0 = c + 16 * l, cnt = m - 16 * l < 16 ? m - 16 * l : 16;
      const __mmask16 km = __mmask16((1u << cnt) - 1);
      _mm512_mask_storeu_epi32(out + c0 / 16 * panel_words, km, v[l]);  // c0 is a multiple of 16
      const __m512i s = _mm512_dpbusd_epi32(_mm512_maskz_loadu_epi32(km, sums + c0), ones, v[l]);
      _mm512_mask_storeu_epi32(sums + c0, km, s);
    }
  }
}

// The depthwise word products (q8_depthwise.h) on 16 lanes with vpdpwssd: a lane's two 16-bit
// products and the add in one instruction, wrapping like the i32 accumulator; the tails masked.
namespace {
struct VnniPairOps {
  using V = __m512i;
  static constexpr size_t L = 16;
  static V zero() { return _mm512_setzero_si512(); }
  static V bcast(uint32_t w) { return _mm512_set1_epi32(int(w)); }
  static V load(const uint32_t* p) { return _mm512_loadu_si512(p); }
  static __mmask16 mask(size_t count) { return __mmask16((1u << count) - 1); }
  static V load_n(const uint32_t* p, size_t count) { return _mm512_maskz_loadu_epi32(mask(count), p); }
  static void store(int32_t* p, V v) { _mm512_storeu_si512(p, v); }
  static void store_n(int32_t* p, V v, size_t count) { _mm512_mask_storeu_epi32(p, mask(count), v); }
  static V dot(V acc, V x, V w) { return _mm512_dpwssd_epi32(acc, x, w); }
};
}  // namespace

// Rows of at most 8 words (a depthwise layer's 8 x 8 planes) two to a vector: row i in lanes 0-7,
// row i + 1 in lanes 8-15, so that a product fills all 16 lanes where one row per vector left
// half of them idle (the 8 x 8 layer of bench_int8's MobileNet-style stack: 11.7 -> 10.8 us). The
// second row is a merge-masked load whose lanes 8-15 read its first words (nothing is read past
// a row's last word), and the two rows are contiguous in acc: one store, or a compress store
// where the rows are shorter than 8. R pairs of rows share each tap's weight broadcast.
namespace {
template <size_t R>
inline void pair_dot_row_pairs(const uint32_t* const* src, const uint32_t* w, size_t taps, size_t n, size_t i,
                               size_t src_stride, int32_t* acc) {
  const __mmask16 lo = __mmask16((1u << n) - 1), both = __mmask16(lo | lo << 8);
  __m512i s[R];
#pragma GCC unroll 4
  for (size_t r = 0; r < R; ++r) s[r] = _mm512_setzero_si512();
  for (size_t t = 0; t < taps; ++t) {
    const __m512i wv = _mm512_set1_epi32(int(w[t]));
#pragma GCC unroll 4
    for (size_t r = 0; r < R; ++r) {
      const uint32_t* p = src[t] + (i + 2 * r) * src_stride;
      // Lanes 8-15 of a load at the next row's start minus 8 words are that row's words 0-7.
      const auto next = reinterpret_cast<const uint32_t*>(reinterpret_cast<uintptr_t>(p + src_stride) - 8 * sizeof(uint32_t));
      const __m512i x = _mm512_mask_loadu_epi32(_mm512_maskz_loadu_epi32(lo, p), __mmask16(lo << 8), next);
      s[r] = _mm512_dpwssd_epi32(s[r], x, wv);
    }
  }
#pragma GCC unroll 4
  for (size_t r = 0; r < R; ++r) {
    int32_t* out = acc + (i + 2 * r) * n;
    if (n == 8) _mm512_storeu_si512(out, s[r]);
    else _mm512_mask_compressstoreu_epi32(out, both, s[r]);
  }
}
}  // namespace

void q8_pair_dot__avx512vnni(const uint32_t* const* src, const uint32_t* w, size_t taps, size_t n, size_t rows,
                             size_t src_stride, int32_t* acc) {
  if (n > 8 || rows < 2) return q8::pair_dot<VnniPairOps>(src, w, taps, n, rows, src_stride, acc);
  size_t i = 0;
  for (; i + 8 <= rows; i += 8) pair_dot_row_pairs<4>(src, w, taps, n, i, src_stride, acc);
  for (; i + 2 <= rows; i += 2) pair_dot_row_pairs<1>(src, w, taps, n, i, src_stride, acc);
  if (i < rows) q8::pair_dot_rows<VnniPairOps, 1>(src, w, taps, n, i, src_stride, acc);  // the last of an odd count
}

}  // namespace om::kernels::avx512

namespace om::kernels::avx2 {
void q8_pair_rows__avx2(const uint8_t* a, const uint8_t* b, size_t rows, size_t in_stride, size_t step, int32_t zero,
                        bool is_signed, size_t n, uint32_t* out, size_t out_stride);
}

namespace om::kernels::avx512 {
// The depthwise word layout (q8_depthwise.h) for strides 1 and 2, 32 words at a time: the bytes
// as 16-bit lanes (widened, or the even bytes of 64 masked or shifted into place), the zero
// point subtracted, the two rows interleaved within 128-bit lanes and the lanes put in order by
// one two-source permute per 16 words. A step-2 load ends one byte after its last, so it runs
// only where another word follows. The columns after the last whole block take AVX2's layout.
namespace {
template <bool Signed, size_t Step>
inline __m512i lanes32(const uint8_t* p, __m512i zero) {
  __m512i v;
  if (Step == 1) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    v = Signed ? _mm512_cvtepi8_epi16(x) : _mm512_cvtepu8_epi16(x);
  } else {
    const __m512i x = _mm512_loadu_si512(p);
    v = Signed ? _mm512_srai_epi16(_mm512_slli_epi16(x, 8), 8) : _mm512_and_si512(x, _mm512_set1_epi16(0xFF));
  }
  return _mm512_sub_epi16(v, zero);
}

template <bool Signed, size_t Step>
void pair_rows32(const uint8_t* a, const uint8_t* b, size_t rows, size_t in_stride, int32_t zero, size_t n,
                 uint32_t* out, size_t out_stride) {
  const size_t blocks = n >= 32 + (Step - 1) ? (n - (Step - 1)) / 32 : 0, done = blocks * 32;
  const __m512i z = _mm512_set1_epi16(int16_t(zero));
  const __m512i first = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11), second = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
  for (size_t i = 0; i < rows && blocks; ++i) {
    const uint8_t* x = a + i * in_stride;
    const uint8_t* y = b + i * in_stride;
    uint32_t* o = out + i * out_stride;
    for (size_t c = 0; c < done; c += 32) {
      const __m512i lo = lanes32<Signed, Step>(x + c * Step, z), hi = lanes32<Signed, Step>(y + c * Step, z);
      const __m512i w0 = _mm512_unpacklo_epi16(lo, hi), w1 = _mm512_unpackhi_epi16(lo, hi);
      _mm512_storeu_si512(o + c, _mm512_permutex2var_epi64(w0, first, w1));
      _mm512_storeu_si512(o + c + 16, _mm512_permutex2var_epi64(w0, second, w1));
    }
  }
  if (done < n)
    avx2::q8_pair_rows__avx2(a + done * Step, b + done * Step, rows, in_stride, Step, zero, Signed, n - done, out + done,
                             out_stride);
}
}  // namespace

void q8_pair_rows__avx512bw(const uint8_t* a, const uint8_t* b, size_t rows, size_t in_stride, size_t step, int32_t zero,
                            bool is_signed, size_t n, uint32_t* out, size_t out_stride) {
  if (step == 2 && b == a + 1)  // neighbours: AVX2's widening loads (rows of a depthwise layer's width)
    return avx2::q8_pair_rows__avx2(a, b, rows, in_stride, step, zero, is_signed, n, out, out_stride);
  if (step == 1 && is_signed) return pair_rows32<true, 1>(a, b, rows, in_stride, zero, n, out, out_stride);
  if (step == 1) return pair_rows32<false, 1>(a, b, rows, in_stride, zero, n, out, out_stride);
  if (step == 2 && is_signed) return pair_rows32<true, 2>(a, b, rows, in_stride, zero, n, out, out_stride);
  if (step == 2) return pair_rows32<false, 2>(a, b, rows, in_stride, zero, n, out, out_stride);
  avx2::q8_pair_rows__avx2(a, b, rows, in_stride, step, zero, is_signed, n, out, out_stride);
}

}  // namespace om::kernels::avx512
