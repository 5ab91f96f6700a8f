// Per-element definitions shared by the scalar reference and by every SIMD kernel's scalar tail,
// so a tail element has exactly the bits of the vector body and of the reference.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "onemodel/kernels/exact/math.h"
#include "onemodel/kernels/kernels.h"

namespace om::kernels::elem {

inline uint32_t bits(float x) { return exact::float_bits(x); }
inline float from_bits(uint32_t u) { return exact::bits_float(u); }
inline bool is_nan(float x) { return x != x; }

// max/min: NaN when `a` is NaN, otherwise a > b ? a : b (what one compare+select does on every
// ISA, including the order of ±0 ties), so vector and scalar agree bit for bit.
inline float max(float a, float b) { return (a > b || is_nan(a)) ? a : b; }
inline float min(float a, float b) { return (a < b || is_nan(a)) ? a : b; }

float pow(float a, float b);  // scalar only; SIMD kernels call it per element

inline float binary(BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::Add: return a + b;
    case BinaryOp::Sub: return a - b;
    case BinaryOp::Mul: return a * b;
    case BinaryOp::Div: return a / b;
    case BinaryOp::Max: return max(a, b);
    case BinaryOp::Min: return min(a, b);
    case BinaryOp::Pow: return pow(a, b);
  }
  return 0.0f;
}

inline float unary(UnaryOp op, float x) {
  switch (op) {
    case UnaryOp::Identity: return x;
    case UnaryOp::Neg: return from_bits(bits(x) ^ 0x80000000u);
    case UnaryOp::Relu: return x < 0.0f ? 0.0f : x;  // keeps NaN and -0
    case UnaryOp::Sigmoid: return exact::sigmoid(x);
    case UnaryOp::Tanh: return exact::tanh(x);
    case UnaryOp::GeluErf: return exact::gelu_erf(x);
    case UnaryOp::GeluTanh: return exact::gelu_tanh(x);
    case UnaryOp::Exp: return exact::exp(x);
    case UnaryOp::Log: return exact::log(x);
    case UnaryOp::Erf: return exact::erf(x);
    case UnaryOp::Sqrt: return std::sqrt(x);  // IEEE correctly rounded everywhere
    case UnaryOp::Abs: return from_bits(bits(x) & 0x7fffffffu);
    case UnaryOp::Reciprocal: return 1.0f / x;
  }
  return x;
}

// The one combine order of the 8 lane partial sums (kernels.h).
inline float combine8(const float l[8]) {
  return ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]));
}

// Exact sum of the strided sequence x[0], x[stride], ..., x[(n-1)*stride] (the kernels.h rule).
inline float sum_strided(const float* x, size_t n, size_t stride) {
  float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  const size_t body = n / 8 * 8;
  for (size_t k = 0; k < body; k += 8)
    for (size_t l = 0; l < 8; ++l) lane[l] += x[(k + l) * stride];
  float s = combine8(lane);
  for (size_t k = body; k < n; ++k) s += x[k * stride];
  return s;
}

// max over a sequence: NaN (canonical quiet NaN) if any element is NaN, else the largest value
// with +0 counted above -0. This is order-free, so vector kernels may use any lane layout.
inline float max_commutative(float a, float b) {
  const float m1 = a > b ? a : b;
  const float m2 = b > a ? b : a;
  return from_bits(bits(m1) & bits(m2));
}
constexpr uint32_t kCanonicalNan = 0x7fc00000u;

// IEEE binary16 conversions with the hardware's rules (F16C, AArch64 FCVT): round to nearest
// even, NaN keeps the top payload bits and becomes quiet.
uint16_t f32_to_f16(float f);
float f16_to_f32(uint16_t h);

}  // namespace om::kernels::elem
