// Hand-computed values for the dtypes beyond the eager set (f64, i16, u16, u32, u64): Cast at
// its edges (NaN, infinities, out of range, negative to unsigned, u64 max, one rounding from f64
// to f16), the integer operators at their type limits, and feeding and reading each dtype
// through a Session, from raw views, om::Tensor and an ONNX file.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "onemodel/core/tensor.h"
#include "onemodel/io/onnx.h"
#include "onemodel/ops/ops.h"
#include "runtime_helpers.h"

using namespace rt;
using g::Attribute;

namespace {

// Cast of n values of S to `to`, in Exact mode (Cast is exact by nature).
// bool results are read as one byte each (std::vector<bool> is packed).
template <typename D, typename S>
auto cast(const std::vector<S>& x) {
  using R = std::conditional_t<std::is_same<D, bool>::value, uint8_t, D>;
  const int64_t n = int64_t(x.size());
  const auto gr = single_node("Cast", {value("x", om::dtype_of<S>::value, {n})}, {Attribute::of_int("to", int64_t(om::dtype_of<D>::value))});
  const auto y = run_graph(gr, {Feed::of("x", {n}, x)}, {om::ArithmeticMode::Exact})[0];
  REQUIRE(y.dtype == om::dtype_of<D>::value);
  return y.template as<R>();
}

template <typename T>
std::vector<T> binary(const std::string& op, const std::vector<T>& a, const std::vector<T>& b, std::vector<Attribute> attrs = {}) {
  const int64_t n = int64_t(a.size());
  const DType dt = om::dtype_of<T>::value;
  const auto gr = single_node(op, {value("a", dt, {n}), value("b", dt, {n})}, std::move(attrs));
  const auto y = run_graph(gr, {Feed::of("a", {n}, a), Feed::of("b", {n}, b)}, {om::ArithmeticMode::Exact})[0];
  REQUIRE(y.dtype == dt);
  return y.template as<T>();
}

constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();

template <typename T>
void roundtrip(const std::vector<T>& v) {
  const DType dt = om::dtype_of<T>::value;
  const auto gr = single_node("Transpose", {value("x", dt, {1, 2})});
  const auto y = run_graph(gr, {Feed::of("x", {1, 2}, v)})[0];
  CHECK(y.dtype == dt);
  CHECK(y.dims == std::vector<int64_t>{2, 1});
  CHECK(y.template as<T>() == v);

  om::Session s(gr);
  const auto t = s.run({{"x", om::from_vector<T>(v, {1, 2})}});
  REQUIRE(t.size() == 1);
  CHECK(t[0].dtype() == dt);
  CHECK(t[0].template to_vector<T>() == v);

  const g::Graph back = om::onnx::read(om::onnx::write(gr));
  CHECK(back.inputs[0].dtype == dt);
  CHECK(run_graph(back, {Feed::of("x", {1, 2}, v)})[0].template as<T>() == v);
}


}  // namespace

TEST_CASE("Cast: float to integer truncates; NaN, infinities and values beyond [-2^63, 2^64) give 0, others wrap") {
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(cast<int32_t>(std::vector<float>{2.9f, -2.9f, NAN, inf, -inf, 3e9f}) ==
        std::vector<int32_t>{2, -2, 0, 0, 0, int32_t(3000000000u - 4294967296ll)});
  // 2^64 itself is out of range; the largest double below it converts exactly; -1 wraps.
  CHECK(cast<uint64_t>(std::vector<double>{18446744073709551616.0, 18446744073709549568.0, -1.0, NAN, -0.5}) ==
        std::vector<uint64_t>{0, 18446744073709549568ull, kU64Max, 0, 0});
  CHECK(cast<uint16_t>(std::vector<double>{65535.9, 65536.0, -1.0}) == std::vector<uint16_t>{65535, 0, 65535});
  CHECK(cast<int16_t>(std::vector<om::half>{om::float_to_half(-32768.0f), om::float_to_half(40000.0f)}) ==
        std::vector<int16_t>{-32768, int16_t(40000 - 65536)});
  CHECK(cast<uint32_t>(std::vector<double>{-9223372036854775808.0, -9223372036854777856.0}) == std::vector<uint32_t>{0, 0});
}

TEST_CASE("Cast: integer to integer wraps, u64 max to floats rounds, negative to unsigned") {
  CHECK(cast<int64_t>(std::vector<uint64_t>{kU64Max, 1ull << 63}) == std::vector<int64_t>{-1, std::numeric_limits<int64_t>::min()});
  CHECK(cast<float>(std::vector<uint64_t>{kU64Max}) == std::vector<float>{18446744073709551616.0f});
  CHECK(cast<double>(std::vector<uint64_t>{kU64Max}) == std::vector<double>{18446744073709551616.0});
  CHECK(cast<uint16_t>(std::vector<int16_t>{-1, -32768}) == std::vector<uint16_t>{65535, 32768});
  CHECK(cast<uint64_t>(std::vector<int8_t>{-1}) == std::vector<uint64_t>{kU64Max});
  CHECK(cast<uint8_t>(std::vector<uint32_t>{0x12345678u}) == std::vector<uint8_t>{0x78});
  CHECK(cast<bool>(std::vector<double>{0.0, -0.0, 1e-300, NAN}) == std::vector<uint8_t>{0, 0, 1, 1});
}

