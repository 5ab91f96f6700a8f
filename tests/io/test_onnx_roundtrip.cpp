// ONNX writer/reader: round trips, determinism across processes, field order, streaming memory.
#include <doctest/doctest.h>

#include "self_exec.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include "io_helpers.h"
#include "onemodel/io/onnx.h"

using namespace om;
using namespace om::graph;

namespace {

std::vector<uint8_t> slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

void check_same_tensor(const TensorData& a, const TensorData& b) {
  CHECK(a.name == b.name);
  CHECK(a.dtype == b.dtype);
  CHECK(a.dims == b.dims);
  REQUIRE(a.nbytes == b.nbytes);
  if (a.nbytes) CHECK(std::memcmp(a.bytes, b.bytes, a.nbytes) == 0);  // null pointers are undefined even for 0 bytes
}

void check_same_values(const std::vector<ValueInfo>& a, const std::vector<ValueInfo>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].name == b[i].name);
    CHECK(a[i].dtype == b[i].dtype);
    CHECK(a[i].has_shape == b[i].has_shape);
    CHECK(a[i].shape == b[i].shape);
  }
}

// Walks protobuf bytes and checks that every message of the known ONNX types lists its fields
// in non-decreasing field-number order. `kind` names the message type.
struct Walker {
  // field number -> submessage kind, per message kind
  std::map<std::string, std::map<int, std::string>> sub = {
      {"Model", {{7, "Graph"}, {8, "Opset"}}},
      {"Graph", {{1, "Node"}, {5, "Tensor"}, {11, "Value"}, {12, "Value"}, {13, "Value"}}},
      {"Node", {{5, "Attr"}}},
      {"Attr", {{5, "Tensor"}}},
      {"Value", {{2, "Type"}}},
      {"Type", {{1, "TypeTensor"}}},
      {"TypeTensor", {{2, "Shape"}}},
      {"Shape", {{1, "Dim"}}},
  };
  int messages = 0;
  bool walk(const uint8_t* p, size_t n, const std::string& kind) {
    ++messages;
    size_t i = 0;
    int last = 0;
    auto varint = [&](uint64_t* v) {
      *v = 0;
      for (int shift = 0; i < n && shift < 64; shift += 7) {
        const uint8_t byte = p[i++];
        *v |= uint64_t(byte & 0x7f) << shift;
        if (!(byte & 0x80)) return true;
      }
      return false;
    };
    while (i < n) {
      uint64_t key, v;
      if (!varint(&key)) return false;
      const int field = int(key >> 3), wire = int(key & 7);
      if (field < last) return false;
      last = field;
      if (wire == 0) { if (!varint(&v)) return false; }
      else if (wire == 5) i += 4;
      else if (wire == 1) i += 8;
      else if (wire == 2) {
        if (!varint(&v) || v > n - i) return false;
        auto it = sub[kind].find(field);
        if (it != sub[kind].end() && !walk(p + i, size_t(v), it->second)) return false;
        i += size_t(v);
      } else {
        return false;
      }
    }
    return i == n;
  }
};

long vm_kb(const char* key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key, 0) == 0) return std::atol(line.c_str() + std::strlen(key));
  return -1;
}

// Resets the peak-RSS counter (VmHWM) of this process; false where the kernel does not allow it.
bool reset_peak_rss() {
  FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (!f) return false;
  const bool ok = std::fputs("5", f) >= 0;
  return (std::fclose(f) == 0) && ok;
}

}  // namespace

