// Opset 1 to 8 forms the reader converts (onemodel/io/onnx_legacy.cpp; docs/onnx.md, "Opsets 1
// to 6"): each runs with the old semantics, computed here independently; forms whose
// semantics do not map are refused naming the operator and its version.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "io_helpers.h"
#include "onemodel/core/tensor.h"
#include "onemodel/io/onnx.h"
#include "onemodel/runtime/session.h"

using namespace om;
using iotest::Pb;

namespace {

Pb attr_float(const std::string& name, float v) { return Pb().str(1, name).f32(2, v).i64(20, 1); }
Pb attr_string(const std::string& name, const std::string& v) { return Pb().str(1, name).str(4, v).i64(20, 3); }

Pb init_f32(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v) {
  Pb t;
  for (int64_t d : dims) t.i64(1, d);
  return t.i64(2, 1).str(8, name).bytes(9, v.data(), v.size() * 4);
}

struct Input {
  std::string name;
  std::vector<int64_t> dims;
};

// One node over declared f32 inputs (and initializers) to output y, in a model of `opset`.
Pb model_of(const Pb& node, const std::vector<Input>& inputs, int64_t opset, const std::vector<Pb>& inits = {}) {
  Pb g;
  g.msg(1, node).str(2, "g");
  for (const Pb& t : inits) g.msg(5, t);
  for (const Input& in : inputs) g.msg(11, iotest::value_info(in.name, 1, in.dims));
  g.msg(12, Pb().str(1, "y").msg(2, Pb().msg(1, Pb().i64(1, 1))));
  return iotest::model(g, opset);
}

std::vector<float> iota(size_t n, float start = 0.0f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + float(i);
  return v;
}

Tensor run(const Pb& m, const std::vector<std::pair<std::string, Tensor>>& feeds) {
  Session s = Session::from_onnx(m.b);
  return s.run(feeds)[0];
}

void expect_refused(const Pb& m, std::initializer_list<const char*> parts) {
  Result<graph::Graph> r = onnx::read_bytes(m.b.data(), m.b.size());
  REQUIRE_MESSAGE(!r.is_ok(), "the reader accepted the model");
  CHECK_MESSAGE(r.status().kind() == ErrorKind::Unsupported, r.status().message());
  for (const char* p : parts) CHECK_MESSAGE(r.status().message().find(p) != std::string::npos, "'", p, "' not in: ", r.status().message());
}

}  // namespace

TEST_CASE("legacy Add-6: broadcast with axis aligns B from that axis of A") {
  // A [2,3,4], B [3] at axis 1: y[i,j,k] = a[i,j,k] + b[j] (numpy would align B with the last axis).
  Pb m = model_of(iotest::node("Add", {"a", "b"}, {"y"}, {iotest::attr_int("broadcast", 1), iotest::attr_int("axis", 1)}),
                  {{"a", {2, 3, 4}}, {"b", {3}}}, 6);
  const std::vector<float> a = iota(24), b = {100, 200, 300};
  Tensor y = run(m, {{"a", om::from_vector<float>(a, {2, 3, 4})}, {"b", om::from_vector<float>(b, {3})}});
  REQUIRE(y.shape() == Shape{2, 3, 4});
  const std::vector<float> got = y.to_vector<float>();
  for (size_t i = 0; i < 24; ++i) CHECK(got[i] == a[i] + b[(i / 4) % 3]);

  // Without axis the old rule matched suffixes: numpy's alignment.
  Pb s = model_of(iotest::node("Mul", {"a", "b"}, {"y"}, {iotest::attr_int("broadcast", 1)}), {{"a", {2, 3}}, {"b", {3}}}, 6);
  Tensor z = run(s, {{"a", om::from_vector<float>(iota(6), {2, 3})}, {"b", om::from_vector<float>({1, 10, 100}, {3})}});
  CHECK(z.to_vector<float>() == std::vector<float>{0, 10, 200, 3, 40, 500});

  // Opset 1 carries consumed_inputs too; Sub-1 and Div-1 read the same way.
  Pb one = model_of(iotest::node("Sub", {"a", "b"}, {"y"}, {iotest::attr_ints("consumed_inputs", {0, 0})}), {{"a", {2}}, {"b", {2}}}, 1);
  CHECK(run(one, {{"a", om::from_vector<float>({5, 7}, {2})}, {"b", om::from_vector<float>({1, 2}, {2})}}).to_vector<float>() ==
        std::vector<float>{4, 5});
}

