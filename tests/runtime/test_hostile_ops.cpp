// Hostile values on the operator families of the second wave (quantization, signal, vision,
// Einsum, Unique, EyeLike, integer Pow, Gather/Scatter, OneHot, Range, Split, Cast): each case
// once crashed, hung, hit undefined behaviour or disagreed with the ONNX specification. The
// same models are session fuzz seeds (tests/io/test_fuzz_session.cpp); the sweep over every
// operator's attributes and inputs is test_hostile_generated.cpp.
#include <doctest/doctest.h>

#include <climits>
#include <cmath>
#include <cstdint>

#include "runtime_helpers.h"
#include "test_util.h"

using namespace rt;
using g::Attribute;
using g::TensorData;
using testutil::contains;
using testutil::error_of;

namespace {

template <typename T>
TensorData scalar(const std::string& name, T v) {
  return TensorData::from_vector<T>(name, {}, {v});
}

template <typename T>
std::vector<T> run_one(const g::Graph& gr, const std::vector<Feed>& feeds = {}, om::ArithmeticMode mode = om::ArithmeticMode::Fast) {
  om::SessionOptions opt;
  opt.mode = mode;
  return run_graph(gr, feeds, opt)[0].as<T>();
}

std::string create_error(const g::Graph& gr, om::ArithmeticMode mode = om::ArithmeticMode::Fast) {
  om::SessionOptions opt;
  opt.mode = mode;
  return error_of([&] { om::Session s(gr, opt); }).message();
}

}  // namespace

TEST_CASE("hostile: DynamicQuantizeLinear with infinities and NaN takes the range of the finite values") {
  const float inf = INFINITY;
  auto gr = single_node("DynamicQuantizeLinear", {value("x", DType::f32, {6})}, {}, {}, 3);
  auto out = run_graph(gr, {Feed::of<float>("x", {6}, {-inf, 1.0f, NAN, inf, -2.0f, 0.0f})});
  const float scale = out[1].as<float>()[0];
  CHECK(scale == (1.0f - -2.0f) / 255.0f);
  CHECK(out[2].as<uint8_t>()[0] == 170);  // round(0 - (-2) / scale)
  // -inf saturates low, +inf high, NaN is the zero point; finite values as the reference.
  CHECK(out[0].as<uint8_t>() == std::vector<uint8_t>{0, 255, 170, 255, 0, 170});
  // Only infinities: the finite range is [0, 0], so every output is the zero point 0 or saturated.
  auto only = run_graph(gr, {Feed::of<float>("x", {6}, {-inf, inf, NAN, -inf, inf, NAN})});
  CHECK(only[1].as<float>()[0] == 0.0f);
  CHECK(only[0].as<uint8_t>() == std::vector<uint8_t>{0, 0, 0, 0, 0, 0});
}

TEST_CASE("hostile: Conv and ConvInteger refuse a group whose product with the weights' channels overflows") {
  const int64_t group = int64_t(1) << 62;
  auto conv = single_node("Conv", {value("x", DType::f32, {1, 0, 3, 3})}, {Attribute::of_int("group", group)},
                          {TensorData::from_vector<float>("w", {1, 2, 1, 1}, {1, 1})});
  CHECK(contains(create_error(conv), "times group must equal the input channels"));
  auto convi = single_node("ConvInteger", {value("x", DType::u8, {1, 0, 3, 3})}, {Attribute::of_int("group", group)},
                           {TensorData::from_vector<uint8_t>("w", {1, 2, 1, 1}, {1, 1})});
  CHECK(contains(create_error(convi), "times group must equal the input channels"));
}

