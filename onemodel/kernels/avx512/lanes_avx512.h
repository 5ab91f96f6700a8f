// 16-lane AVX-512F operations for exact/math_impl.h and the row kernels (elementwise chains).
// Each one has the same rounding and the same compare/select semantics as the scalar and AVX2
// lanes (_mm512_max_ps(a, b) is a > b ? a : b, as _mm256_max_ps), so the library's functions give
// the same bits here as everywhere; masks are AVX-512's k registers instead of float vectors.
#pragma once
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "onemodel/kernels/exact/math_impl.h"

namespace om::kernels::avx512 {

// GCC 12's unmasked forms of some intrinsics (max, min, conversions, shifts, and-not) start
// from a self-initialised "undefined" vector that -Wmaybe-uninitialized reports wherever they
// are inlined; their zero-masked forms over every lane compute the same and do not.
constexpr __mmask16 kAll = 0xffff;

struct Lanes {
  using F = __m512;
  using I = __m512i;
  using M = __mmask16;
  static F set(float v) { return _mm512_set1_ps(v); }
  static I seti(int32_t v) { return _mm512_set1_epi32(v); }
  static F add(F a, F b) { return _mm512_add_ps(a, b); }
  static F sub(F a, F b) { return _mm512_sub_ps(a, b); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F fma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static M gt(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
  static M lt(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static M eq(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
  static M isnan(F a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
  static F select(M m, F a, F b) { return _mm512_mask_blend_ps(m, b, a); }
  static F maxgt(F a, F b) { return _mm512_maskz_max_ps(kAll, a, b); }
  static F mingt(F a, F b) { return _mm512_maskz_min_ps(kAll, a, b); }
  static I as_int(F a) { return _mm512_castps_si512(a); }
  static F as_float(I i) { return _mm512_castsi512_ps(i); }
  static I sign_bits() { return _mm512_set1_epi32(int32_t(0x80000000u)); }
  static F abs(F a) { return as_float(_mm512_maskz_andnot_epi32(kAll, sign_bits(), as_int(a))); }
  static F neg(F a) { return as_float(_mm512_xor_si512(as_int(a), sign_bits())); }
  static F neg_abs(F a) { return as_float(_mm512_or_si512(as_int(a), sign_bits())); }
  static F copysign_pos(F mag, F s) {
    return as_float(_mm512_or_si512(as_int(mag), _mm512_and_si512(as_int(s), sign_bits())));
  }
  static I to_int(F a) { return _mm512_maskz_cvttps_epi32(kAll, a); }
  static F to_float(I i) { return _mm512_maskz_cvtepi32_ps(kAll, i); }
  static I iadd(I a, I b) { return _mm512_add_epi32(a, b); }
  static I isub(I a, I b) { return _mm512_sub_epi32(a, b); }
  static I isra(I a, int s) { return _mm512_maskz_srai_epi32(kAll, a, unsigned(s)); }
  static I ishl(I a, int s) { return _mm512_maskz_slli_epi32(kAll, a, unsigned(s)); }
  static I iand(I a, I b) { return _mm512_and_si512(a, b); }
  static bool any(M m) { return m != 0; }
  static bool all(M m) { return m == 0xffff; }
};

using Math = exact::MathImpl<Lanes>;

// A horizontal reduction, lanes in order (0 first).
template <class Op>
inline float reduce16(__m512 v, Op op) {
  alignas(64) float l[16];
  _mm512_store_ps(l, v);
  float r = l[0];
  for (int i = 1; i < 16; ++i) r = op(r, l[i]);
  return r;
}

// Memory, division and a horizontal sum (lanes in order; only Fast mode sums this way) for the row kernels over
// these lanes (elementwise chains, the Fast-mode softmax).
struct Io {
  static constexpr size_t L = 16;
  static __m512 loadu(const float* p) { return _mm512_loadu_ps(p); }
  static void storeu(float* p, __m512 v) { _mm512_storeu_ps(p, v); }
  static __m512 div(__m512 a, __m512 b) { return _mm512_div_ps(a, b); }
  static float hsum(__m512 v) { return reduce16(v, [](float a, float b) { return a + b; }); }
};

}  // namespace om::kernels::avx512
