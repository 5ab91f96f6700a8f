// AVX-512F GEMM kernels and the AVX-512 kernel table. The 12x32 micro-kernel holds a tile of C in
// 24 ZMM registers (of 32); each step k broadcasts twelve A values into two 16-wide B vectors
// with fused multiply-adds, so every C element is exactly the in-order fma chain over k of the
// scalar reference. Partial tiles use lane masks instead of a staging copy. Reductions and most
// elementwise kernels are the AVX2 ones: their exact-mode order (8 lane partial sums) is part of
// the contract and must not change with the ISA. The Fast-mode softmax, the transcendental maps
// and the elementwise chains have 16-lane forms (elementwise_avx512.cpp: per-lane functions, so
// the same bits).
#include <cmath>
#include <immintrin.h>

#include <cstddef>

#include "onemodel/kernels/avx512/lanes_avx512.h"
#include "onemodel/kernels/fast_softmax.h"
#include "onemodel/kernels/kernels_internal.h"
#include "onemodel/kernels/depthwise_channels.h"
#include "onemodel/kernels/depthwise_plane.h"
#include "onemodel/kernels/pool_window.h"
#include "onemodel/kernels/q8_gemm.h"
#include "onemodel/kernels/q8_requantize.h"
#include "onemodel/kernels/small_gemm.h"

namespace om::kernels::avx2 {
void f32_depthwise_plane__avx2(const DepthwisePlane& p);
}  // namespace om::kernels::avx2

namespace om::kernels::avx512 {
namespace {

constexpr size_t kMR = 12, kNR = 32;

__mmask16 lanes(size_t n) { return n >= 16 ? __mmask16(0xffff) : __mmask16((1u << n) - 1u); }

// x < 0 ? 0 : x per lane, NaN and -0 kept (UnaryOp::Relu's rule): lanes with !(x < 0), NaN
// included, keep x; the others become +0.
inline __m512 relu(__m512 x) {
  return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_NLT_UQ), x);
}

