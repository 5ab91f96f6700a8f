// Helpers for the tracer suite: run a graph in a Session with om::Tensor inputs, compare.
#pragma once
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "onemodel/graph/op_registry.h"
#include "onemodel/onemodel.h"

namespace tracetest {

inline std::vector<om::Tensor> run_graph(om::Session& s, const std::vector<std::pair<std::string, om::Tensor>>& inputs) {
  std::vector<om::TensorView> in(inputs.size());
  std::vector<om::Tensor> dense;
  for (size_t i = 0; i < inputs.size(); ++i) {
    dense.push_back(inputs[i].second.contiguous());
    in[i].name = inputs[i].first.c_str();
    in[i].dtype = dense[i].dtype();
    in[i].dims = dense[i].shape().data();
    in[i].rank = dense[i].shape().size();
    in[i].data = const_cast<void*>(dense[i].storage().data());
    in[i].data = static_cast<uint8_t*>(in[i].data) + dense[i].storage_offset() * int64_t(om::dtype_size(dense[i].dtype()));
  }
  std::vector<om::TensorView> out(s.output_names().size());
  s.run(in.data(), in.size(), out.data(), out.size());
  std::vector<om::Tensor> result;
  for (const om::TensorView& v : out) {
    om::Tensor t = om::empty(om::Shape(v.dims, v.dims + v.rank), v.dtype);
    std::memcpy(t.mutable_storage().impl()->data, v.data, size_t(t.numel()) * om::dtype_size(v.dtype));
    result.push_back(t);
  }
  return result;
}

inline std::vector<om::Tensor> run_graph(const om::graph::Graph& g, const std::vector<std::pair<std::string, om::Tensor>>& inputs,
                                         om::ArithmeticMode mode = om::ArithmeticMode::Fast) {
  om::SessionOptions o;
  o.mode = mode;
  om::Session s(g, o);
  return run_graph(s, inputs);
}

// max |a-b| / max(1, max|a|)
inline double scaled_error(const om::Tensor& a, const om::Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  const auto va = a.contiguous().to_vector<float>(), vb = b.contiguous().to_vector<float>();
  double m = 0, scale = 1;
  for (size_t i = 0; i < va.size(); ++i) {
    m = std::max(m, double(std::fabs(va[i] - vb[i])));
    scale = std::max(scale, double(std::fabs(va[i])));
  }
  return m / scale;
}

inline bool bit_equal(const om::Tensor& a, const om::Tensor& b) {
  if (a.shape() != b.shape()) return false;
  const auto va = a.contiguous().to_vector<float>(), vb = b.contiguous().to_vector<float>();
  return std::memcmp(va.data(), vb.data(), va.size() * sizeof(float)) == 0;
}

inline int count_ops(const om::graph::Graph& g, const std::string& op) {
  int n = 0;
  for (const auto& node : g.nodes) n += node.op_type == op;
  return n;
}

template <typename Fn>
om::TraceErrorKind trace_error_kind(Fn fn, std::string* message = nullptr) {
  try {
    fn();
  } catch (const om::TraceException& e) {
    if (message) *message = e.what();
    return e.kind();
  }
  FAIL("expected a TraceException");
  return om::TraceErrorKind::InvalidUsage;
}

// True when every node of `g` has an Exact kernel (docs/operators.md).
inline bool all_exact(const om::graph::Graph& g) {
  for (const auto& n : g.nodes) {
    const om::graph::OpDef* d = om::graph::find_op(n.domain, n.op_type);
    if (!d || !d->exact) return false;
  }
  return true;
}

}  // namespace tracetest
