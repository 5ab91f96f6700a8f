// Accuracy of the library's own transcendental functions against double-precision libm over a
// dense sweep of all float bit patterns, and bit equality of the native vector versions with the
// scalar ones over the same sweep. The bounds checked here are the ones docs/exactness.md states.
#include <doctest/doctest.h>

#include <cinttypes>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "kernels/kernel_test_util.h"
#include "onemodel/graph/ops/trig.h"

using namespace om::kernels;
using namespace om::kernels::test;

namespace {

double ulp_of(double r) {
  r = std::fabs(r);
  if (r < 0x1p-126) return 0x1p-149;
  int e;
  std::frexp(r, &e);
  return std::ldexp(1.0, e - 24);
}

// Every float whose bit pattern is a multiple of the stride (both signs), plus small integers.
std::vector<float> sweep_inputs(uint32_t stride) {
  std::vector<float> x;
  for (uint64_t u = 0; u < 0x100000000ull; u += stride) x.push_back(from_bits(uint32_t(u)));
  for (int i = -20; i <= 20; ++i) x.push_back(float(i));
  return x;
}

struct Fn {
  const char* name;
  UnaryOp op;
  std::function<double(double)> ref;
  double max_ulp;  // checked bound (docs/exactness.md)
  double from, to;  // range over which the ulp bound applies
  double abs_tol;   // outside [from, to]: absolute error bound
};

}  // namespace

TEST_CASE("transcendentals: max ulp error vs double libm over a dense sweep; SIMD == scalar") {
  const double inf = INFINITY;
  const Fn fns[] = {
      {"exp", UnaryOp::Exp, [](double x) { return std::exp(x); }, 1.0, -inf, inf, 0},
      {"log", UnaryOp::Log, [](double x) { return std::log(x); }, 1.0, -inf, inf, 0},
      {"tanh", UnaryOp::Tanh, [](double x) { return std::tanh(x); }, 1.5, -inf, inf, 0},
      {"sigmoid", UnaryOp::Sigmoid, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, 2.0, -inf, inf, 0},
      {"erf", UnaryOp::Erf, [](double x) { return std::erf(x); }, 1.5, -inf, inf, 0},
      {"gelu_erf", UnaryOp::GeluErf, [](double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); },
       12.0, -3.0, inf, 4e-9},
      {"gelu_tanh", UnaryOp::GeluTanh,
       [](double x) {
         const double u = std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
         return x / (1.0 + std::exp(-2.0 * u));
       },
       10.0, -3.0, inf, 3e-9},
  };
  const auto x = sweep_inputs(1009);
  std::vector<float> y(x.size()), ys(x.size());
  for (const Fn& f : fns) {
    f32_unary(f.op, x.data(), y.data(), x.size());
    {
      IsaScope s(Isa::Scalar);
      f32_unary(f.op, x.data(), ys.data(), x.size());
    }
    double worst = 0, worst_x = 0, worst_abs = 0;
    size_t special_bad = 0, simd_bad = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!same_bits(y[i], ys[i])) ++simd_bad;
      const double r = f.ref(double(x[i]));
      if (std::isnan(r) || std::fabs(r) > 3.4028234663852886e38) {
        if (!(std::isnan(r) ? std::isnan(y[i]) : y[i] == float(r))) ++special_bad;
        continue;
      }
      const double err = std::fabs(double(y[i]) - r);
      if (x[i] >= f.from && x[i] <= f.to) {
        const double u = err / ulp_of(r);
        if (u > worst) worst = u, worst_x = x[i];
      } else {
        worst_abs = std::max(worst_abs, err);
      }
    }
    MESSAGE(std::string(f.name) << ": max " << worst << " ulp at " << worst_x << ", tail abs err " << worst_abs);
    INFO(std::string(f.name));
    CHECK(simd_bad == 0);
    CHECK(special_bad == 0);
    CHECK(worst <= f.max_ulp);
    CHECK(worst_abs <= f.abs_tol);
  }
}

TEST_CASE("transcendentals: special inputs") {
  CHECK(exp_f32(-INFINITY) == 0.0f);
  CHECK(std::isinf(exp_f32(INFINITY)));
  CHECK(std::isinf(exp_f32(89.0f)));
  CHECK(exp_f32(-104.0f) == 0.0f);
  CHECK(exp_f32(-100.0f) > 0.0f);  // subnormal, not flushed
  CHECK(std::isnan(exp_f32(NAN)));
  CHECK(log_f32(INFINITY) == INFINITY);
  CHECK(log_f32(-0.0f) == -INFINITY);
  CHECK(log_f32(1e-45f) == doctest::Approx(std::log(double(1e-45f))));
  CHECK(sigmoid_f32(-INFINITY) == 0.0f);
  CHECK(sigmoid_f32(INFINITY) == 1.0f);
  CHECK(std::isnan(tanh_f32(NAN)));
  float g[4] = {-INFINITY, INFINITY, -0.0f, NAN};
  for (UnaryOp op : {UnaryOp::GeluErf, UnaryOp::GeluTanh}) {
    float y[4];
    f32_unary(op, g, y, 4);
    CHECK(y[0] == 0.0f);
    CHECK(y[1] == INFINITY);
    CHECK(y[2] == 0.0f);
    CHECK(std::isnan(y[3]));
  }
}