// R rows of the tile (R <= kMR): the packed A panel still holds kMR rows per k, only the first R
// are read, so a short last tile (M = 32 or 64 leave 8 or 4 rows) does no work for the padding.
template <size_t R, class B>
inline void gemm_rows(size_t kc, const float* a, B b, float* c, size_t ldc, size_t mr, __mmask16 m0, __mmask16 m1,
                      bool load_c, const TileEpilogue* ep) {
  __m512 acc[R][2];
#pragma GCC unroll 12
  for (size_t i = 0; i < R; ++i) {
    if (load_c && i < mr) {
      acc[i][0] = _mm512_maskz_loadu_ps(m0, c + i * ldc);
      acc[i][1] = _mm512_maskz_loadu_ps(m1, c + i * ldc + 16);
    } else {
      acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    }
  }
  for (size_t k = 0; k < kc; ++k) {
    const float* bk = b.row(k);
    const __m512 b0 = _mm512_loadu_ps(bk), b1 = _mm512_loadu_ps(bk + 16);
#pragma GCC unroll 12
    for (size_t i = 0; i < R; ++i) {
      const __m512 av = _mm512_set1_ps(a[i]);
      acc[i][0] = _mm512_fmadd_ps(av, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(av, b1, acc[i][1]);
    }
    a += kMR;
  }
  if (ep) {
    if (ep->row_bias) {
#pragma GCC unroll 12
      for (size_t i = 0; i < R; ++i) {
        const __m512 bv = _mm512_set1_ps(i < mr ? ep->row_bias[i] : 0.0f);
        acc[i][0] = _mm512_add_ps(acc[i][0], bv);
        acc[i][1] = _mm512_add_ps(acc[i][1], bv);
      }
    }
    if (ep->addend) {  // masked loads: rows below mr, columns below nr
#pragma GCC unroll 12
      for (size_t i = 0; i < R; ++i) {
        if (i < mr) {
          acc[i][0] = _mm512_add_ps(acc[i][0], _mm512_maskz_loadu_ps(m0, ep->addend + i * ldc));
          acc[i][1] = _mm512_add_ps(acc[i][1], _mm512_maskz_loadu_ps(m1, ep->addend + i * ldc + 16));
        }
      }
    }
    if (ep->relu) {
#pragma GCC unroll 12
      for (size_t i = 0; i < R; ++i) acc[i][0] = relu(acc[i][0]), acc[i][1] = relu(acc[i][1]);
    }
  }
#pragma GCC unroll 12
  for (size_t i = 0; i < R; ++i) {
    if (i < mr) {
      _mm512_mask_storeu_ps(c + i * ldc, m0, acc[i][0]);
      _mm512_mask_storeu_ps(c + i * ldc + 16, m1, acc[i][1]);
    }
  }
}

void f32_gemm_12x32__avx512(size_t kc, const float* a, const float* b, float* c, size_t ldc, size_t mr,
                            size_t nr, bool load_c, const TileEpilogue* ep) {
  const __mmask16 m0 = lanes(nr), m1 = nr > 16 ? lanes(nr - 16) : __mmask16(0);
  const PanelB pb{b, kNR};
  if (mr > 8) gemm_rows<kMR>(kc, a, pb, c, ldc, mr, m0, m1, load_c, ep);
  else if (mr > 4) gemm_rows<8>(kc, a, pb, c, ldc, mr, m0, m1, load_c, ep);
  else gemm_rows<4>(kc, a, pb, c, ldc, mr, m0, m1, load_c, ep);
}

void f32_gemm_rows_12x32__avx512(size_t kc, const float* a, const float* const* rows, ptrdiff_t off, float* c, size_t ldc,
                                 size_t mr, bool load_c, const TileEpilogue* ep) {
  const __mmask16 all = 0xffff;
  const RowsB rb{rows, off};
  if (mr > 8) gemm_rows<kMR>(kc, a, rb, c, ldc, mr, all, all, load_c, ep);
  else if (mr > 4) gemm_rows<8>(kc, a, rb, c, ldc, mr, all, all, load_c, ep);
  else gemm_rows<4>(kc, a, rb, c, ldc, mr, all, all, load_c, ep);
}

struct Avx512Ops {
  using V = __m512;
  static constexpr size_t L = 16;
  static V zero() { return _mm512_setzero_ps(); }
  static V bcast(const float* p) { return _mm512_set1_ps(*p); }
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static V load_n(const float* p, size_t n) { return _mm512_maskz_loadu_ps(lanes(n), p); }
  // depthwise_plane.h's edge loads: range(lo, hi) names lanes [lo, hi) (clamped to the vector),
  // load_range(p, m) loads them and +0 elsewhere; masked lanes are never read.
  using Range = __mmask16;
  static Range range(ptrdiff_t lo, ptrdiff_t hi) {
    const auto clamp = [](ptrdiff_t v) { return size_t(v < 0 ? 0 : v > 16 ? 16 : v); };
    return __mmask16(lanes(clamp(hi)) & ~lanes(clamp(lo)));
  }
  static V load_range(const float* p, Range m) { return _mm512_maskz_loadu_ps(m, p); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  // depthwise_plane.h's row taps: lanes [k, k + 16) of a then b, one valignd (the zero-masked
  // form, as max() below: GCC 12 warns falsely on the unmasked one).
  static constexpr bool kShift = true;
  template <int k>
  static V shift(V a, V b) {
    return _mm512_castsi512_ps(
        _mm512_maskz_alignr_epi32(__mmask16(0xffff), _mm512_castps_si512(b), _mm512_castps_si512(a), k));
  }
  // Two 8-float rows in one vector (the depthwise kernel's half-width planes).
  static constexpr bool kHalfRows = true;
  static V load_halves(const float* lo, const float* hi) {
    return __builtin_shufflevector(_mm256_loadu_ps(lo), _mm256_loadu_ps(hi), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
                                   13, 14, 15);
  }
  static void store_halves(float* lo, float* hi, V v) {
    _mm256_storeu_ps(lo, __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7));
    _mm256_storeu_ps(hi, __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15));
  }
  static void store_n(float* p, V v, size_t n) { _mm512_mask_storeu_ps(p, lanes(n), v); }
  static V fma(V a, V b, V acc) { return _mm512_fmadd_ps(a, b, acc); }
  // depthwise_channels.h's transpose: two rounds within 128-bit lanes (one-cycle shuffles), two
  // across them (the zero-masked forms: GCC 12 warns falsely on the unmasked ones).
  static void transpose(V (&v)[16]) {
    V t[16];
    for (int i = 0; i < 8; ++i) {
      t[2 * i] = _mm512_maskz_unpacklo_ps(0xffff, v[2 * i], v[2 * i + 1]);
      t[2 * i + 1] = _mm512_maskz_unpackhi_ps(0xffff, v[2 * i], v[2 * i + 1]);
    }
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 2; ++j) {
        const __m512d a = _mm512_castps_pd(t[4 * i + j]), b = _mm512_castps_pd(t[4 * i + j + 2]);
        v[4 * i + 2 * j] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(0xff, a, b));
        v[4 * i + 2 * j + 1] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(0xff, a, b));
      }
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 4; ++j) {
        t[8 * i + j] = _mm512_maskz_shuffle_f32x4(0xffff, v[8 * i + j], v[8 * i + j + 4], 0x88);
        t[8 * i + j + 4] = _mm512_maskz_shuffle_f32x4(0xffff, v[8 * i + j], v[8 * i + j + 4], 0xdd);
      }
    for (int j = 0; j < 8; ++j) {
      v[j] = _mm512_maskz_shuffle_f32x4(0xffff, t[j], t[j + 8], 0x88);
      v[j + 8] = _mm512_maskz_shuffle_f32x4(0xffff, t[j], t[j + 8], 0xdd);
    }
  }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V relu(V a) { return avx512::relu(a); }
  static V div(V a, V b) { return _mm512_div_ps(a, b); }
  // pool_window.h's selection: v where v > m, or v is NaN and m is not.
  static V pick(V v, V m) {
    const __mmask16 take = _mm512_cmp_ps_mask(v, m, _CMP_GT_OQ) |
                           (_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q) & _mm512_cmp_ps_mask(m, m, _CMP_ORD_Q));
    return _mm512_mask_blend_ps(take, m, v);
  }
  // v > m ? v : m (the zero-masked form: GCC 12 warns falsely on the unmasked one)
  static V max(V v, V m) { return _mm512_maskz_max_ps(__mmask16(0xffff), v, m); }
  static bool any_nan(V v) { return _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q) != 0; }
  static V even(V lo, V hi) {
    return _mm512_permutex2var_ps(lo, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), hi);
  }
  static V load_even(const float* p) { return even(_mm512_loadu_ps(p), _mm512_loadu_ps(p + 16)); }
  static V load_even_n(const float* p, size_t n) {
    const size_t f = 2 * n - 1;
    return even(load_n(p, f < 16 ? f : 16), f > 16 ? load_n(p + 16, f - 16) : zero());
  }
  static constexpr bool kPairMax = true;
  // pool_window.h's pair maxima, in the in-lane shuffle's order (64-bit pairs 0 4 1 5 2 6 3 7):
  // shuffles within 128-bit lanes are cheaper than two full permutes, and pair_order fixes the
  // order once per output vector, after its rows are combined.
  static V pair_max(const float* p, V& probe) {
    const __m512 lo = _mm512_loadu_ps(p), hi = _mm512_loadu_ps(p + 16);
    probe = add(probe, add(lo, hi));
    return max(_mm512_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1)), _mm512_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0)));
  }
  static V pair_order(V v) {
    return _mm512_castpd_ps(_mm512_maskz_permutexvar_pd(__mmask8(0xff), _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7), _mm512_castps_pd(v)));
  }
};

