// AVX2 raw integer product (q8_gemm.h), exact without VNNI: the u8 of A' and the s8 of B' are
// widened to 16 bits and vpmaddwd adds products in pairs into 32-bit lanes. That pair sum is at
// most 2 * 255 * 128 in magnitude, so it never saturates (vpmaddubsw's 16-bit sums would). A
// panel group (16 columns x 4 k) widens to four vectors whose lanes hold (column, k pair)
// partial sums; at the end one horizontal add per two vectors gives eight columns.
#include <immintrin.h>

#include <cmath>

#include "onemodel/kernels/q8_blocks.h"
#include "onemodel/kernels/avx2/q8_pair_ops_avx2.h"
#include "onemodel/kernels/q8_requantize.h"

namespace om::kernels::avx2 {
namespace {

struct WideTile {
  static constexpr int kRows = 2, kPanels = 1;  // 8 accumulators: 3 rows (12) spill
  template <int R, int P>
  static void run(const uint8_t* a, size_t lda, const int8_t* const* b, const Q8Walk& w, int32_t* c, size_t ldc) {
    static_assert(P == 1, "one panel per tile");
    __m256i acc[R][4];
#pragma GCC unroll 2
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < 4; ++v) acc[r][v] = _mm256_setzero_si256();
    for (size_t t = 0; t < w.runs; ++t, a += w.run * 4) {
      const int8_t* bt = b[0] + w.offsets[t];
      for (size_t q = 0; q < w.run; ++q) {
        const int8_t* bg = bt + ptrdiff_t(q) * w.stride;
        __m256i av[R];  // the row's 4 k values as 16-bit lanes, repeated for 4 columns
#pragma GCC unroll 2
        for (int r = 0; r < R; ++r)
          av[r] = _mm256_cvtepu8_epi16(_mm_set1_epi32(int(q8::load_group(a + r * lda + q * 4))));
#pragma GCC unroll 4
        for (int v = 0; v < 4; ++v) {
          const __m256i bv = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bg + v * 16)));
#pragma GCC unroll 2
          for (int r = 0; r < R; ++r) acc[r][v] = _mm256_add_epi32(acc[r][v], _mm256_madd_epi16(av[r], bv));
        }
      }
    }
    // acc[r][v] lanes: columns 4v, 4v+1 (k pairs 01, 23) | columns 4v+2, 4v+3. hadd within
    // 128-bit halves gives columns (0 1 4 5 | 2 3 6 7) of two vectors; the permute orders them.
#pragma GCC unroll 2
    for (int r = 0; r < R; ++r)
      for (int h = 0; h < 2; ++h) {
        const __m256i s = _mm256_hadd_epi32(acc[r][2 * h], acc[r][2 * h + 1]);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + r * ldc + h * 8), _mm256_permute4x64_epi64(s, 0xd8));
      }
  }
};

}  // namespace

void q8_dot__avx2(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t ps, size_t groups, size_t panels,
                  int32_t* c, size_t ldc) {
  q8::dot<WideTile>(a, lda, rows, b, ps, groups, panels, c, ldc);
}

void q8_dot_taps__avx2(const uint8_t* a, size_t lda, size_t rows, const int8_t* const* panels, size_t npanels,
                       const Q8Walk& w, int32_t* c, size_t ldc, int8_t*) {
  q8::dot_taps<WideTile>(a, lda, rows, panels, npanels, w, c, ldc);
}

