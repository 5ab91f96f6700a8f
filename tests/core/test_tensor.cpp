// Tensor creation, the generator streams and the data accessors.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "onemodel/onemodel.h"
#include "test_util.h"

using testutil::contains;
using testutil::error_of;

namespace {

// PCG32 written out from its definition: a 64-bit LCG (multiplier 6364136223846793005,
// increment 2*seq+1); output XSH-RR of the old state; seeding = step, add seed, step.
struct RefPcg {
  uint64_t state = 0, inc = 0;
  RefPcg(uint64_t seed, uint64_t seq) {
    inc = (seq << 1) | 1;
    next();
    state += seed;
    next();
  }
  uint32_t next() {
    const uint64_t old = state;
    state = old * 6364136223846793005ULL + inc;
    const uint32_t x = uint32_t(((old >> 18) ^ old) >> 27);
    const uint32_t r = uint32_t(old >> 59);
    return r ? (x >> r) | (x << (32 - r)) : x;
  }
};
// om::Generator uses the single-stream increment 1442695040888963407 = 2 * seq + 1.
constexpr uint64_t kOneSeq = 1442695040888963407ULL >> 1;

}  // namespace

TEST_CASE("the PCG32 reference reproduces the published demo stream") {
  // pcg32_srandom(42, 54): the first outputs printed by the reference implementation's demo.
  RefPcg r(42, 54);
  const uint32_t want[] = {0xa15c02b7u, 0x7b47f409u, 0xba1d3330u, 0x83d2f293u, 0xbfa4784bu, 0xcbed606eu};
  for (uint32_t w : want) CHECK(r.next() == w);
}

TEST_CASE("om::Generator is PCG32: exact values for a seed, equal streams for equal seeds") {
  for (uint64_t seed : {0ULL, 1ULL, 42ULL, 0x853c49e6748fea9bULL, ~0ULL}) {
    om::Generator g(seed);
    RefPcg r(seed, kOneSeq);
    for (int i = 0; i < 64; ++i) CHECK(g.next_u32() == r.next());
  }
  // uniform = top 24 bits / 2^24: exactly representable, in [0, 1).
  om::Generator g(7);
  RefPcg r(7, kOneSeq);
  for (int i = 0; i < 1000; ++i) {
    const float u = g.uniform();
    CHECK(u == float(r.next() >> 8) / 16777216.0f);
    CHECK(u >= 0.0f);
    CHECK(u < 1.0f);
  }
  om::Generator a(123), b(123), c(124);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const uint32_t x = a.next_u32();
    CHECK(x == b.next_u32());
    differs = differs || x != c.next_u32();
  }
  CHECK(differs);
  // Reseeding restarts the stream.
  om::Generator d(5);
  const uint32_t first = d.next_u32();
  d.next_u32();
  d.seed(5);
  CHECK(d.next_u32() == first);
}

TEST_CASE("rand and randn follow the generator; normals by the polar method") {
  om::Generator g1(99), g2(99);
  om::Tensor u = om::rand({4, 5}, g1);
  CHECK(u.shape() == om::Shape{4, 5});
  CHECK(u.dtype() == om::DType::f32);
  for (float v : u.to_vector<float>()) CHECK(v == g2.uniform());

  om::Generator g3(2024), g4(2024);
  om::Tensor n = om::randn({1000}, g3);
  CHECK(om::randn({1000}, g4).to_vector<float>() == n.to_vector<float>());
  // The polar method from the same uniforms (std::log in double: agrees to float rounding).
  RefPcg r(2024, kOneSeq);
  auto uni = [&] { return float(r.next() >> 8) / 16777216.0f; };
  const std::vector<float> got = n.to_vector<float>();
  for (size_t i = 0; i < 20; i += 2) {
    float a, b, s;
    do {
      a = 2.0f * uni() - 1.0f;
      b = 2.0f * uni() - 1.0f;
      s = a * a + b * b;
    } while (s >= 1.0f || s == 0.0f);
    const double f = std::sqrt(-2.0 * std::log(double(s)) / double(s));
    CHECK(got[i] == doctest::Approx(a * f).epsilon(1e-5));
    CHECK(got[i + 1] == doctest::Approx(b * f).epsilon(1e-5));
  }
  double mean = 0, sq = 0;
  for (float v : got) mean += v;
  mean /= double(got.size());
  for (float v : got) sq += (v - mean) * (v - mean);
  CHECK(std::fabs(mean) < 0.15);
  CHECK(std::sqrt(sq / double(got.size())) == doctest::Approx(1.0).epsilon(0.1));
}

