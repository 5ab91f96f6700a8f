// MatMul epilogue fusion into com.onemodel FusedMatMul.
//
// fuse_matmul_epilogue (Exact): MatMul(A, W) -> Add(., bias[N]) [-> Relu|Sigmoid|Tanh|Gelu]
// with W a 2-D f32 initializer. The GEMM kernel adds the bias and applies the activation after
// each output's full fma chain, which is exactly what the separate Add and activation compute
// (one rounding each, the same activation function), so no output bit changes.
//
// fuse_matmul_residual (FastOnly): MatMul(A, W) or a FusedMatMul (bias, activation) -> Add(., R)
// with R an activation. When R has the output's shape and there is no activation, the kernel
// starts each fma chain from R and adds the bias after it (R + chain + bias instead of
// (chain + bias) + R), which may change the last bits; hence Fast mode only.
#include <unordered_map>
#include <unordered_set>

#include "onemodel/graph/op_registry.h"
#include "onemodel/graph/ops/epilogue.h"
#include "onemodel/graph/passes/pass.h"

namespace om::graph::passes {
namespace {

bool default_domain(const Node& n) { return is_default_domain(n.domain); }

// Looked up once per pass, so each pass is one scan over the nodes: a rewrite replaces node i in
// place and marks the nodes it absorbs (always later ones) dropped; they are removed in one go
// at the end. Rewrites never change what an earlier node matches (a fused node reads the values
// its parts read and writes the value the last part wrote), so one scan makes exactly the
// rewrites the former restart-after-every-rewrite loop made, in linear time.
struct Index {
  std::unordered_map<std::string, std::vector<size_t>> readers;  // value -> node indices
  std::unordered_map<std::string, const TensorData*> inits;
  std::unordered_set<std::string> outputs, inputs;
  std::unordered_map<std::string, size_t> producer;  // value -> node index
  bool single_internal_use(const std::string& v) const {
    if (outputs.count(v)) return false;
    auto it = readers.find(v);
    return it != readers.end() && it->second.size() == 1;
  }
  size_t reader(const std::string& v) const { return readers.at(v)[0]; }
  const TensorData* initializer(const std::string& v) const {
    auto it = inits.find(v);
    return it == inits.end() ? nullptr : it->second;
  }
};

Index index_graph(const Graph& g) {
  Index u;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (const auto& in : g.nodes[i].inputs)
      if (!in.empty()) u.readers[in].push_back(i);  // a node reading a value twice counts twice
    for (const auto& out : g.nodes[i].outputs)
      if (!out.empty()) u.producer[out] = i;
  }
  for (const auto& t : g.initializers) u.inits.emplace(t.name, &t);
  for (const auto& o : g.outputs) u.outputs.insert(o.name);
  for (const auto& in : g.inputs) u.inputs.insert(in.name);
  return u;
}

// A MatMul whose right operand is a 2-D f32 initializer: its N, or -1.
int64_t weight_cols(const Index& x, const Node& n) {
  if (n.op_type != "MatMul" || !default_domain(n) || n.inputs.size() != 2 || n.outputs.size() != 1) return -1;
  const TensorData* w = x.initializer(n.inputs[1]);
  if (!w || w->dtype != DType::f32 || w->dims.size() != 2) return -1;
  if (x.inputs.count(w->name)) return -1;  // overridable by the caller: shape not fixed
  return w->dims[1];
}

// MatMul(A, W) with W a 2-D initializer, or a FusedMatMul without residual, output perm or
// scale (the residual is added last, to the product as the node lays it out).
bool residual_candidate(const Index& x, const Node& n) {
  if (weight_cols(x, n) >= 0) return true;
  // A FusedMatMul may come from a file too: it needs both operands (found by fuzz_session).
  if (n.op_type != "FusedMatMul" || n.domain != kOnemodelDomain || n.outputs.size() != 1 || n.inputs.size() < 2) return false;
  if (n.inputs.size() >= 4 && !n.inputs[3].empty()) return false;
  for (const auto& a : n.attributes)
    if (a.name == "perm_y" || a.name == "alpha") return false;
  return true;
}

const char* activation_name(const Node& n) {
  if (n.outputs.size() != 1) return nullptr;
  const EpilogueActivation* a = epilogue_activation_of(n);
  return a ? a->name : nullptr;
}


}  // namespace

