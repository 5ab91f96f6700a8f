// Hostile eager calls: shapes whose element count would wrap, and integer arithmetic edge cases
// (defined once with the graph kernels, kernels/int_arith.h; tests/runtime/test_hostile.cpp
// checks the graph side with the same values).
#include <doctest/doctest.h>

#include <climits>

#include "onemodel/onemodel.h"
#include "test_util.h"

using testutil::contains;
using testutil::error_of;

TEST_CASE("hostile eager: shapes above the element limit are refused naming the call and the dims") {
  auto e = error_of([] { om::zeros({3, 6148914691236517206LL}); });
  CHECK(e.kind() == om::ErrorKind::InvalidArgument);
  CHECK(contains(e.what(), "om::zeros"));
  CHECK(contains(e.what(), "6148914691236517206"));
  CHECK(contains(error_of([] { om::empty({int64_t(1) << 40, int64_t(1) << 40}); }).what(), "om::empty"));
  CHECK(contains(error_of([] { om::full({-2}, 1.0); }).what(), "negative"));
  om::Tensor x = om::zeros({1});
  CHECK(contains(error_of([&] { x.expand({int64_t(1) << 32, int64_t(1) << 32}); }).what(), "expand"));
  CHECK(contains(error_of([&] { x.reshape({int64_t(1) << 40, int64_t(1) << 40}); }).what(), "reshape"));
  CHECK(contains(error_of([] { om::arange(0, 1e300, 1); }).what(), "om::arange"));
  // Zero elements stay fine however large the other sizes.
  CHECK(om::zeros({0}).reshape({int64_t(1) << 40, int64_t(1) << 40, 0}).numel() == 0);
}

TEST_CASE("hostile eager: integer wrap-around, INT_MIN / -1, and division by zero as the graph path") {
  const int64_t mn = INT64_MIN, mx = INT64_MAX;
  om::Tensor a = om::from_vector<int64_t>({mn, mx, mn, 3}, {4});
  om::Tensor b = om::from_vector<int64_t>({-1, 1, -1, -1}, {4});
  CHECK(om::div(a, b).to_vector<int64_t>() == std::vector<int64_t>{mn, mx, mn, -3});
  CHECK(om::add(a, b).to_vector<int64_t>() == std::vector<int64_t>{mx, mn, mx, 2});
  CHECK(om::sub(a, b).to_vector<int64_t>() == std::vector<int64_t>{mn + 1, mx - 1, mn + 1, 4});
  CHECK(om::mul(a, b).to_vector<int64_t>() == std::vector<int64_t>{mn, mx, mn, -3});
  om::Tensor a32 = om::from_vector<int32_t>({INT32_MIN, 7}, {2});
  om::Tensor b32 = om::from_vector<int32_t>({-1, -2}, {2});
  CHECK(om::div(a32, b32).to_vector<int32_t>() == std::vector<int32_t>{INT32_MIN, -3});
  auto e = error_of([] { om::div(om::from_vector<int64_t>({1, 2}, {2}), om::from_vector<int64_t>({1, 0}, {2})); });
  CHECK(e.kind() == om::ErrorKind::InvalidArgument);
  CHECK(contains(e.what(), "div"));
  CHECK(contains(e.what(), "integer division by zero"));
  CHECK(contains(error_of([] { om::div(om::from_vector<int32_t>({1}, {1}), om::from_vector<int32_t>({0}, {1})); }).what(),
                 "integer division by zero"));
}
