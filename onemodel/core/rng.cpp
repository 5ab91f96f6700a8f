#include <cmath>

#include "onemodel/core/tensor.h"
#include "onemodel/core/tensor_internal.h"
#include "onemodel/kernels/kernels.h"

namespace om {

// PCG32 (XSH RR): integer-only, so the stream is the same on every platform.
Generator::Generator(uint64_t s) { seed(s); }

void Generator::seed(uint64_t s) {
  state_ = 0;
  has_spare_ = false;
  next_u32();
  state_ += s;
  next_u32();
}

uint32_t Generator::next_u32() {
  const uint64_t old = state_;
  state_ = old * 6364136223846793005ULL + 1442695040888963407ULL;
  const uint32_t xorshifted = uint32_t(((old >> 18u) ^ old) >> 27u);
  const uint32_t rot = uint32_t(old >> 59u);
  return (xorshifted >> rot) | (xorshifted << ((32 - rot) & 31));
}

float Generator::uniform() { return float(next_u32() >> 8) * (1.0f / 16777216.0f); }

float Generator::normal() {
  // Marsaglia's polar method: only +, *, sqrt (correctly rounded everywhere) and the library's
  // own log, so normals are bit-identical across machines.
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  float u, v, s;
  do {
    u = 2.0f * uniform() - 1.0f;
    v = 2.0f * uniform() - 1.0f;
    s = u * u + v * v;
  } while (s >= 1.0f || s == 0.0f);
  const float f = std::sqrt(-2.0f * kernels::log_f32(s) / s);
  spare_ = v * f;
  has_spare_ = true;
  return u * f;
}

Generator& default_generator() {
  static thread_local Generator gen;
  return gen;
}

Tensor rand(const Shape& shape, Generator& gen) {
  Tensor t = empty(shape, DType::f32);
  float* p = detail::raw_as<float>(t);
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = gen.uniform();
  return t;
}

Tensor randn(const Shape& shape, Generator& gen) {
  Tensor t = empty(shape, DType::f32);
  float* p = detail::raw_as<float>(t);
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = gen.normal();
  return t;
}

}  // namespace om
