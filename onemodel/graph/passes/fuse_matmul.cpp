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

#include "onemodel/graph/op_registry.h"
#include "onemodel/graph/ops/epilogue.h"
#include "onemodel/graph/passes/pass.h"

namespace om::graph::passes {
namespace {

bool default_domain(const Node& n) { return is_default_domain(n.domain); }

struct Uses {
  std::unordered_map<std::string, std::vector<size_t>> readers;  // value -> node indices
  const Graph* g;
  bool single_internal_use(const std::string& v) const {
    for (const auto& o : g->outputs)
      if (o.name == v) return false;
    auto it = readers.find(v);
    return it != readers.end() && it->second.size() == 1;
  }
  size_t reader(const std::string& v) const { return readers.at(v)[0]; }
};

Uses count_uses(const Graph& g) {
  Uses u;
  u.g = &g;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& in : g.nodes[i].inputs)
      if (!in.empty()) u.readers[in].push_back(i);  // a node reading a value twice counts twice
  return u;
}

// A MatMul whose right operand is a 2-D f32 initializer: its N, or -1.
int64_t weight_cols(const Graph& g, const Node& n) {
  if (n.op_type != "MatMul" || !default_domain(n) || n.inputs.size() != 2 || n.outputs.size() != 1) return -1;
  const TensorData* w = g.find_initializer(n.inputs[1]);
  if (!w || w->dtype != DType::f32 || w->dims.size() != 2) return -1;
  for (const auto& in : g.inputs)
    if (in.name == w->name) return -1;  // overridable by the caller: shape not fixed
  return w->dims[1];
}

// MatMul(A, W) with W a 2-D initializer, or a FusedMatMul without residual, output perm or
// scale (the residual is added last, to the product as the node lays it out).
bool residual_candidate(const Graph& g, const Node& n) {
  if (weight_cols(g, n) >= 0) return true;
  if (n.op_type != "FusedMatMul" || n.domain != kOnemodelDomain || n.outputs.size() != 1) return false;
  if (n.inputs.size() >= 4 && !n.inputs[3].empty()) return false;
  for (const auto& a : n.attributes)
    if (a.name == "perm_y" || a.name == "alpha") return false;
  return true;
}

const char* activation_name(const Node& n) {
  const EpilogueActivation* a = epilogue_activation_of(n);
  return a ? a->name : nullptr;
}

// Rewrites: nodes in `drop` disappear, nodes[at] becomes `fused`.
void rewrite(Graph& g, size_t at, Node fused, const std::vector<size_t>& drop) {
  g.nodes[at] = std::move(fused);
  std::vector<Node> kept;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    bool dropped = false;
    for (size_t d : drop) dropped = dropped || d == i;
    if (!dropped) kept.push_back(std::move(g.nodes[i]));
  }
  g.nodes = std::move(kept);
}

}  // namespace

Status fuse_matmul_epilogue(Graph& g, ArithmeticMode, size_t* changes) {
  for (bool again = true; again;) {
    again = false;
    const Uses uses = count_uses(g);
    for (size_t i = 0; i < g.nodes.size() && !again; ++i) {
      const Node& mm = g.nodes[i];
      const int64_t N = weight_cols(g, mm);
      if (N < 0 || !uses.single_internal_use(mm.outputs[0])) continue;
      const size_t ai = uses.reader(mm.outputs[0]);
      const Node& add = g.nodes[ai];
      if (add.op_type != "Add" || !default_domain(add) || add.inputs.size() != 2 || add.inputs[0] == add.inputs[1]) continue;
      const std::string& other = add.inputs[0] == mm.outputs[0] ? add.inputs[1] : add.inputs[0];
      const TensorData* bias = g.find_initializer(other);
      if (!bias || bias->dtype != DType::f32 || bias->dims.size() != 1 || bias->dims[0] != N) continue;
      bool overridable = false;
      for (const auto& in : g.inputs) overridable = overridable || in.name == bias->name;
      if (overridable) continue;
      Node fused;
      fused.op_type = "FusedMatMul";
      fused.domain = kOnemodelDomain;
      fused.name = mm.name;
      fused.inputs = {mm.inputs[0], mm.inputs[1], other};
      std::vector<size_t> drop{ai};
      std::string out = add.outputs[0];
      std::string act = "Identity";
      if (uses.single_internal_use(add.outputs[0])) {
        const size_t ci = uses.reader(add.outputs[0]);
        if (const char* a = activation_name(g.nodes[ci])) {
          act = a;
          out = g.nodes[ci].outputs[0];
          drop.push_back(ci);
        }
      }
      fused.outputs = {out};
      fused.attributes.push_back(Attribute::of_string("activation", act));
      rewrite(g, i, std::move(fused), drop);
      ++*changes;
      again = true;
    }
  }
  return Status::ok();
}

Status fuse_matmul_residual(Graph& g, ArithmeticMode, size_t* changes) {
  for (bool again = true; again;) {
    again = false;
    const Uses uses = count_uses(g);
    for (size_t i = 0; i < g.nodes.size() && !again; ++i) {
      const Node& mm = g.nodes[i];
      if (!residual_candidate(g, mm) || !uses.single_internal_use(mm.outputs[0])) continue;
      const size_t ai = uses.reader(mm.outputs[0]);
      const Node& add = g.nodes[ai];
      if (add.op_type != "Add" || !default_domain(add) || add.inputs.size() != 2 || add.inputs[0] == add.inputs[1]) continue;
      const std::string& other = add.inputs[0] == mm.outputs[0] ? add.inputs[1] : add.inputs[0];
      if (g.find_initializer(other)) continue;  // constants are the epilogue pass's business
      // The residual must be defined before the MatMul, where the fused node will stand.
      bool defined_before = false;
      for (const auto& in : g.inputs) defined_before = defined_before || in.name == other;
      for (size_t j = 0; j < i && !defined_before; ++j)
        for (const auto& o : g.nodes[j].outputs) defined_before = defined_before || o == other;
      if (!defined_before) continue;
      Node fused = mm;  // a FusedMatMul keeps its bias and activation (added after them)
      fused.op_type = "FusedMatMul";
      fused.domain = kOnemodelDomain;
      fused.inputs = {mm.inputs[0], mm.inputs[1], mm.inputs.size() > 2 ? mm.inputs[2] : "", other};
      fused.outputs = {add.outputs[0]};
      rewrite(g, i, std::move(fused), {ai});
      ++*changes;
      again = true;
    }
  }
  return Status::ok();
}

}  // namespace om::graph::passes
