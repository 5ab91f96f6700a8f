// Values of the quantization operators (graph/ops/quant.cpp) and the signal operators
// (graph/ops/signal.cpp) against hand-computed or independent references: rounding half to even
// and saturation, per-axis parameters, the integer products against float products of the same
// integers, windows identical in Fast and Exact mode, DFT against known spectra, and the errors
// that name the node. The ONNX backend node tests (tests/conformance) cover them further.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "runtime_helpers.h"

using namespace rt;
using g::Attribute;
using g::TensorData;

namespace {

constexpr om::ArithmeticMode kModes[] = {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact};

// Elementwise within 1e-6 (the transforms sum in double: exact zeros come out near 1e-16).
void check_near(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(std::fabs(got[i] - want[i]) < 1e-6f);
}

}  // namespace

TEST_CASE("QuantizeLinear rounds halves to even, saturates, and takes per-axis parameters") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {2.5f, 3.5f, -2.5f, -0.5f, 0.5f, 1000.0f, -1000.0f, nan};
  auto u8 = single_node("QuantizeLinear", {value("x", DType::f32, {8})}, {},
                {TensorData::from_vector<float>("s", {}, {1.0f}), TensorData::from_vector<uint8_t>("z", {}, {128})});
  for (auto mode : kModes) {
    const auto y = run_graph(u8, {Feed::of("x", {8}, x)}, {mode})[0];
    CHECK(y.dtype == DType::u8);
    CHECK(y.as<uint8_t>() == std::vector<uint8_t>{130, 132, 126, 128, 128, 255, 0, 128});  // NaN gives the zero point
  }
  auto i8 = single_node("QuantizeLinear", {value("x", DType::f32, {8})}, {},
                {TensorData::from_vector<float>("s", {}, {1.0f}), TensorData::from_vector<int8_t>("z", {}, {-1})});
  CHECK(run_graph(i8, {Feed::of("x", {8}, x)})[0].as<int8_t>() == std::vector<int8_t>{1, 3, -3, -1, -1, 127, -128, -1});
  // No zero point: u8 around 0.
  auto plain = single_node("QuantizeLinear", {value("x", DType::f32, {2})}, {}, {TensorData::from_vector<float>("s", {}, {0.5f})});
  CHECK(run_graph(plain, {Feed::of("x", {2}, std::vector<float>{1.2f, -3.0f})})[0].as<uint8_t>() == std::vector<uint8_t>{2, 0});
  // Per-axis along axis 0 of [2, 2]: row 1 has scale 2 and zero point 10.
  auto axis = single_node("QuantizeLinear", {value("x", DType::f32, {2, 2})}, {Attribute::of_int("axis", 0)},
                  {TensorData::from_vector<float>("s", {2}, {1.0f, 2.0f}), TensorData::from_vector<uint8_t>("z", {2}, {0, 10})});
  CHECK(run_graph(axis, {Feed::of("x", {2, 2}, std::vector<float>{1, 2, 3, 4})})[0].as<uint8_t>() ==
        std::vector<uint8_t>{1, 2, 12, 12});  // 3 / 2 = 1.5 rounds to 2
}

TEST_CASE("DequantizeLinear per-axis, and DynamicQuantizeLinear's range, zero point and all-zero input") {
  auto dq = single_node("DequantizeLinear", {value("x", DType::i8, {2, 2})}, {Attribute::of_int("axis", 1)},
                {TensorData::from_vector<float>("s", {2}, {0.5f, 4.0f}), TensorData::from_vector<int8_t>("z", {2}, {-128, 1})});
  CHECK(run_graph(dq, {Feed::of<int8_t>("x", {2, 2}, {127, -128, -128, 127})})[0].as<float>() ==
        std::vector<float>{127.5f, -516.0f, 0.0f, 504.0f});

  auto dyn = single_node("DynamicQuantizeLinear", {value("x", DType::f32, {4})}, {}, {}, 3);
  for (auto mode : kModes) {
    const auto r = run_graph(dyn, {Feed::of("x", {4}, std::vector<float>{-1, 0, 1, 2})}, {mode});
    CHECK(r[1].as<float>() == std::vector<float>{3.0f / 255.0f});
    CHECK(r[2].as<uint8_t>() == std::vector<uint8_t>{85});  // -(-1) / (3/255) = 85
    CHECK(r[0].as<uint8_t>() == std::vector<uint8_t>{0, 85, 170, 255});
    const auto z = run_graph(dyn, {Feed::of("x", {4}, std::vector<float>{0, 0, 0, 0})}, {mode});
    CHECK(z[0].as<uint8_t>() == std::vector<uint8_t>{0, 0, 0, 0});
    CHECK(z[1].as<float>() == std::vector<float>{0.0f});
    CHECK(z[2].as<uint8_t>() == std::vector<uint8_t>{0});
  }
}

