// Library format v1: round trip (structure and bit-identical session outputs), 64-byte aligned
// mapped weights, every-byte-flip corruption and truncation refused naming the section; a model
// in memory used in place (Session::try_from_bytes).
#include <doctest/doctest.h>

#include <ostream>  // doctest prints the shared_ptrs CHECKs compare through operator<<

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "onemodel/io/format_v1.h"
#include "onemodel/io/onnx.h"
#include "onemodel/runtime/model.h"
#include "runtime_helpers.h"

using namespace rt;
using om::graph::Attribute;

namespace {

g::Graph small_model() {
  g::Graph gr;
  gr.name = "small";
  gr.inputs.push_back(sym_value("x", DType::f32, {"batch", "4"}));
  gr.initializers.push_back(g::TensorData::from_vector<float>("W", {4, 3}, random_floats(12, 1)));
  gr.initializers.push_back(g::TensorData::from_vector<float>("b", {3}, random_floats(3, 2)));
  gr.initializers.push_back(g::TensorData::from_vector<int64_t>("shape", {2}, {-1, 3}));
  gr.nodes.push_back(node("MatMul", {"x", "W"}, {"h"}));
  gr.nodes.push_back(node("Add", {"h", "b"}, {"hb"}));
  gr.nodes.push_back(node("Gelu", {"hb"}, {"g"}, {Attribute::of_string("approximate", "tanh")}));
  gr.nodes.push_back(node("Constant", {}, {"k"}, {Attribute::of_tensor("value", g::TensorData::from_vector<float>("", {3}, {1, 2, 3}))}));
  gr.nodes.push_back(node("Mul", {"g", "k"}, {"m"}));
  gr.nodes.push_back(node("Reshape", {"m", "shape"}, {"r"}));
  gr.nodes.push_back(node("Softmax", {"r"}, {"y"}, {Attribute::of_int("axis", -1)}));
  gr.nodes.back().attributes.push_back(Attribute::of_floats("unused_floats", {0.5f, -1.0f}));
  gr.nodes.back().attributes.push_back(Attribute::of_ints("unused_ints", {3, 4}));
  gr.nodes.back().attributes.push_back(Attribute::of_float("unused_float", 2.5f));
  gr.outputs.push_back(sym_value("y", DType::f32, {"batch", "3"}));
  return gr;
}

std::string temp_path(const char* name) { return std::string(OM_BINARY_DIR) + "/" + name; }

}  // namespace

TEST_CASE("format v1 round trip: structure, aligned mapped weights, bit-identical outputs") {
  const g::Graph gr = small_model();
  auto bytes = om::format_v1::write_bytes(gr);
  REQUIRE(bytes.is_ok());
  CHECK(om::format_v1::write_bytes(gr).value() == bytes.value());  // deterministic
  const std::string path = temp_path("format_v1_small.omdl");
  REQUIRE(om::format_v1::write_file(gr, path).is_ok());

  om::Model m = om::Model::load(path);
  const g::Graph& back = m.graph();
  CHECK(back.name == "small");
  REQUIRE(back.nodes.size() == gr.nodes.size());
  for (size_t i = 0; i < gr.nodes.size(); ++i) {
    CHECK(back.nodes[i].op_type == gr.nodes[i].op_type);
    CHECK(back.nodes[i].inputs == gr.nodes[i].inputs);
    CHECK(back.nodes[i].attributes.size() == gr.nodes[i].attributes.size());
  }
  CHECK(back.nodes.back().attr_ints("unused_ints") == std::vector<int64_t>{3, 4});
  CHECK(back.inputs[0].shape[0].param == "batch");
  CHECK(back.outputs[0].shape[1].size == 3);
  REQUIRE(back.initializers.size() == 3);
  for (const auto& t : back.initializers) {
    CHECK(reinterpret_cast<uintptr_t>(t.bytes) % 64 == 0);
    const auto* orig = gr.find_initializer(t.name);
    REQUIRE(orig);
    CHECK(std::memcmp(orig->bytes, t.bytes, t.nbytes) == 0);
  }

  for (auto mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
    om::Session mem(gr, {mode});
    om::Session loaded = om::Session::load(path, {mode});
    for (int64_t batch : {1, 6}) {
      auto feeds = std::vector<Feed>{Feed::of("x", {batch, 4}, random_floats(size_t(batch * 4), 3))};
      CHECK(run(mem, feeds)[0].bytes == run(loaded, feeds)[0].bytes);
    }
  }
  om::Session via_status;
  CHECK(om::Session::try_load(path, {}, &via_status).is_ok());
  CHECK(!om::Session::try_load(temp_path("does_not_exist.omdl"), {}, &via_status).is_ok());
  std::remove(path.c_str());
}