TEST_CASE("zeros ones full empty scalar_tensor for every dtype") {
  CHECK(om::zeros({2, 3}).to_vector<float>() == std::vector<float>(6, 0.0f));
  CHECK(om::ones({4}, om::DType::i64).to_vector<int64_t>() == std::vector<int64_t>(4, 1));
  CHECK(om::full({3}, 2.5).to_vector<float>() == std::vector<float>(3, 2.5f));
  CHECK(om::full({3}, 2.5, om::DType::i32).to_vector<int32_t>() == std::vector<int32_t>(3, 2));  // truncates
  CHECK(om::full({2}, -7, om::DType::i8).to_vector<int8_t>() == std::vector<int8_t>(2, -7));
  CHECK(om::full({2}, 200, om::DType::u8).to_vector<uint8_t>() == std::vector<uint8_t>(2, 200));
  om::Tensor b = om::full({2}, 3.0, om::DType::boolean);
  CHECK(b.get<bool>({0}) == true);
  CHECK(om::zeros({2}, om::DType::boolean).get<bool>({1}) == false);
  om::Tensor h = om::full({2}, 0.1, om::DType::f16);
  CHECK(h.to_vector<om::half>()[1].bits == om::float_to_half(0.1f).bits);
  CHECK(om::ones({}, om::DType::f16).item<om::half>().bits == 0x3c00);
  om::Tensor s = om::scalar_tensor(3.5);
  CHECK(s.dim() == 0);
  CHECK(s.numel() == 1);
  CHECK(s.item<float>() == 3.5f);
  om::Tensor e = om::empty({0, 4});
  CHECK(e.numel() == 0);
  CHECK(e.to_vector<float>().empty());
  CHECK(om::empty({3, 2}, om::DType::i64).shape() == om::Shape{3, 2});
  CHECK(error_of([] { om::zeros({2, -1}); }).kind() == om::ErrorKind::InvalidArgument);
}

TEST_CASE("arange") {
  CHECK(om::arange(5, om::DType::f32).to_vector<float>() == std::vector<float>{0, 1, 2, 3, 4});
  // PyTorch's dtypes: integer arguments give i64, a floating one f32
  CHECK(om::arange(5).dtype() == om::DType::i64);
  CHECK(om::arange(5).to_vector<int64_t>() == std::vector<int64_t>{0, 1, 2, 3, 4});
  CHECK(om::arange(int64_t(2), 8, 3).to_vector<int64_t>() == std::vector<int64_t>{2, 5});
  CHECK(om::arange(0, 2.5).dtype() == om::DType::f32);
  CHECK(om::arange(4, om::DType::i64).to_vector<int64_t>() == std::vector<int64_t>{0, 1, 2, 3});
  CHECK(om::arange(1, 2, 0.25).to_vector<float>() == std::vector<float>{1, 1.25f, 1.5f, 1.75f});
  CHECK(om::arange(0, 1, 0.3).numel() == 4);  // ceil(1 / 0.3)
  CHECK(om::arange(3, 0, -1).to_vector<int64_t>() == std::vector<int64_t>{3, 2, 1});
  CHECK(om::arange(2, 2).numel() == 0);
  CHECK(error_of([] { om::arange(0, 1, 0); }).kind() == om::ErrorKind::InvalidArgument);
  CHECK(error_of([] { om::arange(0, -1, 1); }).kind() == om::ErrorKind::InvalidArgument);
}

TEST_CASE("from_vector for each element type; size mismatch is a ShapeMismatch") {
  om::Tensor f = om::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(f.shape() == om::Shape{2, 3});
  CHECK(f.strides() == om::Shape{3, 1});
  CHECK(f.get<float>({1, 0}) == 4.0f);
  CHECK(om::from_vector<int64_t>({5, -6}).to_vector<int64_t>() == std::vector<int64_t>{5, -6});
  CHECK(om::from_vector<int32_t>({7}).item<int32_t>() == 7);
  CHECK(om::from_vector<int8_t>({-1, 2}).dtype() == om::DType::i8);
  CHECK(om::from_vector<uint8_t>({255}).item<uint8_t>() == 255);
  CHECK(om::from_vector<om::half>({om::half{0x3c00}}).to(om::DType::f32).item<float>() == 1.0f);
  om::Error e = error_of([] { om::from_vector<float>({1, 2, 3}, {2, 2}); });
  CHECK(e.kind() == om::ErrorKind::ShapeMismatch);
  CHECK(contains(e.what(), "[2, 2]"));
}

TEST_CASE("to_vector get item data read logical elements of views") {
  om::Tensor x = om::arange(6, om::DType::f32).reshape({2, 3});
  om::Tensor xt = x.t();
  CHECK(xt.to_vector<float>() == std::vector<float>{0, 3, 1, 4, 2, 5});
  CHECK(xt.get<float>({2, 1}) == 5.0f);
  CHECK(xt.get<float>({-1, -2}) == 2.0f);
  CHECK(x.select(1, 2).to_vector<float>() == std::vector<float>{2, 5});
  CHECK(x.select(0, 1).select(0, 1).item<float>() == 4.0f);
  CHECK(x.data<float>()[4] == 4.0f);
  CHECK(x.select(0, 1).data<float>()[0] == 3.0f);  // contiguous view with an offset
  om::Tensor bools = om::from_vector<uint8_t>({0, 1, 1}).to(om::DType::boolean);
  CHECK(bools.get<bool>({0}) == false);
  CHECK(bools.get<bool>({2}) == true);
  CHECK(x.storage().nbytes() == 6 * sizeof(float));
}