Status fuse_matmul_epilogue(Graph& g, ArithmeticMode, size_t* changes) {
  const Index uses = index_graph(g);
  std::vector<char> dropped(g.nodes.size(), 0);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (dropped[i]) continue;
    const Node& mm = g.nodes[i];
    const int64_t N = weight_cols(uses, mm);
    if (N < 0 || !uses.single_internal_use(mm.outputs[0])) continue;
    const size_t ai = uses.reader(mm.outputs[0]);
    if (dropped[ai]) continue;
    const Node& add = g.nodes[ai];
    if (add.op_type != "Add" || !default_domain(add) || add.inputs.size() != 2 || add.outputs.size() != 1 ||
        add.inputs[0] == add.inputs[1])
      continue;  // (an Add without an output can come from a file: found by fuzz_session)
    const std::string& other = add.inputs[0] == mm.outputs[0] ? add.inputs[1] : add.inputs[0];
    const TensorData* bias = uses.initializer(other);
    if (!bias || bias->dtype != DType::f32 || bias->dims.size() != 1 || bias->dims[0] != N) continue;
    if (uses.inputs.count(bias->name)) continue;  // overridable
    Node fused;
    fused.op_type = "FusedMatMul";
    fused.domain = kOnemodelDomain;
    fused.name = mm.name;
    fused.inputs = {mm.inputs[0], mm.inputs[1], other};
    std::string out = add.outputs[0];
    std::string act = "Identity";
    dropped[ai] = 1;
    if (uses.single_internal_use(add.outputs[0])) {
      const size_t ci = uses.reader(add.outputs[0]);
      if (const char* a = activation_name(g.nodes[ci]); a && !dropped[ci]) {
        act = a;
        out = g.nodes[ci].outputs[0];
        dropped[ci] = 1;
      }
    }
    fused.outputs = {out};
    fused.attributes.push_back(Attribute::of_string("activation", act));
    g.nodes[i] = std::move(fused);
    ++*changes;
  }
  remove_dropped(g, dropped);
  return Status::ok();
}

Status fuse_matmul_residual(Graph& g, ArithmeticMode, size_t* changes) {
  Index uses = index_graph(g);
  std::vector<char> dropped(g.nodes.size(), 0);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (dropped[i]) continue;
    const Node& mm = g.nodes[i];
    if (!residual_candidate(uses, mm) || !uses.single_internal_use(mm.outputs[0])) continue;
    const size_t ai = uses.reader(mm.outputs[0]);
    if (dropped[ai]) continue;
    const Node& add = g.nodes[ai];
    if (add.op_type != "Add" || !default_domain(add) || add.inputs.size() != 2 || add.outputs.size() != 1 ||
        add.inputs[0] == add.inputs[1])
      continue;  // (an Add without an output can come from a file: found by fuzz_session)
    const std::string& other = add.inputs[0] == mm.outputs[0] ? add.inputs[1] : add.inputs[0];
    if (uses.initializer(other)) continue;  // constants are the epilogue pass's business
    // The residual must be defined before the MatMul, where the fused node will stand.
    auto def = uses.producer.find(other);
    const bool defined_before = def == uses.producer.end() ? uses.inputs.count(other) > 0 : def->second < i;
    if (!defined_before) continue;
    Node fused = mm;  // a FusedMatMul keeps its bias and activation (added after them)
    fused.op_type = "FusedMatMul";
    fused.domain = kOnemodelDomain;
    fused.inputs = {mm.inputs[0], mm.inputs[1], mm.inputs.size() > 2 ? mm.inputs[2] : "", other};
    fused.outputs = {add.outputs[0]};
    uses.producer[add.outputs[0]] = i;  // now written where the MatMul stood
    dropped[ai] = 1;
    g.nodes[i] = std::move(fused);
    ++*changes;
  }
  remove_dropped(g, dropped);
  return Status::ok();
}

}  // namespace om::graph::passes
