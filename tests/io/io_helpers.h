// Test helpers for the I/O suite: a tiny protobuf wire-format builder (to craft valid and
// hostile ONNX files independently of nanopb), SHA-256, and a sample graph using every IR
// feature the writer handles.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "onemodel/graph/ir.h"

namespace iotest {

// ---- protobuf wire format, written by hand ----
struct Pb {
  std::vector<uint8_t> b;
  Pb& varint(uint64_t v) {
    while (v >= 0x80) { b.push_back(uint8_t(v | 0x80)); v >>= 7; }
    b.push_back(uint8_t(v));
    return *this;
  }
  Pb& tag(int field, int wire) { return varint(uint64_t(field) << 3 | uint64_t(wire)); }
  Pb& i64(int field, int64_t v) { return tag(field, 0).varint(uint64_t(v)); }
  Pb& f32(int field, float v) {
    tag(field, 5);
    uint8_t x[4];
    std::memcpy(x, &v, 4);
    b.insert(b.end(), x, x + 4);
    return *this;
  }
  Pb& bytes(int field, const void* p, size_t n) {
    tag(field, 2).varint(n);
    b.insert(b.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n);
    return *this;
  }
  Pb& str(int field, const std::string& s) { return bytes(field, s.data(), s.size()); }
  Pb& msg(int field, const Pb& m) { return bytes(field, m.b.data(), m.b.size()); }
  Pb& raw(const std::vector<uint8_t>& r) { b.insert(b.end(), r.begin(), r.end()); return *this; }
};

// ONNX message builders (field numbers of the ONNX schema).
inline Pb tensor_type(int elem, const std::vector<int64_t>& dims) {
  Pb shape;
  for (int64_t d : dims) shape.msg(1, Pb().i64(1, d));
  return Pb().msg(1, Pb().i64(1, elem).msg(2, shape));  // TypeProto{tensor_type{elem_type, shape}}
}
inline Pb value_info(const std::string& name, int elem, const std::vector<int64_t>& dims) {
  return Pb().str(1, name).msg(2, tensor_type(elem, dims));
}
inline Pb node(const std::string& op, const std::vector<std::string>& in, const std::vector<std::string>& out,
               const std::vector<Pb>& attrs = {}) {
  Pb n;
  for (const auto& s : in) n.str(1, s);
  for (const auto& s : out) n.str(2, s);
  n.str(4, op);
  for (const Pb& a : attrs) n.msg(5, a);
  return n;
}
inline Pb attr_ints(const std::string& name, const std::vector<int64_t>& v) {
  Pb a;
  a.str(1, name);
  for (int64_t x : v) a.i64(8, x);
  return a.i64(20, 7);
}
inline Pb attr_int(const std::string& name, int64_t v) { return Pb().str(1, name).i64(3, v).i64(20, 2); }
inline Pb model(const Pb& graph, int64_t opset = 20) {
  return Pb().i64(1, 9).str(2, "test").msg(7, graph).msg(8, Pb().i64(2, opset));
}
// A graph y = Relu(x) over f32 [2,3] with the given extra nodes appended.
inline Pb relu_graph(const std::vector<Pb>& extra_nodes = {}) {
  Pb g;
  g.msg(1, node("Relu", {"x"}, {"y"}));
  for (const Pb& n : extra_nodes) g.msg(1, n);
  g.str(2, "g").msg(11, value_info("x", 1, {2, 3})).msg(12, value_info("y", 1, {2, 3}));
  return g;
}

// ---- SHA-256 (FIPS 180-4), for comparing files across processes ----
inline std::string sha256_hex(const std::vector<uint8_t>& data) {
  static const uint32_t k[64] = {
      0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
      0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
      0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
      0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
      0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08,
      0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
      0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
  uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::vector<uint8_t> m = data;
  const uint64_t bits = uint64_t(data.size()) * 8;
  m.push_back(0x80);
  while (m.size() % 64 != 56) m.push_back(0);
  for (int i = 7; i >= 0; --i) m.push_back(uint8_t(bits >> (8 * i)));
  auto rotr = [](uint32_t x, int n) { return (x >> n) | (x << (32 - n)); };
  for (size_t off = 0; off < m.size(); off += 64) {
    uint32_t w[64];
    for (int i = 0; i < 16; ++i)
      w[i] = uint32_t(m[off + 4 * i]) << 24 | uint32_t(m[off + 4 * i + 1]) << 16 | uint32_t(m[off + 4 * i + 2]) << 8 | m[off + 4 * i + 3];
    for (int i = 16; i < 64; ++i) {
      const uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; ++i) {
      const uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
      const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      hh = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
  }
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (uint32_t v : h)
    for (int i = 7; i >= 0; --i) out.push_back(hex[(v >> (4 * i)) & 15]);
  return out;
}

// ---- a graph using every IR feature the writer handles ----
inline om::graph::Graph sample_graph() {
  using namespace om::graph;
  using om::DType;
  Graph g;
  g.name = "sample";
  ValueInfo x{"x", DType::f32, true, {Dim::symbol("batch"), Dim::fixed(4)}};
  ValueInfo ids{"ids", DType::i64, true, {Dim::symbol("batch")}};
  ValueInfo unknown{"u", DType::f32, false, {}};
  g.inputs = {x, ids, unknown};
  g.initializers.push_back(TensorData::from_vector<float>("w", {4, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, -12.5f}));
  g.initializers.push_back(TensorData::from_vector<float>("emb", {5, 3}, std::vector<float>(15, 0.25f)));
  g.initializers.push_back(TensorData::from_vector<int64_t>("axes", {1}, {-1}));
  g.initializers.push_back(TensorData::from_vector<int32_t>("i32", {2}, {-7, 1 << 30}));
  g.initializers.push_back(TensorData::from_vector<int8_t>("i8", {3}, {-128, 0, 127}));
  g.initializers.push_back(TensorData::from_vector<uint8_t>("u8", {2, 1}, {0, 255}));
  g.initializers.push_back(TensorData::copy_of("flag", DType::boolean, {1}, "\x01", 1));
  g.initializers.push_back(TensorData::copy_of("h", DType::f16, {2}, "\x00\x3c\x00\xc0", 4));
  g.initializers.push_back(TensorData::copy_of("empty", DType::f32, {0, 3}, nullptr, 0));
  Node mm{"MatMul", "", "mm", {"x", "w"}, {"h0"}, {}};
  Node gelu{"Gelu", "", "", {"h0"}, {"h1"}, {Attribute::of_string("approximate", "tanh")}};
  Node red{"ReduceSum", "", "sum", {"h1", "axes"}, {"s"}, {Attribute::of_int("keepdims", 1)}};
  Node gat{"Gather", "", "g", {"emb", "ids"}, {"e"}, {Attribute::of_int("axis", 0)}};
  Node cst{"Constant", "", "c", {}, {"k"}, {Attribute::of_tensor("value", TensorData::from_vector<float>("", {1}, {0.5f}))}};
  Node mul{"Mul", "", "", {"e", "k"}, {"y"}, {}};
  Node clip{"Clip", "", "", {"s", "", ""}, {"z"}, {}};
  Node lrelu{"LeakyRelu", "", "", {"z"}, {"z2"}, {Attribute::of_float("alpha", 0.125f)}};
  Node tr{"Transpose", "", "", {"y"}, {"yt"}, {Attribute::of_ints("perm", {1, 0})}};
  Attribute fs = Attribute::of_floats("fs", {1.5f, -2.0f});
  Attribute ss;
  ss.name = "ss";
  ss.type = AttrType::Strings;
  ss.strings = {"a", "", "bc"};
  Node lstm{"Identity", "", "", {"u"}, {"u2"}, {fs, ss}};
  g.nodes = {mm, gelu, red, gat, cst, mul, clip, lrelu, tr, lstm};
  g.outputs = {ValueInfo{"z2", DType::f32, true, {Dim::symbol("batch"), Dim::fixed(1)}},
               ValueInfo{"yt", DType::f32, true, {Dim::fixed(3), Dim::symbol("batch")}},
               ValueInfo{"u2", DType::f32, true, {Dim{}, Dim::fixed(2)}}};
  g.value_info = {ValueInfo{"h0", DType::f32, true, {Dim::symbol("batch"), Dim::fixed(3)}}};
  return g;
}

}  // namespace iotest
