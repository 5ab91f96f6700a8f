// Views and copies with PyTorch semantics, each checked against values computed here by index
// arithmetic, and casts between all seven dtypes.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "onemodel/onemodel.h"
#include "test_util.h"

using testutil::contains;
using testutil::error_of;

namespace {

bool shares(const om::Tensor& a, const om::Tensor& b) { return a.storage() == b.storage(); }

std::vector<float> iota(int n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[size_t(i)] = float(i);
  return v;
}

}  // namespace

TEST_CASE("reshape: a view when strides allow, -1 inferred") {
  om::Tensor x = om::arange(24, om::DType::f32);
  om::Tensor a = x.reshape({2, 3, 4});
  CHECK(shares(a, x));
  CHECK(a.strides() == om::Shape{12, 4, 1});
  CHECK(a.to_vector<float>() == iota(24));
  CHECK(x.reshape({-1, 6}).shape() == om::Shape{4, 6});
  CHECK(x.reshape({2, -1, 3}).shape() == om::Shape{2, 4, 3});
  CHECK(x.reshape({24, 1, -1}).shape() == om::Shape{24, 1, 1});
  CHECK(om::ones({1}).reshape({}).dim() == 0);
  CHECK(om::scalar_tensor(2).reshape({1, 1}).shape() == om::Shape{1, 1});
  // A transposed tensor can be split without a copy (a chunk stays one stride run).
  om::Tensor t = om::arange(12, om::DType::f32).reshape({4, 3}).t();  // [3,4] strides (1,3)
  om::Tensor split = t.reshape({3, 2, 2});
  CHECK(shares(split, t));
  CHECK(split.strides() == om::Shape{1, 6, 3});
  // Values: split[i][j][k] = t[i][2j+k] = base[(2j+k)*3 + i]
  std::vector<float> want;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 2; ++k) want.push_back(float((2 * j + k) * 3 + i));
  CHECK(split.to_vector<float>() == want);
  om::Error two = error_of([&] { x.reshape({-1, -1}); });
  CHECK(two.kind() == om::ErrorKind::InvalidArgument);
  om::Error bad = error_of([&] { x.reshape({5, -1}); });
  CHECK(bad.kind() == om::ErrorKind::ShapeMismatch);
  CHECK(error_of([&] { x.reshape({5, 5}); }).kind() == om::ErrorKind::ShapeMismatch);
  CHECK(error_of([&] { x.reshape({-2, 12}); }).kind() == om::ErrorKind::InvalidArgument);
}

TEST_CASE("reshape: a copy when the memory order does not allow a view") {
  om::Tensor x = om::arange(6, om::DType::f32).reshape({2, 3});
  om::Tensor flat = x.t().reshape({6});
  CHECK_FALSE(shares(flat, x));
  CHECK(flat.to_vector<float>() == std::vector<float>{0, 3, 1, 4, 2, 5});
  CHECK(flat.is_contiguous());
  // A stepped slice whose elements are evenly spaced merges as a view (stride 2) ...
  om::Tensor y = om::arange(12, om::DType::f32).reshape({3, 4}).slice(1, 0, 4, 2);  // [3,2] strides (4,2)
  om::Tensor m = y.reshape({6});
  CHECK(shares(m, y));
  CHECK(m.strides() == om::Shape{2});
  CHECK(m.to_vector<float>() == std::vector<float>{0, 2, 4, 6, 8, 10});
  // ... a partial slice with a gap between rows does not.
  om::Tensor g = om::arange(12, om::DType::f32).reshape({3, 4}).slice(1, 0, 2);  // [3,2] strides (4,1)
  om::Tensor gm = g.reshape({6});
  CHECK_FALSE(shares(gm, g));
  CHECK(gm.to_vector<float>() == std::vector<float>{0, 1, 4, 5, 8, 9});
  // but each dim alone can still be split or padded with size-1 dims as a view
  om::Tensor v = g.reshape({3, 1, 2, 1});
  CHECK(shares(v, g));
  CHECK(v.to_vector<float>() == std::vector<float>{0, 1, 4, 5, 8, 9});
  // An expanded tensor merges only by copying.
  om::Tensor e = om::arange(3, om::DType::f32).expand({2, 3});
  om::Tensor ef = e.reshape({6});
  CHECK(ef.to_vector<float>() == std::vector<float>{0, 1, 2, 0, 1, 2});
  ef.fill_(9.0);
  CHECK(e.get<float>({0, 0}) == 0.0f);
}