// 32 ZMM registers: one row takes 8 vectors (128 columns), two to four rows 4 vectors each.
void f32_gemm_small__avx512(size_t kc, size_t m, const float* a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                            const float* b, ptrdiff_t b_rs, size_t ps, float* c, size_t ldc, size_t n,
                            bool load_c) {
  small::gemm<Avx512Ops, kNR, 8, 4, 4>(kc, m, a, a_rs, a_cs, b, b_rs, ps, c, ldc, n, load_c);
}

// Rows of at most 8 outputs fill half a 512-bit vector or less: the 256-bit kernel (AVX2's table;
// the same lanes, outputs, so the same bits) then runs them with fewer idle lanes, except on the
// padded planes of exactly 8 columns, where the two-rows-per-vector form here fills them
// (docs/performance.md, "Small depthwise planes: channels as lanes").
void f32_depthwise_plane__avx512(const DepthwisePlane& p) {
  if (p.n < 8 || (p.n == 8 && p.same_3x3)) return avx2::f32_depthwise_plane__avx2(p);
  dw::plane<Avx512Ops>(p);
}
size_t f32_depthwise_channels__avx512(const DepthwiseChannels& d) { return dwc::channels<Avx512Ops>(d); }

// Fast-mode row maximum (any order, signed zeros unordered); NaN when the row holds a NaN.
float max_fast(const float* x, size_t n) {
  const __m512 ninf = _mm512_set1_ps(-__builtin_inff());
  __m512 m0 = ninf, m1 = ninf;
  __mmask16 nan = 0;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 v0 = _mm512_loadu_ps(x + i), v1 = _mm512_loadu_ps(x + i + 16);
    m0 = Lanes::maxgt(m0, v0);
    m1 = Lanes::maxgt(m1, v1);
    nan |= _mm512_cmp_ps_mask(v0, v1, _CMP_UNORD_Q);
  }
  for (; i < n; i += 16) {
    const __m512 v = _mm512_mask_loadu_ps(ninf, lanes(n - i), x + i);
    m0 = Lanes::maxgt(m0, v);
    nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  }
  return nan ? __builtin_nanf("") : reduce16(Lanes::maxgt(m0, m1), [](float a, float b) { return a > b ? a : b; });
}

}  // namespace

