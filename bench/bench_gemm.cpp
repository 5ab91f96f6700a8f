// f32 GEMM throughput (one thread, or --threads N splitting the output columns) of every ISA this machine runs, as GFLOP/s and as fractions of
// the 256-bit and 512-bit FMA peaks (x86; the NEON peak on AArch64), both measured in the same run
// by loops of independent vector FMAs. Square sizes 64..1024 with B as given and pre-packed
// (gemm_pack_b once, f32_gemm_prepacked timed), then the MLP layer shapes M = 1 and M = 32 with
// K = N = 512. Exact mode is timed: fast mode runs the same kernels (GEMM is exact in both).
// With --threads N > 1 it also prints what handing a job to the pool costs: a job of empty parts
// while the workers still poll (back to back) and after they went to sleep.
// Usage: bench_gemm [min_seconds_per_point] [--threads N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "fma_peak.h"
#include "onemodel/kernels/kernels.h"
#include "onemodel/kernels/thread_pool.h"
#include <thread>

using namespace om::kernels;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Best-of-runs GFLOP/s of C[M,N] = A[M,K] * B[K,N], B as given or pre-packed.
double gemm_gflops(size_t M, size_t N, size_t K, bool prepacked, double min_seconds) {
  std::vector<float> a(M * K), b(K * N), c(M * N);
  for (size_t i = 0; i < a.size(); ++i) a[i] = float(i % 13) * 0.1f - 0.6f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = float(i % 7) * 0.2f - 0.5f;
  std::vector<float> ws(gemm_workspace_floats(M, N, K));
  std::vector<float> packed_storage(gemm_packed_b_floats(K, N) + 16);
  float* packed = packed_storage.data();
  while (reinterpret_cast<uintptr_t>(packed) % 64 != 0) ++packed;
  if (prepacked) gemm_pack_b(b.data(), ptrdiff_t(N), 1, K, N, packed);
  GemmArgs g;
  g.M = M, g.N = N, g.K = K;
  g.a = a.data(), g.a_rs = ptrdiff_t(K), g.b = b.data(), g.b_rs = ptrdiff_t(N);
  g.c = c.data(), g.ldc = N, g.workspace = ws.data();
  auto run = [&] {
    if (prepacked) f32_gemm_prepacked(g, packed, om::ArithmeticMode::Exact);
    else f32_gemm(g, om::ArithmeticMode::Exact);
  };
  run();  // warm up caches and pages
  double best = 1e30, total = 0;
  int runs = 0;
  while (total < min_seconds || runs < 3) {
    const auto t0 = Clock::now();
    run();
    const double s = seconds_since(t0);
    best = std::min(best, s);
    total += s;
    ++runs;
  }
  return 2.0 * double(M) * double(N) * double(K) / best * 1e-9;
}

// Median microseconds of one pool job of `threads` empty parts: back to back, or each after the
// workers slept (a pause well past ThreadPool::kSpinMicros).
double job_micros(ThreadPool& pool, bool asleep) {
  std::vector<double> t;
  for (int i = 0; i < (asleep ? 200 : 20000); ++i) {
    if (asleep) std::this_thread::sleep_for(std::chrono::microseconds(20 * ThreadPool::kSpinMicros));
    const auto t0 = Clock::now();
    pool.run(size_t(pool.threads()), [](void*, size_t, size_t) {}, nullptr);
    t.push_back(seconds_since(t0) * 1e6);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

std::string pct(double x, double peak) {
  if (peak <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * x / peak);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  double min_seconds = 0.3;
  int threads = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--threads" && i + 1 < argc) threads = std::max(1, std::atoi(argv[++i]));
    else min_seconds = std::atof(argv[i]);
  }
  set_default_threads(threads);  // the pool eager kernels (and so these products) split over
  const Isa native = active_isa();
  bench::Peaks peaks = bench::fma_peaks();
  std::printf("%d thread%s, best of runs, exact mode; native isa: %s\n", threads, threads == 1 ? "" : "s", isa_name(native));
  if (threads > 1) {
    peaks.p256 *= threads;  // one core's peak, measured by one thread, times the threads
    peaks.p512 *= threads;
    std::printf("peaks below: one core's, times %d\n", threads);
    ThreadPool pool(threads);
    std::printf("pool job of %d empty parts: %.1f us back to back, %.1f us after the workers slept (medians)\n", threads,
                job_micros(pool, false), job_micros(pool, true));
  }
#if defined(__aarch64__)
  std::printf("FMA peak (128-bit NEON): %.1f GFLOP/s\n", peaks.p256);
#else
  std::printf("FMA peak 256-bit: %.1f GFLOP/s, 512-bit: %.1f GFLOP/s\n", peaks.p256, peaks.p512);
#endif
  const char* l256 = "%p256";
  const char* l512 = "%p512";
  for (Isa isa : {Isa::Avx2, Isa::Avx512, Isa::Neon}) {
    if (!force_isa(isa)) continue;
    std::printf("\nisa %s\n%6s %6s %6s %10s %8s %8s %12s %8s %8s\n", isa_name(isa), "M", "K", "N", "GFLOP/s", l256,
                l512, "prepacked", l256, l512);
    struct Shape { size_t M, K, N; };
    for (Shape s : {Shape{64, 64, 64}, Shape{128, 128, 128}, Shape{256, 256, 256}, Shape{512, 512, 512},
                    Shape{1024, 1024, 1024}, Shape{1, 512, 512}, Shape{32, 512, 512}}) {
      const double f = gemm_gflops(s.M, s.N, s.K, false, min_seconds);
      const double p = gemm_gflops(s.M, s.N, s.K, true, min_seconds);
      std::printf("%6zu %6zu %6zu %10.1f %8s %8s %12.1f %8s %8s\n", s.M, s.K, s.N, f, pct(f, peaks.p256).c_str(),
                  pct(f, peaks.p512).c_str(), p, pct(p, peaks.p256).c_str(), pct(p, peaks.p512).c_str());
    }
  }
  force_isa(native);
  return 0;
}
