// The oracle tool itself: a symbolic model checked at several shapes, and a deliberately wrong
// case that the oracle must reject (so a silent oracle cannot pass the suite). Also replays the
// fuzz corpus through the ONNX reader.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "onemodel/io/onnx.h"
#include "onemodel/ops/ops.h"
#include "oracle_graphs.h"

using namespace octest;

TEST_CASE("oracle cases: a symbolic batch checked at three shapes") {
  // y = relu(x @ w) + b with x [batch, 3].
  const TensorData w = rand_f32("w", {3, 4}, 81), b = rand_f32("b", {4}, 82);
  GraphBuilder gb;
  gb.g.inputs.push_back(ValueInfo{"x", DType::f32, true, {Dim::symbol("batch"), Dim::fixed(3)}});
  gb.init(w).init(b).node("MatMul", {"x", "w"}, {"h"}).node("Relu", {"h"}, {"r"}).node("Add", {"r", "b"}, {"y:out"});
  gb.g.outputs.push_back(ValueInfo{"y:out", DType::f32, true, {Dim::symbol("batch"), Dim::fixed(4)}});
  auto expected = [&](const TensorData& x) {
    return from_tensor("y:out", om::add(om::relu(om::matmul(to_tensor(x), to_tensor(w))), to_tensor(b)));
  };
  const TensorData x2 = rand_f32("x", {2, 3}, 83), x5 = rand_f32("x", {5, 3}, 84), x1 = rand_f32("x", {1, 3}, 85);
  write_oracle_case("io_symbolic_batch", gb.g, {x2}, {expected(x2)});
  add_oracle_inputs("io_symbolic_batch", "batch5", {x5}, {expected(x5)});
  add_oracle_inputs("io_symbolic_batch", "batch1", {x1}, {expected(x1)});
  CHECK(std::filesystem::exists(oracle::case_dir("io_symbolic_batch") + "/expected_y%3Aout.npy"));
  CHECK(std::filesystem::exists(oracle::case_dir("io_symbolic_batch") + "/batch5/input_x.npy"));
}

TEST_CASE("oracle tool: rejects a disagreeing case and a model it cannot load") {
  const std::string dir = std::string(OM_BINARY_DIR) + "/oracle_selftest";
  std::filesystem::remove_all(dir);
  const TensorData a = rand_f32("a", {4}, 91);
  GraphBuilder gb;
  gb.input(a).node("Relu", {"a"}, {"y"}).output("y", DType::f32, {4});
  std::vector<float> wrong(a.data<float>(), a.data<float>() + 4);  // relu not applied: disagrees for negatives
  wrong[0] = -1.0f;
  std::filesystem::create_directories(dir + "/bad");
  om::onnx::write(gb.g, dir + "/bad/model.onnx");
  om::npy::write(a, dir + "/bad/input_a.npy");
  om::npy::write(f32("y", {4}, wrong), dir + "/bad/expected_y.npy");
  const std::string node_cmd = "node '" OM_SOURCE_DIR "/tools/trace_oracle/oracle.js' '" + dir + "' > '" + dir + ".log' 2>&1";
  int rc = std::system(node_cmd.c_str());
  if (WIFEXITED(rc) && (WEXITSTATUS(rc) == 77 || WEXITSTATUS(rc) == 127)) {
    MESSAGE("node or onnxruntime-node not available; oracle self-test skipped");
    return;
  }
  CHECK(WEXITSTATUS(rc) == 1);
  // The same case with the right values passes.
  std::vector<float> right(wrong.size());
  for (size_t i = 0; i < right.size(); ++i) right[i] = std::max(0.0f, a.data<float>()[i]);
  om::npy::write(f32("y", {4}, right), dir + "/bad/expected_y.npy");
  rc = std::system(node_cmd.c_str());
  CHECK(WEXITSTATUS(rc) == 0);
  // A file ONNX Runtime cannot load fails too.
  std::ofstream(dir + "/bad/model.onnx", std::ios::binary) << "not a model";
  rc = std::system(node_cmd.c_str());
  CHECK(WEXITSTATUS(rc) == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("fuzz corpus replay: every seed of fuzz/corpus/onnx reads to a Status") {
  int files = 0, accepted = 0;
  for (const auto& e : std::filesystem::directory_iterator(OM_SOURCE_DIR "/fuzz/corpus/onnx")) {
    std::ifstream f(e.path(), std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    om::Result<om::graph::Graph> g = om::onnx::read_bytes(bytes.data(), bytes.size());
    ++files;
    if (!g.is_ok()) {
      CHECK_MESSAGE((g.status().kind() == om::ErrorKind::Format || g.status().kind() == om::ErrorKind::Unsupported),
                    e.path().filename().string(), ": ", g.status().message());
      continue;
    }
    ++accepted;
    // What the reader accepts, the writer writes and the reader reads back to the same bytes.
    const std::vector<uint8_t> a = om::onnx::write(g.value());
    CHECK(om::onnx::write(om::onnx::read(a)) == a);
  }
  CHECK(files >= 10);
  CHECK(accepted >= 5);
}
