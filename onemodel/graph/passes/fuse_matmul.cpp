// MatMul epilogue fusion into com.onemodel FusedMatMul.
//
// fuse_matmul_epilogue (Exact): MatMul(A, W) -> Add(., bias[N]) [-> Relu|Sigmoid|Tanh|Gelu]
// with W a 2-D f32 initializer, and Gemm(A, W[, bias]) [-> activation] (PyTorch's Linear). The
// GEMM kernel adds the bias and applies the activation after each output's full fma chain,
// which is exactly what the separate Add and activation compute (one rounding each, the same
// activation function), so no output bit changes. A Gemm becomes a FusedMatMul so that the
// later passes (transposes, scale, residual, chains) apply to it as to a MatMul.
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

// Gemm(A, W[, C]) with W a 2-D f32 constant, and C absent (or beta 0, so the kernel ignores it)
// or a constant bias [N] with alpha and beta 1: the FusedMatMul computing it (transA and transB
// as perm_a and perm_b, alpha kept); else false. Gemm's kernel and FusedMatMul's make the same
// calls (the product, the bias in the GEMM epilogue, then alpha per element), so no bit changes.
// perm_a is written even when it is the identity: FusedMatMul then refuses an A that is not 2-D,
// as Gemm does.
bool gemm_product(const DefUse& u, const Node& n, Node* out) {
  if (n.op_type != "Gemm" || !default_domain(n) || n.inputs.size() < 2 || n.outputs.size() != 1) return false;
  const TensorData* w = u.constant(n.inputs[1]);
  if (!w || w->dtype != DType::f32 || w->dims.size() != 2) return false;
  const bool ta = n.attr_int("transA", 0) != 0, tb = n.attr_int("transB", 0) != 0;
  const float alpha = n.attr_float("alpha", 1.0f), beta = n.attr_float("beta", 1.0f);
  const bool has_c = n.inputs.size() > 2 && !n.inputs[2].empty() && beta != 0.0f;
  if (has_c) {
    const TensorData* c = u.constant(n.inputs[2]);
    if (!c || c->dtype != DType::f32 || c->dims.size() != 1 || c->dims[0] != (tb ? w->dims[0] : w->dims[1]) ||
        alpha != 1.0f || beta != 1.0f)
      return false;
  }
  Node& f = *out;
  f.op_type = "FusedMatMul";
  f.domain = kOnemodelDomain;
  f.name = n.name;
  f.inputs = {n.inputs[0], n.inputs[1]};
  if (has_c) f.inputs.push_back(n.inputs[2]);
  f.outputs = n.outputs;
  f.attributes.push_back(Attribute::of_ints("perm_a", ta ? std::vector<int64_t>{1, 0} : std::vector<int64_t>{0, 1}));
  if (tb) f.attributes.push_back(Attribute::of_ints("perm_b", {1, 0}));
  if (alpha != 1.0f) f.attributes.push_back(Attribute::of_float("alpha", alpha));
  return true;
}

// MatMul(A, W) -> Add(., bias[N]) with W a 2-D f32 constant: the FusedMatMul with the bias (the
// Add dropped); else false.
bool matmul_bias(const Graph& g, DefUse& u, size_t i, Node* out) {
  const Node& mm = g.nodes[i];
  const int64_t N = weight_cols(u, mm);
  if (N < 0) return false;
  const std::string* other = nullptr;
  const size_t ai = added_to(g, u, i, &other);
  if (ai == DefUse::kNone) return false;
  const TensorData* bias = u.constant(*other);
  if (!bias || bias->dtype != DType::f32 || bias->dims.size() != 1 || bias->dims[0] != N) return false;
  Node& f = *out;
  f.op_type = "FusedMatMul";
  f.domain = kOnemodelDomain;
  f.name = mm.name;
  f.inputs = {mm.inputs[0], mm.inputs[1], *other};
  f.outputs = g.nodes[ai].outputs;
  u.drop(ai);
  return true;
}

}  // namespace

// Each pass is one scan: a rewrite replaces node i in place and drops the nodes it absorbs
// (always later ones). Rewrites never change what an earlier node matches (a fused node reads
// the values its parts read and writes the value the last part wrote), so one scan makes exactly
// the rewrites the former restart-after-every-rewrite loop made, in linear time.

Status fuse_matmul_epilogue(Graph& g, ArithmeticMode, size_t* changes) {
  return rewrite_scan(g, changes, [&g](DefUse& u, size_t i) -> size_t {
    Node fused;
    if (!gemm_product(u, g.nodes[i], &fused) && !matmul_bias(g, u, i, &fused)) return 0;
    // FusedMatMul applies its activation before alpha, while the node after a Gemm sees alpha's
    // products: an activation joins only without alpha.
    std::string act = "Identity";
    const std::string& y = fused.outputs[0];
    if (!fused.attr("alpha") && u.single_internal_use(y)) {
      const size_t ci = u.reader(y);
      if (const char* a = activation_name(g.nodes[ci])) {
        act = a;
        fused.outputs = g.nodes[ci].outputs;
        u.drop(ci);
      }
    }
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
