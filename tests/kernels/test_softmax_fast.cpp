// Fast-mode softmax / log-softmax on every ISA this machine runs, against a double-precision
// reference computed here from the same float inputs: every row length 1..300 (all vector tails),
// unaligned input and output, -inf entries, large magnitudes, and rows whose maximum is NaN or
// infinite (those must give what Exact mode gives).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernel_test_util.h"

using namespace om::kernels;
using namespace om::kernels::test;
using om::ArithmeticMode;

namespace {

const float kInf = std::numeric_limits<float>::infinity();

// Softmax (or log-softmax) of one row in double precision.
std::vector<double> reference_row(const float* x, size_t n, bool log) {
  double m = -INFINITY;
  for (size_t i = 0; i < n; ++i) m = std::max(m, double(x[i]));
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += std::exp(double(x[i]) - m);
  std::vector<double> y(n);
  for (size_t i = 0; i < n; ++i) y[i] = log ? (double(x[i]) - m) - std::log(s) : std::exp(double(x[i]) - m) / s;
  return y;
}

// Largest |got - ref| over the row divided by the largest finite |ref| of the row; infinite
// references must be matched exactly.
double scaled_error(const float* got, const std::vector<double>& ref) {
  double scale = 0, err = 0;
  for (double r : ref)
    if (std::isfinite(r)) scale = std::max(scale, std::fabs(r));
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(ref[i])) {
      if (double(got[i]) != ref[i]) return INFINITY;
      continue;
    }
    err = std::max(err, std::fabs(double(got[i]) - ref[i]));
  }
  return scale > 0 ? err / scale : err;
}

// Rows of length n: kind 0 moderate values, 1 with -inf entries, 2 large magnitudes (up to
// +-1.6e38, so x - max stays finite as in the double reference), 3 a narrow range.
std::vector<float> make_rows(size_t rows, size_t n, int kind, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(rows * n);
  for (size_t i = 0; i < x.size(); ++i) {
    switch (kind) {
      case 0: x[i] = 30.0f * u(rng); break;
      case 1: x[i] = (rng() % 4 == 0) ? -kInf : 10.0f * u(rng); break;
      case 2: x[i] = rng() % 8 == 0 ? 1.6e38f * u(rng) : std::ldexp(u(rng), int(rng() % 148) - 20); break;
      default: x[i] = 5.0f + 0.01f * u(rng); break;
    }
  }
  // Keep one finite entry per row so the maximum is finite.
  if (kind == 1)
    for (size_t r = 0; r < rows; ++r) x[r * n + (r * 7) % n] = 1.5f;
  return x;
}

}  // namespace

TEST_CASE("f32_softmax_rows Fast: every ISA within 1e-6 scaled of a double reference") {
  for (Isa isa : available_isas()) {
    IsaScope scope(isa);
    double worst = 0;
    for (size_t n = 1; n <= 300; ++n)
      for (int kind = 0; kind < 4; ++kind)
        for (bool log : {false, true}) {
          const size_t rows = 2;
          const std::vector<float> xs = make_rows(rows, n, kind, uint32_t(n * 8 + kind * 2 + log));
          // Unaligned: input at +1 float, output at +3 floats.
          std::vector<float> xbuf(rows * n + 1), ybuf(rows * n + 3, 12345.0f);
          std::copy(xs.begin(), xs.end(), xbuf.begin() + 1);
          f32_softmax_rows(xbuf.data() + 1, ybuf.data() + 3, rows, n, log, ArithmeticMode::Fast);
          for (size_t r = 0; r < rows; ++r) {
            const std::vector<double> ref = reference_row(xs.data() + r * n, n, log);
            const double e = scaled_error(ybuf.data() + 3 + r * n, ref);
            worst = std::max(worst, e);
            if (!(e <= 1e-6)) {
              INFO("isa " << std::string(isa_name(isa)) << " n " << n << " kind " << kind << " log " << log
                          << " row " << r);
              CHECK(e <= 1e-6);
            }
          }
          CHECK(ybuf[0] == 12345.0f);
          CHECK(ybuf[1] == 12345.0f);
          CHECK(ybuf[2] == 12345.0f);
        }
    MESSAGE("Fast softmax on " << std::string(isa_name(isa)) << ": worst scaled error " << worst);
  }
}

TEST_CASE("f32_softmax_rows Fast: -inf entries give exactly 0 / -inf") {
  for (Isa isa : available_isas()) {
    IsaScope scope(isa);
    for (size_t n : {5, 16, 37, 64, 128}) {
      for (bool log : {false, true}) {
        std::vector<float> x(n, -kInf);
        x[n / 2] = 3.0f;
        x[n - 1] = 2.0f;
        std::vector<float> y(n);
        f32_softmax_rows(x.data(), y.data(), 1, n, log, ArithmeticMode::Fast);
        for (size_t i = 0; i < n; ++i)
          if (x[i] == -kInf) CHECK(y[i] == (log ? -kInf : 0.0f));
      }
    }
  }
}

TEST_CASE("f32_softmax_rows Fast: rows with a NaN or infinite maximum match Exact mode") {
  for (Isa isa : available_isas()) {
    IsaScope scope(isa);
    for (size_t n : {1, 9, 40}) {
      for (float special : {NAN, kInf, -kInf}) {
        for (bool log : {false, true}) {
          std::vector<float> x(n, special == -kInf ? -kInf : 0.5f);
          x[n / 3] = special;
          std::vector<float> exact(n), fast(n);
          f32_softmax_rows(x.data(), exact.data(), 1, n, log, ArithmeticMode::Exact);
          f32_softmax_rows(x.data(), fast.data(), 1, n, log, ArithmeticMode::Fast);
          INFO("isa " << std::string(isa_name(isa)) << " n " << n << " special " << special);
          CHECK(first_mismatch(exact.data(), fast.data(), n) == n);
        }
      }
    }
  }
}
