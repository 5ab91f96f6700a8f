// Helpers for the runtime tests: building small graphs and running them through om::Session.
#pragma once
#include <cctype>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "allocation_count.h"
#include "onemodel/graph/ir.h"
#include "onemodel/kernels/kernels.h"
#include "onemodel/runtime/session.h"
#include "split_check.h"

namespace rt {

using om::DType;
namespace g = om::graph;

struct Feed {
  std::string name;
  DType dtype = DType::f32;
  std::vector<int64_t> dims;
  std::vector<uint8_t> bytes;
  template <typename T>
  static Feed of(std::string name, std::vector<int64_t> dims, const std::vector<T>& v) {
    Feed f;
    f.name = std::move(name);
    f.dtype = om::dtype_of<T>::value;
    f.dims = std::move(dims);
    const auto* first = reinterpret_cast<const uint8_t*>(v.data());
    f.bytes.assign(first, first + v.size() * sizeof(T));
    return f;
  }
};

struct Out {
  DType dtype = DType::f32;
  std::vector<int64_t> dims;
  std::vector<uint8_t> bytes;
  template <typename T>
  std::vector<T> as() const {
    std::vector<T> v(bytes.size() / sizeof(T));
    if (!v.empty()) std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
  }
};

inline g::ValueInfo value(std::string name, DType dt, std::vector<int64_t> dims) {
  g::ValueInfo v;
  v.name = std::move(name);
  v.dtype = dt;
  for (int64_t d : dims) v.shape.push_back(g::Dim::fixed(d));
  return v;
}

inline g::ValueInfo sym_value(std::string name, DType dt, std::vector<std::string> dims) {
  g::ValueInfo v;
  v.name = std::move(name);
  v.dtype = dt;
  for (const auto& d : dims) v.shape.push_back(d.empty() ? g::Dim{} : (std::isdigit(d[0]) ? g::Dim::fixed(std::stoll(d)) : g::Dim::symbol(d)));
  return v;
}

inline g::Node node(std::string op, std::vector<std::string> ins, std::vector<std::string> outs, std::vector<g::Attribute> attrs = {}) {
  g::Node n;
  n.op_type = std::move(op);
  n.name = n.op_type + "_" + outs[0];
  n.inputs = std::move(ins);
  n.outputs = std::move(outs);
  n.attributes = std::move(attrs);
  return n;
}

// The feeds as the Session's input views (pointing into the feeds).
inline std::vector<om::TensorView> views(const std::vector<Feed>& feeds) {
  std::vector<om::TensorView> in(feeds.size());
  for (size_t i = 0; i < feeds.size(); ++i) {
    in[i].name = feeds[i].name.c_str();
    in[i].dtype = feeds[i].dtype;
    in[i].dims = feeds[i].dims.data();
    in[i].rank = feeds[i].dims.size();
    in[i].data = const_cast<uint8_t*>(feeds[i].bytes.data());
  }
  return in;
}

inline std::vector<Out> run(om::Session& s, const std::vector<Feed>& feeds) {
  std::vector<om::TensorView> in = views(feeds);
  std::vector<om::TensorView> out(s.output_names().size());
  s.run(in.data(), in.size(), out.data(), out.size());
  std::vector<Out> res;
  // Every kernel these tests reach also runs its work in sub-ranges, with the same bits.
  const std::string split = split_check::mismatch(s, in.data(), in.size(), out.data(), out.size());
  if (!split.empty()) throw std::runtime_error("rt::run: " + split);
  for (const auto& o : out) {
    Out r;
    r.dtype = o.dtype;
    r.dims.assign(o.dims, o.dims + o.rank);
    r.bytes.resize(size_t(o.numel()) * om::dtype_size(o.dtype));
    if (!r.bytes.empty()) std::memcpy(r.bytes.data(), o.data, r.bytes.size());
    res.push_back(std::move(r));
  }
  return res;
}

// A graph of one `op` node reading the graph inputs, then the initializers in order; its
// output is "y", or "y0", "y1", ... when it has several.
inline g::Graph single_node(const std::string& op, const std::vector<g::ValueInfo>& inputs, std::vector<g::Attribute> attrs = {},
                            std::vector<g::TensorData> consts = {}, size_t outs = 1) {
  g::Graph gr;
  gr.name = "single_node";
  std::vector<std::string> names;
  for (const auto& v : inputs) {
    gr.inputs.push_back(v);
    names.push_back(v.name);
  }
  for (const auto& c : consts) names.push_back(c.name);
  gr.initializers = std::move(consts);
  std::vector<std::string> out_names;
  for (size_t i = 0; i < outs; ++i) {
    out_names.push_back(outs == 1 ? std::string("y") : "y" + std::to_string(i));
    g::ValueInfo y;
    y.name = out_names.back();
    gr.outputs.push_back(y);
  }
  gr.nodes.push_back(node(op, names, out_names, std::move(attrs)));
  return gr;
}

inline std::vector<Out> run_graph(const g::Graph& graph, const std::vector<Feed>& feeds, om::SessionOptions opt = {}) {
  om::Session s(graph, opt);
  return run(s, feeds);
}

// Deterministic pseudo-random values in [lo, hi), the same bits on every machine: the volatile
// keeps compilers (GCC on AArch64 contracts by default) from fusing the scale and the offset
// into one fma, which would round differently.
inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -2.0f, float hi = 2.0f) {
  std::vector<float> v(n);
  uint64_t x = 0x9E3779B97F4A7C15ull ^ seed;
  for (auto& f : v) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    volatile float scaled = (hi - lo) * float(double(x >> 11) / double(1ull << 53));
    f = lo + scaled;
  }
  return v;
}