TEST_CASE("format v1: every single-byte corruption and every truncation is refused naming the section") {
  const std::vector<uint8_t> good = om::format_v1::write_bytes(small_model()).value();
  REQUIRE(om::format_v1::read_bytes(good.data(), good.size()).is_ok());
  std::map<std::string, size_t> by_section;
  std::vector<uint8_t> bad = good;
  for (size_t i = 0; i < good.size(); ++i) {
    bad[i] ^= 0x5a;
    auto r = om::format_v1::read_bytes(bad.data(), bad.size());
    bad[i] = good[i];
    CAPTURE(i);
    REQUIRE(!r.is_ok());
    CHECK(r.status().kind() == om::ErrorKind::Format);
    const std::string& m = r.status().message();
    const size_t at = m.find("section '");
    REQUIRE(at != std::string::npos);
    ++by_section[m.substr(at + 9, m.find('\'', at + 9) - at - 9)];
  }
  CHECK(by_section.count("header"));
  CHECK(by_section.count("graph"));
  CHECK(by_section.count("tensor table"));
  CHECK(by_section.count("tensor data"));
  for (const auto& kv : by_section) MESSAGE(om::msg("flips detected in section '", kv.first, "': ", kv.second));

  for (size_t n = 0; n < good.size(); ++n) {
    auto r = om::format_v1::read_bytes(good.data(), n);
    CAPTURE(n);
    REQUIRE(!r.is_ok());
    CHECK(r.status().kind() == om::ErrorKind::Format);
    CHECK(r.status().message().find("section 'header'") != std::string::npos);
  }
  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  CHECK(!om::format_v1::read_bytes(longer.data(), longer.size()).is_ok());
}

TEST_CASE("a file given to the wrong loader names the loader that fits") {
  const g::Graph gr = small_model();
  const std::string om_path = std::string(OM_BINARY_DIR) + "/wrong_loader.om";
  const std::string onnx_path = std::string(OM_BINARY_DIR) + "/wrong_loader.onnx";
  REQUIRE(om::format_v1::write_file(gr, om_path).is_ok());
  om::onnx::write(gr, onnx_path);
  om::Session s;
  const om::Status a = om::Session::try_load(onnx_path, {}, &s);
  CHECK(a.kind() == om::ErrorKind::Format);
  CHECK(a.message().find("from_onnx_file") != std::string::npos);
  CHECK(a.message().find(onnx_path) != std::string::npos);
  try {
    om::Session::from_onnx_file(om_path);
    FAIL("an .om file read as ONNX");
  } catch (const om::Error& e) {
    CHECK(std::string(e.what()).find("om::Session::load") != std::string::npos);
  }
  const om::Status missing = om::Session::try_load(om_path + ".missing", {}, &s);
  CHECK(missing.kind() == om::ErrorKind::Io);
  CHECK(missing.message().find("No such file") != std::string::npos);
  std::remove(om_path.c_str());
  std::remove(onnx_path.c_str());
}

namespace {

// A 64-byte aligned copy of `bytes` at `shift` bytes past the boundary, as a model placed in
// flash or a static array would be.
struct Placed {
  std::shared_ptr<uint8_t> buf;
  uint8_t* at = nullptr;
  Placed(const std::vector<uint8_t>& bytes, size_t shift)
      : buf(static_cast<uint8_t*>(std::aligned_alloc(64, (bytes.size() + shift + 63) / 64 * 64)), [](uint8_t* p) { std::free(p); }) {
    at = buf.get() + shift;
    std::memcpy(at, bytes.data(), bytes.size());
  }
};

bool points_into(const g::TensorData& t, const uint8_t* begin, size_t size) {
  return t.bytes >= begin && t.bytes + t.nbytes <= begin + size;
}

}  // namespace

TEST_CASE("Session::try_from_bytes uses the weights in place and runs as Session::load does") {
  const g::Graph gr = small_model();
  const std::vector<uint8_t> bytes = om::format_v1::write_bytes(gr).value();
  Placed placed(bytes, 0);
  om::SessionOptions unoptimized;
  unoptimized.optimize = false;
  om::Session s;
  REQUIRE(om::Session::try_from_bytes(placed.at, bytes.size(), unoptimized, &s).is_ok());
  // Every weight the session reads is the caller's byte, not a copy.
  REQUIRE(s.graph().initializers.size() == gr.initializers.size());
  for (const auto& t : s.graph().initializers) {
    CAPTURE(t.name);
    CHECK(points_into(t, placed.at, bytes.size()));
    CHECK(t.owner == nullptr);
  }
  const auto* w = s.graph().find_initializer("W");
  REQUIRE(w);
  const auto* w_orig = gr.find_initializer("W");
  CHECK(std::memcmp(w->bytes, w_orig->bytes, w->nbytes) == 0);

  om::Session mem(gr);
  om::Session via_throwing = om::Session::from_bytes(placed.at, bytes.size());
  for (int64_t batch : {1, 5}) {
    auto feeds = std::vector<Feed>{Feed::of("x", {batch, 4}, random_floats(size_t(batch * 4), 7))};
    CHECK(run(s, feeds)[0].bytes == run(mem, feeds)[0].bytes);
    CHECK(run(via_throwing, feeds)[0].bytes == run(mem, feeds)[0].bytes);
  }
}

