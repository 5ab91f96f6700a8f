// Layout and scale folding into com.onemodel FusedMatMul (both Exact; docs/graph-passes.md).
//
// fold_transposes_into_matmul: a Transpose feeding a MatMul operand becomes that operand's
// perm_a / perm_b (the GEMM reads it through row and column strides instead of a copy), and a
// Transpose of the product that keeps the last axis last becomes perm_y (rows are written with
// a stride). Consecutive Transposes are composed first. Each output element is still the same
// fma chain over the same values in k order, and the kernel's exact chain does not depend on
// where the operands sit in memory, so no bit changes.
//
// fold_matmul_scale: MatMul -> Mul(., scalar constant) becomes the node's alpha, applied after
// the whole epilogue as one multiplication per output — the very rounding the Mul made.
#include "onemodel/graph/op_registry.h"
#include "onemodel/graph/passes/pass.h"

namespace om::graph::passes {
namespace {

bool default_domain(const Node& n) { return is_default_domain(n.domain); }

// A Transpose of at least two axes (a GEMM operand or product): its perm.
const std::vector<int64_t>* matrix_perm(const Node& n) {
  const std::vector<int64_t>* p = transpose_perm(n);
  return p && p->size() >= 2 ? p : nullptr;
}

bool is_matmul(const Node& n) {
  if (n.outputs.size() != 1) return false;
  if (n.op_type == "MatMul" && default_domain(n)) return n.inputs.size() == 2;
  return n.op_type == "FusedMatMul" && n.domain == kOnemodelDomain && n.inputs.size() >= 2;  // may come from a file
}

bool has_attr(const Node& n, const char* name) {
  for (const auto& a : n.attributes)
    if (a.name == name) return true;
  return false;
}

bool has_residual(const Node& n) { return n.inputs.size() >= 4 && !n.inputs[3].empty(); }

void to_fused(Node& n) {
  if (n.op_type == "FusedMatMul") return;
  n.op_type = "FusedMatMul";
  n.domain = kOnemodelDomain;
}

}  // namespace

// One scan in node order. Every rewrite at node i drops a node that only i used (an earlier
// Transpose feeding it, or the later Transpose of its product) through the def-use view, so
// later nodes see the rewritten graph: a chain of Transposes composes in one pass, and a
// MatMul takes both operand perms and perm_y in one visit. Linear in the graph.
Status fold_transposes_into_matmul(Graph& g, ArithmeticMode, size_t* changes) {
  return rewrite_scan(g, changes, [&g](DefUse& u, size_t i) -> size_t {
    size_t made = 0;
    Node& n = g.nodes[i];
    // Transpose(Transpose(v, p1), p2) = Transpose(v, p1[p2[i]]).
    if (const std::vector<int64_t>* p2 = matrix_perm(n)) {
      const Node* t0 = u.producer_node(n.inputs[0]);
      const std::vector<int64_t>* p1 = t0 ? matrix_perm(*t0) : nullptr;
      if (p1 && p1->size() == p2->size() && u.single_internal_use(n.inputs[0])) {
        const std::vector<int64_t> q = compose_perms(*p1, *p2);
        u.drop(u.producer(n.inputs[0]));
        u.set_input(i, 0, t0->inputs[0]);
        for (auto& a : n.attributes)
          if (a.name == "perm") a.ints = q;
        ++made;
      }
      return made;
    }
    if (!is_matmul(n)) return made;
    // Operands.
    for (size_t j = 0; j < 2; ++j) {
      const char* attr = j == 0 ? "perm_a" : "perm_b";
      if (has_attr(n, attr)) continue;
      const Node* t = u.producer_node(n.inputs[j]);
      const std::vector<int64_t>* p = t ? matrix_perm(*t) : nullptr;
      if (!p || !u.single_internal_use(n.inputs[j])) continue;
      if (n.inputs[0] == n.inputs[1]) continue;  // one Transpose read twice: keep it simple
      to_fused(n);
      u.drop(u.producer(n.inputs[j]));
      u.set_input(i, j, t->inputs[0]);
      n.attributes.push_back(Attribute::of_ints(attr, *p));
      ++made;
    }
    // The product's Transpose, when the last axis stays last.
    if (has_attr(n, "perm_y") || has_residual(n) || !u.single_internal_use(n.outputs[0])) return made;
    const size_t ri = u.reader(n.outputs[0]);
    const std::vector<int64_t>* p = matrix_perm(g.nodes[ri]);
    if (!p || p->back() != int64_t(p->size() - 1)) return made;
    to_fused(n);
    u.drop(ri);
    u.set_output(i, 0, g.nodes[ri].outputs[0]);
    n.attributes.push_back(Attribute::of_ints("perm_y", *p));
    return made + 1;
  });
}

// One scan (a rewrite changes node i and drops a later Mul; nothing an earlier node matches
// changes), the dropped nodes removed at the end: linear in the graph.
Status fold_matmul_scale(Graph& g, ArithmeticMode, size_t* changes) {
  return rewrite_scan(g, changes, [&g](DefUse& u, size_t i) -> size_t {
    Node& n = g.nodes[i];
    // A chain (fuse_matmul_chain; or from a file) runs after alpha: the Mul would come too late.
    if (!is_matmul(n) || has_residual(n) || has_attr(n, "alpha") || has_attr(n, "ops") || !u.single_internal_use(n.outputs[0]))
      return 0;
    const size_t mi = u.reader(n.outputs[0]);
    const Node& mul = g.nodes[mi];
    if (mul.op_type != "Mul" || !default_domain(mul) || mul.inputs.size() != 2 || mul.outputs.size() != 1 ||
        mul.inputs[0] == mul.inputs[1])
      return 0;
    const std::string& other = mul.inputs[0] == n.outputs[0] ? mul.inputs[1] : mul.inputs[0];
    const TensorData* s = u.constant(other);
    // Rank 0 or [1] only: a higher-rank scalar would raise the product's rank.
    if (!s || s->dtype != DType::f32 || s->numel() != 1 || s->dims.size() > 1 || s->nbytes < sizeof(float)) return 0;
    to_fused(n);
    u.drop(mi);
    u.set_output(i, 0, mul.outputs[0]);
    n.attributes.push_back(Attribute::of_float("alpha", s->data<float>()[0]));
    return 1;
  });
}

}  // namespace om::graph::passes