TEST_CASE("legacy Add-6: forms that cannot be placed are refused naming the operator and version") {
  // The rank of 'a' is not declared anywhere: the alignment cannot be computed.
  Pb g;
  g.msg(1, iotest::node("Relu", {"x"}, {"a"}))
      .msg(1, iotest::node("Div", {"a", "b"}, {"y"}, {iotest::attr_int("broadcast", 1), iotest::attr_int("axis", 0)}))
      .str(2, "g")
      .msg(11, Pb().str(1, "x").msg(2, Pb().msg(1, Pb().i64(1, 1))))
      .msg(11, iotest::value_info("b", 1, {3}))
      .msg(12, Pb().str(1, "y").msg(2, Pb().msg(1, Pb().i64(1, 1))));
  expect_refused(iotest::model(g, 6), {"graph.node[1]", "Div-6", "does not declare the rank of 'a'", "opset_version"});
  // B does not fit inside A from the axis.
  expect_refused(model_of(iotest::node("Add", {"a", "b"}, {"y"}, {iotest::attr_int("broadcast", 1), iotest::attr_int("axis", 2)}),
                          {{"a", {2, 3}}, {"b", {3}}}, 6),
                 {"Add-6", "axis 2 does not place B (rank 1) inside A (rank 2)"});
  // An operator that did not exist before opset 7 is still refused with both opsets.
  expect_refused(model_of(iotest::node("Cos", {"a"}, {"y"}), {{"a", {2}}}, 6), {"Cos (needs opset 7, the model imports 6)"});
}

TEST_CASE("legacy PRelu-6: a 1-D slope applies per channel") {
  Pb m = model_of(iotest::node("PRelu", {"x", "s"}, {"y"}), {{"x", {1, 3, 2}}}, 6, {init_f32("s", {3}, {0.5f, 2.0f, -1.0f})});
  Tensor y = run(m, {{"x", om::from_vector<float>({-2, 1, -2, 1, -2, 1}, {1, 3, 2})}});
  CHECK(y.to_vector<float>() == std::vector<float>{-1, 1, -4, 1, 2, 1});
}