TEST_CASE("permute transpose t") {
  om::Tensor x = om::arange(24, om::DType::f32).reshape({2, 3, 4});
  om::Tensor p = x.permute({2, 0, 1});
  CHECK(shares(p, x));
  CHECK(p.shape() == om::Shape{4, 2, 3});
  CHECK(p.strides() == om::Shape{1, 12, 4});
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 3; ++k) CHECK(p.get<float>({i, j, k}) == float(j * 12 + k * 4 + i));
  CHECK(x.permute({-1, -3, -2}).shape() == om::Shape{4, 2, 3});
  CHECK(error_of([&] { x.permute({0, 0, 1}); }).kind() == om::ErrorKind::InvalidArgument);
  CHECK(error_of([&] { x.permute({0, 1}); }).kind() == om::ErrorKind::InvalidArgument);
  CHECK(error_of([&] { x.permute({0, 1, 3}); }).kind() == om::ErrorKind::InvalidArgument);
  om::Tensor tr = x.transpose(0, -1);
  CHECK(tr.shape() == om::Shape{4, 3, 2});
  CHECK(tr.get<float>({3, 1, 1}) == float(1 * 12 + 1 * 4 + 3));
  CHECK(error_of([&] { x.transpose(0, 3); }).kind() == om::ErrorKind::InvalidArgument);
  om::Tensor m = om::arange(6, om::DType::f32).reshape({2, 3});
  CHECK(m.t().shape() == om::Shape{3, 2});
  CHECK(m.t().t().to_vector<float>() == iota(6));
  CHECK(om::arange(3, om::DType::f32).t().to_vector<float>() == iota(3));  // 1-D: unchanged
  CHECK(error_of([&] { x.t(); }).kind() == om::ErrorKind::InvalidArgument);
}

TEST_CASE("squeeze unsqueeze") {
  om::Tensor x = om::arange(6, om::DType::f32).reshape({1, 2, 1, 3});
  CHECK(x.squeeze().shape() == om::Shape{2, 3});
  CHECK(x.squeeze(2).shape() == om::Shape{1, 2, 3});
  CHECK(x.squeeze(-4).shape() == om::Shape{2, 1, 3});
  CHECK(x.squeeze(1).shape() == om::Shape{1, 2, 1, 3});  // not size 1: unchanged, as in PyTorch
  CHECK(shares(x.squeeze(), x));
  CHECK(x.squeeze().to_vector<float>() == iota(6));
  CHECK(error_of([&] { x.squeeze(4); }).kind() == om::ErrorKind::InvalidArgument);
  om::Tensor y = om::arange(6, om::DType::f32).reshape({2, 3});
  CHECK(y.unsqueeze(0).shape() == om::Shape{1, 2, 3});
  CHECK(y.unsqueeze(1).shape() == om::Shape{2, 1, 3});
  CHECK(y.unsqueeze(2).shape() == om::Shape{2, 3, 1});
  CHECK(y.unsqueeze(-1).shape() == om::Shape{2, 3, 1});
  CHECK(y.unsqueeze(-3).shape() == om::Shape{1, 2, 3});
  CHECK(y.unsqueeze(1).strides() == om::Shape{3, 3, 1});
  CHECK(y.unsqueeze(2).strides() == om::Shape{3, 1, 1});
  CHECK(y.t().unsqueeze(1).to_vector<float>() == std::vector<float>{0, 3, 1, 4, 2, 5});
  CHECK(error_of([&] { y.unsqueeze(3); }).kind() == om::ErrorKind::InvalidArgument);
  CHECK(om::scalar_tensor(4).unsqueeze(0).shape() == om::Shape{1});
}

TEST_CASE("expand") {
  om::Tensor x = om::from_vector<float>({1, 2, 3}, {3, 1});
  om::Tensor e = x.expand({2, 3, 4});
  CHECK(shares(e, x));
  CHECK(e.shape() == om::Shape{2, 3, 4});
  CHECK(e.strides() == om::Shape{0, 1, 0});
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) CHECK(e.get<float>({i, j, k}) == float(j + 1));
  CHECK(x.expand({-1, 5}).shape() == om::Shape{3, 5});
  CHECK(x.expand({3, 1}).strides() == x.strides());
  CHECK(om::scalar_tensor(2).expand({2, 2}).to_vector<float>() == std::vector<float>(4, 2.0f));
  om::Error e1 = error_of([&] { x.expand({4, 4}); });
  CHECK(e1.kind() == om::ErrorKind::ShapeMismatch);
  CHECK(error_of([&] { x.expand({4}); }).kind() == om::ErrorKind::InvalidArgument);
  CHECK(error_of([&] { x.expand({-1, 3, 1}); }).kind() == om::ErrorKind::InvalidArgument);
  CHECK(error_of([&] { x.expand({3, -2}); }).kind() == om::ErrorKind::InvalidArgument);
}

