// The library's own f64 exp and log (kernels.h): range reduction and a series in + and * only
// (compiled without contraction, as the whole library is), so their bits are the same on every
// machine, which libm's are not. Used where an operator computes in f64 (ReduceLogSumExp,
// ReduceLogSum over f64 inputs) in both modes.
#include <cmath>

#include "onemodel/kernels/kernels.h"

namespace om::kernels {

namespace {
// ln 2 split so that k * kLn2Hi is exact for |k| < 2^11 (its low bits are zero).
constexpr double kLn2Hi = 6.93147180369123816490e-01;
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr double kInvLn2 = 1.44269504088896338700e+00;
}  // namespace

double exp_f64(double x) {
  if (std::isnan(x)) return x;
  if (x > 709.782712893384) return INFINITY;
  if (x < -745.1332191019412) return 0.0;
  // x = k ln2 + r with |r| <= ln2 / 2; exp(r) by its Taylor series to r^14 / 14! (below 1e-17).
  const double k = std::floor(x * kInvLn2 + 0.5);
  const double r = (x - k * kLn2Hi) - k * kLn2Lo;
  double p = 1.0;
  for (int i = 14; i >= 1; --i) p = 1.0 + p * r / double(i);
  return std::ldexp(p, int(k));  // exact scaling (rounded once when the result is subnormal)
}

double log_f64(double x) {
  if (std::isnan(x) || x < 0) return NAN;
  if (x == 0) return -INFINITY;
  if (std::isinf(x)) return x;
  int e = 0;
  double m = std::frexp(x, &e);  // x = m 2^e, m in [0.5, 1)
  if (m < 0.70710678118654752440) {
    m *= 2.0;
    e -= 1;
  }
  // log(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.172: the odd series to s^25.
  const double f = m - 1.0;
  const double s = f / (2.0 + f);
  const double s2 = s * s;
  double series = 0.0;
  for (int i = 12; i >= 0; --i) series = 1.0 / double(2 * i + 1) + s2 * series;
  const double log_m = 2.0 * s * series;
  return double(e) * kLn2Hi + (double(e) * kLn2Lo + log_m);
}

}  // namespace om::kernels