// The quantized epilogue (q8_gemm.h's Q8Requant) on 8 lanes, written out as the AVX-512 one is
// (the portable loop compiled here took 12% of an int8 CNN's time): the same integer steps and
// IEEE operations as q8_saturate_round — vmaxps/vminps return their second operand when one is
// NaN, as the selects keep v; NaN then becomes the zero point; the sum with 1.5 x 2^23 and its
// difference round half to even. The results lie in [lo, hi], so the saturating packs keep them.
// A tail of fewer than 8 runs the portable loop. The operands are read into locals first: the
// stores through `out` could alias q as far as the compiler knows, so reading q's fields in the
// loop reloaded four of them every 8 outputs (a third of bench_int8's MobileNet-style stack on this
// table). The NaN select only where a multiplier can be NaN, as on AVX-512.
namespace {
template <bool kSigned, bool kMayNaN>
void requantize8(const Q8Requant& q) {
  const __m256i add = _mm256_set1_epi32(int32_t(q.row_add)), za = _mm256_set1_epi32(q.za), zp = _mm256_set1_epi32(q.zp);
  const int32_t zq = q.zp < q.lo ? q.lo : (q.zp > q.hi ? q.hi : q.zp);
  const __m256 flo = _mm256_set1_ps(float(q.lo - q.zp)), fhi = _mm256_set1_ps(float(q.hi - q.zp));
  const __m256 nan_to = _mm256_set1_ps(float(zq - q.zp)), round = _mm256_set1_ps(12582912.0f), mult = _mm256_set1_ps(q.mult);
  auto* out = static_cast<uint8_t*>(q.out);
  const int32_t* raw_at = q.raw;
  const int32_t* cs_at = q.col_sums;
  const float* mults = q.mults;
  const size_t n = q.n;
  size_t j = 0;
  // The 8 results at j as i32, in [lo, hi].
  auto lanes = [&](size_t j) {
    const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(raw_at + j));
    const __m256i cs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(cs_at + j));
    const __m256i acc = _mm256_sub_epi32(_mm256_add_epi32(raw, add), _mm256_mullo_epi32(za, cs));
    const __m256 k = mults ? _mm256_loadu_ps(mults + j) : mult;
    __m256 c = _mm256_min_ps(fhi, _mm256_max_ps(flo, _mm256_mul_ps(_mm256_cvtepi32_ps(acc), k)));
    if (kMayNaN) c = _mm256_blendv_ps(c, nan_to, _mm256_cmp_ps(c, c, _CMP_UNORD_Q));
    return _mm256_add_epi32(_mm256_cvttps_epi32(_mm256_sub_ps(_mm256_add_ps(c, round), round)), zp);
  };
  // 16 at a time: the packs work within 128-bit halves, so the bytes come out as dwords
  // (a0-3, b0-3, .., a4-7, b4-7, ..) and one permute puts a0-7, b0-7 in the low half.
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (; j + 16 <= n; j += 16) {
    const __m256i w = _mm256_packs_epi32(lanes(j), lanes(j + 8));
    const __m256i b = kSigned ? _mm256_packs_epi16(w, w) : _mm256_packus_epi16(w, w);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + j), _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(b, order)));
  }
  for (; j + 8 <= n; j += 8) {
    const __m256i v = lanes(j);
    const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + j), kSigned ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w));
  }
  if (j < n) {
    Q8Requant rest = q;
    rest.raw += j;
    rest.col_sums += j;
    if (rest.mults) rest.mults += j;
    rest.out = out + j;
    rest.n = n - j;
    q8::requantize(rest);
  }
}
}  // namespace

// QuantizeLinear per tensor (q8_requantize.h's loop on 8 lanes).
void q8_quantize__avx2(const float* x, size_t n, float scale, int32_t zp, int32_t lo, int32_t hi, void* out,
                       bool out_signed) {
  q8::quantize(x, n, scale, zp, lo, hi, out, out_signed);
}

void q8_range__avx2(const float* x, size_t n, float* lo, float* hi) { q8::range(x, n, lo, hi); }

void q8_requantize__avx2(const Q8Requant& q) {
  const bool may_nan = q.mults || !std::isfinite(q.mult);
  if (q.out_signed) may_nan ? requantize8<true, true>(q) : requantize8<true, false>(q);
  else may_nan ? requantize8<false, true>(q) : requantize8<false, false>(q);
}