inline uint64_t fnv1a(const void* data, size_t n, uint64_t h = 0xcbf29ce484222325ull) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < n; ++i) { h ^= p[i]; h *= 0x100000001b3ull; }
  return h;
}

// One hash over every output's bytes, in order (the EXACT_HASH lines compared across machines).
inline uint64_t hash_outputs(const std::vector<Out>& outs) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const auto& o : outs) h = fnv1a(o.bytes.data(), o.bytes.size(), h);
  return h;
}

// How many nodes of `op` the graph holds (after a Session's passes: Session::graph()).
inline int count_of(const g::Graph& gr, const std::string& op) {
  int n = 0;
  for (const auto& node : gr.nodes) n += node.op_type == op;
  return n;
}

// f() with each ISA this CPU runs forced in turn (the scalar reference first); the active one
// restored afterwards.
template <typename F>
void for_each_isa(F f) {
  const om::kernels::Isa original = om::kernels::active_isa();
  for (om::kernels::Isa isa :
       {om::kernels::Isa::Scalar, om::kernels::Isa::Avx2, om::kernels::Isa::Avx512, om::kernels::Isa::Neon}) {
    if (!om::kernels::isa_supported(isa)) continue;
    om::kernels::force_isa(isa);
    f(isa);
  }
  om::kernels::force_isa(original);
}

// On `cur`: PaddleOCR's learnable affine and hard swish written out (Mul, Add, Add 3, Clip 0..6,
// Mul, Div 6), or one LeakyRelu; the graph output y.
inline void add_activation_chain(g::Graph& gr, const std::string& cur, bool single) {
  gr.outputs.push_back(value("y", DType::f32, {}));
  if (single) {
    gr.nodes.push_back(node("LeakyRelu", {cur}, {"y"}, {g::Attribute::of_float("alpha", 0.1f)}));
    return;
  }
  for (const auto& [name, v] : std::vector<std::pair<std::string, float>>{{"ca", 1.5f}, {"cb", -0.25f}, {"c3", 3}, {"c0", 0}, {"c6", 6}})
    gr.initializers.push_back(g::TensorData::from_vector(name, {}, std::vector<float>{v}));
  gr.nodes.push_back(node("Mul", {cur, "ca"}, {"t1"}));
  gr.nodes.push_back(node("Add", {"t1", "cb"}, {"t2"}));
  gr.nodes.push_back(node("Add", {"t2", "c3"}, {"t3"}));
  gr.nodes.push_back(node("Clip", {"t3", "c0", "c6"}, {"t4"}));
  gr.nodes.push_back(node("Mul", {"t2", "t4"}, {"t5"}));
  gr.nodes.push_back(node("Div", {"t5", "c6"}, {"y"}));
}

}  // namespace rt
