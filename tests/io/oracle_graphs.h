// Helpers for the per-operator ONNX Runtime cases: a small graph builder, deterministic
// inputs, and conversions from eager tensors / double vectors to graph::TensorData.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "onemodel/core/tensor.h"
#include "onemodel/graph/ir.h"
#include "oracle_case.h"

namespace octest {

using om::DType;
using om::graph::Attribute;
using om::graph::Dim;
using om::graph::Graph;
using om::graph::Node;
using om::graph::TensorData;
using om::graph::ValueInfo;

inline std::vector<Dim> fixed(const std::vector<int64_t>& dims) {
  std::vector<Dim> out;
  for (int64_t d : dims) out.push_back(Dim::fixed(d));
  return out;
}

struct GraphBuilder {
  Graph g;
  GraphBuilder& input(const std::string& name, DType dt, const std::vector<int64_t>& dims) {
    g.inputs.push_back(ValueInfo{name, dt, true, fixed(dims)});
    return *this;
  }
  GraphBuilder& input(const TensorData& t) { return input(t.name, t.dtype, t.dims); }
  GraphBuilder& output(const std::string& name, DType dt, const std::vector<int64_t>& dims) {
    g.outputs.push_back(ValueInfo{name, dt, true, fixed(dims)});
    return *this;
  }
  GraphBuilder& output(const TensorData& t) { return output(t.name, t.dtype, t.dims); }
  GraphBuilder& init(TensorData t) {
    g.initializers.push_back(std::move(t));
    return *this;
  }
  GraphBuilder& node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out,
                     std::vector<Attribute> attrs = {}) {
    g.nodes.push_back(Node{op, "", op + "_" + std::to_string(g.nodes.size()), std::move(in), std::move(out), std::move(attrs)});
    return *this;
  }
};

// Deterministic values in [lo, hi): a 64-bit LCG, platform independent.
inline std::vector<float> values(size_t n, uint64_t seed, float lo = -2.0f, float hi = 2.0f) {
  std::vector<float> v(n);
  uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (float& x : v) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    x = lo + (hi - lo) * float((s >> 40) & 0xffffff) / float(1 << 24);
  }
  return v;
}

inline int64_t numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

inline TensorData f32(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v) {
  return TensorData::from_vector<float>(name, dims, v);
}
inline TensorData rand_f32(const std::string& name, const std::vector<int64_t>& dims, uint64_t seed) {
  return f32(name, dims, values(size_t(numel(dims)), seed));
}
inline TensorData from_double(const std::string& name, const std::vector<int64_t>& dims, const std::vector<double>& v) {
  std::vector<float> f(v.begin(), v.end());
  return f32(name, dims, f);
}
inline TensorData i64(const std::string& name, const std::vector<int64_t>& dims, const std::vector<int64_t>& v) {
  return TensorData::from_vector<int64_t>(name, dims, v);
}

// An eager tensor's values as TensorData (any supported dtype).
inline TensorData from_tensor(const std::string& name, const om::Tensor& t) {
  const om::Tensor c = t.contiguous();
  std::vector<int64_t> dims(c.shape().begin(), c.shape().end());
  switch (c.dtype()) {
    case DType::f32: return TensorData::from_vector<float>(name, dims, c.to_vector<float>());
    case DType::i64: return TensorData::from_vector<int64_t>(name, dims, c.to_vector<int64_t>());
    case DType::i32: return TensorData::from_vector<int32_t>(name, dims, c.to_vector<int32_t>());
    case DType::i8: return TensorData::from_vector<int8_t>(name, dims, c.to_vector<int8_t>());
    case DType::u8: return TensorData::from_vector<uint8_t>(name, dims, c.to_vector<uint8_t>());
    default: break;
  }
  throw om::Error(om::ErrorKind::Unsupported, "from_tensor: f16/bool tensors are not converted by this test helper");
}

inline om::Tensor to_tensor(const TensorData& t) {
  return om::from_vector<float>(std::vector<float>(t.data<float>(), t.data<float>() + t.numel()), om::Shape(t.dims.begin(), t.dims.end()));
}

// One node, its inputs as graph inputs (and `inits` as initializers), one output.
inline void single_op_case(const std::string& case_name, const std::string& op, const std::vector<TensorData>& inputs,
                           const std::vector<TensorData>& inits, const std::vector<Attribute>& attrs,
                           const TensorData& expected, const std::vector<std::string>& input_order = {}) {
  GraphBuilder b;
  std::vector<std::string> names;
  for (const TensorData& t : inputs) {
    b.input(t);
    names.push_back(t.name);
  }
  for (const TensorData& t : inits) {
    b.init(t);
    names.push_back(t.name);
  }
  if (!input_order.empty()) names = input_order;
  b.node(op, names, {expected.name}, attrs);
  b.output(expected);
  write_oracle_case(case_name, b.g, inputs, {expected});
}

}  // namespace octest