TEST_CASE("MatMulInteger with batch broadcasting and per-row / per-column zero points equals the reference sum") {
  const std::vector<int8_t> a = {-128, 5, 127, 3, -7, 0, 1, 2, 3, -1, -2, -3};  // [2, 2, 3]
  const std::vector<uint8_t> b = {0, 1, 2, 255, 10, 20, 30, 40, 200, 100, 50, 7};  // [3, 4]
  const std::vector<int8_t> za = {1, -2};                                         // per row of A
  const std::vector<uint8_t> zb = {0, 1, 128, 255};                               // per column of B
  auto mm = single_node("MatMulInteger", {value("a", DType::i8, {2, 2, 3})}, {},
                {TensorData::from_vector("b", {3, 4}, b), TensorData::from_vector("za", {2}, za), TensorData::from_vector("zb", {4}, zb)});
  std::vector<int32_t> want;
  for (int batch = 0; batch < 2; ++batch)
    for (int m = 0; m < 2; ++m)
      for (int n = 0; n < 4; ++n) {
        int32_t s = 0;
        for (int k = 0; k < 3; ++k) s += (a[size_t(batch * 6 + m * 3 + k)] - za[size_t(m)]) * (b[size_t(k * 4 + n)] - zb[size_t(n)]);
        want.push_back(s);
      }
  for (auto mode : kModes) {
    const auto y = run_graph(mm, {Feed::of("a", {2, 2, 3}, a)}, {mode})[0];
    CHECK(y.dtype == DType::i32);
    CHECK(y.dims == std::vector<int64_t>{2, 2, 4});
    CHECK(y.as<int32_t>() == want);
  }
}

TEST_CASE("ConvInteger with groups, strides, dilations and pads equals Conv on the same integers in f32") {
  std::vector<uint8_t> x(4 * 7 * 7), w(4 * 2 * 3 * 3);
  for (size_t i = 0; i < x.size(); ++i) x[i] = uint8_t((i * 37 + 11) % 256);
  for (size_t i = 0; i < w.size(); ++i) w[i] = uint8_t((i * 53 + 5) % 256);
  const uint8_t zx = 3;
  const std::vector<uint8_t> zw = {1, 2, 200, 4};
  const std::vector<Attribute> attrs = {Attribute::of_int("group", 2), Attribute::of_ints("strides", {2, 1}),
                                        Attribute::of_ints("dilations", {1, 2}), Attribute::of_ints("pads", {1, 2, 0, 1})};
  auto ci = single_node("ConvInteger", {value("x", DType::u8, {1, 4, 7, 7})}, attrs,
                {TensorData::from_vector("w", {4, 2, 3, 3}, w), TensorData::from_vector<uint8_t>("zx", {}, {zx}),
                 TensorData::from_vector("zw", {4}, zw)});
  // The f32 reference: the padding of the f32 Conv is 0, which is the integer padding (zx) minus zx.
  std::vector<float> xf(x.size()), wf(w.size());
  for (size_t i = 0; i < x.size(); ++i) xf[i] = float(int(x[i]) - zx);
  for (size_t i = 0; i < w.size(); ++i) wf[i] = float(int(w[i]) - zw[i / 18]);
  auto cf = single_node("Conv", {value("x", DType::f32, {1, 4, 7, 7})}, attrs, {TensorData::from_vector("w", {4, 2, 3, 3}, wf)});
  const auto want = run_graph(cf, {Feed::of("x", {1, 4, 7, 7}, xf)}, {om::ArithmeticMode::Exact})[0];
  for (auto mode : kModes) {
    const auto y = run_graph(ci, {Feed::of("x", {1, 4, 7, 7}, x)}, {mode})[0];
    CHECK(y.dims == want.dims);
    const auto got = y.as<int32_t>();
    const auto ref = want.as<float>();
    REQUIRE(got.size() == ref.size());
    for (size_t i = 0; i < got.size(); ++i) CHECK(float(got[i]) == ref[i]);  // sums < 2^24: exact in f32
  }
}