TEST_CASE("slice: clamping and steps, like x[start:end:step]") {
  om::Tensor x = om::arange(10, om::DType::f32);
  auto sl = [&](int64_t s, int64_t e, int64_t st) { return x.slice(0, s, e, st).to_vector<float>(); };
  CHECK(sl(2, 5, 1) == std::vector<float>{2, 3, 4});
  CHECK(sl(-100, 100, 1) == iota(10));
  CHECK(sl(-3, 10, 1) == std::vector<float>{7, 8, 9});
  CHECK(sl(1, -1, 1) == std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8});
  CHECK(sl(1, 10, 3) == std::vector<float>{1, 4, 7});
  CHECK(sl(0, 10, 4) == std::vector<float>{0, 4, 8});
  CHECK(sl(0, 9, 4) == std::vector<float>{0, 4, 8});
  CHECK(sl(0, 8, 4) == std::vector<float>{0, 4});
  CHECK(sl(5, 2, 1).empty());
  CHECK(sl(10, 20, 1).empty());
  CHECK(sl(0, INT64_MAX, 2) == std::vector<float>{0, 2, 4, 6, 8});
  CHECK(x.slice(0, 5, 2).shape() == om::Shape{0});
  om::Tensor m = om::arange(12, om::DType::f32).reshape({3, 4});
  om::Tensor c = m.slice(1, 1, 4, 2);
  CHECK(shares(c, m));
  CHECK(c.shape() == om::Shape{3, 2});
  CHECK(c.strides() == om::Shape{4, 2});
  CHECK(c.storage_offset() == 1);
  CHECK(c.to_vector<float>() == std::vector<float>{1, 3, 5, 7, 9, 11});
  CHECK(m.slice(-2, 1, 3).to_vector<float>() == std::vector<float>{4, 5, 6, 7, 8, 9, 10, 11});
  CHECK(error_of([&] { x.slice(0, 0, 5, 0); }).kind() == om::ErrorKind::InvalidArgument);
  CHECK(error_of([&] { x.slice(0, 5, 0, -1); }).kind() == om::ErrorKind::InvalidArgument);
  CHECK(error_of([&] { x.slice(1, 0, 5); }).kind() == om::ErrorKind::InvalidArgument);
}

TEST_CASE("select flip") {
  om::Tensor m = om::arange(12, om::DType::f32).reshape({3, 4});
  CHECK(m.select(0, -1).to_vector<float>() == std::vector<float>{8, 9, 10, 11});
  CHECK(m.select(1, 2).to_vector<float>() == std::vector<float>{2, 6, 10});
  CHECK(shares(m.select(1, 2), m));
  CHECK(m.select(1, 2).storage_offset() == 2);
  CHECK(error_of([&] { m.select(0, 3); }).kind() == om::ErrorKind::InvalidArgument);
  CHECK(error_of([&] { m.select(0, -4); }).kind() == om::ErrorKind::InvalidArgument);
  om::Tensor f0 = m.flip(0);
  CHECK_FALSE(shares(f0, m));  // flip copies, as in PyTorch
  CHECK(f0.to_vector<float>() == std::vector<float>{8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3});
  CHECK(m.flip(-1).to_vector<float>() == std::vector<float>{3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8});
  // flip of a strided view
  CHECK(m.t().flip(1).to_vector<float>() == std::vector<float>{8, 4, 0, 9, 5, 1, 10, 6, 2, 11, 7, 3});
  CHECK(m.slice(1, 1, 4, 2).flip(1).to_vector<float>() == std::vector<float>{3, 1, 7, 5, 11, 9});
  CHECK(om::empty({0}).flip(0).numel() == 0);
  om::Tensor f = m.flip(0);
  f.fill_(0.0);
  CHECK(m.get<float>({0, 0}) == 0.0f);
  CHECK(m.get<float>({2, 3}) == 11.0f);
}

TEST_CASE("contiguous clone detach") {
  om::Tensor m = om::arange(6, om::DType::f32).reshape({2, 3});
  om::Tensor same = m.contiguous();
  CHECK(shares(same, m));
  om::Tensor c = m.t().contiguous();
  CHECK_FALSE(shares(c, m));
  CHECK(c.is_contiguous());
  CHECK(c.strides() == om::Shape{2, 1});
  CHECK(c.to_vector<float>() == std::vector<float>{0, 3, 1, 4, 2, 5});
  om::Tensor k = m.clone();
  CHECK_FALSE(shares(k, m));
  CHECK(k.to_vector<float>() == m.to_vector<float>());
  k.set<float>({0, 0}, 100.0f);
  CHECK(m.get<float>({0, 0}) == 0.0f);
  om::Tensor kt = m.t().clone();  // clone of a view keeps its logical values
  CHECK(kt.to_vector<float>() == std::vector<float>{0, 3, 1, 4, 2, 5});
  om::Tensor w = om::ones({3}).requires_grad_();
  om::Tensor d = w.detach();
  CHECK(shares(d, w));
  CHECK_FALSE(d.requires_grad());
  CHECK(w.requires_grad());
  d.fill_(4.0);  // shares memory, as PyTorch's detach does
  CHECK(w.get<float>({1}) == 4.0f);
  om::Tensor y = om::mul(w, w);
  CHECK(y.requires_grad());
  CHECK_FALSE(y.detach().requires_grad());
}

