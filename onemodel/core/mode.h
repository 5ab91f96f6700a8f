// The eager layer's arithmetic mode (ArithmeticMode itself: kernels/arithmetic_mode.h).
#pragma once
#include "onemodel/kernels/arithmetic_mode.h"

namespace om {

// The eager layer's current mode (thread-local); sessions take theirs from SessionOptions.
ArithmeticMode current_arithmetic_mode();

class ArithmeticModeGuard {
 public:
  explicit ArithmeticModeGuard(ArithmeticMode mode);
  ~ArithmeticModeGuard();
  ArithmeticModeGuard(const ArithmeticModeGuard&) = delete;
  ArithmeticModeGuard& operator=(const ArithmeticModeGuard&) = delete;

 private:
  ArithmeticMode previous_;
};

}  // namespace om
