// ONNX reader: malformed, truncated, hostile and unsupported files fail with a named error,
// never a crash; accepted variants (typed data fields, older opsets) are normalised.
#include <doctest/doctest.h>

#include <string>

#include "io_helpers.h"
#include "onemodel/io/onnx.h"
#include "onemodel/graph/op_registry.h"

using namespace om;
using namespace om::graph;
using iotest::Pb;

namespace {

Result<Graph> read_pb(const Pb& p) { return onnx::read_bytes(p.b.data(), p.b.size()); }

void expect_error(const Result<Graph>& r, ErrorKind kind, std::initializer_list<const char*> parts) {
  REQUIRE_MESSAGE(!r.is_ok(), "the reader accepted a bad file");
  CHECK_MESSAGE(r.status().kind() == kind, r.status().message());
  for (const char* p : parts) CHECK_MESSAGE(r.status().message().find(p) != std::string::npos, "'", p, "' not in: ", r.status().message());
}

Pb tensor_pb(const std::string& name, int dtype, const std::vector<int64_t>& dims) {
  Pb t;
  for (int64_t d : dims) t.i64(1, d);
  return t.i64(2, dtype).str(8, name);
}

// y = x + w with w an initializer given as a TensorProto.
Pb add_model(const Pb& w, int elem = 1, std::vector<int64_t> dims = {2}) {
  Pb g;
  g.msg(1, iotest::node("Add", {"x", "w"}, {"y"})).str(2, "g").msg(5, w);
  g.msg(11, iotest::value_info("x", elem, dims)).msg(12, iotest::value_info("y", elem, dims));
  return iotest::model(g);
}

}  // namespace

TEST_CASE("onnx reader: a hand-built minimal model is read") {
  Result<Graph> r = read_pb(iotest::model(iotest::relu_graph()));
  REQUIRE_MESSAGE(r.is_ok(), r.status().message());
  CHECK(r->nodes.size() == 1);
  CHECK(r->nodes[0].op_type == "Relu");
  CHECK(r->inputs[0].shape == std::vector<Dim>{Dim::fixed(2), Dim::fixed(3)});
}

TEST_CASE("onnx reader: every truncation of a valid file is a Format error") {
  const std::vector<uint8_t> full = onnx::write(iotest::sample_graph());
  for (size_t n = 0; n < full.size(); ++n) {
    Result<Graph> r = onnx::read_bytes(full.data(), n);
    REQUIRE_MESSAGE(!r.is_ok(), "prefix of ", n, " bytes accepted");
    REQUIRE_MESSAGE(r.status().kind() == ErrorKind::Format, r.status().message());
  }
  CHECK(onnx::read_bytes(nullptr, 0).status().kind() == ErrorKind::Format);
  CHECK(onnx::read_bytes(full.data(), full.size()).is_ok());
}

TEST_CASE("onnx reader: wrong wire types") {
  // ir_version (a varint scalar) sent length-delimited: nanopb's own type check.
  expect_error(read_pb(Pb().str(1, "9").msg(7, iotest::relu_graph()).msg(8, Pb().i64(2, 20))), ErrorKind::Format, {"wire type"});
  // graph (a submessage) sent as a varint.
  expect_error(read_pb(Pb().i64(1, 9).i64(7, 5).msg(8, Pb().i64(2, 20))), ErrorKind::Format, {"wire type", "graph"});
  // a node's op_type sent as fixed32.
  Pb g;
  g.msg(1, Pb().str(1, "x").str(2, "y").f32(4, 1.0f));
  expect_error(read_pb(iotest::model(g)), ErrorKind::Format, {"wire type", "node[0]"});
  // raw_data as a varint.
  expect_error(read_pb(add_model(tensor_pb("w", 1, {2}).i64(9, 3))), ErrorKind::Format, {"wire type", "initializer[0]"});
  // wire types 3/4 (groups) and 6/7 do not exist in this schema.
  expect_error(read_pb(Pb().i64(1, 9).tag(7, 3)), ErrorKind::Format, {});
  expect_error(read_pb(Pb().i64(1, 9).tag(9, 7)), ErrorKind::Format, {});
}

