// The single-core FMA peak of this machine, measured in the same run as a benchmark: enough
// independent accumulator chains to cover the FMA latency on every port, best of many short
// trials. On a machine shared with other work (or a busy sibling hardware thread) one long trial
// often reads half the peak; the best of short trials finds the uncontended rate, the strictest
// denominator. Callers may measure again after their timings and keep the larger reading.
// Shared by the benchmark programs (bench_gemm, bench_conv, bench_session).
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "onemodel/kernels/kernels.h"

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace bench {

using PeakClock = std::chrono::steady_clock;
constexpr int kPeakTrials = 16;
constexpr long kPeakTrialIters = 5000000;  // about 10-20 ms per trial
inline double peak_seconds_since(PeakClock::time_point t0) {
  return std::chrono::duration<double>(PeakClock::now() - t0).count();
}

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) inline double fma_peak_gflops_avx2() {
  double best = 0;
  for (int rep = 0; rep < kPeakTrials; ++rep) {
    __m256 acc[12];
    for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_ps(float(i) * 1e-3f);
    const __m256 m = _mm256_set1_ps(0.999999f), a = _mm256_set1_ps(1e-7f);
    const long iters = kPeakTrialIters;
    const auto t0 = PeakClock::now();
    for (long it = 0; it < iters; ++it) {
      for (int i = 0; i < 12; ++i) acc[i] = _mm256_fmadd_ps(acc[i], m, a);
      __asm__ volatile("" : "+x"(acc[0]), "+x"(acc[1]), "+x"(acc[2]), "+x"(acc[3]), "+x"(acc[4]), "+x"(acc[5]));
    }
    const double s = peak_seconds_since(t0);
    float sink = 0;
    for (int i = 0; i < 12; ++i) sink += _mm256_cvtss_f32(acc[i]);
    if (sink == 12345.0f) std::printf(" ");
    best = std::max(best, double(iters) * 12 * 8 * 2 / s * 1e-9);
  }
  return best;
}
__attribute__((target("avx512f"))) inline double fma_peak_gflops_avx512() {
  double best = 0;
  for (int rep = 0; rep < kPeakTrials; ++rep) {
    __m512 acc[12];
    for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_ps(float(i) * 1e-3f);
    const __m512 m = _mm512_set1_ps(0.999999f), a = _mm512_set1_ps(1e-7f);
    const long iters = kPeakTrialIters;
    const auto t0 = PeakClock::now();
    for (long it = 0; it < iters; ++it) {
      for (int i = 0; i < 12; ++i) acc[i] = _mm512_fmadd_ps(acc[i], m, a);
      __asm__ volatile("" : "+v"(acc[0]), "+v"(acc[1]), "+v"(acc[2]), "+v"(acc[3]), "+v"(acc[4]), "+v"(acc[5]));
    }
    const double s = peak_seconds_since(t0);
    float sink = 0;
    for (int i = 0; i < 12; ++i) sink += _mm512_reduce_add_ps(acc[i]);
    if (sink == 12345.0f) std::printf(" ");
    best = std::max(best, double(iters) * 12 * 16 * 2 / s * 1e-9);
  }
  return best;
}
#endif
#if defined(__aarch64__)
inline double fma_peak_gflops_neon() {
  double best = 0;
  for (int rep = 0; rep < kPeakTrials; ++rep) {
    float32x4_t acc[16];
    for (int i = 0; i < 16; ++i) acc[i] = vdupq_n_f32(float(i) * 1e-3f);
    const float32x4_t m = vdupq_n_f32(0.999999f), a = vdupq_n_f32(1e-7f);
    const long iters = kPeakTrialIters;
    const auto t0 = PeakClock::now();
    for (long it = 0; it < iters; ++it)
      for (int i = 0; i < 16; ++i) acc[i] = vfmaq_f32(a, acc[i], m);
    const double s = peak_seconds_since(t0);
    float sink = 0;
    for (int i = 0; i < 16; ++i) sink += vgetq_lane_f32(acc[i], 0);
    if (sink == 12345.0f) std::printf(" ");
    best = std::max(best, double(iters) * 16 * 4 * 2 / s * 1e-9);
  }
  return best;
}
#endif

struct Peaks {
  double p256 = 0, p512 = 0;  // on AArch64 p256 holds the 128-bit NEON peak
};

inline Peaks max_peaks(const Peaks& a, const Peaks& b) {
  return Peaks{std::max(a.p256, b.p256), std::max(a.p512, b.p512)};
}

// 256- and 512-bit peaks on x86 (zero where the CPU lacks the ISA); the NEON peak on AArch64.
inline Peaks fma_peaks() {
  Peaks p;
#if defined(__x86_64__)
  if (om::kernels::isa_supported(om::kernels::Isa::Avx2)) p.p256 = fma_peak_gflops_avx2();
  if (om::kernels::isa_supported(om::kernels::Isa::Avx512)) p.p512 = fma_peak_gflops_avx512();
#endif
#if defined(__aarch64__)
  if (om::kernels::isa_supported(om::kernels::Isa::Neon)) p.p256 = fma_peak_gflops_neon();
#endif
  return p;
}

}  // namespace bench