// The pools (pool_window.h) on 16 lanes.
void f32_pool_window__avx512(const ConvGeom& g, const PoolWindow& w, const float* x, float* y) {
  pool::window<Avx512Ops>(g, w, x, y);
}

// A row whose maximum is NaN or infinite takes the exact kernel (its NaN results are the same).
void f32_softmax_rows_fast__avx512(const float* x, float* y, size_t rows, size_t n, bool log,
                                   void (*exact_rows)(const float*, float*, size_t, size_t, bool)) {
  fast::softmax_rows<Lanes, Io>(x, y, rows, n, log, max_fast, exact_rows);
}

// The quantized epilogue (q8_gemm.h's Q8Requant) on 16 lanes, written out: the compiler keeps
// the portable loop (q8_requantize.h) on 8 lanes and packs bytes in several steps, which made the
// epilogue a quarter of an int8 convolution. The same integer steps and IEEE operations as
// q8_saturate_round: max(flo, v) and min(fhi, c) return their second operand when one is NaN,
// as the selects keep v; NaN then becomes the zero point; the clamped value (|c| < 2^9) rounds
// half to even as the sum with 1.5 x 2^23 and its difference do. The results lie in [lo, hi], so
// vpmovdb's truncation stores them as u8 and as i8 alike.
namespace {
// WithZa: the column sums' term (skipped where za is 0: the depthwise sums and zero-point-0
// weights need none). MayNaN: the NaN select, needed only where a multiplier may be NaN (an int32
// times a finite multiplier is never NaN). The rounding is the conversion's own, half to even by
// its embedded rounding mode (whatever MXCSR holds). Whole blocks of 16 store through a register
// (the masked store to memory is several times slower); the tail stores masked. The fields are
// read into locals once, as the byte stores could alias them.
template <bool WithZa, bool MayNaN>
void requantize16(const Q8Requant& q) {
  const __m512i add = _mm512_set1_epi32(int32_t(q.row_add)), za = _mm512_set1_epi32(q.za), zp = _mm512_set1_epi32(q.zp);
  const int32_t zq = q.zp < q.lo ? q.lo : (q.zp > q.hi ? q.hi : q.zp);
  const __m512 flo = _mm512_set1_ps(float(q.lo - q.zp)), fhi = _mm512_set1_ps(float(q.hi - q.zp));
  const __m512 nan_to = _mm512_set1_ps(float(zq - q.zp)), mult = _mm512_set1_ps(q.mult);
  auto* out = static_cast<int8_t*>(q.out);
  const int32_t* raw_at = q.raw;
  const int32_t* cs_at = q.col_sums;
  const float* mults = q.mults;
  const size_t n = q.n;
  for (size_t j = 0; j < n; j += 16) {
    const __mmask16 m = n - j >= 16 ? __mmask16(0xffff) : __mmask16((1u << (n - j)) - 1);
    __m512i acc = _mm512_add_epi32(_mm512_maskz_loadu_epi32(m, raw_at + j), add);
    if (WithZa) acc = _mm512_sub_epi32(acc, _mm512_mullo_epi32(za, _mm512_maskz_loadu_epi32(m, cs_at + j)));
    const __m512 k = mults ? _mm512_maskz_loadu_ps(m, mults + j) : mult;
    // (the zero-masked forms with every lane set: GCC 12's plain ones warn of an undefined source)
    const __m512 v0 = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(kAll, acc), k);
    __m512 c = _mm512_maskz_min_ps(kAll, fhi, _mm512_maskz_max_ps(kAll, flo, v0));
    if (MayNaN) c = _mm512_mask_mov_ps(c, _mm512_cmp_ps_mask(c, c, _CMP_UNORD_Q), nan_to);
    const __m512i r = _mm512_maskz_cvt_roundps_epi32(kAll, c, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512i v = _mm512_add_epi32(r, zp);
    if (m == 0xffff) _mm_storeu_si128(reinterpret_cast<__m128i*>(out + j), _mm512_maskz_cvtepi32_epi8(kAll, v));
    else _mm512_mask_cvtepi32_storeu_epi8(out + j, m, v);
  }
}
}  // namespace

