// Helpers shared by the kernel tests: ISA switching, input generators with awkward values, and
// bitwise comparison.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "onemodel/kernels/kernels.h"

namespace om::kernels::test {

// The ISA the dispatcher picked for this machine, read when the program starts, before any test
// forces another one (read lazily, it would be whatever ISA was forced at the first call).
inline const Isa kNativeIsa = active_isa();
inline Isa native_isa() { return kNativeIsa; }

// Forces `isa` for a scope, then restores the ISA active before it (so a scope nested inside
// another, such as a reference computed on the scalar kernels, returns to the outer scope's ISA).
struct IsaScope {
  Isa previous;
  explicit IsaScope(Isa isa) : previous(active_isa()) { force_isa(isa); }
  ~IsaScope() { force_isa(previous); }
};

// Every ISA this machine can run (scalar first).
inline std::vector<Isa> available_isas() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512, Isa::Neon})
    if (isa_supported(isa)) out.push_back(isa);
  return out;
}

// A 64-byte aligned float buffer (for gemm_pack_b), `n` floats plus slack.
struct AlignedFloats {
  std::vector<float> storage;
  float* data = nullptr;
  explicit AlignedFloats(size_t n, float fill = 0.0f) : storage(n + 16, fill) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(storage.data());
    data = storage.data() + ((64 - p % 64) % 64) / sizeof(float);
  }
};

inline uint32_t bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}
inline float from_bits(uint32_t u) {
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}
// Bit equality, with all NaNs equal (NaN payloads are outside the exact contract).
inline bool same_bits(float a, float b) { return (a != a && b != b) || bits(a) == bits(b); }

inline size_t first_mismatch(const float* a, const float* b, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (!same_bits(a[i], b[i])) return i;
  return n;
}

// Mostly ordinary values, with a sprinkling of the ones kernels get wrong.
inline std::vector<float> awkward_values(size_t n, uint32_t seed, float scale = 4.0f, bool specials = true) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  static const float kSpecial[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-40f, -1e-40f, 1e30f,
                                   -1e30f, 88.7f, -88.7f, 100.0f, -104.5f, 0.921875f, -4.0f, 0.625f};
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = u(rng);
    if (specials && rng() % 17 == 0) v[i] = kSpecial[rng() % (sizeof(kSpecial) / sizeof(float))];
  }
  return v;
}

// FNV-1a 64 over the bits of the values, NaNs hashed as one canonical NaN.
inline uint64_t fnv1a(uint64_t h, const float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const uint32_t u = x[i] != x[i] ? 0x7fc00000u : bits(x[i]);
    for (int b = 0; b < 4; ++b) {
      h ^= (u >> (8 * b)) & 0xffu;
      h *= 0x100000001b3ull;
    }
  }
  return h;
}
constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ull;

}  // namespace om::kernels::test