// 32 columns per step: bytes of rows 0 and 1, and of rows 2 and 3, interleaved, then their
// 16-bit pairs, which gives the words within each 128-bit half; the halves are put back in column
// order. A word's four bytes are summed as int8 by vpmaddubsw against ones (pairs: at most 256 in
// magnitude) and vpmaddwd against ones. A tail runs the same step on copies.
namespace {
inline void interleave32(const uint8_t* r0, const uint8_t* r1, const uint8_t* r2, const uint8_t* r3, __m256i f,
                         uint32_t* out_lo, uint32_t* out_hi, int32_t* sums) {
  const uint8_t* rows[4] = {r0, r1, r2, r3};
  __m256i x[4];
  for (int t = 0; t < 4; ++t) x[t] = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows[t])), f);
  const __m256i lo01 = _mm256_unpacklo_epi8(x[0], x[1]), hi01 = _mm256_unpackhi_epi8(x[0], x[1]);
  const __m256i lo23 = _mm256_unpacklo_epi8(x[2], x[3]), hi23 = _mm256_unpackhi_epi8(x[2], x[3]);
  // w0: columns 0-3 and 16-19, w1: 4-7 and 20-23, w2: 8-11 and 24-27, w3: 12-15 and 28-31.
  const __m256i w0 = _mm256_unpacklo_epi16(lo01, lo23), w1 = _mm256_unpackhi_epi16(lo01, lo23);
  const __m256i w2 = _mm256_unpacklo_epi16(hi01, hi23), w3 = _mm256_unpackhi_epi16(hi01, hi23);
  const __m256i v[4] = {_mm256_permute2x128_si256(w0, w1, 0x20), _mm256_permute2x128_si256(w2, w3, 0x20),
                        _mm256_permute2x128_si256(w0, w1, 0x31), _mm256_permute2x128_si256(w2, w3, 0x31)};
  const __m256i ones8 = _mm256_set1_epi8(1), ones16 = _mm256_set1_epi16(1);
  for (int q = 0; q < 4; ++q) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>((q < 2 ? out_lo : out_hi) + 8 * (q % 2)), v[q]);
    const __m256i s = _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, v[q]), ones16);
    auto* sp = reinterpret_cast<__m256i*>(sums + 8 * q);
    _mm256_storeu_si256(sp, _mm256_add_epi32(_mm256_loadu_si256(sp), s));
  }
}
}  // namespace

void q8_interleave4__avx2(const uint8_t* const rows[4], uint8_t flip, size_t n, uint32_t* out, size_t panel_words,
                          int32_t* sums) {
  const __m256i f = _mm256_set1_epi8(char(flip));
  size_t c = 0;
  for (; c + 32 <= n; c += 32)
    interleave32(rows[0] + c, rows[1] + c, rows[2] + c, rows[3] + c, f, out + c / 16 * panel_words,
                 out + (c / 16 + 1) * panel_words, sums + c);
  if (c < n) {
    const size_t m = n - c;
    alignas(32) uint8_t in[4][32] = {};
    alignas(32) uint32_t words[32];
    alignas(32) int32_t s[32] = {};
    for (int t = 0; t < 4; ++t) __builtin_memcpy(in[t], rows[t] + c, m);
    interleave32(in[0], in[1], in[2], in[3], f, words, words + 16, s);
    for (size_t j = 0; j < m; ++j) out[(c + j) / 16 * panel_words + (c + j) % 16] = words[j], sums[c + j] += s[j];
  }
}

