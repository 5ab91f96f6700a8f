// 4-lane NEON (AArch64) operations for exact/math_impl.h, with the same rounding and the same
// compare/select semantics as the scalar lanes (maxgt is a > b ? a : b, not FMAX).
#pragma once
#include <arm_neon.h>

#include <cstddef>
#include <cstdint>

#include "onemodel/kernels/exact/math_impl.h"

namespace om::kernels::neon {

struct Lanes {
  using F = float32x4_t;
  using I = int32x4_t;
  using M = uint32x4_t;
  static F set(float v) { return vdupq_n_f32(v); }
  static I seti(int32_t v) { return vdupq_n_s32(v); }
  static F add(F a, F b) { return vaddq_f32(a, b); }
  static F sub(F a, F b) { return vsubq_f32(a, b); }
  static F mul(F a, F b) { return vmulq_f32(a, b); }
  static F fma(F a, F b, F c) { return vfmaq_f32(c, a, b); }
  static M gt(F a, F b) { return vcgtq_f32(a, b); }
  static M lt(F a, F b) { return vcltq_f32(a, b); }
  static M eq(F a, F b) { return vceqq_f32(a, b); }
  static M isnan(F a) { return vmvnq_u32(vceqq_f32(a, a)); }
  static F select(M m, F a, F b) { return vbslq_f32(m, a, b); }
  static F maxgt(F a, F b) { return vbslq_f32(vcgtq_f32(a, b), a, b); }
  static F mingt(F a, F b) { return vbslq_f32(vcltq_f32(a, b), a, b); }
  static I as_int(F a) { return vreinterpretq_s32_f32(a); }
  static F as_float(I i) { return vreinterpretq_f32_s32(i); }
  static F abs(F a) { return vabsq_f32(a); }  // clears the sign bit only
  static F neg(F a) { return vnegq_f32(a); }  // flips the sign bit only
  static F neg_abs(F a) { return vnegq_f32(vabsq_f32(a)); }
  static F copysign_pos(F mag, F s) {
    const uint32x4_t sign = vandq_u32(vreinterpretq_u32_f32(s), vdupq_n_u32(0x80000000u));
    return vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(mag), sign));
  }
  static I to_int(F a) { return vcvtq_s32_f32(a); }
  static F to_float(I i) { return vcvtq_f32_s32(i); }
  static I iadd(I a, I b) { return vaddq_s32(a, b); }
  static I isub(I a, I b) { return vsubq_s32(a, b); }
  static I isra(I a, int s) { return vshlq_s32(a, vdupq_n_s32(-s)); }
  static I ishl(I a, int s) { return vshlq_s32(a, vdupq_n_s32(s)); }
  static I iand(I a, I b) { return vandq_s32(a, b); }
  static bool any(M m) { return vmaxvq_u32(m) != 0; }
  static bool all(M m) { return vminvq_u32(m) == 0xffffffffu; }
};

using Math = exact::MathImpl<Lanes>;

// Memory and division for the row kernels over these lanes (softmax, elementwise chains).
struct Io {
  static constexpr size_t L = 4;
  static float32x4_t loadu(const float* p) { return vld1q_f32(p); }
  static void storeu(float* p, float32x4_t v) { vst1q_f32(p, v); }
  static float32x4_t div(float32x4_t a, float32x4_t b) { return vdivq_f32(a, b); }
  static float hsum(float32x4_t v) { return vaddvq_f32(v); }
};

}  // namespace om::kernels::neon
