// Arithmetic modes. Fast lets kernels choose the quickest order; Exact fixes summation order and
// uses the library's own transcendental functions so results are bit-identical on every ISA.
#pragma once

namespace om {

enum class ArithmeticMode { Fast, Exact };

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