TEST_CASE("hostile: RoiAlign on an empty plane reads nothing; sampling_ratio is bounded") {
  auto gr = [](int64_t h, int64_t w, int64_t ratio) {
    return single_node("RoiAlign", {value("x", DType::f32, {1, 1, h, w})},
                       {Attribute::of_int("output_height", 2), Attribute::of_int("output_width", 2), Attribute::of_int("sampling_ratio", ratio)},
                       {TensorData::from_vector<float>("rois", {1, 4}, {0, 0, 1, 1}), TensorData::from_vector<int64_t>("idx", {1}, {0})});
  };
  CHECK(run_one<float>(gr(0, 4, 2), {Feed::of<float>("x", {1, 1, 0, 4}, {})}) == std::vector<float>{0, 0, 0, 0});
  CHECK(run_one<float>(gr(4, 0, 0), {Feed::of<float>("x", {1, 1, 4, 0}, {})}) == std::vector<float>{0, 0, 0, 0});
  const std::string e = create_error(gr(2, 2, INT64_MAX));
  CHECK(contains(e, "RoiAlign"));
  CHECK(contains(e, "sampling_ratio is 9223372036854775807"));
  // The schema's PositiveInt attributes are checked for graphs built in code too, not only by the reader.
  auto zero = single_node("RoiAlign", {value("x", DType::f32, {1, 1, 2, 2})}, {Attribute::of_int("output_height", 0)},
                          {TensorData::from_vector<float>("rois", {1, 4}, {0, 0, 1, 1}), TensorData::from_vector<int64_t>("idx", {1}, {0})});
  CHECK(contains(create_error(zero), "attribute 'output_height' is 0; it must be at least 1"));
}

TEST_CASE("hostile: GridSample reflection of huge finite coordinates stays inside the image (three modes)") {
  const std::vector<float> x{1, 2, 3, 4, 5, 6};
  for (const char* mode : {"bilinear", "nearest", "bicubic"})
    for (int align = 0; align < 2; ++align) {
      CAPTURE(mode);
      CAPTURE(align);
      auto gr = single_node("GridSample", {value("x", DType::f32, {1, 1, 2, 3}), value("grid", DType::f32, {1, 1, 3, 2})},
                            {Attribute::of_string("mode", mode), Attribute::of_string("padding_mode", "reflection"),
                             Attribute::of_int("align_corners", align)});
      const auto y = run_one<float>(gr, {Feed::of("x", {1, 1, 2, 3}, x),
                                          Feed::of<float>("grid", {1, 1, 3, 2}, {1e30f, -1e30f, 3e38f, 1e20f, -7e25f, 0.5f})});
      REQUIRE(y.size() == 3);
      for (float v : y) {
        CHECK(std::isfinite(v));
        if (std::string(mode) != "bicubic") CHECK((v >= 0.0f && v <= 6.0f));  // a blend of pixels (or nothing)
      }
    }
}

TEST_CASE("hostile: Einsum refuses a second ellipsis in the output") {
  auto gr = single_node("Einsum", {value("a", DType::f32, {2, 3, 4})}, {Attribute::of_string("equation", "...i->......i")});
  CHECK(contains(create_error(gr), "more than one ellipsis"));
}

TEST_CASE("hostile: EyeLike with k near INT64_MIN or INT64_MAX is all zeros; ordinary k as ONNX") {
  auto eye = [](int64_t k) {
    auto gr = single_node("EyeLike", {value("x", DType::f32, {3, 4})}, {Attribute::of_int("k", k)});
    return run_one<float>(gr, {Feed::of("x", {3, 4}, std::vector<float>(12, 7.0f))});
  };
  CHECK(eye(INT64_MAX) == std::vector<float>(12, 0.0f));
  CHECK(eye(INT64_MIN) == std::vector<float>(12, 0.0f));
  CHECK(eye(INT64_MIN + 1) == std::vector<float>(12, 0.0f));
  CHECK(eye(1) == std::vector<float>{0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1});
  CHECK(eye(-2) == std::vector<float>{0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0});
  CHECK(eye(3) == std::vector<float>{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0});
  CHECK(eye(4) == std::vector<float>(12, 0.0f));
}