TEST_CASE("Cast: f64 to f16 rounds once (never through an f32 rounding)") {
  // 1 + 2^-11 + 2^-40 lies just above the midpoint of 1 and the next half 1 + 2^-10. Rounded to
  // f32 first it would become the midpoint itself and then round to even, 1.0.
  const double d = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  const auto h = cast<om::half>(std::vector<double>{d, 65520.0, 65519.99, -1e-30, NAN});
  CHECK(om::half_to_float(h[0]) == 1.0f + std::ldexp(1.0f, -10));
  CHECK(std::isinf(om::half_to_float(h[1])));
  CHECK(om::half_to_float(h[2]) == 65504.0f);
  CHECK(h[3].bits == 0x8000u);  // -0
  CHECK(std::isnan(om::half_to_float(h[4])));
  const auto back = cast<double>(std::vector<om::half>{om::float_to_half(-0.1f)});
  CHECK(back[0] == double(om::half_to_float(om::float_to_half(-0.1f))));
  CHECK(cast<float>(std::vector<double>{0.1}) == std::vector<float>{0.1f});
}

TEST_CASE("integer operators at their type limits") {
  CHECK(binary<uint64_t>("Max", {kU64Max, 0}, {0, 1}) == std::vector<uint64_t>{kU64Max, 1});
  CHECK(binary<int16_t>("Min", {-32768, 32767}, {32767, -32768}) == std::vector<int16_t>{-32768, -32768});
  CHECK(binary<uint32_t>("Min", {0xffffffffu, 7}, {0xfffffffeu, 7}) == std::vector<uint32_t>{0xfffffffeu, 7});
  const auto mx = binary<double>("Max", {1.0, NAN}, {NAN, -1e300});
  CHECK(std::isnan(mx[0]));
  CHECK(std::isnan(mx[1]));

  CHECK(binary<uint64_t>("Mod", {kU64Max, 5}, {10, kU64Max}) == std::vector<uint64_t>{5, 5});
  // fmod 0 takes the divisor's sign; INT16_MIN % -1 is 0 (undefined in C++ when promoted narrowly).
  CHECK(binary<int16_t>("Mod", {-7, 7, -32768}, {3, -3, -1}) == std::vector<int16_t>{2, -2, 0});
  CHECK(binary<int16_t>("Mod", {-7, 7}, {3, -3}, {Attribute::of_int("fmod", 1)}) == std::vector<int16_t>{-1, 1});
  CHECK(binary<double>("Mod", {-4.5, 5.5}, {2.0, -2.0}, {Attribute::of_int("fmod", 1)}) == std::vector<double>{-0.5, 1.5});
  CHECK_THROWS_AS(binary<uint16_t>("Mod", {1}, {0}), om::Error);
  CHECK_THROWS_AS(binary<double>("Mod", {1.0}, {2.0}), om::Error);  // floats need fmod = 1

  const Attribute left = Attribute::of_string("direction", "LEFT"), right = Attribute::of_string("direction", "RIGHT");
  CHECK(binary<uint64_t>("BitShift", {1, 1, 3}, {63, 64, 1000}, {left}) == std::vector<uint64_t>{1ull << 63, 0, 0});
  CHECK(binary<uint32_t>("BitShift", {0xffffffffu, 0xffffffffu}, {31, 32}, {right}) == std::vector<uint32_t>{1, 0});
  CHECK(binary<uint16_t>("BitShift", {0xffff, 1}, {15, 16}, {left}) == std::vector<uint16_t>{0x8000, 0});
}

TEST_CASE("Pow: f32 base with unsigned exponents") {
  const auto gr = single_node("Pow", {value("a", DType::f32, {3}), value("b", DType::u64, {3})});
  const auto y = run_graph(gr, {Feed::of("a", {3}, std::vector<float>{2, -1, 0.5f}), Feed::of("b", {3}, std::vector<uint64_t>{10, 3, 1})})[0];
  CHECK(y.as<float>() == std::vector<float>{1024, -1, 0.5f});
}

TEST_CASE("Session feeds and reads every wide dtype: raw views, om::Tensor and an ONNX file") {
  roundtrip<double>({-0.1, 1e300});
  roundtrip<int16_t>({-32768, 32767});
  roundtrip<uint16_t>({0, 65535});
  roundtrip<uint32_t>({0, 0xffffffffu});
  roundtrip<uint64_t>({0, kU64Max});
  CHECK(std::string(om::dtype_name(DType::u64)) == "u64");
  CHECK(om::dtype_size(DType::f64) == 8);
  CHECK(om::dtype_size(DType::i16) == 2);
}

TEST_CASE("eager operators refuse the Session-only dtypes with an error, never a wrong result") {
  const om::Tensor a = om::from_vector<double>({1.0, 2.0}, {2});
  const om::Tensor b = om::from_vector<uint64_t>({1, 2}, {2});
  CHECK_THROWS_AS(om::add(a, a), om::Error);
  CHECK_THROWS_AS(om::add(b, b), om::Error);
  CHECK(a.to_vector<double>() == std::vector<double>{1.0, 2.0});
}

TEST_CASE("eager conversions to integers share Cast's rule: NaN, infinities and out of range are defined") {
  const om::Tensor x = om::from_vector<float>({NAN, INFINITY, 3e9f, -2.5f}, {4});
  CHECK(x.to(DType::i32).to_vector<int32_t>() == std::vector<int32_t>{0, 0, int32_t(3000000000u - 4294967296ll), -2});
  CHECK(x.to(DType::u8).to_vector<uint8_t>() == std::vector<uint8_t>{0, 0, uint8_t(3000000000u & 0xff), 254});
  CHECK(om::full({1}, -1.0, DType::u64).to_vector<uint64_t>() == std::vector<uint64_t>{kU64Max});
  CHECK(om::full({1}, 1e30, DType::i64).to_vector<int64_t>() == std::vector<int64_t>{0});
}
