// Values of the operators added for imported models (issue 14) against small hand-computed
// references; the ONNX backend node tests (tests/conformance) cover them further.
#include <doctest/doctest.h>

#include <cmath>

#include "runtime_helpers.h"

using namespace rt;
using g::Attribute;

namespace {

std::vector<float> run_f32(const g::Graph& gr, const std::vector<Feed>& feeds, om::ArithmeticMode mode = om::ArithmeticMode::Fast) {
  return run_graph(gr, feeds, {mode})[0].as<float>();
}

}  // namespace

TEST_CASE("Einsum: matmul, diagonal, sum, transpose, ellipsis, implicit output") {
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};        // [2, 3]
  const std::vector<float> b = {1, 0, 2, 1, 0, 3};        // [3, 2]
  auto mm = single_node("Einsum", {value("a", DType::f32, {2, 3}), value("b", DType::f32, {3, 2})}, {Attribute::of_string("equation", "ij,jk->ik")});
  for (auto mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact})
    CHECK(run_f32(mm, {Feed::of("a", {2, 3}, a), Feed::of("b", {3, 2}, b)}, mode) == std::vector<float>{5, 11, 14, 23});
  auto implicit = single_node("Einsum", {value("a", DType::f32, {2, 3}), value("b", DType::f32, {3, 2})}, {Attribute::of_string("equation", "ij,jk")});
  CHECK(run_f32(implicit, {Feed::of("a", {2, 3}, a), Feed::of("b", {3, 2}, b)}) == std::vector<float>{5, 11, 14, 23});
  auto tr = single_node("Einsum", {value("a", DType::f32, {2, 3})}, {Attribute::of_string("equation", "ij->ji")});
  CHECK(run_f32(tr, {Feed::of("a", {2, 3}, a)}) == std::vector<float>{1, 4, 2, 5, 3, 6});
  auto sum = single_node("Einsum", {value("a", DType::f32, {2, 3})}, {Attribute::of_string("equation", "ij->i")});
  CHECK(run_f32(sum, {Feed::of("a", {2, 3}, a)}) == std::vector<float>{6, 15});
  const std::vector<float> sq = {1, 2, 3, 4, 5, 6, 7, 8};  // [2, 2, 2]
  auto diag = single_node("Einsum", {value("a", DType::f32, {2, 2, 2})}, {Attribute::of_string("equation", "...ii->...i")});
  CHECK(run_f32(diag, {Feed::of("a", {2, 2, 2}, sq)}) == std::vector<float>{1, 4, 5, 8});
  auto inner = single_node("Einsum", {value("a", DType::f32, {3}), value("b", DType::f32, {3})}, {Attribute::of_string("equation", "i,i")});
  CHECK(run_f32(inner, {Feed::of("a", {3}, std::vector<float>{1, 2, 3}), Feed::of("b", {3}, std::vector<float>{4, 5, 6})}) ==
        std::vector<float>{32});
  auto bad = single_node("Einsum", {value("a", DType::f32, {2, 3})}, {Attribute::of_string("equation", "ijk->i")});
  CHECK_THROWS_WITH([&] { om::Session s(bad); }(), doctest::Contains("rank"));  // static shapes: at creation
  // More terms after the arrow than the parse holds (found by fuzzing the Session): refused by name.
  auto many = single_node("Einsum", {value("a", DType::f32, {2, 3}), value("b", DType::f32, {4, 3})},
                          {Attribute::of_string("equation", "ij, kj -> i,k")});
  CHECK_THROWS_WITH([&] { om::Session s(many); }(), doctest::Contains("too many terms"));
  // A repeated label over an empty axis and a full one (fuzzing again): two sizes, not a read past
  // the empty input.
  auto empty_diag = single_node("Einsum", {value("a", DType::f32, {3, 0, 5})}, {Attribute::of_string("equation", "...ii->...i")});
  CHECK_THROWS_WITH([&] { om::Session s(empty_diag); }(), doctest::Contains("two different sizes"));
}

