// The library's trigonometric, inverse and hyperbolic functions (graph/ops/trig.h). Each works in
// double on a float argument: argument reductions that are exact (or deterministic) in double,
// series evaluated far below float's precision, one rounding to float at the end. Only IEEE's
// correctly rounded operations are used (+, -, *, /, sqrt, nearbyint, frexp, ldexp), so the
// results are the same bits on every machine; accuracy is measured in
// tests/kernels/test_math_accuracy.cpp against the C library in double.
#include "onemodel/graph/ops/trig.h"

#include <cmath>
#include <cstdint>
#include <limits>

namespace om::graph::ops {
namespace {

constexpr double kPio2a = 1.57079632673412561417e+00;  // pi/2 in three parts (Cody-Waite)
constexpr double kPio2b = 6.07710050630396597660e-11;
constexpr double kPio2c = 2.02226624871116645580e-21;
constexpr double kPio2 = 1.57079632679489661923;
constexpr double kTwoOverPi = 6.36619772367581382433e-01;
constexpr double kLn2Hi = 6.93147180369123816490e-01;  // ln 2 in two parts: k * kLn2Hi is exact for |k| < 2^11
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr double kInvLn2 = 1.44269504088896338700e+00;

constexpr double fact(int n) { return n <= 1 ? 1.0 : double(n) * fact(n - 1); }

// Taylor coefficients (-1)^j / (2j+1)! and (-1)^j / (2j)!, j = 1..10, and 1 / j! for exp,
// rounded once at compile time.
struct Coeffs {
  double s[10], c[10], e[18];
};
constexpr Coeffs coeffs() {
  Coeffs t{};
  for (int j = 1; j <= 10; ++j) {
    t.s[j - 1] = (j % 2 ? -1.0 : 1.0) / fact(2 * j + 1);
    t.c[j - 1] = (j % 2 ? -1.0 : 1.0) / fact(2 * j);
  }
  for (int j = 0; j < 18; ++j) t.e[j] = 1.0 / fact(j);
  return t;
}
constexpr Coeffs kC = coeffs();

double sin_poly(double r) {  // r - r^3/3! + ... + r^21/21!, |r| <= pi/4
  const double r2 = r * r;
  double p = 0.0;
  for (int j = 9; j >= 0; --j) p = kC.s[j] + r2 * p;
  return r + r * r2 * p;
}
double cos_poly(double r) {  // 1 - r^2/2! + ... + r^20/20!
  const double r2 = r * r;
  double p = 0.0;
  for (int j = 9; j >= 0; --j) p = kC.c[j] + r2 * p;
  return 1.0 + r2 * p;
}

// x = q (pi/2) + r: exact products for |x| < 2^19 pi/2; beyond, less accurate but the same bits.
// Returns r and q mod 4 in *quadrant.
double reduce_pio2(double x, int* quadrant) {
  const double q = std::nearbyint(x * kTwoOverPi);
  *quadrant = int(int64_t(std::fmod(q, 4.0) + 4.0) % 4);
  return ((x - q * kPio2a) - q * kPio2b) - q * kPio2c;
}

// e^x for |x| <= 710: x = k ln2 + r, |r| <= ln2/2, a degree-17 Taylor polynomial, times 2^k.
double exp_d(double x) {
  if (x > 710.0) return std::numeric_limits<double>::infinity();
  if (x < -746.0) return 0.0;
  const double k = std::nearbyint(x * kInvLn2);
  const double r = (x - k * kLn2Hi) - k * kLn2Lo;
  double p = 0.0;
  for (int j = 17; j >= 0; --j) p = kC.e[j] + r * p;
  return std::ldexp(p, int(k));
}

// log x for finite x > 0: x = 2^k m, m in [sqrt(1/2), sqrt(2)), log m = 2 atanh((m - 1) / (m + 1))
// by its series (|s| <= 0.1716: terms to s^31).
double log_d(double x) {
  int k = 0;
  double m = std::frexp(x, &k);  // m in [0.5, 1)
  if (m < 0.70710678118654752440) {
    m *= 2.0;
    --k;
  }
  const double s = (m - 1.0) / (m + 1.0), s2 = s * s;
  double p = 0.0;
  for (int j = 15; j >= 1; --j) p = 1.0 / double(2 * j + 1) + s2 * p;
  const double log_m = 2.0 * s + 2.0 * s * s2 * p;
  return (double(k) * kLn2Hi + log_m) + double(k) * kLn2Lo;
}

// log(1 + u) without losing u's digits when u is small: w = 1 + u rounded, then
// log(w) * u / (w - 1), which corrects for the rounding of w.
double log1p_d(double u) {
  const double w = 1.0 + u;
  if (w == 1.0) return u;
  return log_d(w) * (u / (w - 1.0));
}

// atan x: |x| > 1 uses pi/2 - atan(1/x); then two halvings atan x = 2 atan(x / (1 + sqrt(1 + x^2)))
// bring |x| to at most tan(pi/16) ~ 0.199, where the series x - x^3/3 + ... (to x^33) is far below
// double's precision.
double atan_d(double x) {
  if (std::isnan(x)) return x;
  const bool neg = std::signbit(x);
  double a = std::fabs(x);
  const bool inverted = a > 1.0;
  if (inverted) a = 1.0 / a;  // 1/inf = 0
  for (int h = 0; h < 2; ++h) a = a / (1.0 + std::sqrt(1.0 + a * a));
  const double a2 = a * a;
  double p = 0.0;
  for (int j = 16; j >= 1; --j) p = (j % 2 ? -1.0 : 1.0) / double(2 * j + 1) + a2 * p;
  double v = 4.0 * (a + a * a2 * p);
  if (inverted) v = kPio2 - v;
  return neg ? -v : v;
}

float nan_f() { return std::numeric_limits<float>::quiet_NaN(); }

}  // namespace

float library_sin_f32(float xf) {
  if (!std::isfinite(xf)) return nan_f();
  if (xf == 0.0f) return xf;  // keeps -0 (the reduction's r would be +0)
  int quadrant = 0;
  const double r = reduce_pio2(xf, &quadrant);
  switch (quadrant) {
    case 0: return float(sin_poly(r));
    case 1: return float(cos_poly(r));
    case 2: return float(-sin_poly(r));
    default: return float(-cos_poly(r));
  }
}

float library_cos_f32(float xf) {
  if (!std::isfinite(xf)) return nan_f();
  int quadrant = 0;
  const double r = reduce_pio2(xf, &quadrant);
  switch (quadrant) {
    case 0: return float(cos_poly(r));
    case 1: return float(-sin_poly(r));
    case 2: return float(-cos_poly(r));
    default: return float(sin_poly(r));
  }
}

float library_tan_f32(float xf) {
  if (!std::isfinite(xf)) return nan_f();
  if (xf == 0.0f) return xf;
  int quadrant = 0;
  const double r = reduce_pio2(xf, &quadrant);
  const double s = sin_poly(r), c = cos_poly(r);
  return float(quadrant % 2 ? -c / s : s / c);
}

float library_atan_f32(float x) { return float(atan_d(x)); }

float library_asin_f32(float xf) {
  const double x = xf;
  if (!(std::fabs(x) <= 1.0)) return nan_f();
  if (std::fabs(x) == 1.0) return float(x * kPio2);
  return float(atan_d(x / std::sqrt((1.0 - x) * (1.0 + x))));
}

float library_acos_f32(float xf) {
  const double x = xf;
  if (!(std::fabs(x) <= 1.0)) return nan_f();
  // acos x = 2 atan(sqrt((1 - x) / (1 + x))): no cancellation near x = 1 (1 - x is exact).
  return float(2.0 * atan_d(std::sqrt((1.0 - x) / (1.0 + x))));
}

float library_sinh_f32(float xf) {
  const double x = xf, a = std::fabs(x);
  if (std::isnan(x)) return xf;
  double v;
  if (a < 0.5) {  // the series x + x^3/3! + ... (to x^35): no cancellation
    const double x2 = x * x;
    double p = 0.0;
    for (int j = 17; j >= 1; --j) p = 1.0 / fact(2 * j + 1) + x2 * p;
    v = a + a * x2 * p;
  } else {
    const double e = exp_d(a);
    v = 0.5 * (e - 1.0 / e);
  }
  return float(std::copysign(v, x));
}

float library_cosh_f32(float xf) {
  const double a = std::fabs(double(xf));
  if (std::isnan(a)) return xf;
  const double e = exp_d(a);
  return float(0.5 * (e + 1.0 / e));
}

float library_asinh_f32(float xf) {
  const double x = xf, a = std::fabs(x);
  if (!std::isfinite(x)) return xf;
  // asinh a = log1p(a + a^2 / (1 + sqrt(1 + a^2))); a^2 is exact in double for a float a.
  const double v = log1p_d(a + a * a / (1.0 + std::sqrt(1.0 + a * a)));
  return float(std::copysign(v, x));
}

float library_acosh_f32(float xf) {
  const double x = xf;
  if (std::isnan(x) || x < 1.0) return nan_f();
  if (std::isinf(x)) return xf;
  // acosh x = log1p(t + sqrt(t (x + 1))), t = x - 1 (exact): no cancellation near 1.
  const double t = x - 1.0;
  return float(log1p_d(t + std::sqrt(t * (x + 1.0))));
}

float library_atanh_f32(float xf) {
  const double x = xf, a = std::fabs(x);
  if (!(a <= 1.0)) return nan_f();
  if (a == 1.0) return x < 0 ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  // atanh a = log1p(2a / (1 - a)) / 2 (1 - a is exact).
  const double v = 0.5 * log1p_d(2.0 * a / (1.0 - a));
  return float(std::copysign(v, x));
}

}  // namespace om::graph::ops