TEST_CASE("hostile: ScatterElements integer add and mul wrap; max and min propagate NaN") {
  auto scatter = [](DType dt, const char* how, TensorData data, TensorData upd) {
    g::Graph gr = single_node("ScatterElements", {}, {Attribute::of_string("reduction", how)},
                              {std::move(data), TensorData::from_vector<int64_t>("i", {2}, {0, 0}), std::move(upd)});
    (void)dt;
    return gr;
  };
  CHECK(run_one<int64_t>(scatter(DType::i64, "add", TensorData::from_vector<int64_t>("x", {2}, {INT64_MAX, 5}),
                                 TensorData::from_vector<int64_t>("u", {2}, {1, 1}))) == std::vector<int64_t>{INT64_MIN + 1, 5});
  CHECK(run_one<int64_t>(scatter(DType::i64, "mul", TensorData::from_vector<int64_t>("x", {2}, {INT64_MAX, 5}),
                                 TensorData::from_vector<int64_t>("u", {2}, {2, 2}))) == std::vector<int64_t>{-4, 5});
  CHECK(run_one<int32_t>(scatter(DType::i32, "add", TensorData::from_vector<int32_t>("x", {2}, {INT32_MAX, 5}),
                                 TensorData::from_vector<int32_t>("u", {2}, {1, 0}))) == std::vector<int32_t>{INT32_MIN, 5});
  for (const char* how : {"max", "min"}) {
    CAPTURE(how);
    const auto y = run_one<float>(scatter(DType::f32, how, TensorData::from_vector<float>("x", {2}, {2, 5}),
                                          TensorData::from_vector<float>("u", {2}, {NAN, 1})));
    CHECK(std::isnan(y[0]));  // a NaN update wins, and a NaN already there stays
    CHECK(y[1] == 5.0f);
  }
}

TEST_CASE("hostile: OneHot refuses a depth or index without an integer value; fractional indices truncate") {
  auto one_hot = [](TensorData depth) {
    return single_node("OneHot", {value("i", DType::f32, {3})}, {},
                       {std::move(depth), TensorData::from_vector<float>("v", {2}, {0, 1})});
  };
  for (float d : {1e30f, NAN, INFINITY}) {
    CAPTURE(d);
    const std::string e = create_error(one_hot(scalar<float>("d", d)));
    CHECK(contains(e, "OneHot"));
    CHECK(contains(e, "depth"));
  }
  auto gr = one_hot(scalar<float>("d", 3.0f));
  CHECK(run_one<float>(gr, {Feed::of<float>("i", {3}, {1.7f, -1.0f, 5.0f})}) == std::vector<float>{0, 1, 0, 0, 0, 1, 0, 0, 0});
  om::Session s(gr);
  const std::string e = error_of([&] { run(s, {Feed::of<float>("i", {3}, {0.0f, NAN, 1e30f})}); }).message();
  CHECK(contains(e, "OneHot"));
  CHECK(contains(e, "indices element 1 has no integer value"));
}

TEST_CASE("hostile: Range of integers computes every value exactly when it fits (no overflowing intermediate)") {
  auto range = [](auto start, auto limit, auto delta) {
    using T = decltype(start);
    return single_node("Range", {}, {}, {scalar<T>("s", start), scalar<T>("l", limit), scalar<T>("d", delta)});
  };
  CHECK(run_one<int64_t>(range(INT64_MIN, INT64_MAX, int64_t(1) << 62)) ==
        std::vector<int64_t>{INT64_MIN, INT64_MIN / 2, 0, int64_t(1) << 62});
  CHECK(run_one<int32_t>(range(INT32_MIN, INT32_MAX, int32_t(1) << 30)) == std::vector<int32_t>{INT32_MIN, INT32_MIN / 2, 0, 1 << 30});
  CHECK(run_one<int64_t>(range(INT64_MAX, INT64_MIN, INT64_MIN)) == std::vector<int64_t>{INT64_MAX, -1});
  // Beyond 2^53 a double count would round both ends together and give 0 elements.
  const int64_t big = (int64_t(1) << 62) + 1;
  CHECK(run_one<int64_t>(range(big, big + 2, int64_t(1))) == std::vector<int64_t>{big, big + 1});
  CHECK(contains(create_error(range(int64_t(0), INT64_MAX, int64_t(1))), "too many elements"));
}

