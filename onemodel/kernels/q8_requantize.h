// The loop of q8_gemm.h's q8_requantize: the scalar table's and NEON's entry, and the tail of
// AVX2's (AVX-512 and AVX2 write theirs out with intrinsics), and q8_quantize's loop, compiled by
// each file with its own flags: always_inline, so no file calls another ISA's copy.
#pragma once
#include "onemodel/kernels/q8_gemm.h"

namespace om::kernels::q8 {

template <typename T>
__attribute__((always_inline)) inline void requantize_as(const Q8Requant& q) {
  T* out = static_cast<T*>(q.out);
  const int32_t* raw = q.raw;
  const int32_t* cs = q.col_sums;
  const uint32_t add = q.row_add, za = uint32_t(q.za);
  const float mult = q.mult;
  const int32_t zp = q.zp, lo = q.lo, hi = q.hi;
  const size_t n = q.n;  // a local: the byte stores below could alias q's fields
  if (const float* mults = q.mults) {
    for (size_t j = 0; j < n; ++j) {
      const int32_t acc = int32_t(uint32_t(raw[j]) + add - za * uint32_t(cs[j]));
      out[j] = T(q8_saturate_round(float(acc) * mults[j], zp, lo, hi));
    }
    return;
  }
  for (size_t j = 0; j < n; ++j) {
    const int32_t acc = int32_t(uint32_t(raw[j]) + add - za * uint32_t(cs[j]));
    out[j] = T(q8_saturate_round(float(acc) * mult, zp, lo, hi));
  }
}

__attribute__((always_inline)) inline void requantize(const Q8Requant& q) {
  if (q.out_signed) requantize_as<int8_t>(q);
  else requantize_as<uint8_t>(q);
}

// q8_quantize's loop (QuantizeLinear per tensor): x / scale, then q8_saturate_round. Selects, no
// branches, so each ISA's flags vectorise it; the same IEEE division and steps on every ISA.
template <typename T>
__attribute__((always_inline)) inline void quantize_as(const float* x, size_t n, float scale, int32_t zp, int32_t lo,
                                                       int32_t hi, T* out) {
  for (size_t i = 0; i < n; ++i) out[i] = T(q8_saturate_round(x[i] / scale, zp, lo, hi));
}

// q8_range's loop: compared as integers (a float's bits with the magnitude bits flipped for
// negatives order like the float), an integer minimum and maximum that vectorises; non-finite
// elements count as 0 and -0 as +0, and both start at +0, so the range is that of the finite
// elements and 0.
__attribute__((always_inline)) inline void range(const float* x, size_t n, float* lo, float* hi) {
  const auto key = [](float v) {
    int32_t b;
    __builtin_memcpy(&b, &v, sizeof b);
    return b ^ ((b >> 31) & 0x7fffffff);
  };
  int32_t klo = 0, khi = 0;  // key(+0) = 0
  for (size_t i = 0; i < n; ++i) {
    const float v = __builtin_fabsf(x[i]) <= 3.40282347e38f ? x[i] + 0.0f : 0.0f;
    const int32_t kv = key(v);
    klo = kv < klo ? kv : klo;
    khi = kv > khi ? kv : khi;
  }
  const auto value = [](int32_t kv) {
    const int32_t b = kv ^ ((kv >> 31) & 0x7fffffff);  // the same flip undoes itself
    float v;
    __builtin_memcpy(&v, &b, sizeof v);
    return v;
  };
  *lo = value(klo);
  *hi = value(khi);
}

__attribute__((always_inline)) inline void quantize(const float* x, size_t n, float scale, int32_t zp, int32_t lo,
                                                    int32_t hi, void* out, bool out_signed) {
  if (out_signed) quantize_as(x, n, scale, zp, lo, hi, static_cast<int8_t*>(out));
  else quantize_as(x, n, scale, zp, lo, hi, static_cast<uint8_t*>(out));
}

}  // namespace om::kernels::q8