TEST_CASE("onnx reader: huge lengths and counts") {
  // A graph length far beyond the file.
  expect_error(read_pb(Pb().i64(1, 9).tag(7, 2).varint(uint64_t(1) << 62)), ErrorKind::Format, {});
  // A raw_data length beyond its tensor message.
  Pb t = tensor_pb("w", 1, {2});
  t.tag(9, 2).varint(1u << 30);
  expect_error(read_pb(add_model(t)), ErrorKind::Format, {});
  // dims whose product overflows; dims that need more data than given.
  expect_error(read_pb(add_model(tensor_pb("w", 1, {int64_t(1) << 40, int64_t(1) << 40}).bytes(9, "12345678", 8))),
               ErrorKind::Format, {"overflow"});
  expect_error(read_pb(add_model(tensor_pb("w", 1, {1000000000}).bytes(9, "12345678", 8))), ErrorKind::Format,
               {"raw_data holds 8 bytes", "'w'"});
  // More dims than any model has.
  expect_error(read_pb(add_model(tensor_pb("w", 1, std::vector<int64_t>(100, 1)).bytes(9, "1234", 4))), ErrorKind::Format,
               {"dims"});
  // A shape with thousands of dimensions.
  Pb shape;
  for (int i = 0; i < 5000; ++i) shape.msg(1, Pb().i64(1, 1));
  Pb vi = Pb().str(1, "x").msg(2, Pb().msg(1, Pb().i64(1, 1).msg(2, shape)));
  Pb g2;
  g2.msg(1, iotest::node("Relu", {"x"}, {"y"})).msg(11, vi).msg(12, iotest::value_info("y", 1, {1}));
  expect_error(read_pb(iotest::model(g2)), ErrorKind::Format, {"dimensions"});
  // A varint longer than 10 bytes.
  Pb v;
  v.tag(1, 0);
  for (int i = 0; i < 12; ++i) v.b.push_back(0xff);
  v.b.push_back(0x01);
  expect_error(read_pb(v), ErrorKind::Format, {});
}

TEST_CASE("onnx reader: dims <= 0 where not allowed") {
  expect_error(read_pb(add_model(tensor_pb("w", 1, {-2}).bytes(9, "", 0))), ErrorKind::Format, {"dim 0 is -2"});
  expect_error(read_pb(add_model(tensor_pb("w", 1, {2}).bytes(9, "12345678", 8), 1, {2, -1})), ErrorKind::Format,
               {"dim_value is -1"});
  // An attribute of the wrong type for its operator (the registry's schema).
  auto transpose_model = [](Pb attr) {
    Pb g;
    g.msg(1, iotest::node("Transpose", {"x"}, {"y"}, {attr})).str(2, "g");
    g.msg(11, iotest::value_info("x", 1, {2, 3})).msg(12, iotest::value_info("y", 1, {3, 2}));
    return iotest::model(g);
  };
  CHECK(read_pb(transpose_model(iotest::attr_ints("perm", {1, 0}))).is_ok());
  expect_error(read_pb(transpose_model(iotest::attr_int("perm", 1))), ErrorKind::Format, {"perm", "ints"});
  // An operator the registry does not run is refused by the reader, not later by a Session.
  Pb g;
  g.msg(1, iotest::node("StringNormalizer", {"x", "w"}, {"y"}, {iotest::attr_ints("strides", {1, 1})})).str(2, "g");
  g.msg(5, tensor_pb("w", 1, {1, 1, 1, 1}).bytes(9, "\0\0\x80\x3f", 4));
  g.msg(11, iotest::value_info("x", 1, {1, 1, 3, 3})).msg(12, iotest::value_info("y", 1, {1, 1, 3, 3}));
  expect_error(read_pb(iotest::model(g)), ErrorKind::Unsupported, {"StringNormalizer", "docs/operators.md"});
}

