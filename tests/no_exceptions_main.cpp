// Built only in the -fno-exceptions configuration (make no-exceptions): firmware-style use of
// the library without exceptions — Status-returning Session calls and an installed handler.
#include <cstdio>
#include <cstdlib>

#include "onemodel/graph/ir.h"
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
  std::printf("no-exceptions build: ok (%s)\n", s.message().c_str());
  return 0;
}
