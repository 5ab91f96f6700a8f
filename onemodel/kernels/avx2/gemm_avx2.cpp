// AVX2+FMA GEMM micro-kernel: a 6x16 tile of C held in 12 YMM registers. Each step k broadcasts
// six A values and multiplies them into two 8-wide B vectors with fused multiply-adds, so every C
// element is exactly the in-order fma chain over k of the scalar reference.
#include <immintrin.h>

#include <cstddef>

#include "onemodel/kernels/depthwise_channels.h"
#include "onemodel/kernels/depthwise_plane.h"
#include "onemodel/kernels/pool_window.h"
#include "onemodel/kernels/small_gemm.h"

namespace om::kernels::avx2 {
namespace {
constexpr size_t kMR = 6, kNR = 16;
}

namespace {
// x < 0 ? 0 : x per lane (UnaryOp::Relu's rule): maxps(0, x) is 0 > x ? 0 : x, so a NaN or a
// -0 in x is kept.
inline __m256 relu(__m256 x) { return _mm256_max_ps(_mm256_setzero_ps(), x); }

// The tile epilogue on row i's two vectors (valid rows only read the bias); `add` is the
// addend's tile as StagedAddend gives it (row i at add.p + i * add.ld, all 16 columns readable).
template <class Addend>
inline void finish(const TileEpilogue* ep, const Addend& add, size_t i, size_t mr, __m256& v0, __m256& v1) {
  if (!ep) return;
  if (ep->row_bias) {
    const __m256 bv = _mm256_set1_ps(i < mr ? ep->row_bias[i] : 0.0f);
    v0 = _mm256_add_ps(v0, bv);
    v1 = _mm256_add_ps(v1, bv);
  }
  if (add.p) {
    v0 = _mm256_add_ps(v0, _mm256_loadu_ps(add.p + i * add.ld));
    v1 = _mm256_add_ps(v1, _mm256_loadu_ps(add.p + i * add.ld + 8));
  }
  if (ep->relu) v0 = relu(v0), v1 = relu(v1);
}

// R < 6 rows of a full-width tile (the last tile of M = 32 or 64 leaves 2 or 4 rows): only those
// rows are computed, straight in C. Each element's chain is the full tile's.
template <size_t R, class B>
inline void rows_x16(size_t kc, const float* a, B b, float* c, size_t ldc, bool load_c, const TileEpilogue* ep) {
  __m256 acc[R][2];
#pragma GCC unroll 6
  for (size_t i = 0; i < R; ++i) {
    acc[i][0] = load_c ? _mm256_loadu_ps(c + i * ldc) : _mm256_setzero_ps();
    acc[i][1] = load_c ? _mm256_loadu_ps(c + i * ldc + 8) : _mm256_setzero_ps();
  }
  for (size_t k = 0; k < kc; ++k) {
    const float* bk = b.row(k);
    const __m256 b0 = _mm256_loadu_ps(bk), b1 = _mm256_loadu_ps(bk + 8);
#pragma GCC unroll 6
    for (size_t i = 0; i < R; ++i) {
      const __m256 av = _mm256_broadcast_ss(a + i);
      acc[i][0] = _mm256_fmadd_ps(av, b0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(av, b1, acc[i][1]);
    }
    a += kMR;
  }
  // Rows below R of full width: the addend is read in place.
  struct {
    const float* p;
    size_t ld;
  } add{ep ? ep->addend : nullptr, ldc};
#pragma GCC unroll 6
  for (size_t i = 0; i < R; ++i) finish(ep, add, i, R, acc[i][0], acc[i][1]);
#pragma GCC unroll 6
  for (size_t i = 0; i < R; ++i) {
    _mm256_storeu_ps(c + i * ldc, acc[i][0]);
    _mm256_storeu_ps(c + i * ldc + 8, acc[i][1]);
  }
}

template <class B>
inline void tile_6x16(size_t kc, const float* a, B b, float* c, size_t ldc, size_t mr, size_t nr, bool load_c,
                      const TileEpilogue* ep) {
  if (nr == kNR && mr < kMR) {
    switch (mr) {
      case 1: return rows_x16<1>(kc, a, b, c, ldc, load_c, ep);
      case 2: return rows_x16<2>(kc, a, b, c, ldc, load_c, ep);
      case 3: return rows_x16<3>(kc, a, b, c, ldc, load_c, ep);
      case 4: return rows_x16<4>(kc, a, b, c, ldc, load_c, ep);
      default: return rows_x16<5>(kc, a, b, c, ldc, load_c, ep);
    }
  }
  // Other partial tiles run through a full-size local tile so the loop below is the same for all.
  StagedTile<kMR, kNR> t(c, ldc, mr, nr, load_c);
  float* cc = t.cc;
  const size_t ldcc = t.ldcc;
  const bool full = t.full;
  __m256 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;
  if (load_c || !full) {
    c00 = _mm256_loadu_ps(cc + 0 * ldcc), c01 = _mm256_loadu_ps(cc + 0 * ldcc + 8);
    c10 = _mm256_loadu_ps(cc + 1 * ldcc), c11 = _mm256_loadu_ps(cc + 1 * ldcc + 8);
    c20 = _mm256_loadu_ps(cc + 2 * ldcc), c21 = _mm256_loadu_ps(cc + 2 * ldcc + 8);
    c30 = _mm256_loadu_ps(cc + 3 * ldcc), c31 = _mm256_loadu_ps(cc + 3 * ldcc + 8);
    c40 = _mm256_loadu_ps(cc + 4 * ldcc), c41 = _mm256_loadu_ps(cc + 4 * ldcc + 8);
    c50 = _mm256_loadu_ps(cc + 5 * ldcc), c51 = _mm256_loadu_ps(cc + 5 * ldcc + 8);
  } else {
    c00 = c01 = c10 = c11 = c20 = c21 = c30 = c31 = c40 = c41 = c50 = c51 = _mm256_setzero_ps();
  }
  for (size_t k = 0; k < kc; ++k) {
    const float* bk = b.row(k);
    const __m256 b0 = _mm256_loadu_ps(bk);
    const __m256 b1 = _mm256_loadu_ps(bk + 8);
    __m256 av = _mm256_broadcast_ss(a + 0);
    c00 = _mm256_fmadd_ps(av, b0, c00);
    c01 = _mm256_fmadd_ps(av, b1, c01);
    av = _mm256_broadcast_ss(a + 1);
    c10 = _mm256_fmadd_ps(av, b0, c10);
    c11 = _mm256_fmadd_ps(av, b1, c11);
    av = _mm256_broadcast_ss(a + 2);
    c20 = _mm256_fmadd_ps(av, b0, c20);
    c21 = _mm256_fmadd_ps(av, b1, c21);
    av = _mm256_broadcast_ss(a + 3);
    c30 = _mm256_fmadd_ps(av, b0, c30);
    c31 = _mm256_fmadd_ps(av, b1, c31);
    av = _mm256_broadcast_ss(a + 4);
    c40 = _mm256_fmadd_ps(av, b0, c40);
    c41 = _mm256_fmadd_ps(av, b1, c41);
    av = _mm256_broadcast_ss(a + 5);
    c50 = _mm256_fmadd_ps(av, b0, c50);
    c51 = _mm256_fmadd_ps(av, b1, c51);
    a += kMR;
  }
  const StagedAddend<kMR, kNR> add(ep, ldc, mr, nr);
  finish(ep, add, 0, mr, c00, c01), finish(ep, add, 1, mr, c10, c11), finish(ep, add, 2, mr, c20, c21);
  finish(ep, add, 3, mr, c30, c31), finish(ep, add, 4, mr, c40, c41), finish(ep, add, 5, mr, c50, c51);
  _mm256_storeu_ps(cc + 0 * ldcc, c00), _mm256_storeu_ps(cc + 0 * ldcc + 8, c01);
  _mm256_storeu_ps(cc + 1 * ldcc, c10), _mm256_storeu_ps(cc + 1 * ldcc + 8, c11);
  _mm256_storeu_ps(cc + 2 * ldcc, c20), _mm256_storeu_ps(cc + 2 * ldcc + 8, c21);
  _mm256_storeu_ps(cc + 3 * ldcc, c30), _mm256_storeu_ps(cc + 3 * ldcc + 8, c31);
  _mm256_storeu_ps(cc + 4 * ldcc, c40), _mm256_storeu_ps(cc + 4 * ldcc + 8, c41);
  _mm256_storeu_ps(cc + 5 * ldcc, c50), _mm256_storeu_ps(cc + 5 * ldcc + 8, c51);
  t.done();
}
}  // namespace

OM_GEMM_TILE_ENTRIES(6x16, avx2, tile_6x16, kNR)

namespace {
struct Avx2Ops {
  using V = __m256;
  static constexpr size_t L = 8;
  static __m256i mask(size_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static V zero() { return _mm256_setzero_ps(); }
  static V bcast(const float* p) { return _mm256_broadcast_ss(p); }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static V load_n(const float* p, size_t n) { return _mm256_maskload_ps(p, mask(n)); }
  // depthwise_plane.h's edge loads: range(lo, hi) names lanes [lo, hi), load_range(p, m) loads
  // them and +0 elsewhere; masked lanes are never read.
  using Range = __m256i;
  static Range range(ptrdiff_t lo, ptrdiff_t hi) {
    const auto clamp = [](ptrdiff_t v) { return size_t(v < 0 ? 0 : v > 8 ? 8 : v); };
    return _mm256_andnot_si256(mask(clamp(lo)), mask(clamp(hi)));  // the first hi lanes less the first lo
  }
  static V load_range(const float* p, Range m) { return _mm256_maskload_ps(p, m); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static void store_n(float* p, V v, size_t n) { _mm256_maskstore_ps(p, mask(n), v); }
  static V fma(V a, V b, V acc) { return _mm256_fmadd_ps(a, b, acc); }
  // depthwise_channels.h's transposes.
  static V zip_lo(V a, V b) { return __builtin_shufflevector(a, b, 0, 8, 1, 9, 2, 10, 3, 11); }
  static V zip_hi(V a, V b) { return __builtin_shufflevector(a, b, 4, 12, 5, 13, 6, 14, 7, 15); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V relu(V a) { return avx2::relu(a); }
  static V div(V a, V b) { return _mm256_div_ps(a, b); }
  // pool_window.h's selection: v where v > m, or v is NaN and m is not.
  static V pick(V v, V m) {
    const __m256 take = _mm256_or_ps(_mm256_cmp_ps(v, m, _CMP_GT_OQ),
                                     _mm256_and_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q), _mm256_cmp_ps(m, m, _CMP_ORD_Q)));
    return _mm256_blendv_ps(m, v, take);
  }
  static V max(V v, V m) { return _mm256_max_ps(v, m); }  // v > m ? v : m
  static bool any_nan(V v) { return _mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0; }
  static V even(V lo, V hi) {
    // lanes 0 2 | 8 10 | 4 6 | 12 14 per 128-bit half, then the 64-bit pairs put in order
    const __m256 e = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
  }
  static V load_even(const float* p) { return even(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)); }
  static V load_even_n(const float* p, size_t n) {
    const size_t f = 2 * n - 1;
    return even(load_n(p, f < 8 ? f : 8), f > 8 ? load_n(p + 8, f - 8) : zero());
  }
  static constexpr bool kPairMax = true;
  // pool_window.h's pair maxima, in the shuffled order (lanes 0 1 4 5 2 3 6 7); pair_order fixes it.
  static V pair_max(const float* p, V& probe) {
    const __m256 lo = _mm256_loadu_ps(p), hi = _mm256_loadu_ps(p + 8);
    probe = _mm256_add_ps(probe, _mm256_add_ps(lo, hi));
    return _mm256_max_ps(_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1)), _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0)));
  }
  static V pair_order(V v) { return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v), _MM_SHUFFLE(3, 1, 2, 0))); }
};
}  // namespace