TEST_CASE("onnx reader: unknown and unsupported dtypes") {
  expect_error(read_pb(add_model(tensor_pb("w", 99, {2}).bytes(9, "12345678", 8))), ErrorKind::Format, {"unknown dtype code 99"});
  expect_error(read_pb(add_model(tensor_pb("w", 0, {2}).bytes(9, "12345678", 8))), ErrorKind::Format, {"dtype"});
  expect_error(read_pb(add_model(tensor_pb("w", 14, {1}).bytes(9, "12345678", 8))), ErrorKind::Unsupported, {"complex64"});
  // A graph input of an unknown elem type.
  expect_error(read_pb(add_model(tensor_pb("w", 1, {2}).bytes(9, "12345678", 8), 77)), ErrorKind::Format, {"77", "'x'"});
  // A tensor without data_type.
  Pb t;
  t.i64(1, 2).str(8, "w").bytes(9, "12345678", 8);
  expect_error(read_pb(add_model(t)), ErrorKind::Format, {"no data_type"});
}

TEST_CASE("onnx reader: a file with three unsupported operators names all three") {
  Pb g = iotest::relu_graph({iotest::node("StringSplit", {"y"}, {"a"}), iotest::node("StringNormalizer", {"y"}, {"b"}),
                             iotest::node("StringSplit", {"y"}, {"d"}),
                             Pb().str(1, "y").str(2, "e").str(4, "FusedGelu").str(7, "com.microsoft")});
  Pb m = Pb().i64(1, 9).msg(7, g).msg(8, Pb().i64(2, 17)).msg(8, Pb().str(1, "com.microsoft").i64(2, 1));
  expect_error(read_pb(m), ErrorKind::Unsupported, {"3 operator types", "StringSplit", "StringNormalizer", "com.microsoft::FusedGelu"});
  // An operator newer than the imported opset is listed with the reason.
  Pb g2 = iotest::relu_graph({iotest::node("Gelu", {"y"}, {"z"}), iotest::node("RegexFullMatch", {"y"}, {"w"})});
  expect_error(read_pb(iotest::model(g2, 17)), ErrorKind::Unsupported, {"Gelu (needs opset 20", "RegexFullMatch"});
  CHECK(graph::find_op("", "MatMul") != nullptr);
  CHECK(graph::find_op("ai.onnx", "MatMul") == graph::find_op("", "MatMul"));
  CHECK(graph::find_op("", "RegexFullMatch") == nullptr);
}

TEST_CASE("onnx reader: each operator decides how old a node it reads; opsets above 20 refused") {
  // Relu has had its form since opset 6; opset 1's carried consumed_inputs, which the reader
  // drops (onnx_legacy.cpp).
  for (int64_t v = 1; v <= 20; ++v) CHECK(read_pb(iotest::model(iotest::relu_graph(), v)).is_ok());
  // Cos appeared in opset 7: an opset-6 model cannot hold it.
  Pb cos = iotest::relu_graph({iotest::node("Cos", {"y"}, {"z"})});
  CHECK(read_pb(iotest::model(cos, 7)).is_ok());
  expect_error(read_pb(iotest::model(cos, 6)), ErrorKind::Unsupported,
               {"Cos (needs opset 7, the model imports 6)", "opset_version", "docs/operators.md"});
  // Add's opset-7 form broadcasts; the opset-6 form's broadcast attribute is converted.
  Pb add = iotest::relu_graph({iotest::node("Add", {"y", "y"}, {"z"})});
  CHECK(read_pb(iotest::model(add, 7)).is_ok());
  CHECK(read_pb(iotest::model(add, 6)).is_ok());
  // Softsign is unchanged since opset 1.
  Pb softsign;
  softsign.msg(1, iotest::node("Softsign", {"x"}, {"y"})).str(2, "g").msg(11, iotest::value_info("x", 1, {2, 3})).msg(12, iotest::value_info("y", 1, {2, 3}));
  CHECK(read_pb(iotest::model(softsign, 1)).is_ok());
  expect_error(read_pb(iotest::model(iotest::relu_graph(), 21)), ErrorKind::Unsupported, {"opset 21"});
  expect_error(read_pb(Pb().i64(1, 9).msg(7, iotest::relu_graph())), ErrorKind::Format, {"opset_import"});
  expect_error(read_pb(Pb().msg(7, iotest::relu_graph()).msg(8, Pb().i64(2, 20))), ErrorKind::Format, {"ir_version"});
  expect_error(read_pb(Pb().i64(1, 9).msg(8, Pb().i64(2, 20))), ErrorKind::Format, {"no graph"});
}

