// A 3x3, 64 -> 64 channel convolution at 56x56 (batch 1, padding 1) through a Session, on every
// ISA this machine runs, against the single-core FMA peak measured in the same run
// (docs/performance.md, "Convolution"): Fast (the Winograd form from weights packed when
// planning), Fast without prepacked weights (the direct GEMM form, as Exact computes it) and
// Exact. GFLOP/s count the direct form's 2*M*C*9 flops per output pixel for every row, so the
// Winograd row's figure is the rate the direct form would need to match it.
//
//   bench_conv [--seconds S]
#include <onemodel/onemodel.h>

#include "fma_peak.h"
#include "onemodel/kernels/kernels.h"
#include "bench_values.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;
namespace g = om::graph;


}  // namespace

int main(int argc, char** argv) {
  double seconds = 1.0;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--seconds" && i + 1 < argc) seconds = std::atof(argv[++i]);
  const int64_t C = 64, M = 64, H = 56, W = 56;
  g::Graph gr;
  g::ValueInfo x;
  x.name = "x";
  for (int64_t d : {int64_t(1), C, H, W}) x.shape.push_back(g::Dim::fixed(d));
  gr.inputs = {x};
  gr.initializers = {g::TensorData::from_vector("w", {M, C, 3, 3}, bench::values(size_t(M * C * 9), 1)),
                     g::TensorData::from_vector("b", {M}, bench::values(size_t(M), 2))};
  g::Node n;
  n.op_type = "Conv";
  n.name = "conv";
  n.inputs = {"x", "w", "b"};
  n.outputs = {"y"};
  n.attributes = {g::Attribute::of_ints("pads", {1, 1, 1, 1})};
  gr.nodes = {n};
  g::ValueInfo y;
  y.name = "y";
  gr.outputs = {y};
  const double flops = 2.0 * double(M * C * 9 * H * W);
  std::vector<float> input = bench::values(size_t(C * H * W), 3);
  std::vector<int64_t> dims{1, C, H, W};

  std::printf("bench_conv: 3x3 conv, %lld -> %lld channels, %lldx%lld, batch 1, pads 1 (%.1f MFLOP per run)\n", (long long)C,
              (long long)M, (long long)H, (long long)W, flops * 1e-6);
  // The peak is measured before and after the timings and the larger reading kept (fma_peak.h).
  bench::Peaks peaks;
#if defined(__x86_64__)
  peaks = bench::fma_peaks();
#endif
  struct Row {
    om::kernels::Isa isa;
    om::ArithmeticMode mode;
    bool prepack;
    double median, best;
    size_t arena_kib;
  };
  std::vector<Row> rows;
  const om::kernels::Isa original = om::kernels::active_isa();
  for (om::kernels::Isa isa : {om::kernels::Isa::Avx512, om::kernels::Isa::Avx2, om::kernels::Isa::Neon, om::kernels::Isa::Scalar}) {
    if (!om::kernels::isa_supported(isa) || isa == om::kernels::Isa::Scalar) continue;
    om::kernels::force_isa(isa);
    for (int variant = 0; variant < 3; ++variant) {
      const om::ArithmeticMode mode = variant < 2 ? om::ArithmeticMode::Fast : om::ArithmeticMode::Exact;
      om::SessionOptions o;
      o.mode = mode;
      o.prepack_weights = variant != 1;
      om::Session s(gr, o);
      om::TensorView in, out;
      in.name = "x";
      in.dtype = om::DType::f32;
      in.dims = dims.data();
      in.rank = 4;
      in.data = input.data();
      s.run(&in, 1, &out, 1);  // plan and warm up
      std::vector<double> times;
      const auto start = Clock::now();
      while (std::chrono::duration<double>(Clock::now() - start).count() < seconds || times.size() < 5) {
        const auto t0 = Clock::now();
        s.run(&in, 1, &out, 1);
        times.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
      }
      std::sort(times.begin(), times.end());
      rows.push_back({isa, mode, o.prepack_weights, times[times.size() / 2], times.front(), s.last_plan_stats().arena_bytes / 1024});
    }
  }
#if defined(__x86_64__)
  const bench::Peaks before = peaks, after = bench::fma_peaks();
  peaks = bench::max_peaks(before, after);
  std::printf("FMA peak (1 core, this run, the larger of the readings before / after the timings): 256-bit %.1f GFLOP/s (%.1f / %.1f), "
              "512-bit %.1f GFLOP/s (%.1f / %.1f)\n",
              peaks.p256, before.p256, after.p256, peaks.p512, before.p512, after.p512);
#endif
  for (const Row& r : rows) {
    const double peak = r.isa == om::kernels::Isa::Avx512 ? peaks.p512 : peaks.p256;
    const auto pct = [&](double us) {
      return peak > 0 ? ", " + std::to_string(int(100 * flops / us * 1e-3 / peak + 0.5)) + "% of peak" : std::string();
    };
    const char* label = r.mode == om::ArithmeticMode::Exact ? "Exact" : r.prepack ? "Fast" : "Fast-direct";
    std::printf("%-7s %-11s median %8.1f us (%6.1f GFLOP/s%s)  best %8.1f us (%6.1f GFLOP/s%s)  arena %zu KiB\n",
                om::kernels::isa_name(r.isa), label, r.median,
                flops / r.median * 1e-3, pct(r.median).c_str(), r.best, flops / r.best * 1e-3, pct(r.best).c_str(), r.arena_kib);
  }
  om::kernels::force_isa(original);
  return 0;
}
