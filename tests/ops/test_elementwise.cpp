// add sub mul div neg and the activations against double references.
#include "ops/ref.h"

namespace {

struct BinCase {
  om::Shape a, b;
};

const BinCase kBroadcast[] = {
    {{2, 3}, {2, 3}},       {{2, 3}, {3}},          {{2, 3}, {1, 3}},       {{2, 3}, {2, 1}},
    {{3}, {2, 3}},          {{4, 1, 3}, {2, 1}},    {{1}, {2, 2, 2}},       {{2, 1, 4}, {1, 3, 1}},
    {{}, {2, 3}},           {{2, 3}, {}},           {{}, {}},               {{0, 3}, {3}},
    {{5, 1, 1, 7}, {1, 6, 1}}, {{1, 17}, {33, 1}},
};

using OpFn = om::Tensor (*)(const om::Tensor&, const om::Tensor&);

void check_binary(OpFn op, double (*f)(double, double), const char* name) {
  om::Generator g(11);
  for (const BinCase& c : kBroadcast) {
    INFO(name, " ", om::shape_str(c.a), " ", om::shape_str(c.b));
    om::Tensor a = ref::random(c.a, g), b = ref::random(c.b, g, 0.5, 2.0);
    ref::check_close(op(a, b), ref::binary(ref::of(a), ref::of(b), f));
  }
}

}  // namespace

TEST_CASE("add sub mul div broadcast like numpy") {
  check_binary(&om::add, [](double x, double y) { return double(float(x) + float(y)); }, "add");
  check_binary(&om::sub, [](double x, double y) { return x - y; }, "sub");
  check_binary(&om::mul, [](double x, double y) { return x * y; }, "mul");
  check_binary(&om::div, [](double x, double y) { return x / y; }, "div");
}

TEST_CASE("binary operators on strided, transposed and expanded views") {
  om::Generator g(12);
  om::Tensor base = ref::random({4, 6}, g);
  om::Tensor a = base.t();                     // [6, 4] non-contiguous
  om::Tensor b = base.slice(1, 0, 6, 2);       // [4, 3] stepped
  om::Tensor c = om::arange(4, om::DType::f32).reshape({4, 1}).expand({4, 3});
  ref::check_close(om::add(a.t(), base), ref::binary(ref::of(base), ref::of(base), [](double x, double y) { return x + y; }));
  ref::check_close(om::mul(b, c), ref::binary(ref::of(b), ref::of(c), [](double x, double y) { return x * y; }));
  ref::check_close(om::sub(base.flip(0), base.select(0, 2)),
                   ref::binary(ref::of(base.flip(0)), ref::of(base.select(0, 2)), [](double x, double y) { return x - y; }));
}

TEST_CASE("scalar operands and operators") {
  om::Tensor x = om::from_vector<float>({1, -2, 3, 4}, {2, 2});
  CHECK(om::add(x, 1.5).to_vector<float>() == std::vector<float>{2.5f, -0.5f, 4.5f, 5.5f});
  CHECK(om::sub(x, 1.0).to_vector<float>() == std::vector<float>{0, -3, 2, 3});
  CHECK(om::mul(x, -2.0).to_vector<float>() == std::vector<float>{-2, 4, -6, -8});
  CHECK(om::div(x, 4.0).to_vector<float>() == std::vector<float>{0.25f, -0.5f, 0.75f, 1});
  CHECK((x + 1.0).to_vector<float>() == std::vector<float>{2, -1, 4, 5});
  CHECK((x - x).to_vector<float>() == std::vector<float>(4, 0.0f));
  CHECK((2.0 * x).to_vector<float>() == std::vector<float>{2, -4, 6, 8});
  CHECK((x * x).to_vector<float>() == std::vector<float>{1, 4, 9, 16});
  CHECK((x / 2.0).to_vector<float>() == std::vector<float>{0.5f, -1, 1.5f, 2});
  CHECK((x / x).to_vector<float>() == std::vector<float>(4, 1.0f));
  CHECK((-x).to_vector<float>() == std::vector<float>{-1, 2, -3, -4});
  CHECK(om::neg(x.t()).to_vector<float>() == std::vector<float>{-1, -3, 2, -4});
  // 0-d with 0-d
  om::Tensor s = om::add(om::scalar_tensor(2), om::scalar_tensor(3));
  CHECK(s.dim() == 0);
  CHECK(s.item<float>() == 5.0f);
  CHECK(om::mul(om::scalar_tensor(2), 4.0).item<float>() == 8.0f);
  // IEEE division
  om::Tensor q = om::div(om::from_vector<float>({1, -1, 0}), om::zeros({3}));
  const std::vector<float> qv = q.to_vector<float>();
  CHECK(std::isinf(qv[0]));
  CHECK(qv[0] > 0);
  CHECK(std::isinf(qv[1]));
  CHECK(qv[1] < 0);
  CHECK(std::isnan(qv[2]));
}