TEST_CASE("onnx reader: ReduceMean/ReduceMax axes attribute (opset < 18) becomes an input") {
  Pb g;
  g.msg(1, iotest::node("ReduceMean", {"x"}, {"y"}, {iotest::attr_ints("axes", {1}), iotest::attr_int("keepdims", 0)}));
  g.msg(11, iotest::value_info("x", 1, {2, 3})).msg(12, iotest::value_info("y", 1, {2}));
  Result<Graph> r = read_pb(iotest::model(g, 13));
  REQUIRE_MESSAGE(r.is_ok(), r.status().message());
  const Node& n = r->nodes[0];
  REQUIRE(n.inputs.size() == 2);
  CHECK(n.attr("axes") == nullptr);
  CHECK(n.attr_int("keepdims", 1) == 0);
  const TensorData* axes = r->find_initializer(n.inputs[1]);
  REQUIRE(axes != nullptr);
  CHECK(axes->dtype == DType::i64);
  CHECK(axes->dims == std::vector<int64_t>{1});
  CHECK(axes->data<int64_t>()[0] == 1);
  CHECK(r->opset_version() == 20);
  // Squeeze at opset 13 already takes axes as an input: unchanged.
  Pb g2;
  g2.msg(1, iotest::node("Squeeze", {"x", "ax"}, {"y"})).msg(5, tensor_pb("ax", 7, {1}).i64(7, 0));
  g2.msg(11, iotest::value_info("x", 1, {1, 3})).msg(12, iotest::value_info("y", 1, {3}));
  Result<Graph> r2 = read_pb(iotest::model(g2, 13));
  REQUIRE_MESSAGE(r2.is_ok(), r2.status().message());
  CHECK(r2->nodes[0].inputs == std::vector<std::string>{"x", "ax"});
  CHECK(r2->initializers[0].data<int64_t>()[0] == 0);
}

TEST_CASE("onnx reader: typed data fields equal raw_data") {
  // float_data, packed and unpacked.
  Pb packed = tensor_pb("w", 1, {2});
  const float f[2] = {1.5f, -2.0f};
  packed.bytes(4, f, 8);
  Pb unpacked = tensor_pb("w", 1, {2}).f32(4, 1.5f).f32(4, -2.0f);
  for (const Pb* t : {&packed, &unpacked}) {
    Result<Graph> r = read_pb(add_model(*t));
    REQUIRE_MESSAGE(r.is_ok(), r.status().message());
    CHECK(r->initializers[0].data<float>()[0] == 1.5f);
    CHECK(r->initializers[0].data<float>()[1] == -2.0f);
  }
  // int64_data, int32_data for i8/u8/bool/f16; values checked against the dtype's range.
  Result<Graph> r64 = read_pb(add_model(tensor_pb("w", 7, {2}).i64(7, -5).i64(7, 1ll << 40), 7));
  REQUIRE_MESSAGE(r64.is_ok(), r64.status().message());
  CHECK(r64->initializers[0].data<int64_t>()[1] == (1ll << 40));
  Result<Graph> r8 = read_pb(add_model(tensor_pb("w", 3, {2}).i64(5, -128).i64(5, 127), 3));
  REQUIRE_MESSAGE(r8.is_ok(), r8.status().message());
  CHECK(r8->initializers[0].data<int8_t>()[0] == -128);
  expect_error(read_pb(add_model(tensor_pb("w", 2, {2}).i64(5, 256).i64(5, 0), 2)), ErrorKind::Format, {"256"});
  expect_error(read_pb(add_model(tensor_pb("w", 9, {2}).i64(5, 2).i64(5, 0), 9)), ErrorKind::Format, {"does not fit"});
  // Wrong count, wrong field for the dtype, two data fields.
  expect_error(read_pb(add_model(tensor_pb("w", 1, {3}).f32(4, 1).f32(4, 2))), ErrorKind::Format, {"holds 2 values"});
  expect_error(read_pb(add_model(tensor_pb("w", 1, {1}).i64(7, 1), 1, {1})), ErrorKind::Format, {"int64_data"});
  expect_error(read_pb(add_model(tensor_pb("w", 1, {2}).f32(4, 1).f32(4, 2).bytes(9, "12345678", 8))), ErrorKind::Format,
               {"more than one data field"});
  expect_error(read_pb(add_model(tensor_pb("w", 1, {2}))), ErrorKind::Format, {"no data"});
}