// The integer depthwise steps (q8_depthwise.h).
// Steps 1 and 2 (the depthwise strides that matter) 16 words at a time, then 8: the bytes of each
// row as 16-bit lanes (widened for step 1; for step 2 the even bytes of twice as many, masked or
// shuffled into place), the zero point subtracted, the two rows' lanes interleaved into words
// (unpack within 128-bit halves, then the halves put in order). Nothing is read past a row's
// last byte used: a 16-word step-2 load ends one byte after its last, so it runs only where
// another word follows; the last words of a row run as 8 words ending at n (rewriting some with
// the same values), and only rows of fewer than 8 words run the template's loop.
namespace {
template <bool Signed, size_t Step>
inline __m256i lanes16(const uint8_t* p, __m256i zero) {
  __m256i v;
  if (Step == 1) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    v = Signed ? _mm256_cvtepi8_epi16(x) : _mm256_cvtepu8_epi16(x);
  } else {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    v = Signed ? _mm256_srai_epi16(_mm256_slli_epi16(x, 8), 8) : _mm256_and_si256(x, _mm256_set1_epi16(0xFF));
  }
  return _mm256_sub_epi16(v, zero);
}

// Step 2 reads bytes [0, 15): two 8-byte loads (at 0 and 7, overlapping) and one shuffle put the
// even bytes into the high byte of each 16-bit lane, and a shift brings them down, signed or not.
template <bool Signed, size_t Step>
inline __m128i lanes8(const uint8_t* p, __m128i zero) {
  __m128i v;
  if (Step == 1) {
    const __m128i x = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
    v = Signed ? _mm_cvtepi8_epi16(x) : _mm_cvtepu8_epi16(x);
  } else {
    const __m128i x = _mm_unpacklo_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)),
                                         _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + 7)));
    const __m128i hi = _mm_shuffle_epi8(x, _mm_setr_epi8(-1, 0, -1, 2, -1, 4, -1, 6, -1, 9, -1, 11, -1, 13, -1, 15));
    v = Signed ? _mm_srai_epi16(hi, 8) : _mm_srli_epi16(hi, 8);
  }
  return _mm_sub_epi16(v, zero);
}

template <bool Signed, size_t Step>
inline void words8(const uint8_t* x, const uint8_t* y, __m128i z, uint32_t* o) {
  const __m128i lo = lanes8<Signed, Step>(x, z), hi = lanes8<Signed, Step>(y, z);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(o), _mm_unpacklo_epi16(lo, hi));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(o + 4), _mm_unpackhi_epi16(lo, hi));
}

template <bool Signed, size_t Step>
void pair_rows16(const uint8_t* a, const uint8_t* b, size_t rows, size_t in_stride, int32_t zero, size_t n,
                 uint32_t* out, size_t out_stride) {
  const __m256i z = _mm256_set1_epi16(int16_t(zero));
  const __m128i z8 = _mm256_castsi256_si128(z);
  constexpr size_t kOver = Step - 1;  // words needed beyond a block for its load to stay in the row
  for (size_t i = 0; i < rows; ++i) {
    const uint8_t* x = a + i * in_stride;
    const uint8_t* y = b + i * in_stride;
    uint32_t* o = out + i * out_stride;
    size_t c = 0;
    for (; c + 16 + kOver <= n; c += 16) {
      const __m256i lo = lanes16<Signed, Step>(x + c * Step, z), hi = lanes16<Signed, Step>(y + c * Step, z);
      const __m256i w0 = _mm256_unpacklo_epi16(lo, hi), w1 = _mm256_unpackhi_epi16(lo, hi);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + c), _mm256_permute2x128_si256(w0, w1, 0x20));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + c + 8), _mm256_permute2x128_si256(w0, w1, 0x31));
    }
    for (; c + 8 <= n; c += 8) words8<Signed, Step>(x + c * Step, y + c * Step, z8, o + c);
    if (c < n && n >= 8) {  // the last 8 words, overlapping ones already written (the same values)
      const size_t e = n - 8;
      words8<Signed, Step>(x + e * Step, y + e * Step, z8, o + e);
    } else if (c < n) {
      q8::pair_rows(x + c * Step, y + c * Step, 1, 0, Step, zero, Signed, n - c, o + c, 0);
    }
  }
}
}  // namespace