// QuantizeLinear per tensor: q8_requantize.h's loop, which GCC vectorises on 16 lanes here.
void q8_quantize__avx512(const float* x, size_t n, float scale, int32_t zp, int32_t lo, int32_t hi, void* out,
                         bool out_signed) {
  q8::quantize(x, n, scale, zp, lo, hi, out, out_signed);
}

void q8_range__avx512(const float* x, size_t n, float* lo, float* hi) { q8::range(x, n, lo, hi); }

void q8_requantize__avx512(const Q8Requant& q) {
  const bool may_nan = q.mults || !std::isfinite(q.mult);
  if (q.za == 0) may_nan ? requantize16<false, true>(q) : requantize16<false, false>(q);
  else may_nan ? requantize16<true, true>(q) : requantize16<true, false>(q);
}

}  // namespace om::kernels::avx512

namespace om::kernels::avx2 {
void pack_a_12__avx2(const float* src, ptrdiff_t a_rs, size_t rows, size_t kc, float* dst);
void q8_pair_rows__avx2(const uint8_t* a, const uint8_t* b, size_t rows, size_t in_stride, size_t step, int32_t zero,
                        bool is_signed, size_t n, uint32_t* out, size_t out_stride);
void q8_pair_dot__avx2(const uint32_t* const* src, const uint32_t* w, size_t taps, size_t n, size_t rows,
                       size_t src_stride, int32_t* acc);
void q8_dot_taps__avx2(const uint8_t* a, size_t lda, size_t rows, const int8_t* const* panels, size_t npanels,
                       const Q8Walk& w, int32_t* c, size_t ldc, int8_t* scratch);
}

