// Resize's taps forms (cubic, tf_half_pixel_for_nn, tf_crop_and_resize: graph/ops/resize_taps.h)
// over several planes and more output rows and columns than one tile of taps, so that the run
// helper's split check cuts their work (the planes) and every tile edge is crossed. The ONNX
// backend node tests cover the forms' values on one small plane.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "runtime_helpers.h"

using namespace rt;
using g::Attribute;
using g::TensorData;

namespace {

constexpr int64_t kN = 2, kC = 3, kH = 9, kW = 11;

// Resize(x, roi, sc) of [kN, kC, kH, kW], or of one plane [1, 1, kH, kW].
g::Graph resize_graph(bool one_plane, std::vector<Attribute> attrs, std::vector<TensorData> consts) {
  return single_node("Resize", {value("x", DType::f32, {one_plane ? 1 : kN, one_plane ? 1 : kC, kH, kW})}, std::move(attrs), std::move(consts));
}

}  // namespace

TEST_CASE("Resize taps forms: nearest tf_half_pixel_for_nn against its formula; every plane as if resized alone") {
  const std::vector<float> x = random_floats(size_t(kN * kC * kH * kW), 7);
  const float sh = 2.1f, sw = 13.7f;  // [9, 11] -> [18, 150]: two tiles of taps down (16 rows each), two across (128 columns)
  const std::vector<TensorData> consts = {TensorData::from_vector<float>("roi", {8}, {0, 0, 0.1f, 0.2f, 1, 1, 0.9f, 1.3f}),
                                          TensorData::from_vector<float>("sc", {4}, {1, 1, sh, sw})};
  const int64_t OH = int64_t(std::floor(double(kH) * double(sh))), OW = int64_t(std::floor(double(kW) * double(sw)));

  // Nearest, rounding down: y[oh, ow] = x[floor((oh + 0.5) / scale_h), floor((ow + 0.5) / scale_w)], clamped.
  const g::Graph nearest = resize_graph(false,
                                        {Attribute::of_string("mode", "nearest"),
                                         Attribute::of_string("coordinate_transformation_mode", "tf_half_pixel_for_nn"),
                                         Attribute::of_string("nearest_mode", "floor")},
                                        consts);
  const std::vector<float> y = run_graph(nearest, {Feed::of("x", {kN, kC, kH, kW}, x)})[0].as<float>();
  REQUIRE(y.size() == size_t(kN * kC * OH * OW));
  auto src = [](int64_t o, float scale, int64_t in) { return std::min(int64_t(std::floor((double(o) + 0.5) / double(scale))), in - 1); };
  bool same = true;
  for (int64_t p = 0; p < kN * kC; ++p)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow)
        same = same && y[size_t((p * OH + oh) * OW + ow)] == x[size_t((p * kH + src(oh, sh, kH)) * kW + src(ow, sw, kW))];
  CHECK(same);

  // Cubic (exclude_outside) and linear tf_crop_and_resize: each plane of the batch gives the bits
  // of a session resizing that plane alone.
  const std::vector<std::vector<Attribute>> forms = {
      {Attribute::of_string("mode", "cubic"), Attribute::of_int("exclude_outside", 1), Attribute::of_float("cubic_coeff_a", -0.5f)},
      {Attribute::of_string("mode", "linear"), Attribute::of_string("coordinate_transformation_mode", "tf_crop_and_resize"),
       Attribute::of_float("extrapolation_value", -7.5f)}};
  for (const auto& attrs : forms) {
    CAPTURE(attrs[0].s);
    for (om::ArithmeticMode mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
      const std::vector<float> all = run_graph(resize_graph(false, attrs, consts), {Feed::of("x", {kN, kC, kH, kW}, x)}, {mode})[0].as<float>();
      const size_t per = all.size() / size_t(kN * kC);  // tf_crop_and_resize: the roi's share of the scaled size
      REQUIRE(per * size_t(kN * kC) == all.size());
      om::Session one(resize_graph(true, attrs, consts), {mode});
      for (int64_t p = 0; p < kN * kC; ++p) {
        CAPTURE(p);
        const std::vector<float> plane(x.begin() + p * kH * kW, x.begin() + (p + 1) * kH * kW);
        const std::vector<float> alone = run(one, {Feed::of("x", {1, 1, kH, kW}, plane)})[0].as<float>();
        REQUIRE(alone.size() == per);
        CHECK(std::equal(alone.begin(), alone.end(), all.begin() + int64_t(per) * p));
      }
    }
  }
}