// The library's trigonometric, inverse and hyperbolic functions (graph/ops/trig.h): within one
// ulp of the double-precision C library over a sweep of float bit patterns (where the result is
// a normal float), the special values of each, and a hash of every result the cross-machine check
// compares (tools/exactness.sh: the same bits on x86-64 and AArch64).
TEST_CASE("library trigonometric, inverse and hyperbolic functions: max ulp error vs double libm; hashed") {
  namespace ops = om::graph::ops;
  struct Trig {
    const char* name;
    float (*f)(float);
    double (*ref)(double);
  };
  const Trig fns[] = {
      {"sin", ops::library_sin_f32, [](double x) { return std::sin(x); }},     {"cos", ops::library_cos_f32, [](double x) { return std::cos(x); }},
      {"tan", ops::library_tan_f32, [](double x) { return std::tan(x); }},     {"asin", ops::library_asin_f32, [](double x) { return std::asin(x); }},
      {"acos", ops::library_acos_f32, [](double x) { return std::acos(x); }},  {"atan", ops::library_atan_f32, [](double x) { return std::atan(x); }},
      {"sinh", ops::library_sinh_f32, [](double x) { return std::sinh(x); }},  {"cosh", ops::library_cosh_f32, [](double x) { return std::cosh(x); }},
      {"asinh", ops::library_asinh_f32, [](double x) { return std::asinh(x); }}, {"acosh", ops::library_acosh_f32, [](double x) { return std::acosh(x); }},
      {"atanh", ops::library_atanh_f32, [](double x) { return std::atanh(x); }},
  };
  const std::vector<float> x = sweep_inputs(4099);
  uint64_t hash = 1469598103934665603ull;
  for (const Trig& t : fns) {
    double worst = 0, worst_x = 0;
    for (float v : x) {
      const float got = t.f(v);
      uint32_t bits = 0;
      std::memcpy(&bits, &got, 4);
      if (std::isnan(got)) bits = 0x7fc00000u;  // one NaN pattern
      hash = (hash ^ bits) * 1099511628211ull;
      // sin, cos and tan beyond 2^19 pi/2 reduce less accurately (still the same bits everywhere).
      if ((t.f == ops::library_sin_f32 || t.f == ops::library_cos_f32 || t.f == ops::library_tan_f32) && std::fabs(v) > 8.0e5f) continue;
      const double r = t.ref(double(v));
      if (std::isnan(r)) {
        CHECK_MESSAGE(std::isnan(got), t.name, "(", v, ") = ", got, ", want NaN");
        continue;
      }
      if (!std::isfinite(r) || std::fabs(r) < 0x1p-126 || std::fabs(r) > 0x1.fffffep127) continue;
      const double u = std::fabs(double(got) - r) / ulp_of(r);
      if (u > worst) {
        worst = u;
        worst_x = v;
      }
    }
    MESSAGE(std::string(t.name) << ": max " << worst << " ulp at " << worst_x);
    CHECK(worst <= 1.0);
  }
  // Special values.
  CHECK(ops::library_asin_f32(1.0f) == float(M_PI / 2));
  CHECK(ops::library_acos_f32(-1.0f) == float(M_PI));
  CHECK(ops::library_acos_f32(1.0f) == 0.0f);
  CHECK(ops::library_atan_f32(INFINITY) == float(M_PI / 2));
  CHECK(ops::library_atan_f32(-INFINITY) == -float(M_PI / 2));
  CHECK(ops::library_atanh_f32(1.0f) == INFINITY);
  CHECK(std::isnan(ops::library_atanh_f32(1.5f)));
  CHECK(std::isnan(ops::library_acosh_f32(0.5f)));
  CHECK(ops::library_cosh_f32(100.0f) == INFINITY);
  CHECK(ops::library_sinh_f32(-100.0f) == -INFINITY);
  CHECK(ops::library_asinh_f32(INFINITY) == INFINITY);
  CHECK(std::signbit(ops::library_sinh_f32(-0.0f)));
  CHECK(std::signbit(ops::library_atan_f32(-0.0f)));
  CHECK(std::isnan(ops::library_tan_f32(INFINITY)));
  for (auto f : {ops::library_sin_f32, ops::library_tan_f32, ops::library_asin_f32, ops::library_atan_f32, ops::library_sinh_f32,
                 ops::library_asinh_f32, ops::library_atanh_f32})
    CHECK(std::signbit(f(-0.0f)));
  std::printf("EXACT_HASH library_trig %s %016" PRIx64 "\n", isa_name(active_isa()), hash);
}