namespace om::kernels::avx512 {
OM_CONV_ENTRY_DECLS(avx512);
void q8_requantize__avx512(const Q8Requant& q);
void q8_quantize__avx512(const float* x, size_t n, float scale, int32_t zp, int32_t lo, int32_t hi, void* out,
                         bool out_signed);
void q8_range__avx512(const float* x, size_t n, float* lo, float* hi);
void f32_unary__avx512(UnaryOp op, const float* x, float* y, size_t n);
bool amx_usable();
void q8_dot__amx(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t ps, size_t groups, size_t panels,
                 int32_t* c, size_t ldc);
void q8_dot__avx512vnni(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t ps, size_t groups,
                        size_t panels, int32_t* c, size_t ldc);
void q8_interleave4__avx512vnni(const uint8_t* const rows[4], uint8_t flip, size_t n, uint32_t* out,
                                size_t panel_words, int32_t* sums);
void q8_dot_taps__amx(const uint8_t* a, size_t lda, size_t rows, const int8_t* const* panels, size_t npanels,
                      const Q8Walk& w, int32_t* c, size_t ldc, int8_t* scratch);
void q8_dot_taps__avx512vnni(const uint8_t* a, size_t lda, size_t rows, const int8_t* const* panels, size_t npanels,
                             const Q8Walk& w, int32_t* c, size_t ldc, int8_t* scratch);
void q8_pair_dot__avx512vnni(const uint32_t* const* src, const uint32_t* w, size_t taps, size_t n, size_t rows,
                             size_t src_stride, int32_t* acc);
void q8_pair_rows__avx512bw(const uint8_t* a, const uint8_t* b, size_t rows, size_t in_stride, size_t step, int32_t zero,
                            bool is_signed, size_t n, uint32_t* out, size_t out_stride);
}

namespace om::kernels {

static_assert(kGemmMRMultiple % avx512::kMR == 0 && kGemmNRMultiple % avx512::kNR == 0,
              "workspace bounds cover the AVX-512 tile");
static_assert(kGemmMC % avx512::kMR == 0 && kGemmNC % avx512::kNR == 0, "blocks hold whole tiles");

const KernelTable& avx512_table() {
  static const KernelTable t = [] {
    KernelTable k = avx2_table();
    k.isa = Isa::Avx512;
    k.unary = avx512::f32_unary__avx512;
    k.softmax_rows_fast = +[](const float* x, float* y, size_t rows, size_t n, bool log) {
      avx512::f32_softmax_rows_fast__avx512(x, y, rows, n, log, avx2_table().softmax_rows);
    };
    k.gemm = GemmTile{avx512::kMR, avx512::kNR, avx512::f32_gemm_12x32__avx512, avx512::f32_gemm_small__avx512,
                      avx512::f32_gemm_rows_12x32__avx512, avx2::pack_a_12__avx2};
    return k;  // built on the AVX2 table (complete by static_assert); the test over every ISA checks it
  }();
  return t;
}

constexpr ConvKernelTable kAvx512ConvTable = {
    avx512::f32_depthwise_plane__avx512,
    avx512::f32_depthwise_channels__avx512,
    avx512::f32_conv_pack_panels__avx512,
    avx512::f32_conv_fill_padded__avx512,
    avx512::f32_pool_window__avx512,
    avx512::f32_winograd_input__avx512,
    avx512::f32_winograd_output__avx512,
};
const ConvKernelTable& avx512_conv_table() { return kAvx512ConvTable; }

// The AVX2 table (the same integers; vpmaddwd on 16 lanes needs AVX512BW, which the ISA does not
// ask for), with the AVX-512 requantization and quantization, and where the CPU has AVX-512 VNNI
// (with BW: cpu_has_avx512_vnni checks it) the 512-bit products, the 16-lane depthwise product and
// its 32-word layout; AMX's products where the CPU and the OS allow the tiles.
const Q8KernelTable& avx512_q8_table() {
  static const Q8KernelTable t = [] {
    Q8KernelTable k = avx2_q8_table();
    k.q8_requantize = avx512::q8_requantize__avx512;
    k.q8_quantize = avx512::q8_quantize__avx512;
    k.q8_range = avx512::q8_range__avx512;
    if (cpu_has_avx512_vnni()) {
      k.q8_dot = avx512::q8_dot__avx512vnni;
      k.q8_dot_taps = avx512::q8_dot_taps__avx512vnni;
      k.q8_interleave4 = avx512::q8_interleave4__avx512vnni;  // vpdpbusd sums the bytes (BW with it)
      k.q8_pair_dot = avx512::q8_pair_dot__avx512vnni;
      k.q8_pair_rows = avx512::q8_pair_rows__avx512bw;
    }
    if (cpu_has_amx_int8() && avx512::amx_usable()) {
      k.q8_dot = avx512::q8_dot__amx;
      k.q8_dot_taps = avx512::q8_dot_taps__amx;
    }
    return k;
  }();
  return t;
}

}  // namespace om::kernels