TEST_CASE("integer arithmetic for i64 and i32") {
  om::Tensor a = om::from_vector<int64_t>({7, -7, 100, (int64_t(1) << 40) + 1}, {4});
  om::Tensor b = om::from_vector<int64_t>({2}, {1});
  CHECK(om::add(a, b).to_vector<int64_t>() == std::vector<int64_t>{9, -5, 102, (int64_t(1) << 40) + 3});
  CHECK(om::mul(a, b).to_vector<int64_t>() == std::vector<int64_t>{14, -14, 200, (int64_t(1) << 41) + 2});
  CHECK(om::sub(a, b).to_vector<int64_t>() == std::vector<int64_t>{5, -9, 98, (int64_t(1) << 40) - 1});
  CHECK(om::div(a, b).to_vector<int64_t>() == std::vector<int64_t>{3, -3, 50, int64_t(1) << 39});  // truncating
  om::Tensor c = om::from_vector<int32_t>({1, 2, 3}).reshape({3, 1});
  om::Tensor d = om::from_vector<int32_t>({10, 20});
  CHECK(om::add(c, d).to_vector<int32_t>() == std::vector<int32_t>{11, 21, 12, 22, 13, 23});
  CHECK(om::add(a, 3.0).to_vector<int64_t>() == std::vector<int64_t>{10, -4, 103, (int64_t(1) << 40) + 4});
}

TEST_CASE("binary errors name the call, the shapes and the offending dim") {
  om::Error e = testutil::error_of([] { om::add(om::zeros({2, 3}), om::zeros({4, 3})); });
  CHECK(e.kind() == om::ErrorKind::ShapeMismatch);
  INFO(e.what());
  CHECK(testutil::contains(e.what(), "om::add: shapes [2, 3] and [4, 3] do not broadcast (dim 0: 2 vs 4)"));
  om::Error e2 = testutil::error_of([] { om::mul(om::zeros({5, 2}), om::zeros({3})); });
  CHECK(testutil::contains(e2.what(), "om::mul: shapes [5, 2] and [3] do not broadcast (dim 1: 2 vs 3)"));
  CHECK(testutil::contains(testutil::error_of([] { om::sub(om::zeros({2}), om::zeros({3})); }).what(), "om::sub"));
  CHECK(testutil::contains(testutil::error_of([] { om::div(om::zeros({2}), om::zeros({3})); }).what(), "om::div"));
  om::Error dt = testutil::error_of([] { om::add(om::zeros({2}), om::zeros({2}, om::DType::i64)); });
  CHECK(dt.kind() == om::ErrorKind::DTypeMismatch);
  CHECK(testutil::contains(dt.what(), "i64"));
  CHECK(testutil::error_of([] { om::add(om::zeros({2}, om::DType::u8), om::zeros({2}, om::DType::u8)); }).kind() ==
        om::ErrorKind::DTypeMismatch);
  CHECK(testutil::error_of([] { om::neg(om::zeros({2}, om::DType::i64)); }).kind() == om::ErrorKind::DTypeMismatch);
  CHECK(testutil::error_of([] { om::add(om::Tensor(), om::zeros({2})); }).kind() == om::ErrorKind::InvalidArgument);
}

TEST_CASE("relu sigmoid tanh gelu against double references") {
  om::Generator g(13);
  om::Tensor x = ref::random({7, 33}, g, -8.0, 8.0);
  // Exact points and extremes too.
  om::Tensor special = om::from_vector<float>({0.0f, -0.0f, 1.0f, -1.0f, 20.0f, -20.0f, 1e-7f, -1e-7f, 88.0f, -88.0f});
  for (const om::Tensor& t : {x, special, x.t()}) {
    const ref::Nd r = ref::of(t);
    ref::check_close(om::relu(t), ref::unary(r, [](double v) { return v > 0 ? v : 0.0; }), 0, 0);
    ref::check_close(om::sigmoid(t), ref::unary(r, [](double v) { return 1 / (1 + std::exp(-v)); }), 2e-6, 1e-7);
    ref::check_close(om::tanh(t), ref::unary(r, [](double v) { return std::tanh(v); }), 2e-6, 1e-7);
    ref::check_close(om::gelu(t), ref::unary(r, [](double v) { return ref::gelu(v, false); }), 2e-6, 1e-7);
    ref::check_close(om::gelu(t, om::GeluApproximate::Tanh), ref::unary(r, [](double v) { return ref::gelu(v, true); }), 2e-6, 1e-7);
  }
  // The tanh approximation differs from the erf form (by up to ~1e-3 near |x| = 2).
  om::Tensor two = om::from_vector<float>({2.0f});
  CHECK(om::gelu(two).item<float>() != om::gelu(two, om::GeluApproximate::Tanh).item<float>());
  CHECK(testutil::error_of([] { om::relu(om::zeros({2}, om::DType::i32)); }).kind() == om::ErrorKind::DTypeMismatch);
  CHECK(om::relu(om::zeros({0, 3})).shape() == om::Shape{0, 3});
}