TEST_CASE("accessor errors: dtype mismatch, bad index, item of many, data of a strided view") {
  om::Tensor x = om::arange(6, om::DType::f32).reshape({2, 3});
  om::Error e = error_of([&] { x.to_vector<int64_t>(); });
  CHECK(e.kind() == om::ErrorKind::DTypeMismatch);
  CHECK(contains(e.what(), "f32"));
  CHECK(contains(e.what(), "i64"));
  CHECK(contains(e.what(), "om::Tensor::to_vector"));
  CHECK(error_of([&] { x.get<int32_t>({0, 0}); }).kind() == om::ErrorKind::DTypeMismatch);
  CHECK(error_of([&] { x.item<om::half>(); }).kind() == om::ErrorKind::DTypeMismatch);
  CHECK(error_of([&] { x.data<uint8_t>(); }).kind() == om::ErrorKind::DTypeMismatch);
  CHECK(error_of([&] { x.set<int64_t>({0, 0}, 1); }).kind() == om::ErrorKind::DTypeMismatch);
  CHECK(error_of([&] { x.mutable_data<int8_t>(); }).kind() == om::ErrorKind::DTypeMismatch);
  om::Error idx = error_of([&] { x.get<float>({2, 0}); });
  CHECK(idx.kind() == om::ErrorKind::InvalidArgument);
  CHECK(contains(idx.what(), "out of range"));
  CHECK(error_of([&] { x.get<float>({0}); }).kind() == om::ErrorKind::InvalidArgument);
  CHECK(error_of([&] { x.get<float>({0, -4}); }).kind() == om::ErrorKind::InvalidArgument);
  CHECK(error_of([&] { x.set<float>({0, 3}, 1.0f); }).kind() == om::ErrorKind::InvalidArgument);
  om::Error item = error_of([&] { x.item<float>(); });
  CHECK(contains(item.what(), "6 elements"));
  om::Error strided = error_of([&] { x.t().data<float>(); });
  CHECK(strided.kind() == om::ErrorKind::InvalidArgument);
  CHECK(contains(strided.what(), "contiguous"));
  CHECK(error_of([&] { x.t().mutable_data<float>(); }).kind() == om::ErrorKind::InvalidArgument);
  om::Tensor undefined;
  CHECK(error_of([&] { undefined.to_vector<float>(); }).kind() == om::ErrorKind::InvalidArgument);
}

TEST_CASE("fill_ set mutable_data mutable_storage copy_from write through views") {
  om::Tensor x = om::zeros({2, 3});
  x.t().select(0, 1).fill_(5.0);  // column 1
  CHECK(x.to_vector<float>() == std::vector<float>{0, 5, 0, 0, 5, 0});
  x.t().set<float>({2, 1}, 7.0f);
  CHECK(x.get<float>({1, 2}) == 7.0f);
  x.mutable_data<float>()[0] = -1.0f;
  CHECK(x.get<float>({0, 0}) == -1.0f);
  om::Storage st = x.mutable_storage();
  CHECK(st == x.storage());
  // copy_from with a transposed source and a strided destination
  om::Tensor src = om::arange(6, om::DType::f32).reshape({3, 2});
  om::Tensor dst = om::zeros({2, 3});
  dst.copy_from(src.t());
  CHECK(dst.to_vector<float>() == std::vector<float>{0, 2, 4, 1, 3, 5});
  om::Tensor wide = om::zeros({2, 6});
  wide.slice(1, 0, 6, 2).copy_from(dst);
  CHECK(wide.to_vector<float>() == std::vector<float>{0, 0, 2, 0, 4, 0, 1, 0, 3, 0, 5, 0});
  // copy_from converts between dtypes like a cast
  om::Tensor ints = om::zeros({3}, om::DType::i64);
  ints.copy_from(om::from_vector<float>({1.9f, -2.5f, 3.0f}));
  CHECK(ints.to_vector<int64_t>() == std::vector<int64_t>{1, -2, 3});
  om::Error e = error_of([&] { dst.copy_from(src); });
  CHECK(e.kind() == om::ErrorKind::ShapeMismatch);
  CHECK(contains(e.what(), "[3, 2]"));
  CHECK(contains(e.what(), "[2, 3]"));
  om::Tensor i = om::zeros({2}, om::DType::i32);
  i.fill_(3.7);
  CHECK(i.to_vector<int32_t>() == std::vector<int32_t>{3, 3});
  om::Tensor b = om::zeros({2}, om::DType::boolean);
  b.set<bool>({1}, true);
  CHECK(b.get<bool>({1}));
  CHECK_FALSE(b.get<bool>({0}));
}
