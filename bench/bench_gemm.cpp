// Single-thread f32 GEMM throughput (fast and exact mode) at square sizes, as a fraction of this
// machine's FMA peak, which is measured in the same run by a loop of independent vector FMAs.
// Usage: bench_gemm [min_seconds_per_point]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "onemodel/kernels/kernels.h"

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

using namespace om::kernels;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Peak single-precision FMA rate of one core for the active ISA: enough independent accumulator
// chains to cover the FMA latency on every FMA port. Best of several runs.
#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) double fma_peak_gflops_avx2() {
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    __m256 acc[12];
    for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_ps(float(i) * 1e-3f);
    const __m256 m = _mm256_set1_ps(0.999999f), a = _mm256_set1_ps(1e-7f);
    const long iters = 20000000;
    const auto t0 = Clock::now();
    for (long it = 0; it < iters; ++it) {
      for (int i = 0; i < 12; ++i) acc[i] = _mm256_fmadd_ps(acc[i], m, a);
      __asm__ volatile("" : "+x"(acc[0]), "+x"(acc[1]), "+x"(acc[2]), "+x"(acc[3]), "+x"(acc[4]), "+x"(acc[5]));
    }
    const double s = seconds_since(t0);
    float sink = 0;
    for (int i = 0; i < 12; ++i) sink += _mm256_cvtss_f32(acc[i]);
    if (sink == 12345.0f) std::printf(" ");
    best = std::max(best, double(iters) * 12 * 8 * 2 / s * 1e-9);
  }
  return best;
}
#endif
#if defined(__aarch64__)
double fma_peak_gflops_neon() {
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    float32x4_t acc[16];
    for (int i = 0; i < 16; ++i) acc[i] = vdupq_n_f32(float(i) * 1e-3f);
    const float32x4_t m = vdupq_n_f32(0.999999f), a = vdupq_n_f32(1e-7f);
    const long iters = 20000000;
    const auto t0 = Clock::now();
    for (long it = 0; it < iters; ++it)
      for (int i = 0; i < 16; ++i) acc[i] = vfmaq_f32(a, acc[i], m);
    const double s = seconds_since(t0);
    float sink = 0;
    for (int i = 0; i < 16; ++i) sink += vgetq_lane_f32(acc[i], 0);
    if (sink == 12345.0f) std::printf(" ");
    best = std::max(best, double(iters) * 16 * 4 * 2 / s * 1e-9);
  }
  return best;
}
#endif

double fma_peak_gflops() {
#if defined(__x86_64__)
  if (active_isa() == Isa::Avx2) return fma_peak_gflops_avx2();
#endif
#if defined(__aarch64__)
  if (active_isa() == Isa::Neon) return fma_peak_gflops_neon();
#endif
  return 0;
}

double gemm_gflops(size_t n, om::ArithmeticMode mode, double min_seconds) {
  std::vector<float> a(n * n), b(n * n), c(n * n);
  for (size_t i = 0; i < n * n; ++i) a[i] = float(i % 13) * 0.1f - 0.6f, b[i] = float(i % 7) * 0.2f - 0.5f;
  std::vector<float> ws(gemm_workspace_floats(n, n, n));
  GemmArgs g;
  g.M = g.N = g.K = n;
  g.a = a.data(), g.a_rs = ptrdiff_t(n), g.b = b.data(), g.b_rs = ptrdiff_t(n);
  g.c = c.data(), g.ldc = n, g.workspace = ws.data();
  f32_gemm(g, mode);  // warm up caches and pages
  double best = 1e30;
  double total = 0;
  int runs = 0;
  while (total < min_seconds || runs < 3) {
    const auto t0 = Clock::now();
    f32_gemm(g, mode);
    const double s = seconds_since(t0);
    best = std::min(best, s);
    total += s;
    ++runs;
  }
  return 2.0 * double(n) * double(n) * double(n) / best * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  const double min_seconds = argc > 1 ? std::atof(argv[1]) : 0.3;
  std::printf("isa: %s (one thread, best of runs)\n", isa_name(active_isa()));
  const double peak = fma_peak_gflops();
  if (peak > 0) std::printf("FMA peak: %.1f GFLOP/s\n", peak);
  std::printf("%6s %14s %8s %14s %8s\n", "n", "fast GFLOP/s", "% peak", "exact GFLOP/s", "% peak");
  for (size_t n : {64, 128, 256, 512, 1024}) {
    const double f = gemm_gflops(n, om::ArithmeticMode::Fast, min_seconds);
    const double e = gemm_gflops(n, om::ArithmeticMode::Exact, min_seconds);
    std::printf("%6zu %14.1f %7.1f%% %14.1f %7.1f%%\n", n, f, peak > 0 ? 100 * f / peak : 0.0, e,
                peak > 0 ? 100 * e / peak : 0.0);
  }
  return 0;
}