TEST_CASE("hostile: Split with unnamed outputs writes each part at its own offset") {
  for (int omitted = 0; omitted < 2; ++omitted) {
    CAPTURE(omitted);
    g::Graph gr = single_node("Split", {value("x", DType::f32, {2, 4})}, {Attribute::of_int("axis", 1)},
                              {TensorData::from_vector<int64_t>("split", {2}, {1, 3})}, 2);
    gr.nodes[0].outputs[size_t(omitted)] = "";
    gr.outputs.erase(gr.outputs.begin() + omitted);
    const auto y = run_one<float>(gr, {Feed::of<float>("x", {2, 4}, {0, 1, 2, 3, 4, 5, 6, 7})});
    CHECK(y == (omitted == 0 ? std::vector<float>{1, 2, 3, 5, 6, 7} : std::vector<float>{0, 4}));
  }
}

TEST_CASE("hostile: Cast and EyeLike refuse a dtype code beyond int32 the same way") {
  auto cast = single_node("Cast", {value("x", DType::f32, {2})}, {Attribute::of_int("to", 4294967297LL)});
  CHECK(contains(create_error(cast), "to = 4294967297 is not an ONNX dtype code"));
  auto eye = single_node("EyeLike", {value("x", DType::f32, {2, 2})}, {Attribute::of_int("dtype", 4294967297LL)});
  CHECK(contains(create_error(eye), "dtype = 4294967297 is not an ONNX dtype code"));
}

TEST_CASE("hostile: Unique groups NaNs as one value sorted last and -0 with 0, whatever the order") {
  auto unique = [](std::vector<float> x, int sorted) {
    auto gr = single_node("Unique", {}, {Attribute::of_int("sorted", sorted)},
                          {TensorData::from_vector<float>("x", {int64_t(x.size())}, x)}, 4);
    return run_graph(gr, {});
  };
  const auto s = unique({NAN, 1, NAN, 1, 2, -0.0f, 0}, 1);
  const auto y = s[0].as<float>();
  REQUIRE(y.size() == 4);
  CHECK(y[0] == 0.0f);
  CHECK(std::signbit(y[0]));  // the first occurrence's bits (-0 at index 5)
  CHECK(y[1] == 1.0f);
  CHECK(y[2] == 2.0f);
  CHECK(std::isnan(y[3]));
  CHECK(s[1].as<int64_t>() == std::vector<int64_t>{5, 1, 4, 0});
  CHECK(s[2].as<int64_t>() == std::vector<int64_t>{3, 1, 3, 1, 2, 0, 0});
  CHECK(s[3].as<int64_t>() == std::vector<int64_t>{2, 2, 1, 2});
  // Another order of the same values: the same groups and counts.
  const auto p = unique({2, 0, NAN, 1, -0.0f, NAN, 1}, 1);
  CHECK(p[3].as<int64_t>() == std::vector<int64_t>{2, 2, 1, 2});
  CHECK(p[2].as<int64_t>() == std::vector<int64_t>{2, 0, 3, 1, 0, 3, 1});
  // Unsorted: order of first occurrence.
  const auto u = unique({NAN, 1, NAN, 1, 2, -0.0f, 0}, 0);
  CHECK(std::isnan(u[0].as<float>()[0]));
  CHECK(u[2].as<int64_t>() == std::vector<int64_t>{0, 1, 0, 1, 2, 3, 3});
  CHECK(u[3].as<int64_t>() == std::vector<int64_t>{2, 2, 1, 2});
}

