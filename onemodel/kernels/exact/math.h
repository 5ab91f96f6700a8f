// The library's own transcendental functions (scalar forms). TEMPORARY: forwards to <cmath>
// until the fixed-operation versions land.
#pragma once
#include <cmath>

namespace om::kernels::exact {

inline float exp(float x) { return std::exp(x); }
inline float log(float x) { return std::log(x); }
inline float tanh(float x) { return std::tanh(x); }
inline float erf(float x) { return std::erf(x); }
inline float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
inline float gelu_erf(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); }
inline float gelu_tanh(float x) {
  return 0.5f * x * (1.0f + std::tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
}

}  // namespace om::kernels::exact