TEST_CASE("legacy BatchNormalization-6: is_test, spatial and the training outputs") {
  const std::vector<float> scale = {2, 3}, bias = {1, -1}, mean = {0.5f, -0.5f}, var = {4, 0.25f};
  std::vector<Pb> inits = {init_f32("scale", {2}, scale), init_f32("B", {2}, bias), init_f32("mean", {2}, mean), init_f32("var", {2}, var)};
  Pb m = model_of(iotest::node("BatchNormalization", {"x", "scale", "B", "mean", "var"}, {"y"},
                               {iotest::attr_int("is_test", 1), attr_float("epsilon", 0.0f), iotest::attr_int("spatial", 1)}),
                  {{"x", {1, 2, 2}}}, 6, inits);
  const std::vector<float> x = {1, 2, 3, 4};
  const std::vector<float> got = run(m, {{"x", om::from_vector<float>(x, {1, 2, 2})}}).to_vector<float>();
  for (size_t i = 0; i < 4; ++i) {
    const size_t c = i / 2;
    CHECK(got[i] == doctest::Approx((x[i] - mean[c]) * (scale[c] / std::sqrt(var[c])) + bias[c]));
  }

  // spatial = 0: one statistic per activation (shape C x W), broadcast over N.
  const std::vector<float> s4 = {1, 2, 3, 4}, b4 = {0, 1, 0, 1}, m4 = {1, 1, 2, 2}, v4 = {1, 4, 9, 16};
  Pb p = model_of(iotest::node("BatchNormalization", {"x", "scale", "B", "mean", "var"}, {"y"},
                               {iotest::attr_int("is_test", 1), attr_float("epsilon", 0.0f), iotest::attr_int("spatial", 0)}),
                  {{"x", {2, 2, 2}}}, 6,
                  {init_f32("scale", {2, 2}, s4), init_f32("B", {2, 2}, b4), init_f32("mean", {2, 2}, m4), init_f32("var", {2, 2}, v4)});
  const std::vector<float> x8 = iota(8, -3.0f);
  const std::vector<float> y8 = run(p, {{"x", om::from_vector<float>(x8, {2, 2, 2})}}).to_vector<float>();
  for (size_t i = 0; i < 8; ++i) {
    const size_t a = i % 4;
    CHECK(y8[i] == (x8[i] - m4[a]) * (s4[a] / std::sqrt(v4[a])) + b4[a]);
  }

  // The saved statistics of training (outputs 3 and 4) have no later form.
  Pb t = model_of(iotest::node("BatchNormalization", {"x", "scale", "B", "mean", "var"}, {"y", "rm", "rv", "sm", "sv"}), {{"x", {1, 2, 2}}},
                  6, inits);
  expect_refused(t, {"BatchNormalization-6", "output 3 ('sm'"});
  // spatial = 0 in training mode (is_test defaults to 0 before version 7).
  Pb st = model_of(iotest::node("BatchNormalization", {"x", "scale", "B", "mean", "var"}, {"y"}, {iotest::attr_int("spatial", 0)}),
                   {{"x", {1, 2, 2}}}, 6, inits);
  expect_refused(st, {"BatchNormalization-6", "spatial = 0 with is_test = 0"});
  // The opset-1 form reads its consumed_inputs and is_test like version 6.
  Pb one = model_of(iotest::node("BatchNormalization", {"x", "scale", "B", "mean", "var"}, {"y"},
                                 {iotest::attr_int("is_test", 1), attr_float("epsilon", 0.0f), iotest::attr_ints("consumed_inputs", {0, 0, 0, 1, 1})}),
                    {{"x", {1, 2, 2}}}, 1, inits);
  CHECK(run(one, {{"x", om::from_vector<float>(x, {1, 2, 2})}}).to_vector<float>() == got);
}

TEST_CASE("legacy Gemm-6, Pad-2, Upsample-1, MaxPool-1 and Max-6") {
  Pb gemm = model_of(iotest::node("Gemm", {"a", "w", "c"}, {"y"}, {iotest::attr_int("broadcast", 1), iotest::attr_int("transB", 1)}),
                     {{"a", {1, 2}}}, 6, {init_f32("w", {2, 2}, {1, 2, 3, 4}), init_f32("c", {2}, {10, 20})});
  CHECK(run(gemm, {{"a", om::from_vector<float>({1, 1}, {1, 2})}}).to_vector<float>() == std::vector<float>{13, 27});

  Pb pad = model_of(iotest::node("Pad", {"x"}, {"y"}, {iotest::attr_ints("pads", {1, 2}), attr_float("value", 1.5f)}), {{"x", {2}}}, 2);
  CHECK(run(pad, {{"x", om::from_vector<float>({7, 8}, {2})}}).to_vector<float>() == std::vector<float>{1.5f, 7, 8, 1.5f, 1.5f});
  Pb reflect = model_of(iotest::node("Pad", {"x"}, {"y"}, {iotest::attr_ints("paddings", {0, 2, 0, 1}), attr_string("mode", "reflect")}),
                        {{"x", {1, 3}}}, 1);
  CHECK(run(reflect, {{"x", om::from_vector<float>({1, 2, 3}, {1, 3})}}).to_vector<float>() == std::vector<float>{3, 2, 1, 2, 3, 2});

  Pb up = model_of(iotest::node("Upsample", {"x"}, {"y"}, {attr_float("height_scale", 2.0f), attr_float("width_scale", 2.0f)}),
                   {{"x", {1, 1, 1, 2}}}, 6);
  Tensor u = run(up, {{"x", om::from_vector<float>({1, 2}, {1, 1, 1, 2})}});
  CHECK(u.shape() == Shape{1, 1, 2, 4});
  CHECK(u.to_vector<float>() == std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2});
  expect_refused(model_of(iotest::node("Upsample", {"x"}, {"y"}, {attr_float("height_scale", 2.0f), attr_float("width_scale", 2.0f),
                                                                   attr_string("mode", "cubic")}),
                          {{"x", {1, 1, 1, 2}}}, 6),
                 {"Upsample-1", "mode 'cubic'"});

  Pb pool = model_of(iotest::node("MaxPool", {"x"}, {"y"}, {iotest::attr_ints("kernel_shape", {2}), iotest::attr_ints("strides", {2})}),
                     {{"x", {1, 1, 4}}}, 1);
  CHECK(run(pool, {{"x", om::from_vector<float>({1, 5, 3, 2}, {1, 1, 4})}}).to_vector<float>() == std::vector<float>{5, 3});

  Pb max = model_of(iotest::node("Max", {"a", "b"}, {"y"}), {{"a", {3}}, {"b", {3}}}, 6);
  CHECK(run(max, {{"a", om::from_vector<float>({1, 5, 3}, {3})}, {"b", om::from_vector<float>({4, 2, 3}, {3})}}).to_vector<float>() ==
        std::vector<float>{4, 5, 3});
}

