// Floating-point to integer conversion with every input defined (a plain C++ cast is undefined
// for NaN and out-of-range values). Shared by the eager conversions (core/tensor.cpp) and the
// graph Cast kernel so both give the same integers.
#pragma once
#include <cstdint>

namespace om {

// Truncates toward zero. Values whose truncation lies in [-2^63, 2^64) are reduced modulo
// 2^width of I (as an integer-to-integer conversion would); NaN, infinities and anything
// beyond become 0.
template <typename I>
I float_to_int(double v) {
  if (!(v >= -9223372036854775808.0 && v < 18446744073709551616.0)) return I(0);
  const uint64_t bits = v < 0 ? uint64_t(int64_t(v)) : uint64_t(v);
  return static_cast<I>(bits);
}

}  // namespace om