TEST_CASE("hostile: integer Pow is exact in integer arithmetic, wraps, and defines negative exponents") {
  auto pow = [](DType dt, TensorData a, TensorData b) {
    (void)dt;
    return single_node("Pow", {}, {}, {std::move(a), std::move(b)});
  };
  auto i64s = [](const std::string& n, std::vector<int64_t> v) { return TensorData::from_vector<int64_t>(n, {int64_t(v.size())}, v); };
  const int64_t big = INT64_MAX;
  CHECK(run_one<int64_t>(pow(DType::i64, i64s("a", {big, -2, -1, -1, 1, 3, 0, 2, 3}),
                             i64s("b", {1, 63, -big, -4, -5, -2, -1, 64, 40}))) ==
        std::vector<int64_t>{big, INT64_MIN, -1, 1, 1, 0, 0, 0, int64_t(12157665459056928801ULL)});
  CHECK(run_one<int32_t>(pow(DType::i32, TensorData::from_vector<int32_t>("a", {3}, {2, -3, 7}),
                             TensorData::from_vector<int32_t>("b", {3}, {31, 3, 0}))) == std::vector<int32_t>{INT32_MIN, -27, 1});
  // A u64 exponent beyond INT64_MAX, and a float exponent (through double, truncated).
  CHECK(run_one<int64_t>(pow(DType::i64, i64s("a", {-1, 2}), TensorData::from_vector<uint64_t>("b", {2}, {UINT64_MAX, 3}))) ==
        std::vector<int64_t>{-1, 8});
  CHECK(run_one<int64_t>(pow(DType::i64, i64s("a", {2, 9}), TensorData::from_vector<float>("b", {2}, {0.5f, 0.5f}))) ==
        std::vector<int64_t>{1, 3});
}

TEST_CASE("hostile: STFT and DFT follow one rule for a complex signal: onesided = 1 is refused, onesided = 0 runs") {
  auto stft = [](std::vector<Attribute> attrs) {
    return single_node("STFT", {value("x", DType::f32, {1, 8, 2})}, std::move(attrs),
                       {scalar<int64_t>("step", 4), TensorData::from_vector<float>("w", {4}, {1, 1, 1, 1})});
  };
  CHECK(contains(create_error(stft({})), "onesided = 1 (the default) needs a real signal"));
  CHECK(contains(create_error(stft({Attribute::of_int("onesided", 1)})), "onesided = 1 needs a real signal"));
  CHECK(run_graph(stft({Attribute::of_int("onesided", 0)}), {Feed::of("x", {1, 8, 2}, std::vector<float>(16, 1.0f))})[0].dims ==
        std::vector<int64_t>{1, 2, 4, 2});
  auto dft = single_node("DFT", {value("x", DType::f32, {1, 8, 2})}, {Attribute::of_int("onesided", 1)});
  CHECK(contains(create_error(dft), "onesided = 1 needs a real signal"));
}

// Found by the generated hostile test under UBSan.
TEST_CASE("hostile: Pad refuses INT64_MIN pads (no std::abs overflow)") {
  auto gr = single_node("Pad", {value("x", DType::f32, {2, 3})}, {}, {TensorData::from_vector<int64_t>("pads", {4}, {INT64_MIN, 0, 0, 0})});
  const std::string e = create_error(gr);
  CHECK(contains(e, "Pad"));
  CHECK(contains(e, "are too large"));
}

TEST_CASE("hostile: an empty input given without data reaches kernels with an address (Dropout's copy)") {
  auto gr = single_node("Dropout", {value("x", DType::f32, {0, 3})});
  om::Session s(gr);
  om::TensorView in;
  in.name = "x";
  in.dtype = DType::f32;
  const int64_t dims[2] = {0, 3};
  in.dims = dims;
  in.rank = 2;
  in.data = nullptr;
  om::TensorView out;
  s.run(&in, 1, &out, 1);
  CHECK(out.numel() == 0);
}
