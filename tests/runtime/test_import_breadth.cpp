// Hand-computed values and refusals of the import-breadth forms: variadic Max/Min over integer
// and f16 dtypes, ArgMax/ArgMin select_last_index, ConstantOfShape, MaxUnpool, Resize's
// tf_crop_and_resize extrapolation. The ONNX backend node tests (tests/conformance) cover them
// further.
#include <doctest/doctest.h>

#include <cmath>

#include "runtime_helpers.h"

using namespace rt;
using g::Attribute;
using g::TensorData;

TEST_CASE("Max/Min: one to three inputs, broadcasting, integer and f16 dtypes, NaN propagates") {
  const auto gr3 = single_node("Max", {value("a", DType::i32, {2, 1}), value("b", DType::i32, {3}), value("c", DType::i32, {1})});
  const auto y = run_graph(gr3, {Feed::of("a", {2, 1}, std::vector<int32_t>{-5, 4}), Feed::of("b", {3}, std::vector<int32_t>{1, -7, 9}),
                                 Feed::of("c", {1}, std::vector<int32_t>{0})})[0];
  CHECK(y.dims == std::vector<int64_t>{2, 3});
  CHECK(y.as<int32_t>() == std::vector<int32_t>{1, 0, 9, 4, 4, 9});

  const auto y1 = run_graph(single_node("Min", {value("a", DType::u8, {3})}), {Feed::of("a", {3}, std::vector<uint8_t>{7, 200, 3})})[0];
  CHECK(y1.as<uint8_t>() == std::vector<uint8_t>{7, 200, 3});

  std::vector<om::half> h{om::float_to_half(1.5f), om::float_to_half(-2.0f)}, k{om::float_to_half(0.25f), om::float_to_half(-3.0f)};
  const auto yh = run_graph(single_node("Min", {value("a", DType::f16, {2}), value("b", DType::f16, {2})}),
                            {Feed::of("a", {2}, h), Feed::of("b", {2}, k)}, {om::ArithmeticMode::Exact})[0];
  REQUIRE(yh.dtype == DType::f16);
  CHECK(om::half_to_float(yh.as<om::half>()[0]) == 0.25f);
  CHECK(om::half_to_float(yh.as<om::half>()[1]) == -3.0f);

  const auto yf = run_graph(single_node("Max", {value("a", DType::f32, {2}), value("b", DType::f32, {2}), value("c", DType::f32, {2})}),
                            {Feed::of("a", {2}, std::vector<float>{1, NAN}), Feed::of("b", {2}, std::vector<float>{NAN, 2}),
                             Feed::of("c", {2}, std::vector<float>{5, 3})})[0]
                    .as<float>();
  CHECK(std::isnan(yf[0]));
  CHECK(std::isnan(yf[1]));

  const auto mixed = single_node("Max", {value("a", DType::f32, {2}), value("b", DType::i32, {2})});
  CHECK_THROWS_WITH([&] { om::Session s(mixed); }(), doctest::Contains("insert a Cast"));
}

TEST_CASE("ArgMax/ArgMin select_last_index returns the last of the ties, NaN ties with NaN") {
  const std::vector<float> x{3, 1, 3, 1, NAN, 2, NAN, 2};
  auto arg = [&](const char* op, int64_t last) {
    return run_graph(single_node(op, {value("x", DType::f32, {2, 4})},
                         {Attribute::of_int("axis", 1), Attribute::of_int("keepdims", 0), Attribute::of_int("select_last_index", last)}),
                     {Feed::of("x", {2, 4}, x)})[0]
        .as<int64_t>();
  };
  CHECK(arg("ArgMax", 0) == std::vector<int64_t>{0, 0});
  CHECK(arg("ArgMax", 1) == std::vector<int64_t>{2, 2});
  CHECK(arg("ArgMin", 0) == std::vector<int64_t>{1, 0});
  CHECK(arg("ArgMin", 1) == std::vector<int64_t>{3, 2});
}

TEST_CASE("ConstantOfShape: value's dtype, default f32 0, refusals name the node") {
  const auto y = run_graph(single_node("ConstantOfShape", {}, {Attribute::of_tensor("value", TensorData::from_vector<int64_t>("v", {1}, {-4}))},
                               {TensorData::from_vector<int64_t>("s", {2}, {2, 3})}),
                           {})[0];
  CHECK(y.dtype == DType::i64);
  CHECK(y.dims == std::vector<int64_t>{2, 3});
  CHECK(y.as<int64_t>() == std::vector<int64_t>(6, -4));

  const auto z = run_graph(single_node("ConstantOfShape", {}, {}, {TensorData::from_vector<int64_t>("s", {1}, {4})}), {})[0];
  CHECK(z.dtype == DType::f32);
  CHECK(z.as<float>() == std::vector<float>(4, 0.0f));

  const auto neg = single_node("ConstantOfShape", {}, {}, {TensorData::from_vector<int64_t>("s", {2}, {2, -1})});
  CHECK_THROWS_WITH([&] { om::Session s(neg); }(), doctest::Contains("ConstantOfShape_y"));
  const auto two = single_node("ConstantOfShape", {}, {Attribute::of_tensor("value", TensorData::from_vector<float>("v", {2}, {1, 2}))},
                       {TensorData::from_vector<int64_t>("s", {1}, {3})});
  CHECK_THROWS_WITH([&] { om::Session s(two); }(), doctest::Contains("exactly one element"));
}

TEST_CASE("MaxUnpool places X at I and refuses an index outside the unpooled shape") {
  const std::vector<Attribute> attrs{Attribute::of_ints("kernel_shape", {2, 2}), Attribute::of_ints("strides", {2, 2})};
  const auto gr = single_node("MaxUnpool", {value("x", DType::f32, {1, 1, 1, 2}), value("i", DType::i64, {1, 1, 1, 2})}, attrs);
  const auto y = run_graph(gr, {Feed::of("x", {1, 1, 1, 2}, std::vector<float>{7, 8}),
                                Feed::of("i", {1, 1, 1, 2}, std::vector<int64_t>{1, 6})})[0];
  CHECK(y.dims == std::vector<int64_t>{1, 1, 2, 4});
  CHECK(y.as<float>() == std::vector<float>{0, 7, 0, 0, 0, 0, 8, 0});
  om::Session s(gr);
  CHECK_THROWS_WITH(run(s, {Feed::of("x", {1, 1, 1, 2}, std::vector<float>{7, 8}), Feed::of("i", {1, 1, 1, 2}, std::vector<int64_t>{1, 8})}),
                    doctest::Contains("I[1] = 8"));
}

TEST_CASE("Resize tf_crop_and_resize: sources outside the roi's range give extrapolation_value") {
  // Rows 0..1 of a 2x2 plane cropped with the H roi (0, 2): output row 1 samples source row 2.
  const auto gr = single_node("Resize", {value("x", DType::f32, {1, 1, 2, 2})},
                      {Attribute::of_string("mode", "linear"), Attribute::of_string("coordinate_transformation_mode", "tf_crop_and_resize"),
                       Attribute::of_float("extrapolation_value", -9.0f)},
                      {TensorData::from_vector<float>("roi", {8}, {0, 0, 0, 0, 1, 1, 2, 1}), TensorData::from_vector<float>("scales", {0}, {}),
                       TensorData::from_vector<int64_t>("sizes", {4}, {1, 1, 2, 2})});
  for (auto mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
    const auto y = run_graph(gr, {Feed::of("x", {1, 1, 2, 2}, std::vector<float>{1, 2, 3, 4})}, {mode})[0].as<float>();
    CHECK(y == std::vector<float>{1, 2, -9, -9});
  }
}