TEST_CASE("QLinearMatMul and QLinearConv requantize with round(acc * (s_in * s_w / s_y)) + zp_y, saturated") {
  // a - za = {2, 4}, b - zb = {3, 5}^T: acc = 26; 26 * (0.5 * 0.25 / 0.5) = 6.5 -> 6 (half to even), + 100.
  auto qm = single_node("QLinearMatMul", {value("a", DType::u8, {1, 2})}, {},
                {TensorData::from_vector<float>("sa", {}, {0.5f}), TensorData::from_vector<uint8_t>("za", {}, {10}),
                 TensorData::from_vector<int8_t>("b", {2, 1}, {3, 5}), TensorData::from_vector<float>("sb", {}, {0.25f}),
                 TensorData::from_vector<int8_t>("zb", {}, {0}), TensorData::from_vector<float>("sy", {}, {0.5f}),
                 TensorData::from_vector<uint8_t>("zy", {}, {100})});
  for (auto mode : kModes)
    CHECK(run_graph(qm, {Feed::of<uint8_t>("a", {1, 2}, {12, 14})}, {mode})[0].as<uint8_t>() == std::vector<uint8_t>{106});
  // A 1x1 convolution per channel: (x - 1) * (w - 0) + bias, scaled by s_x s_w[m] / s_y = 1 and 2.
  auto qc = single_node("QLinearConv", {value("x", DType::u8, {1, 1, 1, 2})}, {},
                {TensorData::from_vector<float>("sx", {}, {1.0f}), TensorData::from_vector<uint8_t>("zx", {}, {1}),
                 TensorData::from_vector<int8_t>("w", {2, 1, 1, 1}, {3, -4}), TensorData::from_vector<float>("sw", {2}, {0.5f, 1.0f}),
                 TensorData::from_vector<int8_t>("zw", {2}, {0, 0}), TensorData::from_vector<float>("sy", {}, {0.5f}),
                 TensorData::from_vector<int8_t>("zy", {}, {0}), TensorData::from_vector<int32_t>("bias", {2}, {1, -100})});
  for (auto mode : kModes) {
    const auto y = run_graph(qc, {Feed::of<uint8_t>("x", {1, 1, 1, 2}, {1, 11})}, {mode})[0];
    CHECK(y.dtype == DType::i8);
    // channel 0: (0*3 + 1) * 1 = 1, (10*3 + 1) * 1 = 31; channel 1: (0 - 100) * 2 = -200 -> -128, (-40 - 100) * 2 -> -128.
    CHECK(y.as<int8_t>() == std::vector<int8_t>{1, 31, -128, -128});
  }
}