TEST_CASE("CumSum exclusive/reverse, Mod signs, Trilu, InstanceNormalization") {
  auto cs = single_node("CumSum", {value("x", DType::f32, {4})}, {Attribute::of_int("exclusive", 1), Attribute::of_int("reverse", 1)},
                {g::TensorData::from_vector<int64_t>("axis", {}, {0})});
  CHECK(run_f32(cs, {Feed::of("x", {4}, std::vector<float>{1, 2, 3, 4})}) == std::vector<float>{9, 7, 4, 0});

  auto mod = single_node("Mod", {value("a", DType::i32, {4}), value("b", DType::i32, {4})});
  auto r = run_graph(mod, {Feed::of<int32_t>("a", {4}, {-7, 7, -7, 7}), Feed::of<int32_t>("b", {4}, {3, -3, -3, 3})});
  CHECK(r[0].as<int32_t>() == std::vector<int32_t>{2, -2, -1, 1});  // the sign of the divisor
  auto fmod = single_node("Mod", {value("a", DType::i32, {2}), value("b", DType::i32, {2})}, {Attribute::of_int("fmod", 1)});
  CHECK(run_graph(fmod, {Feed::of<int32_t>("a", {2}, {-7, 7}), Feed::of<int32_t>("b", {2}, {3, -3})})[0].as<int32_t>() ==
        std::vector<int32_t>{-1, 1});

  auto tri = single_node("Trilu", {value("x", DType::f32, {3, 3})}, {Attribute::of_int("upper", 0)});
  CHECK(run_f32(tri, {Feed::of("x", {3, 3}, std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9})}) ==
        std::vector<float>{1, 0, 0, 4, 5, 0, 7, 8, 9});

  auto in = single_node("InstanceNormalization", {value("x", DType::f32, {1, 2, 2})}, {},
                {g::TensorData::from_vector<float>("s", {2}, {1, 2}), g::TensorData::from_vector<float>("b", {2}, {0, 1})});
  for (auto mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
    const auto y = run_f32(in, {Feed::of("x", {1, 2, 2}, std::vector<float>{1, 3, 10, 10})}, mode);
    // (x - mean) / sqrt(var + 1e-5), then scale and bias; a constant channel gives the bias.
    const std::vector<float> want = {-1, 1, 1, 1};
    REQUIRE(y.size() == 4);
    for (size_t i = 0; i < 4; ++i) CHECK(std::fabs(y[i] - want[i]) < 1e-4f);
  }
}

TEST_CASE("Sin and Cos: the library's own, within 2 ulp-ish of the double reference, same bits in both modes") {
  std::vector<float> x;
  for (int i = -2000; i <= 2000; ++i) x.push_back(float(i) * 0.0537f);
  x.push_back(1.0e5f);
  const int64_t n = int64_t(x.size());
  for (const char* op : {"Sin", "Cos"}) {
    auto gr = single_node(op, {value("x", DType::f32, {n})});
    const auto fast = run_f32(gr, {Feed::of("x", {n}, x)});
    const auto exact = run_f32(gr, {Feed::of("x", {n}, x)}, om::ArithmeticMode::Exact);
    CHECK(fast == exact);
    double worst = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = std::string(op) == "Sin" ? std::sin(double(x[i])) : std::cos(double(x[i]));
      worst = std::max(worst, std::fabs(double(fast[i]) - want));
    }
    CHECK(worst < 2e-7);
  }
}

TEST_CASE("GatherElements/ScatterElements: indices wider than the data off the indexed axis are refused at creation") {
  auto gr = single_node("GatherElements", {value("x", DType::f32, {3, 2})}, {Attribute::of_int("axis", 0)},
                {g::TensorData::from_vector<int64_t>("i", {1, 3}, {0, 1, 2})});
  CHECK_THROWS_WITH([&] { om::Session s(gr); }(), doctest::Contains("exceed data"));
}
