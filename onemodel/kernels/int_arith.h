// Integer Add/Sub/Mul/Neg/Div, defined once for the eager ops (onemodel/ops/elementwise.cpp)
// and the graph kernels (onemodel/graph/ops/arithmetic.cpp), so both layers give the same bits.
//
// Add, Sub, Mul and Neg wrap around modulo 2^bits (two's complement), as ONNX Runtime does; they
// are computed in the unsigned type of the same width, so overflow is never undefined
// behaviour. Div truncates toward zero; INT_MIN / -1 wraps to INT_MIN (the hardware division
// would trap). Division by zero has no result: callers check divisors first with
// int_has_zero() and report an InvalidArgument error naming the operation.
#pragma once
#include <cstdint>
#include <limits>
#include <type_traits>

namespace om::kernels {

template <typename T>
inline T int_wrap_add(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
template <typename T>
inline T int_wrap_sub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
}
template <typename T>
inline T int_wrap_mul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  // Promote explicitly: for narrow types u*u would become int and could overflow.
  using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
  return static_cast<T>(static_cast<U>(static_cast<W>(static_cast<U>(a)) * static_cast<W>(static_cast<U>(b))));
}
template <typename T>
inline T int_wrap_neg(T a) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(U(0) - static_cast<U>(a)));
}
// b must not be 0 (see int_has_zero).
template <typename T>
inline T int_div(T a, T b) {
  if constexpr (std::is_signed_v<T>)
    if (b == T(-1)) return int_wrap_neg(a);  // INT_MIN / -1 == INT_MIN, no trap
  return static_cast<T>(a / b);
}

template <typename T>
inline bool int_has_zero(const T* b, int64_t n, int64_t* at) {
  for (int64_t i = 0; i < n; ++i)
    if (b[i] == T(0)) {
      *at = i;
      return true;
    }
  return false;
}

// One name per operation for the shared error message.
inline const char* int_div_by_zero_text() {
  return "integer division by zero: a divisor element is 0 (onnx leaves it undefined; onemodel refuses it in both the eager "
         "and the graph path); make the divisor nonzero or divide in f32";
}

}  // namespace om::kernels