TEST_CASE("legacy forms: hostile attributes are refused cleanly, never a crash or a wrong shape") {
  // An axis at the edge of int64 (no overflow when placing B).
  for (int64_t axis : {INT64_MAX, INT64_MIN, int64_t(-3)}) {
    Pb m = model_of(iotest::node("Add", {"a", "b"}, {"y"}, {iotest::attr_int("broadcast", 1), iotest::attr_int("axis", axis)}),
                    {{"a", {2, 3}}, {"b", {3}}}, 6);
    expect_refused(m, {"Add-6", "does not place B"});
  }
  // Pads of the wrong length, and a scale that would overflow the output size: planning refuses
  // them with the node named.
  Pb pads = model_of(iotest::node("Pad", {"x"}, {"y"}, {iotest::attr_ints("pads", {1, 2, 3})}), {{"x", {2}}}, 2);
  REQUIRE(onnx::read_bytes(pads.b.data(), pads.b.size()).is_ok());
  om::Session s;
  Status st = Session::try_from_onnx(pads.b.data(), pads.b.size(), {}, &s);
  if (st.is_ok()) {
    om::Tensor x = om::from_vector<float>({1, 2}, {2});
    om::TensorView in;
    in.name = "x";
    in.dims = x.shape().data();
    in.rank = 1;
    in.data = const_cast<void*>(x.storage().data());
    om::TensorView out;
    st = s.try_run(&in, 1, &out, 1);
  }
  CHECK(!st.is_ok());
  CHECK_MESSAGE(st.message().find("pads must have 2 values per padded axis") != std::string::npos, st.message());
  Pb big = model_of(iotest::node("Upsample", {"x"}, {"y"}, {attr_float("height_scale", 1e30f), attr_float("width_scale", 1.0f)}),
                    {{"x", {1, 1, 2, 2}}}, 6);
  om::Session b;
  st = Session::try_from_onnx(big.b.data(), big.b.size(), {}, &b);
  CHECK(!st.is_ok());
  CHECK_MESSAGE(st.message().find("Upsample node producing 'y': scale 2") != std::string::npos, st.message());
  Pb nan = model_of(iotest::node("Upsample", {"x"}, {"y"}, {attr_float("height_scale", NAN), attr_float("width_scale", 1.0f)}),
                    {{"x", {1, 1, 2, 2}}}, 6);
  expect_refused(nan, {"Upsample-1", "scales must be >= 1"});
  // spatial = 0 statistics that do not match X: planning names the shapes.
  Pb bn = model_of(iotest::node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y"}, {iotest::attr_int("is_test", 1), iotest::attr_int("spatial", 0)}),
                   {{"x", {1, 2, 2}}}, 6,
                   {init_f32("s", {3}, {1, 1, 1}), init_f32("b", {3}, {0, 0, 0}), init_f32("m", {3}, {0, 0, 0}), init_f32("v", {3}, {1, 1, 1})});
  om::Session c;
  st = Session::try_from_onnx(bn.b.data(), bn.b.size(), {}, &c);
  CHECK(!st.is_ok());
  CHECK_MESSAGE(st.message().find("do not broadcast") != std::string::npos, st.message());
}
