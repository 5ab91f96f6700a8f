// 8-lane AVX2+FMA operations for exact/math_impl.h. Each one has the same rounding and the same
// compare/select semantics as the scalar lanes (e.g. _mm256_max_ps(a, b) is a > b ? a : b).
#pragma once
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "onemodel/kernels/exact/math_impl.h"

namespace om::kernels::avx2 {

struct Lanes {
  using F = __m256;
  using I = __m256i;
  using M = __m256;
  static F set(float v) { return _mm256_set1_ps(v); }
  static I seti(int32_t v) { return _mm256_set1_epi32(v); }
  static F add(F a, F b) { return _mm256_add_ps(a, b); }
  static F sub(F a, F b) { return _mm256_sub_ps(a, b); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static M gt(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
  static M lt(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static M eq(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
  static M isnan(F a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
  static F select(M m, F a, F b) { return _mm256_blendv_ps(b, a, m); }
  static F maxgt(F a, F b) { return _mm256_max_ps(a, b); }
  static F mingt(F a, F b) { return _mm256_min_ps(a, b); }
  static I as_int(F a) { return _mm256_castps_si256(a); }
  static F as_float(I i) { return _mm256_castsi256_ps(i); }
  static F sign_mask() { return _mm256_castsi256_ps(_mm256_set1_epi32(int32_t(0x80000000u))); }
  static F abs(F a) { return _mm256_andnot_ps(sign_mask(), a); }
  static F neg(F a) { return _mm256_xor_ps(a, sign_mask()); }
  static F neg_abs(F a) { return _mm256_or_ps(a, sign_mask()); }
  static F copysign_pos(F mag, F s) { return _mm256_or_ps(mag, _mm256_and_ps(s, sign_mask())); }
  static I to_int(F a) { return _mm256_cvttps_epi32(a); }
  static F to_float(I i) { return _mm256_cvtepi32_ps(i); }
  static I iadd(I a, I b) { return _mm256_add_epi32(a, b); }
  static I isub(I a, I b) { return _mm256_sub_epi32(a, b); }
  static I isra(I a, int s) { return _mm256_srai_epi32(a, s); }
  static I ishl(I a, int s) { return _mm256_slli_epi32(a, s); }
  static I iand(I a, I b) { return _mm256_and_si256(a, b); }
  static bool any(M m) { return _mm256_movemask_ps(m) != 0; }
  static bool all(M m) { return _mm256_movemask_ps(m) == 0xff; }
};

using Math = exact::MathImpl<Lanes>;

// Memory and division for the row kernels over these lanes (softmax, elementwise chains).
struct Io {
  static constexpr size_t L = 8;
  static __m256 loadu(const float* p) { return _mm256_loadu_ps(p); }
  static void storeu(float* p, __m256 v) { _mm256_storeu_ps(p, v); }
  static __m256 div(__m256 a, __m256 b) { return _mm256_div_ps(a, b); }
  static float hsum(__m256 v) {
    const __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    const __m128 q = _mm_add_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_add_ss(q, _mm_movehdup_ps(q)));
  }
};

}  // namespace om::kernels::avx2
