// .npy read/write: every dtype, header versions, and malformed files.
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "onemodel/io/npy.h"

using namespace om;
using om::graph::TensorData;

namespace {

std::vector<uint8_t> npy_file(int major, const std::string& header, const std::vector<uint8_t>& data) {
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', uint8_t(major), 0};
  const size_t n = header.size();
  out.push_back(uint8_t(n));
  out.push_back(uint8_t(n >> 8));
  if (major >= 2) {
    out.push_back(uint8_t(n >> 16));
    out.push_back(uint8_t(n >> 24));
  }
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

Result<TensorData> parse(const std::vector<uint8_t>& b) { return npy::read_bytes(b.data(), b.size(), "t"); }

void expect_error(const Result<TensorData>& r, ErrorKind kind, const char* part) {
  REQUIRE(!r.is_ok());
  CHECK_MESSAGE(r.status().kind() == kind, r.status().message());
  CHECK_MESSAGE(r.status().message().find(part) != std::string::npos, r.status().message());
}

}  // namespace

TEST_CASE("npy: write produces numpy's v1.0 layout") {
  TensorData t = TensorData::from_vector<float>("x", {2, 3}, {1, 2, 3, 4, 5, 6});
  std::vector<uint8_t> b = unwrap(npy::write_bytes(t));
  REQUIRE(b.size() >= 10);
  CHECK(std::memcmp(b.data(), "\x93NUMPY\x01\x00", 8) == 0);
  const size_t hl = b[8] | (b[9] << 8);
  CHECK((10 + hl) % 64 == 0);
  const std::string header(b.begin() + 10, b.begin() + 10 + long(hl));
  CHECK(header.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 0) == 0);
  CHECK(header.back() == '\n');
  CHECK(b.size() == 10 + hl + 24);
  float first;
  std::memcpy(&first, b.data() + 10 + hl, 4);
  CHECK(first == 1.0f);
  // 1-D shapes have numpy's trailing comma, scalars an empty tuple.
  std::vector<uint8_t> v = unwrap(npy::write_bytes(TensorData::from_vector<int64_t>("v", {3}, {1, 2, 3})));
  CHECK(std::string(v.begin(), v.end()).find("'<i8', 'fortran_order': False, 'shape': (3,), }") != std::string::npos);
  std::vector<uint8_t> s = unwrap(npy::write_bytes(TensorData::from_vector<int32_t>("s", {}, {7})));
  CHECK(std::string(s.begin(), s.end()).find("'shape': (), }") != std::string::npos);
}

TEST_CASE("npy: every dtype round trips") {
  std::vector<TensorData> ts = {
      TensorData::from_vector<float>("a", {2, 2}, {1.5f, -2, 0, 3}),
      TensorData::copy_of("b", DType::f16, {3}, "\x00\x3c\x00\xc0\xff\x7b", 6),
      TensorData::from_vector<int64_t>("c", {1, 2}, {-1, int64_t(1) << 50}),
      TensorData::from_vector<int32_t>("d", {2}, {-7, 9}),
      TensorData::from_vector<int8_t>("e", {2}, {-128, 127}),
      TensorData::from_vector<uint8_t>("f", {2, 1, 1}, {0, 255}),
      TensorData::copy_of("g", DType::boolean, {2}, "\x01\x00", 2),
      TensorData::copy_of("h", DType::f32, {0, 4}, nullptr, 0),
  };
  for (const TensorData& t : ts) {
    std::vector<uint8_t> b = unwrap(npy::write_bytes(t));
    TensorData r = unwrap(parse(b));
    CHECK(r.dtype == t.dtype);
    CHECK(r.dims == t.dims);
    REQUIRE(r.nbytes == t.nbytes);
    if (t.nbytes) CHECK(std::memcmp(r.bytes, t.bytes, t.nbytes) == 0);  // memcmp of null pointers is undefined even for 0 bytes
  }
  const std::string path = OM_BINARY_DIR "/io_test.npy";
  npy::write(ts[0], path);
  TensorData back = npy::read(path);
  CHECK(back.data<float>()[0] == 1.5f);
  std::remove(path.c_str());
}

TEST_CASE("npy: v2.0 headers, other spellings numpy writes") {
  std::vector<uint8_t> data(8);
  const int32_t v[2] = {5, -6};
  std::memcpy(data.data(), v, 8);
  TensorData t = unwrap(parse(npy_file(2, "{\"descr\": \"<i4\", \"shape\": (2L,), \"fortran_order\": False}\n", data)));
  CHECK(t.dims == std::vector<int64_t>{2});
  CHECK(t.data<int32_t>()[1] == -6);
  CHECK(unwrap(parse(npy_file(1, "{'descr':'|u1','fortran_order':False,'shape':(1,1)}", {9}))).dims == std::vector<int64_t>{1, 1});
}

TEST_CASE("npy: malformed and unsupported files") {
  const std::vector<uint8_t> four(4, 0);
  expect_error(parse({1, 2, 3}), ErrorKind::Format, "magic");
  expect_error(parse(npy_file(9, "{}", {})), ErrorKind::Format, "version 9");
  std::vector<uint8_t> longhdr = npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", four);
  longhdr[8] = 0xff;
  longhdr[9] = 0xff;
  expect_error(parse(longhdr), ErrorKind::Format, "runs past");
  expect_error(parse(npy_file(1, "{'descr': '<f4', 'shape': (1,), }", four)), ErrorKind::Format, "lacks");
  expect_error(parse(npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", four)), ErrorKind::Format,
               "unexpected key");
  expect_error(parse(npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", four)), ErrorKind::Format,
               "non-negative");
  expect_error(parse(npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", four)), ErrorKind::Format,
               "needs 8 bytes");
  expect_error(parse(npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999), }", four)),
               ErrorKind::Format, "overflow");
  expect_error(parse(npy_file(1, "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,), }", four)), ErrorKind::Format,
               "True or False");
  expect_error(parse(npy_file(1, "{'descr': '<f4, 'fortran_order': False, 'shape': (1,), }", four)), ErrorKind::Format, "");
  expect_error(parse(npy_file(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (1,), }", {2})), ErrorKind::Format,
               "not 0 or 1");
  expect_error(parse(npy_file(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", four)), ErrorKind::Unsupported,
               ">f4");
  expect_error(parse(npy_file(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", four)), ErrorKind::Unsupported,
               "<c8");
  expect_error(parse(npy_file(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", four)), ErrorKind::Unsupported,
               "Fortran");
  CHECK(npy::read_file(OM_BINARY_DIR "/no_such.npy").status().kind() == ErrorKind::Io);
  // Every truncation of a valid file fails cleanly.
  std::vector<uint8_t> ok = unwrap(npy::write_bytes(TensorData::from_vector<float>("x", {3}, {1, 2, 3})));
  for (size_t n = 0; n < ok.size(); ++n) CHECK(!npy::read_bytes(ok.data(), n).is_ok());
}

TEST_CASE("file_name_of: value names as file names, one-to-one") {
  CHECK(om::npy::file_name_of("logits") == "logits");
  CHECK(om::npy::file_name_of("head/out:0") == "head%2Fout%3A0");
  CHECK(om::npy::file_name_of("a%b") == "a%25b");  // '%' itself is encoded: distinct names stay distinct
  CHECK(om::npy::file_name_of("..") == "..");
}