TEST_CASE("onnx reader: external data is refused with a clear message") {
  Pb t = tensor_pb("w", 1, {2}).msg(13, Pb().str(1, "location").str(2, "weights.bin")).i64(14, 1);
  expect_error(read_pb(add_model(t)), ErrorKind::Unsupported, {"external", "weights.bin", "'w'"});
  // A data_location that is neither DEFAULT nor EXTERNAL (found by the fuzzer).
  expect_error(read_pb(add_model(tensor_pb("w", 1, {2}).bytes(9, "12345678", 8).i64(14, 97))), ErrorKind::Format,
               {"data_location 97"});
}

TEST_CASE("onnx reader: attribute declared type must match its payload") {
  Pb bad = Pb().str(1, "alpha").i64(3, 2).i64(20, 1);  // says FLOAT, carries an int
  expect_error(read_pb(iotest::model(iotest::relu_graph({iotest::node("LeakyRelu", {"y"}, {"z"}, {bad})}))), ErrorKind::Format,
               {"declared FLOAT", "INT payload"});
  Pb untyped = Pb().str(1, "alpha").f32(2, 0.1f);
  expect_error(read_pb(iotest::model(iotest::relu_graph({iotest::node("LeakyRelu", {"y"}, {"z"}, {untyped})}))),
               ErrorKind::Format, {"no type"});
  Pb tensors_attr = Pb().str(1, "body").i64(20, 9);  // TENSORS on a supported op: a kind the IR has not
  expect_error(read_pb(iotest::model(iotest::relu_graph({iotest::node("Identity", {"y"}, {"z"}, {tensors_attr})}))),
               ErrorKind::Unsupported, {"TENSORS"});
  Pb graph_int = Pb().str(1, "body").i64(3, 2).i64(20, 5);  // says GRAPH, carries an int
  expect_error(read_pb(iotest::model(iotest::relu_graph({iotest::node("Identity", {"y"}, {"z"}, {graph_int})}))),
               ErrorKind::Format, {"declared GRAPH", "another payload"});
  Pb graphs_in_g = Pb().str(1, "body").msg(6, Pb()).i64(20, 10);  // says GRAPHS, carries a GRAPH field
  expect_error(read_pb(iotest::model(iotest::relu_graph({iotest::node("Identity", {"y"}, {"z"}, {graphs_in_g})}))),
               ErrorKind::Format, {"declared GRAPHS"});
  Pb weird = Pb().str(1, "x").i64(20, 99);
  expect_error(read_pb(iotest::model(iotest::relu_graph({iotest::node("Identity", {"y"}, {"z"}, {weird})}))), ErrorKind::Format,
               {"unknown type code 99"});
}

TEST_CASE("onnx reader: graph structure is verified") {
  // A node reading a value nobody defines.
  expect_error(read_pb(iotest::model(iotest::relu_graph({iotest::node("Relu", {"nope"}, {"z"})}))), ErrorKind::Format, {"'nope'"});
  // Two producers of one value.
  expect_error(read_pb(iotest::model(iotest::relu_graph({iotest::node("Relu", {"x"}, {"y"})}))), ErrorKind::Format,
               {"assigned twice"});
  // An output nobody produces.
  Pb g;
  g.msg(1, iotest::node("Relu", {"x"}, {"y"})).msg(11, iotest::value_info("x", 1, {1})).msg(12, iotest::value_info("q", 1, {1}));
  expect_error(read_pb(iotest::model(g)), ErrorKind::Format, {"'q'"});
  // A graph input without a type.
  Pb g2;
  g2.msg(1, iotest::node("Relu", {"x"}, {"y"})).msg(11, Pb().str(1, "x")).msg(12, iotest::value_info("y", 1, {1}));
  expect_error(read_pb(iotest::model(g2)), ErrorKind::Format, {"no tensor type"});
}
