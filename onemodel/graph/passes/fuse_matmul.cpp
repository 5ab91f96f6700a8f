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
//
// fuse_matmul_chain (Exact): MatMul or FusedMatMul (without a chain) -> FusedElementwise, the
// product read only by the chain and not a graph output, becomes FusedMatMul with the chain's
// ops, operands and consts: the kernel runs the steps on each block of output rows just written
// (after the bias, activation, scale and residual), while they are in cache, instead of a pass
// over the whole output. Each step is f32_chain's, the separate node's bits. A chain whose
// constants broadcast the output to a higher rank stays a node.
#include "onemodel/graph/op_registry.h"
#include "onemodel/graph/ops/epilogue.h"
#include "onemodel/graph/passes/pass.h"

namespace om::graph::passes {
namespace {

bool default_domain(const Node& n) { return is_default_domain(n.domain); }

// A MatMul whose right operand is a 2-D f32 initializer: its N, or -1.
int64_t weight_cols(const DefUse& u, const Node& n) {
  if (n.op_type != "MatMul" || !default_domain(n) || n.inputs.size() != 2 || n.outputs.size() != 1) return -1;
  const TensorData* w = u.constant(n.inputs[1]);  // an overridable one has no fixed shape
  if (!w || w->dtype != DType::f32 || w->dims.size() != 2) return -1;
  return w->dims[1];
}

// MatMul(A, W) with W a 2-D initializer, or a FusedMatMul without residual, output perm or
// scale (the residual is added last, to the product as the node lays it out).
bool residual_candidate(const DefUse& u, const Node& n) {
  if (weight_cols(u, n) >= 0) return true;
  // A FusedMatMul may come from a file too: it needs both operands (found by fuzz_session).
  if (n.op_type != "FusedMatMul" || n.domain != kOnemodelDomain || n.outputs.size() != 1 || n.inputs.size() < 2) return false;
  if (n.inputs.size() >= 4 && !n.inputs[3].empty()) return false;
  for (const auto& a : n.attributes)
    if (a.name == "perm_y" || a.name == "alpha" || a.name == "ops") return false;  // (a chain runs after R)
  return true;
}

const char* activation_name(const Node& n) {
  if (n.outputs.size() != 1) return nullptr;
  const EpilogueActivation* a = epilogue_activation_of(n);
  return a ? a->name : nullptr;
}

// The Add that alone reads node i's output (not a graph output), or kNone; `other` its other operand.
size_t added_to(const Graph& g, const DefUse& u, size_t i, const std::string** other) {
  const std::string& y = g.nodes[i].outputs[0];
  if (!u.single_internal_use(y)) return DefUse::kNone;
  const size_t ai = u.reader(y);
  const Node& add = g.nodes[ai];
  if (add.op_type != "Add" || !default_domain(add) || add.inputs.size() != 2 || add.outputs.size() != 1 ||
      add.inputs[0] == add.inputs[1])
    return DefUse::kNone;  // (an Add without an output can come from a file: found by fuzz_session)
  *other = add.inputs[0] == y ? &add.inputs[1] : &add.inputs[0];
  return ai;
}

}  // namespace

// Each pass is one scan: a rewrite replaces node i in place and drops the nodes it absorbs
// (always later ones). Rewrites never change what an earlier node matches (a fused node reads
// the values its parts read and writes the value the last part wrote), so one scan makes exactly
// the rewrites the former restart-after-every-rewrite loop made, in linear time.

Status fuse_matmul_epilogue(Graph& g, ArithmeticMode, size_t* changes) {
  return rewrite_scan(g, changes, [&g](DefUse& u, size_t i) -> size_t {
    const Node& mm = g.nodes[i];
    const int64_t N = weight_cols(u, mm);
    if (N < 0) return 0;
    const std::string* other_in = nullptr;
    const size_t ai = added_to(g, u, i, &other_in);
    if (ai == DefUse::kNone) return 0;
    const Node& add = g.nodes[ai];
    const std::string& other = *other_in;
    const TensorData* bias = u.constant(other);
    if (!bias || bias->dtype != DType::f32 || bias->dims.size() != 1 || bias->dims[0] != N) return 0;
    Node fused;
    fused.op_type = "FusedMatMul";
    fused.domain = kOnemodelDomain;
    fused.name = mm.name;
    fused.inputs = {mm.inputs[0], mm.inputs[1], other};
    std::string out = add.outputs[0];
    std::string act = "Identity";
    u.drop(ai);
    if (u.single_internal_use(add.outputs[0])) {
      const size_t ci = u.reader(add.outputs[0]);
      if (const char* a = activation_name(g.nodes[ci])) {
        act = a;
        out = g.nodes[ci].outputs[0];
        u.drop(ci);
      }
    }
    fused.outputs = {out};
    fused.attributes.push_back(Attribute::of_string("activation", act));
    u.replace(i, std::move(fused));
    return 1;
  });
}

Status fuse_matmul_residual(Graph& g, ArithmeticMode, size_t* changes) {
  return rewrite_scan(g, changes, [&g](DefUse& u, size_t i) -> size_t {
    const Node& mm = g.nodes[i];
    if (!residual_candidate(u, mm)) return 0;
    const std::string* other_in = nullptr;
    const size_t ai = added_to(g, u, i, &other_in);
    if (ai == DefUse::kNone) return 0;
    const Node& add = g.nodes[ai];
    const std::string& other = *other_in;
    if (u.initializer(other)) return 0;  // constants are the epilogue pass's business
    // The residual must be defined before the MatMul, where the fused node will stand.
    const size_t def = u.producer(other);
    if (def == DefUse::kNone ? !u.is_input(other) : def >= i) return 0;
    Node fused = mm;  // a FusedMatMul keeps its bias and activation (added after them)
    fused.op_type = "FusedMatMul";
    fused.domain = kOnemodelDomain;
    fused.inputs = {mm.inputs[0], mm.inputs[1], mm.inputs.size() > 2 ? mm.inputs[2] : "", other};
    fused.outputs = {add.outputs[0]};
    u.drop(ai);
    u.replace(i, std::move(fused));
    return 1;
  });
}

Status fuse_matmul_chain(Graph& g, ArithmeticMode, size_t* changes) {
  return rewrite_scan(g, changes, [&g](DefUse& u, size_t i) -> size_t {
    const Node& mm = g.nodes[i];
    const bool plain = mm.op_type == "MatMul" && default_domain(mm) && mm.inputs.size() == 2;
    const bool fused = mm.op_type == "FusedMatMul" && mm.domain == kOnemodelDomain && mm.inputs.size() >= 2;
    if ((!plain && !fused) || mm.outputs.size() != 1 || mm.attr("ops") || !u.single_internal_use(mm.outputs[0])) return 0;
    const Node& chain = g.nodes[u.reader(mm.outputs[0])];
    if (chain.domain != kOnemodelDomain || chain.op_type != "FusedElementwise" || chain.inputs.size() != 1 ||
        chain.outputs.size() != 1 || chain.attr_int("rank", 0) > 0)
      return 0;
    return absorb_chain(g, u, i, u.reader(mm.outputs[0]), "FusedMatMul");
  });
}

}  // namespace om::graph::passes