// Neighbours (b = a + 1, step 2: the depthwise column pairs) are the row's 2n bytes widened in
// order: loads of exactly those bytes, 16, 8 or 4 words at a time, the last block ending at n
// (rewriting some words with the same values); only rows of fewer than 4 words take the loop.
namespace {
template <bool Signed>
inline __m256i widen16(const uint8_t* p, __m256i z) {
  const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_sub_epi16(Signed ? _mm256_cvtepi8_epi16(x) : _mm256_cvtepu8_epi16(x), z);
}
template <bool Signed>
inline __m128i widen8(const uint8_t* p, __m128i z) {
  const __m128i x = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  return _mm_sub_epi16(Signed ? _mm_cvtepi8_epi16(x) : _mm_cvtepu8_epi16(x), z);
}
template <bool Signed>
inline __m128i widen4(const uint8_t* p, __m128i z) {
  const __m128i x = _mm_cvtsi32_si128(int(q8::load_group(p)));
  return _mm_sub_epi16(Signed ? _mm_cvtepi8_epi16(x) : _mm_cvtepu8_epi16(x), z);
}

template <bool Signed>
void neighbour_rows(const uint8_t* a, size_t rows, size_t in_stride, int32_t zero, size_t n, uint32_t* out,
                    size_t out_stride) {
  const __m256i z = _mm256_set1_epi16(int16_t(zero));
  const __m128i z8 = _mm256_castsi256_si128(z);
  for (size_t i = 0; i < rows; ++i) {
    const uint8_t* x = a + i * in_stride;
    uint32_t* o = out + i * out_stride;
    if (n >= 8) {
      size_t c = 0;
      for (; c + 8 <= n; c += 8) _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + c), widen16<Signed>(x + 2 * c, z));
      if (c < n) _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + n - 8), widen16<Signed>(x + 2 * (n - 8), z));
    } else if (n >= 4) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o), widen8<Signed>(x, z8));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o + n - 4), widen8<Signed>(x + 2 * (n - 4), z8));
    } else if (n >= 2) {
      _mm_storel_epi64(reinterpret_cast<__m128i*>(o), widen4<Signed>(x, z8));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(o + n - 2), widen4<Signed>(x + 2 * (n - 2), z8));
    } else {
      q8::pair_rows(x, x + 1, 1, 0, 2, zero, Signed, n, o, 0);
    }
  }
}
}  // namespace

void q8_pair_rows__avx2(const uint8_t* a, const uint8_t* b, size_t rows, size_t in_stride, size_t step, int32_t zero,
                        bool is_signed, size_t n, uint32_t* out, size_t out_stride) {
  if (step == 2 && b == a + 1)
    return is_signed ? neighbour_rows<true>(a, rows, in_stride, zero, n, out, out_stride)
                     : neighbour_rows<false>(a, rows, in_stride, zero, n, out, out_stride);
  if (step == 1 && is_signed) return pair_rows16<true, 1>(a, b, rows, in_stride, zero, n, out, out_stride);
  if (step == 1) return pair_rows16<false, 1>(a, b, rows, in_stride, zero, n, out, out_stride);
  if (step == 2 && is_signed) return pair_rows16<true, 2>(a, b, rows, in_stride, zero, n, out, out_stride);
  if (step == 2) return pair_rows16<false, 2>(a, b, rows, in_stride, zero, n, out, out_stride);
  q8::pair_rows(a, b, rows, in_stride, step, zero, is_signed, n, out, out_stride);
}

// q8_pair_dot on 8 lanes with vpmaddwd (q8_depthwise.h's loop; AVX-VNNI's in q8_avxvnni.cpp).
void q8_pair_dot__avx2(const uint32_t* const* src, const uint32_t* w, size_t taps, size_t n, size_t rows,
                       size_t src_stride, int32_t* acc) {
  q8::pair_dot<q8::PairOps8<q8::MaddDot>>(src, w, taps, n, rows, src_stride, acc);
}

}  // namespace om::kernels::avx2