TEST_CASE("quantization errors name the node, the values and the fix") {
  auto bad_zp = single_node("QuantizeLinear", {value("x", DType::f32, {2, 3})}, {Attribute::of_int("axis", 1)},
                    {TensorData::from_vector<float>("s", {3}, {1, 2, 3}), TensorData::from_vector<uint8_t>("z", {2}, {0, 0})});
  CHECK_THROWS_WITH([&] { om::Session s(bad_zp); }(), doctest::Contains("QuantizeLinear"));
  CHECK_THROWS_WITH([&] { om::Session s(bad_zp); }(), doctest::Contains("[3] (per-axis)"));
  auto bad_scale = single_node("DequantizeLinear", {value("x", DType::u8, {2, 3})}, {},
                       {TensorData::from_vector<float>("s", {2}, {1, 2})});
  CHECK_THROWS_WITH([&] { om::Session s(bad_scale); }(), doctest::Contains("per-axis"));
  auto float_a = single_node("MatMulInteger", {value("a", DType::f32, {2, 3})}, {}, {TensorData::from_vector<uint8_t>("b", {3, 1}, {1, 2, 3})});
  CHECK_THROWS_WITH([&] { om::Session s(float_a); }(), doctest::Contains("must be u8 or i8"));
  auto mixed_zp = single_node("ConvInteger", {value("x", DType::u8, {1, 1, 3, 3})}, {},
                      {TensorData::from_vector<uint8_t>("w", {1, 1, 2, 2}, {1, 2, 3, 4}), TensorData::from_vector<int8_t>("zx", {}, {0})});
  CHECK_THROWS_WITH([&] { om::Session s(mixed_zp); }(), doctest::Contains("must be u8 like the tensor it quantizes"));
  // Scales known when planning: zero, NaN and infinite ones are refused naming the node, the
  // input and the value.
  for (float bad : {0.0f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    CAPTURE(bad);
    auto q = single_node("QuantizeLinear", {value("x", DType::f32, {2, 3})}, {Attribute::of_int("axis", 1)},
                         {TensorData::from_vector<float>("s", {3}, {1, bad, 3}), TensorData::from_vector<uint8_t>("z", {3}, {0, 0, 0})});
    CHECK_THROWS_WITH([&] { om::Session s(q); }(), doctest::Contains("QuantizeLinear"));
    CHECK_THROWS_WITH([&] { om::Session s(q); }(), doctest::Contains("a scale must be finite and non-zero"));
    CHECK_THROWS_WITH([&] { om::Session s(q); }(), doctest::Contains("at index 1"));
    auto qc = single_node("QLinearConv", {value("x", DType::u8, {1, 1, 3, 3})}, {},
                          {TensorData::from_vector<float>("sx", {}, {0.5f}), TensorData::from_vector<uint8_t>("zx", {}, {0}),
                           TensorData::from_vector<int8_t>("w", {2, 1, 1, 1}, {1, 2}), TensorData::from_vector<float>("sw", {2}, {0.1f, bad}),
                           TensorData::from_vector<int8_t>("zw", {2}, {0, 0}), TensorData::from_vector<float>("sy", {}, {1.0f}),
                           TensorData::from_vector<uint8_t>("zy", {}, {0})});
    CHECK_THROWS_WITH([&] { om::Session s(qc); }(), doctest::Contains("w_scale"));
  }
}

TEST_CASE("windows: known values, periodic and symmetric, the same bits in Fast and Exact mode") {
  auto hann = single_node("HannWindow", {}, {}, {TensorData::from_vector<int64_t>("n", {}, {4})});
  const auto f = run_graph(hann, {}, {om::ArithmeticMode::Fast})[0].as<float>();
  const auto e = run_graph(hann, {}, {om::ArithmeticMode::Exact})[0].as<float>();
  CHECK(f == e);
  REQUIRE(f.size() == 4);
  CHECK(f[0] == 0.0f);
  CHECK(f[1] == doctest::Approx(0.5).epsilon(1e-6));
  CHECK(f[2] == doctest::Approx(1.0).epsilon(1e-6));
  auto sym = single_node("HammingWindow", {}, {Attribute::of_int("periodic", 0)}, {TensorData::from_vector<int32_t>("n", {}, {5})});
  const auto h = run_graph(sym, {}, {om::ArithmeticMode::Exact})[0].as<float>();
  REQUIRE(h.size() == 5);
  CHECK(h[0] == doctest::Approx(4.0 / 46.0).epsilon(1e-6));  // 25/46 - 21/46
  CHECK(h[2] == doctest::Approx(1.0).epsilon(1e-6));
  CHECK(h[4] == doctest::Approx(h[0]).epsilon(1e-6));
  auto black = single_node("BlackmanWindow", {}, {}, {TensorData::from_vector<int64_t>("n", {}, {8})});
  const auto b = run_graph(black, {}, {om::ArithmeticMode::Exact})[0].as<float>();
  CHECK(b == run_graph(black, {}, {om::ArithmeticMode::Fast})[0].as<float>());
  CHECK(b[4] == doctest::Approx(1.0).epsilon(1e-6));  // 0.42 + 0.5 + 0.08
  auto neg = single_node("HannWindow", {}, {}, {TensorData::from_vector<int64_t>("n", {}, {-1})});
  CHECK_THROWS_WITH([&] { om::Session s(neg); }(), doctest::Contains("size"));
}

TEST_CASE("DFT forward, inverse and onesided; STFT frames; MelWeightMatrix filters") {
  // x = [1, 2, 3, 4] (real, [1, 4, 1]): X = [10, -2+2i, -2, -2-2i].
  auto fwd = single_node("DFT", {value("x", DType::f32, {1, 4, 1})});
  check_near(run_graph(fwd, {Feed::of("x", {1, 4, 1}, std::vector<float>{1, 2, 3, 4})})[0].as<float>(),
             {10, 0, -2, 2, -2, 0, -2, -2});
  auto inv = single_node("DFT", {value("x", DType::f32, {1, 4, 2})}, {Attribute::of_int("inverse", 1)});
  check_near(run_graph(inv, {Feed::of("x", {1, 4, 2}, std::vector<float>{10, 0, -2, 2, -2, 0, -2, -2})})[0].as<float>(),
             {1, 0, 2, 0, 3, 0, 4, 0});
  auto half = single_node("DFT", {value("x", DType::f32, {1, 4, 1})}, {Attribute::of_int("onesided", 1)});
  CHECK(run_graph(half, {Feed::of("x", {1, 4, 1}, std::vector<float>{1, 2, 3, 4})})[0].dims == std::vector<int64_t>{1, 3, 2});
  auto empty = single_node("DFT", {value("x", DType::f32, {1, 0, 1})}, {Attribute::of_int("onesided", 1)});
  CHECK_THROWS_WITH([&] { om::Session s(empty); }(), doctest::Contains("dft_length"));
  auto complex_half = single_node("DFT", {value("x", DType::f32, {1, 4, 2})}, {Attribute::of_int("onesided", 1)});
  CHECK_THROWS_WITH([&] { om::Session s(complex_half); }(), doctest::Contains("real signal"));

  // A constant signal: every frame's spectrum is frame_length at DC and 0 elsewhere.
  auto stft = single_node("STFT", {value("x", DType::f32, {1, 10, 1})}, {},
                  {TensorData::from_vector<int64_t>("step", {}, {3}), TensorData::from_vector<float>("w", {4}, {1, 1, 1, 1})});
  const auto s = run_graph(stft, {Feed::of("x", {1, 10, 1}, std::vector<float>(10, 1.0f))})[0];
  CHECK(s.dims == std::vector<int64_t>{1, 3, 3, 2});  // (10 - 4) / 3 + 1 frames, 4 / 2 + 1 bins
  const auto sv = s.as<float>();
  for (size_t fr = 0; fr < 3; ++fr) {
    CHECK(sv[fr * 6] == 4.0f);
    for (size_t i = 1; i < 6; ++i) CHECK(std::fabs(sv[fr * 6 + i]) < 1e-6f);
  }

  auto mel = single_node("MelWeightMatrix", {}, {},
                 {TensorData::from_vector<int64_t>("bins", {}, {4}), TensorData::from_vector<int64_t>("dft", {}, {32}),
                  TensorData::from_vector<int64_t>("rate", {}, {16000}), TensorData::from_vector<float>("lo", {}, {0.0f}),
                  TensorData::from_vector<float>("hi", {}, {8000.0f})});
  const auto m = run_graph(mel, {})[0];
  CHECK(m.dims == std::vector<int64_t>{17, 4});
  const auto mv = m.as<float>();
  for (size_t col = 0; col < 4; ++col) {  // each filter peaks at exactly 1, with values in [0, 1]
    float peak = 0.0f;
    for (size_t r = 0; r < 17; ++r) {
      CHECK(mv[r * 4 + col] >= 0.0f);
      CHECK(mv[r * 4 + col] <= 1.0f);
      peak = std::max(peak, mv[r * 4 + col]);
    }
    CHECK(peak == 1.0f);
  }
}
