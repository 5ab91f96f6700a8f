// GridSample, RoiAlign and NonMaxSuppression on small hand-computed cases and on hostile values
// (the ONNX backend node tests, tests/conformance, cover the modes against ONNX's outputs).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "runtime_helpers.h"

using namespace rt;
using g::Attribute;

TEST_CASE("GridSample: pixel centres read the pixels; far and non-finite coordinates read zeros") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {1, 2, 3, 4};  // [1, 1, 2, 2]
  // align_corners = 1: -1 and 1 are the corner pixels' centres.
  const std::vector<float> grid = {-1, -1, 1, -1, -1, 1, 1, 1, 1e30f, 0, -1e30f, 3e9f, inf, 0, nan, 0};  // [1, 2, 4, 2]
  for (const char* mode : {"bilinear", "nearest", "bicubic"}) {
    CAPTURE(mode);
    const g::Graph gr = single_node("GridSample", {value("x", DType::f32, {1, 1, 2, 2}), value("g", DType::f32, {1, 2, 4, 2})},
                            {Attribute::of_int("align_corners", 1), Attribute::of_string("mode", mode)});
    for (om::ArithmeticMode m : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
      const auto y = run_graph(gr, {Feed::of("x", {1, 1, 2, 2}, x), Feed::of("g", {1, 2, 4, 2}, grid)}, {m})[0];
      CHECK(y.dims == std::vector<int64_t>{1, 1, 2, 4});
      const auto v = y.as<float>();
      for (int i = 0; i < 4; ++i) CHECK(v[size_t(i)] == doctest::Approx(x[size_t(i)]).epsilon(1e-6));
      for (int i = 4; i < 8; ++i) CHECK(v[size_t(i)] == 0.0f);
    }
  }
  // Border padding clamps the far coordinates to the edge instead.
  const g::Graph border = single_node("GridSample", {value("x", DType::f32, {1, 1, 2, 2}), value("g", DType::f32, {1, 1, 2, 2})},
                              {Attribute::of_int("align_corners", 1), Attribute::of_string("padding_mode", "border")});
  const auto v = run_graph(border, {Feed::of("x", {1, 1, 2, 2}, x), Feed::of("g", {1, 1, 2, 2}, std::vector<float>{1e30f, 1e30f, -5, -5})})[0]
                     .as<float>();
  CHECK(v == std::vector<float>{4, 1});
  // A grid that does not match the batch is refused naming it.
  const g::Graph bad = single_node("GridSample", {value("x", DType::f32, {2, 1, 2, 2}), value("g", DType::f32, {1, 1, 2, 2})});
  CHECK_THROWS_WITH_AS(om::Session{bad}, doctest::Contains("grid must be [N, H_out, W_out, 2]"), om::Error);
}

TEST_CASE("RoiAlign: averages bilinear samples; hostile rois and batch indices are errors") {
  std::vector<float> x(16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i);  // [1, 1, 4, 4], value = 4 * row + column
  auto graph = [](std::vector<float> rois, int64_t batch) {
    return single_node("RoiAlign", {value("x", DType::f32, {1, 1, 4, 4})},
                       {Attribute::of_int("output_height", 1), Attribute::of_int("output_width", 1), Attribute::of_int("sampling_ratio", 2)},
                       {g::TensorData::from_vector("rois", {1, 4}, rois), g::TensorData::from_vector("idx", {1}, std::vector<int64_t>{batch})});
  };
  // half_pixel: the roi [1, 1, 3, 3] spans pixel centres 0.5 .. 2.5; the plane is linear, so the
  // average of the samples is the value at the centre (1.5, 1.5) = 7.5.
  const auto v = run_graph(graph({1, 1, 3, 3}, 0), {Feed::of("x", {1, 1, 4, 4}, x)})[0].as<float>();
  REQUIRE(v.size() == 1);
  CHECK(v[0] == doctest::Approx(7.5f));
  CHECK_THROWS_WITH_AS(run_graph(graph({1, 1, 3, 3}, 3), {Feed::of("x", {1, 1, 4, 4}, x)}), doctest::Contains("batch_indices[0] = 3"),
                       om::Error);
  const auto wide = graph({0, 0, 1e30f, 1e30f}, 0);
  g::Graph adaptive = wide;
  adaptive.nodes[0].attributes.pop_back();  // sampling_ratio 0: the grid follows the roi's size
  CHECK_THROWS_WITH_AS(run_graph(adaptive, {Feed::of("x", {1, 1, 4, 4}, x)}), doctest::Contains("bins exceed"), om::Error);
}

TEST_CASE("NonMaxSuppression: selection order, thresholds, and the plan-time requirement") {
  // Box 1 overlaps box 0 (IoU 0.82); box 2 is apart. Scores 0.9, 0.8, 0.7.
  const std::vector<float> boxes = {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 2, 1, 3};
  auto graph = [](float iou, int64_t max_boxes) {
    return single_node("NonMaxSuppression", {value("boxes", DType::f32, {1, 3, 4}), value("scores", DType::f32, {1, 1, 3})}, {},
               {g::TensorData::from_vector("max", {1}, std::vector<int64_t>{max_boxes}),
                g::TensorData::from_vector("iou", {1}, std::vector<float>{iou})});
  };
  const std::vector<Feed> feeds = {Feed::of("boxes", {1, 3, 4}, boxes), Feed::of("scores", {1, 1, 3}, std::vector<float>{0.9f, 0.8f, 0.7f})};
  auto sel = run_graph(graph(0.5f, 10), feeds)[0];
  CHECK(sel.dims == std::vector<int64_t>{2, 3});
  CHECK(sel.as<int64_t>() == std::vector<int64_t>{0, 0, 0, 0, 0, 2});
  CHECK(run_graph(graph(0.9f, 10), feeds)[0].as<int64_t>() == std::vector<int64_t>{0, 0, 0, 0, 0, 1, 0, 0, 2});
  CHECK(run_graph(graph(0.5f, 1), feeds)[0].dims == std::vector<int64_t>{1, 3});
  CHECK(run_graph(graph(0.5f, 0), feeds)[0].dims == std::vector<int64_t>{0, 3});
  CHECK_THROWS_WITH_AS(run_graph(graph(1.5f, 1), feeds), doctest::Contains("iou_threshold 1.5 is outside [0, 1]"), om::Error);
  // Boxes too many to be a value input (a detector's: 80 floats > kMaxValueInputElements) are not
  // known when planning: refused by name.
  const g::Graph big = single_node("NonMaxSuppression", {value("boxes", DType::f32, {1, 20, 4}), value("scores", DType::f32, {1, 1, 20})});
  CHECK_THROWS_WITH_AS(run_graph(big, {Feed::of("boxes", {1, 20, 4}, random_floats(80, 1)), Feed::of("scores", {1, 1, 20}, random_floats(20, 2))}),
                       doctest::Contains("must be known when the session plans"), om::Error);
}