TEST_CASE("onnx: IR -> bytes -> IR -> bytes is identical and keeps every field") {
  const Graph g = iotest::sample_graph();
  REQUIRE(verify(g).is_ok());
  const std::vector<uint8_t> a = onnx::write(g);
  const Graph r = onnx::read(a);
  const std::vector<uint8_t> b = onnx::write(r);
  CHECK(a == b);

  CHECK(r.name == g.name);
  CHECK(r.opset_version() == 20);
  CHECK(r.ir_version == 9);
  CHECK(r.producer_name == g.producer_name);
  check_same_values(r.inputs, g.inputs);
  check_same_values(r.outputs, g.outputs);
  check_same_values(r.value_info, g.value_info);
  REQUIRE(r.initializers.size() == g.initializers.size());
  for (size_t i = 0; i < g.initializers.size(); ++i) check_same_tensor(r.initializers[i], g.initializers[i]);
  for (const TensorData& t : r.initializers) CHECK(reinterpret_cast<uintptr_t>(t.bytes) % 64 == 0);
  REQUIRE(r.nodes.size() == g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node &x = g.nodes[i], &y = r.nodes[i];
    CHECK(x.op_type == y.op_type);
    CHECK(x.name == y.name);
    CHECK(x.inputs == y.inputs);
    CHECK(x.outputs == y.outputs);
    REQUIRE(x.attributes.size() == y.attributes.size());
    for (size_t k = 0; k < x.attributes.size(); ++k) {
      const Attribute &p = x.attributes[k], &q = y.attributes[k];
      CHECK(p.name == q.name);
      CHECK(p.type == q.type);
      CHECK(p.i == q.i);
      CHECK(p.f == q.f);
      CHECK(p.s == q.s);
      CHECK(p.ints == q.ints);
      CHECK(p.floats == q.floats);
      CHECK(p.strings == q.strings);
      if (p.type == AttrType::Tensor) check_same_tensor(*p.t, *q.t);
    }
  }
  CHECK(r.nodes[6].inputs == std::vector<std::string>{"s", "", ""});  // omitted optional inputs survive
}

TEST_CASE("onnx: every message's fields are in field-number order") {
  const std::vector<uint8_t> bytes = onnx::write(iotest::sample_graph());
  Walker w;
  CHECK(w.walk(bytes.data(), bytes.size(), "Model"));
  CHECK(w.messages > 40);  // the walk really descended into the submessages
}

TEST_CASE("onnx: write_file streams the same bytes as write_bytes; read_file reads them") {
  const Graph g = iotest::sample_graph();
  const std::string path = OM_BINARY_DIR "/io_roundtrip.onnx";
  onnx::write(g, path);
  CHECK(slurp(path) == onnx::write(g));
  const Graph r = onnx::read(path);
  CHECK(onnx::write(r) == onnx::write(g));
  std::remove(path.c_str());
  Result<Graph> missing = onnx::read_file(OM_BINARY_DIR "/no_such_file.onnx");
  CHECK(missing.status().kind() == ErrorKind::Io);
  CHECK_THROWS_AS(onnx::read(std::string(OM_BINARY_DIR "/no_such_file.onnx")), Error);
}

// The child half of the two-process determinism check: runs only when the parent asks.
TEST_CASE("onnx: determinism child") {
  const char* out = std::getenv("OM_DETERMINISM_OUT");
  if (!out) return;
  onnx::write(iotest::sample_graph(), out);
}

