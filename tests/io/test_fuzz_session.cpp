// The Session fuzz target's seeds (fuzz/corpus/session): the hostile models of the issue
// "hostile input never crashes, hangs or silently corrupts", written here from graphs (there is
// no onnx Python package on the build machines), and a replay of that corpus through the fuzz
// harness (fuzz/session_harness.h) so every seed is exercised by CTest too.
//   Regenerate: build/test_io -tc="session fuzz seeds*" --no-skip
#include <doctest/doctest.h>

#include <climits>
#include <filesystem>
#include <fstream>

#include "fuzz/session_harness.h"
#include "onemodel/io/onnx.h"

namespace g = om::graph;
using om::DType;

namespace {

g::ValueInfo vi(std::string name, DType dt, std::vector<g::Dim> dims) {
  g::ValueInfo v;
  v.name = std::move(name);
  v.dtype = dt;
  v.shape = std::move(dims);
  return v;
}
g::Dim F(int64_t n) { return g::Dim::fixed(n); }
g::Dim S(const char* s) { return g::Dim::symbol(s); }
g::Node nd(std::string op, std::vector<std::string> ins, std::vector<std::string> outs, std::vector<g::Attribute> attrs = {}) {
  g::Node n;
  n.op_type = std::move(op);
  n.name = n.op_type + "_" + outs[0];
  n.inputs = std::move(ins);
  n.outputs = std::move(outs);
  n.attributes = std::move(attrs);
  return n;
}
g::TensorData ints(std::string name, std::vector<int64_t> v) {
  return g::TensorData::from_vector<int64_t>(std::move(name), {int64_t(v.size())}, v);
}

std::vector<std::pair<std::string, g::Graph>> seeds() {
  std::vector<std::pair<std::string, g::Graph>> out;
  auto add = [&](const char* name, g::Graph gr) { out.emplace_back(name, std::move(gr)); };
  {  // Reshape whose product wraps to the input's count.
    g::Graph gr;
    gr.inputs = {vi("x", DType::f32, {F(4)})};
    gr.initializers = {ints("s", {5, 3689348814741910324LL})};
    gr.nodes = {nd("Reshape", {"x", "s"}, {"r"}), nd("ReduceSum", {"r"}, {"y"})};
    gr.outputs = {vi("y", DType::f32, {})};
    gr.outputs[0].has_shape = false;
    add("reshape_wrap", gr);
  }
  {  // Expand to [2^32, 2^32], and to [-3] followed by Concat.
    g::Graph gr;
    gr.inputs = {vi("x", DType::f32, {F(1)})};
    gr.initializers = {ints("big", {int64_t(1) << 32, int64_t(1) << 32}), ints("neg", {-3})};
    gr.nodes = {nd("Expand", {"x", "big"}, {"e"}), nd("Relu", {"e"}, {"y"})};
    gr.outputs = {vi("y", DType::f32, {g::Dim{}, g::Dim{}})};
    add("expand_huge", gr);
    gr.nodes = {nd("Expand", {"x", "neg"}, {"e"}), nd("Concat", {"e", "x"}, {"y"}, {g::Attribute::of_int("axis", 0)})};
    gr.outputs = {vi("y", DType::f32, {g::Dim{}})};
    add("expand_negative_concat", gr);
  }
  for (int64_t n : {2, 10}) {  // Slice with extreme steps, then Concat.
    g::Graph gr;
    gr.inputs = {vi("x", DType::f32, {F(n)})};
    gr.initializers = {ints("s0", {0}), ints("e0", {n}), ints("a", {0}), ints("pmax", {INT64_MAX}), ints("s1", {-1}),
                       ints("e1", {INT64_MIN}), ints("pmin", {INT64_MIN})};
    gr.nodes = {nd("Slice", {"x", "s0", "e0", "a", "pmax"}, {"p"}), nd("Slice", {"x", "s1", "e1", "a", "pmin"}, {"q"}),
                nd("Concat", {"p", "q", "x"}, {"y"}, {g::Attribute::of_int("axis", 0)})};
    gr.outputs = {vi("y", DType::f32, {g::Dim{}})};
    add(n == 2 ? "slice_step_extremes_2" : "slice_step_extremes_10", gr);
  }
  for (DType dt : {DType::i64, DType::i32}) {  // INT_MIN / -1, by zero, wrap-around.
    g::Graph gr;
    gr.inputs = {vi("b", dt, {S("n")})};
    if (dt == DType::i64) gr.initializers = {ints("a", {INT64_MIN})};
    else gr.initializers = {g::TensorData::from_vector<int32_t>("a", {1}, {INT32_MIN})};
    gr.nodes = {nd("Div", {"a", "b"}, {"d"}), nd("Mul", {"d", "a"}, {"m"}), nd("Neg", {"m"}, {"k"}), nd("Add", {"k", "a"}, {"y"})};
    gr.outputs = {vi("y", dt, {S("n")})};
    add(dt == DType::i64 ? "int64_min_div" : "int32_min_div", gr);
  }
  {  // A symbol repeated in one input and across inputs.
    g::Graph gr;
    gr.inputs = {vi("x", DType::f32, {S("N"), S("N")}), vi("z", DType::f32, {S("N")})};
    gr.nodes = {nd("Add", {"x", "z"}, {"y"})};
    gr.outputs = {vi("y", DType::f32, {S("N"), S("N")})};
    add("repeated_symbol", gr);
  }
  {  // A huge declared input and a constant folded to [16384, 16384].
    g::Graph gr;
    gr.inputs = {vi("x", DType::f32, {F(int64_t(1) << 62), F(4)})};
    gr.nodes = {nd("ReduceSum", {"x"}, {"y"})};
    gr.outputs = {vi("y", DType::f32, {})};
    gr.outputs[0].has_shape = false;
    add("input_2p62", gr);
    g::Graph f;
    f.inputs = {vi("x", DType::f32, {F(1)})};
    f.initializers = {g::TensorData::from_vector<float>("one", {1}, {1.0f}), ints("s", {16384, 16384})};
    f.nodes = {nd("Expand", {"one", "s"}, {"e"}), nd("Add", {"e", "x"}, {"y"})};
    f.outputs = {vi("y", DType::f32, {F(16384), F(16384)})};
    add("fold_expand_16384", f);
  }
  {  // An initializer-backed input, and MatMul+Add+Relu pairs (fusion) with a Transpose.
    g::Graph gr;
    gr.inputs = {vi("x", DType::f32, {S("batch"), F(3)}), vi("w", DType::f32, {F(3), F(3)})};
    gr.initializers = {g::TensorData::from_vector<float>("w", {3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1}),
                       g::TensorData::from_vector<float>("v", {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
                       g::TensorData::from_vector<float>("b", {3}, {1, -1, 0})};
    gr.nodes = {nd("MatMul", {"x", "w"}, {"h"}), nd("Add", {"h", "b"}, {"a"}), nd("Relu", {"a"}, {"r"}),
                nd("Transpose", {"v"}, {"vt"}, {g::Attribute::of_ints("perm", {1, 0})}), nd("MatMul", {"r", "vt"}, {"m"}),
                nd("Add", {"m", "b"}, {"y"})};
    gr.outputs = {vi("y", DType::f32, {S("batch"), F(3)})};
    add("overridable_and_fusion", gr);
  }
  {  // A Shape -> Gather -> Concat -> Reshape chain with a negative gather index.
    g::Graph gr;
    gr.inputs = {vi("x", DType::f32, {S("n"), F(4)})};
    gr.initializers = {ints("i", {-1}), ints("m1", {-1})};
    gr.nodes = {nd("Shape", {"x"}, {"s"}), nd("Gather", {"s", "i"}, {"last"}), nd("Concat", {"m1", "last"}, {"t"}, {g::Attribute::of_int("axis", 0)}),
                nd("Reshape", {"x", "t"}, {"y"})};
    gr.outputs = {vi("y", DType::f32, {g::Dim{}, g::Dim{}})};
    add("shape_chain", gr);
  }
  return out;
}

}  // namespace

TEST_CASE("session fuzz seeds: write fuzz/corpus/session" * doctest::skip()) {
  const std::string dir = OM_SOURCE_DIR "/fuzz/corpus/session";
  std::filesystem::create_directories(dir);
  for (const auto& [name, gr] : seeds()) {
    auto bytes = om::onnx::write_bytes(gr);
    INFO(name << ": " << bytes.status().message());
    REQUIRE(bytes.is_ok());
    std::ofstream(dir + "/" + name + ".onnx", std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.value().data()), std::streamsize(bytes.value().size()));
  }
}

TEST_CASE("session fuzz corpus replay: every seed of fuzz/corpus/session plans and runs to a Status") {
  int files = 0, runs = 0;
  for (const auto& e : std::filesystem::directory_iterator(OM_SOURCE_DIR "/fuzz/corpus/session")) {
    std::ifstream f(e.path(), std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    ++files;
    runs += om::fuzz::run_session_case(bytes.data(), bytes.size());
  }
  MESSAGE("session corpus: " << files << " files, " << runs << " successful runs");
  CHECK(files >= 12);
  CHECK(runs >= 4);  // the well-formed seeds (slices, fusion, shape chain) run in both modes
}
