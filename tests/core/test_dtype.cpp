// Dtypes and the f16 conversions, checked against a reference written from the IEEE binary16
// definition in double arithmetic (no bit tricks shared with the library).
#include <doctest/doctest.h>

#include <cfenv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "onemodel/core/dtype.h"

namespace {

float bits_to_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
std::string hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", unsigned(v));
  return buf;
}
uint32_t float_to_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// binary16: 1 sign bit, 5 exponent bits (bias 15), 10 mantissa bits.
double ref_decode(uint16_t bits) {
  const int sign = bits >> 15;
  const int e = (bits >> 10) & 31;
  const int m = bits & 1023;
  double v;
  if (e == 0) v = std::ldexp(double(m), -24);  // subnormal: m * 2^-14 * 2^-10
  else if (e == 31) v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else v = std::ldexp(1.0 + m / 1024.0, e - 15);
  return sign ? -v : v;
}

// The binary16 value nearest to f, ties to even (as a double; +-inf past the largest finite).
double ref_round(float f) {
  const double a = std::fabs(double(f));
  if (std::isnan(f)) return std::numeric_limits<double>::quiet_NaN();
  if (std::isinf(f)) return double(f);
  if (a == 0) return double(f);
  int e2;
  std::frexp(a, &e2);  // a = m * 2^e2, m in [0.5, 1): floor(log2 a) = e2 - 1
  int e = e2 - 1;
  if (e < -14) e = -14;  // subnormal range shares the quantum of the smallest normal binade
  const double quantum = std::ldexp(1.0, e - 10);
  const double r = a / quantum;  // exact: f has 24 significant bits
  double n = std::floor(r);
  const double frac = r - n;
  if (frac > 0.5 || (frac == 0.5 && std::fmod(n, 2.0) != 0)) n += 1;
  double v = n * quantum;
  if (v > 65504.0) v = std::numeric_limits<double>::infinity();
  return f < 0 ? -v : v;
}

void check_round(float f) {
  const om::half h = om::float_to_half(f);
  const double want = ref_round(f);
  const double got = ref_decode(h.bits);
  if (std::isnan(want)) {
    CHECK(std::isnan(got));
    return;
  }
  INFO("f = ", f, " (bits ", hex(float_to_bits(f)), ") -> half ", hex(h.bits));
  CHECK(got == want);
  CHECK(std::signbit(got) == std::signbit(double(f)));
}

}  // namespace

TEST_CASE("dtype sizes, names and ONNX codes") {
  using om::DType;
  CHECK(om::dtype_size(DType::f32) == 4);
  CHECK(om::dtype_size(DType::f16) == 2);
  CHECK(om::dtype_size(DType::i64) == 8);
  CHECK(om::dtype_size(DType::i32) == 4);
  CHECK(om::dtype_size(DType::i8) == 1);
  CHECK(om::dtype_size(DType::u8) == 1);
  CHECK(om::dtype_size(DType::boolean) == 1);
  CHECK(std::string(om::dtype_name(DType::f16)) == "f16");
  CHECK(std::string(om::dtype_name(DType::boolean)) == "bool");
  // ONNX TensorProto.DataType codes
  CHECK(int(DType::f32) == 1);
  CHECK(int(DType::u8) == 2);
  CHECK(int(DType::i8) == 3);
  CHECK(int(DType::i32) == 6);
  CHECK(int(DType::i64) == 7);
  CHECK(int(DType::boolean) == 9);
  CHECK(int(DType::f16) == 10);
  om::DType d;
  CHECK(om::dtype_from_onnx(10, &d));
  CHECK(d == DType::f16);
  CHECK(om::dtype_from_onnx(11, &d));
  CHECK(d == DType::f64);
  CHECK(om::dtype_from_onnx(13, &d));
  CHECK(d == DType::u64);
  CHECK(int(DType::i16) == 5);
  CHECK(int(DType::u16) == 4);
  CHECK(int(DType::u32) == 12);
  CHECK(om::dtype_size(DType::u32) == 4);
  CHECK(std::string(om::dtype_name(DType::i16)) == "i16");
  CHECK(om::dtype_from_onnx(16, &d));  // bfloat16 (storage; arithmetic in f32)
  CHECK(d == DType::bf16);
  CHECK(om::dtype_size(DType::bf16) == 2);
  CHECK(std::string(om::dtype_name(DType::bf16)) == "bf16");
  CHECK_FALSE(om::dtype_from_onnx(17, &d));  // float8
  CHECK_FALSE(om::dtype_from_onnx(8, &d));   // string
  CHECK_FALSE(om::dtype_from_onnx(0, &d));
}

