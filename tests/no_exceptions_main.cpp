// Built only in the -fno-exceptions configuration (make no-exceptions): firmware-style use of
// the library without exceptions — Status-returning Session calls and an installed handler.
#include <cstdio>
#include <cstdlib>

#include "onemodel/core/tensor.h"
#include "onemodel/graph/ir.h"
#include "onemodel/quant/quantize.h"
#include "onemodel/runtime/session.h"

namespace {
void on_error(const om::Status& status) {
  std::fprintf(stderr, "handler: %s\n", status.message().c_str());
  std::exit(3);
}
}  // namespace

int main() {
  om::set_error_handler(&on_error);
  om::graph::Graph g;
  g.inputs.push_back({"x", om::DType::f32, true, {om::graph::Dim::fixed(4)}});
  g.outputs.push_back({"y", om::DType::f32, true, {om::graph::Dim::fixed(4)}});
  om::graph::Node relu;
  relu.op_type = "Relu";
  relu.inputs = {"x"};
  relu.outputs = {"y"};
  g.nodes.push_back(relu);
  om::Session session;
  om::Status s = om::Session::create(g, {}, &session);
  if (!s.is_ok()) return 1;
  float x[4] = {-1, 2, -3, 4}, y[4] = {0, 0, 0, 0};
  const int64_t dims[1] = {4};
  om::TensorView in, out;
  in.name = "x";
  in.dims = dims;
  in.rank = 1;
  in.data = x;
  out.data = y;
  out.capacity = sizeof y;
  s = session.try_run(&in, 1, &out, 1);
  if (!s.is_ok() || y[0] != 0 || y[1] != 2 || y[3] != 4) return 2;
  // A bad input is a Status, not an exception or an abort.
  const int64_t wrong[1] = {5};
  in.dims = wrong;
  s = session.try_run(&in, 1, &out, 1);
  if (s.is_ok()) return 4;
  // Quantization's Status form: a MatMul graph becomes QDQ; an empty calibration set is a Status.
  om::graph::Graph mm;
  mm.inputs.push_back({"a", om::DType::f32, true, {om::graph::Dim::fixed(2), om::graph::Dim::fixed(3)}});
  mm.outputs.push_back({"c", om::DType::f32, true, {om::graph::Dim::fixed(2), om::graph::Dim::fixed(2)}});
  mm.initializers.push_back(om::graph::TensorData::from_vector<float>("b", {3, 2}, {1, -2, 3, -4, 5, -6}));
  om::graph::Node matmul;
  matmul.op_type = "MatMul";
  matmul.inputs = {"a", "b"};
  matmul.outputs = {"c"};
  mm.nodes.push_back(matmul);
  const om::quant::CalibrationSet calib = {{{"a", om::from_vector<float>({1, 2, 3, -1, 0, 4}, {2, 3})}}};
  om::graph::Graph q;
  if (!om::quant::try_quantize_static(mm, calib, {}, &q).is_ok() || q.nodes.size() != 6) return 5;
  if (om::quant::try_quantize_static(mm, {}, {}, &q).is_ok()) return 6;
  std::printf("no-exceptions build: ok (%s)\n", s.message().c_str());
  return 0;
}
