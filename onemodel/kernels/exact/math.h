// The library's own transcendental functions, scalar forms: exact/math_impl.h instantiated
// with one-lane operations (std::fma is correctly rounded on every target). The AVX2 and NEON
// kernels instantiate the same template, so all three give the same bits. Measured accuracy is
// in docs/exactness.md (tests/kernels/test_math_accuracy.cpp).
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "onemodel/kernels/exact/math_impl.h"

namespace om::kernels::exact {

// A float's bit pattern and back (the scalar lanes' casts and elem::bits / from_bits).
inline uint32_t float_bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}
inline float bits_float(uint32_t u) {
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

struct ScalarLanes {
  using F = float;
  using I = int32_t;
  using M = bool;
  static F set(float v) { return v; }
  static I seti(int32_t v) { return v; }
  static F add(F a, F b) { return a + b; }
  static F sub(F a, F b) { return a - b; }
  static F mul(F a, F b) { return a * b; }
  static F fma(F a, F b, F c) { return std::fma(a, b, c); }
  static M gt(F a, F b) { return a > b; }
  static M lt(F a, F b) { return a < b; }
  static M eq(F a, F b) { return a == b; }
  static M isnan(F a) { return a != a; }
  static F select(M m, F a, F b) { return m ? a : b; }
  static F maxgt(F a, F b) { return a > b ? a : b; }
  static F mingt(F a, F b) { return a < b ? a : b; }
  static I as_int(F a) { return int32_t(float_bits(a)); }
  static F as_float(I i) { return bits_float(uint32_t(i)); }
  static F abs(F a) { return as_float(as_int(a) & 0x7fffffff); }
  static F neg(F a) { return as_float(as_int(a) ^ int32_t(0x80000000u)); }
  static F neg_abs(F a) { return as_float(as_int(a) | int32_t(0x80000000u)); }
  // |mag| with the sign of s (mag is non-negative).
  static F copysign_pos(F mag, F s) { return as_float(as_int(mag) | (as_int(s) & int32_t(0x80000000u))); }
  static I to_int(F a) { return int32_t(a); }
  static F to_float(I i) { return float(i); }
  static I iadd(I a, I b) { return int32_t(uint32_t(a) + uint32_t(b)); }
  static I isub(I a, I b) { return int32_t(uint32_t(a) - uint32_t(b)); }
  static I isra(I a, int s) { return a >> s; }
  static I ishl(I a, int s) { return int32_t(uint32_t(a) << s); }
  static I iand(I a, I b) { return a & b; }
  static bool any(M m) { return m; }
  static bool all(M m) { return m; }
};

using ScalarMath = MathImpl<ScalarLanes>;

// Memory and division for the row kernels over one lane: their tails, and the scalar table.
struct ScalarIo {
  static constexpr size_t L = 1;
  static float loadu(const float* p) { return *p; }
  static void storeu(float* p, float v) { *p = v; }
  static float div(float a, float b) { return a / b; }
};

inline float exp(float x) { return ScalarMath::exp(x); }
inline float log(float x) { return ScalarMath::log(x); }
inline float tanh(float x) { return ScalarMath::tanh(x); }
inline float sigmoid(float x) { return ScalarMath::sigmoid(x); }
inline float erf(float x) { return ScalarMath::erf(x); }
inline float gelu_erf(float x) { return ScalarMath::gelu_erf(x); }
inline float gelu_tanh(float x) { return ScalarMath::gelu_tanh(x); }

}  // namespace om::kernels::exact
