// Writes a case for the ONNX Runtime oracle (tools/trace_oracle, run by the CTest test
// `oracle` after every test program). Header-only; include it from any test.
//
//   write_oracle_case("io_conv", graph, {x}, {y});             // model + one input set
//   add_oracle_inputs("io_conv", "batch5", {x5}, {y5});        // more shapes, same model
//
// `inputs` and `expected` are graph::TensorData named like the graph's inputs and outputs
// (tensor.name). Files go to OM_BINARY_DIR/oracle_cases/<case>/: model.onnx,
// input_<name>.npy and expected_<name>.npy, where <name> is the value name percent-encoded
// (every byte outside [A-Za-z0-9._-] becomes %XX), so names with ':' or '/' are safe. Extra
// input sets go to subfolders. Name cases "<suite>_<case>" so suites never collide.
// A case may set its own tolerance: set_oracle_rtol("io_gelu", 1e-4). A QDQ case marks itself with
// set_oracle_u8s8: on CPUs where ONNX Runtime's fused u8 x s8 product saturates, the oracle runs
// it without that fusion (tools/trace_oracle/oracle.js).
// Failures throw om::Error (the test fails).
#pragma once
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "onemodel/graph/ir.h"
#include "onemodel/io/npy.h"
#include "onemodel/io/onnx.h"

namespace oracle {

inline std::string case_dir(const std::string& case_name) {
  return std::string(OM_BINARY_DIR) + "/oracle_cases/" + case_name;
}

inline std::string encode_name(const std::string& name) { return om::npy::file_name_of(name); }

inline void write_tensors(const std::string& dir, const char* prefix, const std::vector<om::graph::TensorData>& ts) {
  for (const om::graph::TensorData& t : ts) om::npy::write(t, dir + "/" + prefix + encode_name(t.name) + ".npy");
}

// Adds one more input set (another shape of a symbolic model) to an existing case.
inline void add_oracle_inputs(const std::string& case_name, const std::string& set_name,
                              const std::vector<om::graph::TensorData>& inputs,
                              const std::vector<om::graph::TensorData>& expected) {
  const std::string dir = case_dir(case_name) + "/" + encode_name(set_name);
  std::filesystem::create_directories(dir);
  write_tensors(dir, "input_", inputs);
  write_tensors(dir, "expected_", expected);
}

// Replaces the case folder with the model and its first input set.
inline void write_oracle_case(const std::string& case_name, const om::graph::Graph& graph,
                              const std::vector<om::graph::TensorData>& inputs,
                              const std::vector<om::graph::TensorData>& expected) {
  const std::string dir = case_dir(case_name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  om::onnx::write(graph, dir + "/model.onnx");
  write_tensors(dir, "input_", inputs);
  write_tensors(dir, "expected_", expected);
}

inline void set_oracle_rtol(const std::string& case_name, double rtol) {
  FILE* f = std::fopen((case_dir(case_name) + "/rtol").c_str(), "w");
  if (!f) return;
  std::fprintf(f, "%.17g\n", rtol);
  std::fclose(f);
}

inline void set_oracle_u8s8(const std::string& case_name) {
  FILE* f = std::fopen((case_dir(case_name) + "/u8s8").c_str(), "w");
  if (!f) return;
  std::fprintf(f, "a QDQ model of u8 activations and s8 weights\n");
  std::fclose(f);
}

}  // namespace oracle

using oracle::add_oracle_inputs;
using oracle::set_oracle_rtol;
using oracle::set_oracle_u8s8;
using oracle::write_oracle_case;