TEST_CASE("Session::try_from_bytes refuses misaligned, truncated and corrupted bytes") {
  const std::vector<uint8_t> bytes = om::format_v1::write_bytes(small_model()).value();
  om::Session s;
  for (size_t shift : {1, 4, 8, 32}) {
    Placed placed(bytes, shift);
    const om::Status st = om::Session::try_from_bytes(placed.at, bytes.size(), {}, &s);
    CAPTURE(shift);
    REQUIRE(!st.is_ok());
    CHECK(st.kind() == om::ErrorKind::InvalidArgument);
    const std::string& m = st.message();
    CHECK(m.find("Session::try_from_bytes") != std::string::npos);
    CHECK(m.find("tensor '") != std::string::npos);
    CHECK(m.find("file offset ") != std::string::npos);
    CHECK(m.find("not 64-byte aligned") != std::string::npos);
    CHECK(m.find("alignas(64)") != std::string::npos);
  }
  Placed placed(bytes, 0);
  for (size_t n = 0; n < bytes.size(); n += 7) {
    CAPTURE(n);
    const om::Status st = om::Session::try_from_bytes(placed.at, n, {}, &s);
    REQUIRE(!st.is_ok());
    CHECK(st.kind() == om::ErrorKind::Format);
  }
  // A flipped byte anywhere (sizes, offsets, counts included) is refused, not followed.
  for (size_t i = 0; i < bytes.size(); i += 3) {
    placed.at[i] ^= 0xa5;
    CAPTURE(i);
    CHECK(!om::Session::try_from_bytes(placed.at, bytes.size(), {}, &s).is_ok());
    placed.at[i] = bytes[i];
  }
  CHECK(om::Session::try_from_bytes(nullptr, 64, {}, &s).kind() == om::ErrorKind::InvalidArgument);
  try {
    om::Session::from_bytes(placed.at + 1, bytes.size() - 1);
    FAIL("truncated bytes accepted");
  } catch (const om::Error& e) {
    CHECK(std::string(e.what()).find("Session::try_from_bytes") != std::string::npos);
  }
}

// A model embedded in the program (a static, 64-byte aligned array) and a file the caller maps.
alignas(64) static uint8_t embedded_model[8192];

TEST_CASE("Session::try_from_bytes: an embedded array and a file the caller maps both work") {
  const g::Graph gr = small_model();
  const std::vector<uint8_t> bytes = om::format_v1::write_bytes(gr).value();
  REQUIRE(bytes.size() <= sizeof(embedded_model));
  std::memcpy(embedded_model, bytes.data(), bytes.size());
  const std::string path = temp_path("from_bytes_mapped.om");
  REQUIRE(om::format_v1::write_file(gr, path).is_ok());
  const int fd = ::open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  void* mapped = ::mmap(nullptr, bytes.size(), PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  REQUIRE(mapped != MAP_FAILED);
  {
    om::Session mem(gr, {om::ArithmeticMode::Exact});
    om::Session from_array, from_map;
    REQUIRE(om::Session::try_from_bytes(embedded_model, bytes.size(), {om::ArithmeticMode::Exact}, &from_array).is_ok());
    REQUIRE(om::Session::try_from_bytes(mapped, bytes.size(), {om::ArithmeticMode::Exact}, &from_map).is_ok());
    size_t in_array = 0, in_map = 0;
    for (const auto& t : from_array.graph().initializers) in_array += points_into(t, embedded_model, bytes.size());
    for (const auto& t : from_map.graph().initializers) in_map += points_into(t, static_cast<const uint8_t*>(mapped), bytes.size());
    CHECK(in_array > 0);
    CHECK(in_map > 0);
    auto feeds = std::vector<Feed>{Feed::of("x", {3, 4}, random_floats(12, 9))};
    const auto want = run(mem, feeds)[0].bytes;
    CHECK(run(from_array, feeds)[0].bytes == want);
    CHECK(run(from_map, feeds)[0].bytes == want);
  }
  ::munmap(mapped, bytes.size());
  std::remove(path.c_str());
}
