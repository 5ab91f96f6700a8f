// Deterministic benchmark inputs (a linear congruential sequence): uniform in [-scale/2, scale/2).
// Shared by the benchmark programs that build their graphs in code (bench_conv, bench_bandwidth).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace bench {

inline std::vector<float> values(size_t n, uint32_t seed, float scale = 1.0f) {
  std::vector<float> v(n);
  uint32_t x = seed * 2654435761u + 1;
  for (float& f : v) {
    x = x * 1664525u + 1013904223u;
    f = scale * (float(x >> 8) / float(1 << 24) - 0.5f);
  }
  return v;
}

}  // namespace bench