// 16 YMM registers: one row takes 8 vectors (64 columns, B folded into the fmas), two rows 4,
// three or four rows 2.
void f32_gemm_small__avx2(size_t kc, size_t m, const float* a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                          const float* b, ptrdiff_t b_rs, size_t ps, float* c, size_t ldc, size_t n,
                          bool load_c) {
  small::gemm<Avx2Ops, kNR, 8, 4, 2>(kc, m, a, a_rs, a_cs, b, b_rs, ps, c, ldc, n, load_c);
}

namespace {
// Rows i0..i0+3 of 8 columns k..k+7, transposed in registers: dst[(k+t)*MR + i0 + r] = row r's
// element t. Two 4x4 transposes, one per 128-bit half.
template <size_t MR>
inline void pack_4rows_8cols(const float* src, ptrdiff_t a_rs, size_t i0, size_t k, float* dst) {
  const float* s = src + ptrdiff_t(i0) * a_rs + ptrdiff_t(k);
  const __m256 q0 = _mm256_loadu_ps(s), q1 = _mm256_loadu_ps(s + a_rs), q2 = _mm256_loadu_ps(s + 2 * a_rs),
               q3 = _mm256_loadu_ps(s + 3 * a_rs);
  for (int half = 0; half < 2; ++half) {
    __m128 x0 = half ? _mm256_extractf128_ps(q0, 1) : _mm256_castps256_ps128(q0);
    __m128 x1 = half ? _mm256_extractf128_ps(q1, 1) : _mm256_castps256_ps128(q1);
    __m128 x2 = half ? _mm256_extractf128_ps(q2, 1) : _mm256_castps256_ps128(q2);
    __m128 x3 = half ? _mm256_extractf128_ps(q3, 1) : _mm256_castps256_ps128(q3);
    _MM_TRANSPOSE4_PS(x0, x1, x2, x3);
    float* d = dst + (k + 4 * size_t(half)) * MR + i0;
    _mm_storeu_ps(d, x0);
    _mm_storeu_ps(d + MR, x1);
    _mm_storeu_ps(d + 2 * MR, x2);
    _mm_storeu_ps(d + 3 * MR, x3);
  }
}

// Rows i0, i0+1 of 8 columns: interleaved pairs, stored 64 bits at a time.
template <size_t MR>
inline void pack_2rows_8cols(const float* src, ptrdiff_t a_rs, size_t i0, size_t k, float* dst) {
  const float* s = src + ptrdiff_t(i0) * a_rs + ptrdiff_t(k);
  const __m256 a = _mm256_loadu_ps(s), b = _mm256_loadu_ps(s + a_rs);
  const __m256 lo = _mm256_unpacklo_ps(a, b), hi = _mm256_unpackhi_ps(a, b);
  const __m128 lo0 = _mm256_castps256_ps128(lo), lo1 = _mm256_extractf128_ps(lo, 1);
  const __m128 hi0 = _mm256_castps256_ps128(hi), hi1 = _mm256_extractf128_ps(hi, 1);
  float* d = dst + k * MR + i0;
  _mm_storel_pi(reinterpret_cast<__m64*>(d + 0 * MR), lo0);
  _mm_storeh_pi(reinterpret_cast<__m64*>(d + 1 * MR), lo0);
  _mm_storel_pi(reinterpret_cast<__m64*>(d + 2 * MR), hi0);
  _mm_storeh_pi(reinterpret_cast<__m64*>(d + 3 * MR), hi0);
  _mm_storel_pi(reinterpret_cast<__m64*>(d + 4 * MR), lo1);
  _mm_storeh_pi(reinterpret_cast<__m64*>(d + 5 * MR), lo1);
  _mm_storel_pi(reinterpret_cast<__m64*>(d + 6 * MR), hi1);
  _mm_storeh_pi(reinterpret_cast<__m64*>(d + 7 * MR), hi1);
}

template <size_t MR>
void pack_a_panel(const float* src, ptrdiff_t a_rs, size_t rows, size_t kc, float* dst) {
  size_t k = 0;
  for (; k + 8 <= kc; k += 8) {
    size_t i = 0;
    for (; i + 4 <= rows; i += 4) pack_4rows_8cols<MR>(src, a_rs, i, k, dst);
    for (; i + 2 <= rows; i += 2) pack_2rows_8cols<MR>(src, a_rs, i, k, dst);
    for (size_t t = 0; t < 8; ++t) {  // an odd last row, then the zero rows of a partial panel
      float* d = dst + (k + t) * MR;
      for (size_t r = i; r < rows; ++r) d[r] = src[ptrdiff_t(r) * a_rs + ptrdiff_t(k + t)];
      for (size_t r = rows; r < MR; ++r) d[r] = 0.0f;
    }
  }
  for (; k < kc; ++k) {
    for (size_t i = 0; i < rows; ++i) dst[k * MR + i] = src[ptrdiff_t(i) * a_rs + ptrdiff_t(k)];
    for (size_t i = rows; i < MR; ++i) dst[k * MR + i] = 0.0f;
  }
}
static_assert(kMR % 2 == 0, "pack_a_panel handles rows in groups of 4 and 2");
}  // namespace

void pack_a_6__avx2(const float* src, ptrdiff_t a_rs, size_t rows, size_t kc, float* dst) {
  pack_a_panel<kMR>(src, a_rs, rows, kc, dst);
}
// For the AVX-512 12x32 tile (the transposes need only AVX).
void pack_a_12__avx2(const float* src, ptrdiff_t a_rs, size_t rows, size_t kc, float* dst) {
  pack_a_panel<12>(src, a_rs, rows, kc, dst);
}

void f32_depthwise_plane__avx2(const DepthwisePlane& p) { dw::plane<Avx2Ops>(p); }
size_t f32_depthwise_channels__avx2(const DepthwiseChannels& d) { return dwc::channels<Avx2Ops>(d); }
void f32_pool_window__avx2(const ConvGeom& g, const PoolWindow& w, const float* x, float* y) {
  pool::window<Avx2Ops>(g, w, x, y);
}

}  // namespace om::kernels::avx2