TEST_CASE("onnx: equal graphs give equal bytes in two processes (SHA-256)") {
  const std::string path = OM_BINARY_DIR "/io_determinism_child.onnx";
  std::remove(path.c_str());
  const std::string cmd = "OM_DETERMINISM_OUT='" + path + "' " + testutil::self_command() + " -tc='onnx: determinism child' > /dev/null";
  REQUIRE(std::system(cmd.c_str()) == 0);
  const std::vector<uint8_t> child = slurp(path);
  const std::vector<uint8_t> mine = onnx::write(iotest::sample_graph());
  REQUIRE(!child.empty());
  CHECK(iotest::sha256_hex(child) == iotest::sha256_hex(mine));
  // The hash itself is right: FIPS 180-4 test vector.
  const std::string abc = "abc";
  CHECK(iotest::sha256_hex(std::vector<uint8_t>(abc.begin(), abc.end())) ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  std::remove(path.c_str());
}

TEST_CASE("onnx: an initializer of 2 GiB or more is refused before anything is written") {
  Graph g;
  g.inputs = {ValueInfo{"x", DType::f32, true, {Dim::fixed(1)}}};
  static const float dummy = 0;
  TensorData big;
  big.name = "huge";
  big.dtype = DType::f32;
  big.dims = {int64_t(1) << 29};  // exactly 2 GiB; the bytes are never read
  big.bytes = reinterpret_cast<const uint8_t*>(&dummy);
  big.nbytes = size_t(1) << 31;
  g.initializers.push_back(big);
  g.nodes = {Node{"Add", "", "", {"x", "huge"}, {"y"}, {}}};
  g.outputs = {ValueInfo{"y", DType::f32, true, {Dim::fixed(1)}}};
  Result<std::vector<uint8_t>> r = onnx::write_bytes(g);
  REQUIRE(!r.is_ok());
  CHECK(r.status().kind() == ErrorKind::Unsupported);
  CHECK(r.status().message().find("huge") != std::string::npos);
  CHECK(r.status().message().find("2 GiB") != std::string::npos);
  const std::string path = OM_BINARY_DIR "/io_huge.onnx";
  CHECK(!onnx::write_file(g, path).is_ok());
  CHECK(std::fopen(path.c_str(), "rb") == nullptr);
}

TEST_CASE("onnx: writing a 200 MB model streams the weights (peak RSS grows far less than the model)") {
  const size_t n = 50u * 1000 * 1000;  // 200 MB of f32
  auto buf = std::make_shared<std::vector<float>>(n);
  for (size_t i = 0; i < n; ++i) (*buf)[i] = float(i % 977) * 0.5f;
  Graph g;
  g.inputs = {ValueInfo{"x", DType::f32, true, {Dim::fixed(int64_t(n))}}};
  TensorData w;
  w.name = "w";
  w.dtype = DType::f32;
  w.dims = {int64_t(n)};
  w.owner = buf;
  w.bytes = reinterpret_cast<const uint8_t*>(buf->data());
  w.nbytes = n * 4;
  g.initializers.push_back(w);
  g.nodes = {Node{"Add", "", "", {"x", "w"}, {"y"}, {}}};
  g.outputs = {ValueInfo{"y", DType::f32, true, {Dim::fixed(int64_t(n))}}};
  const std::string path = OM_BINARY_DIR "/io_200mb.onnx";

  const bool reset = reset_peak_rss();
  const long before = vm_kb(reset ? "VmHWM:" : "VmRSS:");
  REQUIRE(onnx::write_file(g, path).is_ok());
  const long after = vm_kb("VmHWM:");
  const long extra_kb = after - before;
  MESSAGE("peak RSS growth while writing a 200 MB model: ", extra_kb, " KiB (peak reset: ", reset, ")");
  if (reset) CHECK(extra_kb < 20 * 1024);

  // Reading it back costs the weights once (decoded straight from the file into their storage).
  const bool reset2 = reset_peak_rss();
  const long before_read = vm_kb(reset2 ? "VmHWM:" : "VmRSS:");
  {
    const Graph r = onnx::read(path);
    REQUIRE(r.initializers.size() == 1);
    CHECK(std::memcmp(r.initializers[0].bytes, buf->data(), n * 4) == 0);
    const long read_extra = vm_kb("VmHWM:") - before_read;
    MESSAGE("peak RSS growth while reading it back: ", read_extra, " KiB");
    // AddressSanitizer's own bookkeeping (redzones, quarantine) adds to RSS; allow for it there.
#if defined(__SANITIZE_ADDRESS__)
    const long slack_kb = 64 * 1024;
#else
    const long slack_kb = 20 * 1024;
#endif
    if (reset2) CHECK(read_extra < long(n * 4 / 1024) + slack_kb);
  }
  std::remove(path.c_str());
}