TEST_CASE("half_to_float decodes every binary16 pattern exactly") {
  for (uint32_t b = 0; b < 65536; ++b) {
    const float got = om::half_to_float(om::half{uint16_t(b)});
    const double want = ref_decode(uint16_t(b));
    if (std::isnan(want)) {
      CHECK(std::isnan(got));
      continue;
    }
    if (double(got) != want || std::signbit(got) != std::signbit(want)) {
      FAIL_CHECK("half " << hex(b) << " decoded to " << got << ", want " << want);
    }
  }
}

TEST_CASE("float_to_half: exact values round-trip, including subnormals and signed zero") {
  for (uint32_t b = 0; b < 65536; ++b) {
    const om::half h{uint16_t(b)};
    const float f = om::half_to_float(h);
    if (std::isnan(f)) continue;
    const om::half back = om::float_to_half(f);
    if (back.bits != h.bits) FAIL_CHECK(hex(b) << " -> " << f << " -> " << hex(back.bits));
  }
}

TEST_CASE("float_to_half rounds to nearest even at every tie and its neighbours") {
  // Midpoints between consecutive finite halves (exact in f32), and one f32 ulp either side.
  for (uint32_t b = 0; b < 0x7bff; ++b) {
    const double lo = ref_decode(uint16_t(b)), hi = ref_decode(uint16_t(b + 1));
    const float mid = float((lo + hi) / 2);
    REQUIRE(double(mid) == (lo + hi) / 2);
    check_round(mid);
    check_round(-mid);
    check_round(std::nextafter(mid, 0.0f));
    check_round(std::nextafter(mid, 1e9f));
  }
  // Tie rounding direction spelled out: 1 + 2^-11 lies halfway between 1 and 1 + 2^-10.
  CHECK(om::float_to_half(1.0f + 0x1p-11f).bits == 0x3c00);   // to even (1.0)
  CHECK(om::float_to_half(1.0f + 3 * 0x1p-11f).bits == 0x3c02);  // to even (1 + 2^-9)
}

TEST_CASE("float_to_half: overflow, infinities, NaN and underflow") {
  CHECK(om::float_to_half(65504.0f).bits == 0x7bff);
  CHECK(om::float_to_half(65519.99f).bits == 0x7bff);  // below the halfway point to 65536
  CHECK(om::float_to_half(65520.0f).bits == 0x7c00);   // the tie rounds to even: infinity
  CHECK(om::float_to_half(1e10f).bits == 0x7c00);
  CHECK(om::float_to_half(-1e10f).bits == 0xfc00);
  CHECK(om::float_to_half(std::numeric_limits<float>::infinity()).bits == 0x7c00);
  CHECK(om::float_to_half(-std::numeric_limits<float>::infinity()).bits == 0xfc00);
  const om::half n = om::float_to_half(std::numeric_limits<float>::quiet_NaN());
  CHECK((n.bits & 0x7c00) == 0x7c00);
  CHECK((n.bits & 0x3ff) != 0);
  // A signalling-looking NaN whose payload sits in the low bits must stay NaN, not become inf.
  const om::half sn = om::float_to_half(bits_to_float(0x7f800001u));
  CHECK((sn.bits & 0x3ff) != 0);
  CHECK(om::float_to_half(0x1p-24f).bits == 0x0001);         // smallest subnormal
  CHECK(om::float_to_half(0x1p-25f).bits == 0x0000);         // tie with 0: to even
  CHECK(om::float_to_half(0x1.000002p-25f).bits == 0x0001);  // just above the tie
  CHECK(om::float_to_half(3 * 0x1p-25f).bits == 0x0002);     // 1.5 quanta: tie to even 2
  CHECK(om::float_to_half(-0x1p-26f).bits == 0x8000);        // negative underflow keeps the sign
  CHECK(om::float_to_half(0x1.ff8p-15f).bits == 0x03ff);     // the largest subnormal
  CHECK(om::float_to_half(0x1.ffcp-15f).bits == 0x0400);     // tie: rounds up (even) into the first normal
  CHECK(om::float_to_half(1e-30f).bits == 0x0000);
}

TEST_CASE("float_to_half agrees with the reference on a million random floats") {
  std::mt19937 rng(1234);
  for (int i = 0; i < 1000000; ++i) {
    uint32_t b = rng();
    // Half of them concentrated in the half-precision range (exponents 100..145).
    if (i & 1) b = (b & 0x807fffffu) | ((100u + (b >> 23) % 46u) << 23);
    const float f = bits_to_float(b);
    const om::half h = om::float_to_half(f);
    const double want = ref_round(f), got = ref_decode(h.bits);
    if (std::isnan(want) ? !std::isnan(got) : (got != want || std::signbit(got) != std::signbit(want))) {
      FAIL_CHECK("f=" << f << " bits " << hex(b) << " -> " << hex(h.bits));
      break;
    }
  }
}