namespace {

const om::DType kAll[] = {om::DType::f32, om::DType::f16, om::DType::i64, om::DType::i32,
                          om::DType::i8,  om::DType::u8,  om::DType::boolean};

bool is_float(om::DType d) { return d == om::DType::f32 || d == om::DType::f16; }

// Source values representable in every source dtype after its own conversion rules.
std::vector<double> sources(om::DType d) {
  switch (d) {
    case om::DType::f32: return {0, 1, 2.75, -3.5, 100.25, 127, -0.5, 0.4};
    case om::DType::f16: return {0, 1, 2.75, -3.5, 100.25, 127, -0.5, 0.5};
    case om::DType::boolean: return {0, 1, 1, 0};
    case om::DType::u8: return {0, 1, 2, 200, 255, 127};
    default: return {0, 1, 2, -3, 100, 127, -128, -1};
  }
}

// The value a destination element must hold, as PyTorch converts: floats round (f16 to nearest
// even), integers truncate toward zero and wrap modulo 2^bits, bool is "non-zero".
double convert(double v, om::DType to) {
  switch (to) {
    case om::DType::f32: return double(float(v));
    case om::DType::f16: return double(om::half_to_float(om::float_to_half(float(v))));
    case om::DType::boolean: return v != 0 ? 1 : 0;
    case om::DType::i64: case om::DType::i32: return std::trunc(v);
    case om::DType::i8: {
      const int64_t t = int64_t(std::trunc(v));
      return double(int8_t(uint8_t(t & 0xff)));
    }
    case om::DType::u8: return double(uint8_t(int64_t(std::trunc(v)) & 0xff));
    default: break;  // f64, i16, u16, u32, u64 are Session-only: tests/runtime/test_wide_dtypes.cpp
  }
  return 0;
}

// Reads element i of any dtype as double through the typed accessors.
double read(const om::Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case om::DType::f32: return t.get<float>({i});
    case om::DType::f16: return om::half_to_float(t.get<om::half>({i}));
    case om::DType::i64: return double(t.get<int64_t>({i}));
    case om::DType::i32: return t.get<int32_t>({i});
    case om::DType::i8: return t.get<int8_t>({i});
    case om::DType::u8: return t.get<uint8_t>({i});
    case om::DType::boolean: return t.get<bool>({i}) ? 1 : 0;
    default: break;  // not in kAll
  }
  return 0;
}

}  // namespace

TEST_CASE("to(dtype) casts between all seven dtypes") {
  for (om::DType from : kAll) {
    const std::vector<double> vals = sources(from);
    // Build the source through an f32 or i64 tensor so every source dtype is reachable.
    om::Tensor src = om::empty({int64_t(vals.size())}, from);
    for (size_t i = 0; i < vals.size(); ++i) {
      om::Tensor one = is_float(from) ? om::full({1}, vals[i]) : om::full({1}, vals[i], om::DType::i64);
      src.slice(0, int64_t(i), int64_t(i) + 1).copy_from(one.to(from));
    }
    for (size_t i = 0; i < vals.size(); ++i) REQUIRE(read(src, int64_t(i)) == convert(vals[i], from));
    for (om::DType to : kAll) {
      om::Tensor dst = src.to(to);
      CHECK(dst.dtype() == to);
      CHECK(dst.shape() == src.shape());
      if (to == from) CHECK(shares(dst, src));
      for (size_t i = 0; i < vals.size(); ++i) {
        const double v = read(src, int64_t(i));
        INFO(om::dtype_name(from), " -> ", om::dtype_name(to), " of ", v);
        CHECK(read(dst, int64_t(i)) == convert(v, to));
      }
    }
  }
  // Strided sources cast in logical order.
  om::Tensor m = om::arange(6, om::DType::f32).reshape({2, 3}).t().to(om::DType::i32);
  CHECK(m.to_vector<int32_t>() == std::vector<int32_t>{0, 3, 1, 4, 2, 5});
  // Large integers keep their value through i64 -> i64 and round once to f32.
  om::Tensor big = om::from_vector<int64_t>({(int64_t(1) << 53) + 1, -(int64_t(1) << 40) - 3});
  CHECK(big.to(om::DType::i64).to_vector<int64_t>() == big.to_vector<int64_t>());
  CHECK(big.to(om::DType::f32).get<float>({1}) == float(-(int64_t(1) << 40) - 3));
}
