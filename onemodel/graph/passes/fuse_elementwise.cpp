// fuse_elementwise_chains (Exact): a chain of f32 elementwise nodes over one tensor becomes one
// com.onemodel FusedElementwise node (graph/ops/elementwise_chain.h), run as one pass over
// memory instead of one per node. Exported models write activations out in such chains —
// PaddleOCR's hard swish after a learnable affine: Mul(x, a), Add(., b), Add(., 3), Clip(., 0, 6),
// Mul(., that), Div(., 6), Mul(., c), Add(., d): eight passes over each convolution's output.
//
// A chain starts at an eligible node reading one tensor X; it grows by the earliest node (in
// node order) that reads one of its values, while that node is eligible and reads only X, the
// chain's values and scalar constants; then it is cut back to its longest prefix whose
// intermediate values are read only inside the prefix and are not graph outputs. Chains of one
// node stay as they are, but for one after a convolution (fuse_conv_chain takes it). Eligible:
// Add, Sub, Mul, Div, and Max and Min of two operands (f32: one operand a one-element f32
// constant, or both the chain's values), Relu, Sigmoid,
// Tanh, Clip (constant scalar f32 bounds, at least one), LeakyRelu, HardSigmoid, HardSwish (and
// tf2onnx's LeakyRelu then Max(x, constant) after a convolution). Each step is computed as its
// node computes it, so no output bit changes.
#include <algorithm>
#include <cstring>

#include "onemodel/graph/ops/elementwise_chain.h"
#include "onemodel/graph/op_registry.h"
#include "onemodel/graph/passes/pass.h"

namespace om::graph::passes {
namespace {

using ops::ChainOp;

struct Step {
  ChainOp op;
  int64_t a = ops::kChainNone, b = ops::kChainNone;
  float c0 = 0.0f, c1 = 0.0f;
};

// A scalar f32 constant (one element, any rank up to kMaxRank: tf2onnx writes [1, 1, 1, 1]): its
// value and rank.
bool scalar_constant(const DefUse& u, const std::string& v, float* value, int64_t* rank) {
  const TensorData* t = u.constant(v);
  if (!t || t->dtype != DType::f32 || t->dims.size() > kMaxRank || t->numel() != 1 || t->nbytes < sizeof(float))
    return false;
  std::memcpy(value, t->bytes, sizeof(float));
  *rank = int64_t(t->dims.size());
  return true;
}

struct OpName {
  const char* type;
  ChainOp op;
};
constexpr OpName kEligible[] = {{"Add", ChainOp::Add},         {"Sub", ChainOp::Sub},
                                {"Mul", ChainOp::Mul},         {"Div", ChainOp::Div},
                                {"Relu", ChainOp::Relu},       {"Sigmoid", ChainOp::Sigmoid},
                                {"Tanh", ChainOp::Tanh},       {"Clip", ChainOp::Clip},
                                {"LeakyRelu", ChainOp::LeakyRelu}, {"HardSigmoid", ChainOp::HardSigmoid},
                                {"HardSwish", ChainOp::HardSwish}, {"Max", ChainOp::Max},
                                {"Min", ChainOp::Min}};

// Node n as a step over the chain's values (`values[k]`: the name of value k), or false. With no
// values yet (the chain's first node) its one tensor operand becomes X (value 0, *x).
bool as_step(const DefUse& u, const Node& n, std::vector<std::string>& values, std::string* x, Step* st) {
  if (!is_default_domain(n.domain) || n.outputs.size() != 1 || n.outputs[0].empty()) return false;
  const OpName* e = std::find_if(std::begin(kEligible), std::end(kEligible), [&](const OpName& o) { return n.op_type == o.type; });
  if (e == std::end(kEligible)) return false;
  st->op = e->op;
  auto operand = [&](const std::string& v, int64_t* ref) {
    if (v.empty()) return false;
    if (auto it = std::find(values.begin(), values.end(), v); it != values.end()) return *ref = it - values.begin(), true;
    if (values.empty() && u.constant(v) == nullptr) {  // the chain's input
      values.push_back(v);
      *x = v;
      return *ref = 0, true;
    }
    return false;
  };
  if (ops::chain_op_binary(st->op)) {
    if (n.inputs.size() != 2) return false;
    int64_t r = 0;
    for (int k = 0; k < 2; ++k) {
      int64_t& ref = k == 0 ? st->a : st->b;
      if (scalar_constant(u, n.inputs[size_t(k)], &st->c0, &r)) {
        if (st->a == ops::kChainConstant) return false;  // two constants: left to constant folding
        ref = ops::kChainConstant;
      } else if (!operand(n.inputs[size_t(k)], &ref)) {
        return false;
      }
    }
    return true;
  }
  if (n.inputs.empty() || !operand(n.inputs[0], &st->a)) return false;
  switch (st->op) {
    case ChainOp::Clip: {
      if (n.inputs.size() > 3) return false;
      st->c0 = -__builtin_inff();
      st->c1 = __builtin_inff();
      int64_t r = 0;
      bool bound = false;  // an f32 bound: Clip also takes integers, and without one it is not fixed to f32
      for (size_t k = 1; k < n.inputs.size(); ++k) {
        if (n.inputs[k].empty()) continue;
        if (!scalar_constant(u, n.inputs[k], k == 1 ? &st->c0 : &st->c1, &r)) return false;
        bound = true;
      }
      return bound;
    }
    case ChainOp::LeakyRelu: st->c0 = n.attr_float("alpha", 0.01f); break;
    case ChainOp::HardSigmoid:
      st->c0 = n.attr_float("alpha", 0.2f);
      st->c1 = n.attr_float("beta", 0.5f);
      break;
    default: break;
  }
  return n.inputs.size() == 1;
}

}  // namespace

Status fuse_elementwise_chains(Graph& g, ArithmeticMode, size_t* changes) {
  return rewrite_scan(g, changes, [&g](DefUse& u, size_t i) -> size_t {
    std::vector<std::string> values;  // value k's name: X, then each step's result
    std::string x;
    std::vector<Step> steps;
    std::vector<size_t> nodes;  // the chain's nodes, in node order
    Step st;
    if (!as_step(u, g.nodes[i], values, &x, &st) || x.empty()) return 0;
    steps.push_back(st);
    nodes.push_back(i);
    values.push_back(g.nodes[i].outputs[0]);
    while (steps.size() < size_t(ops::kChainMaxSteps)) {
      size_t next = SIZE_MAX;  // the earliest node outside the chain reading one of its results
      for (size_t k : nodes)
        for (size_t r : u.readers(g.nodes[k].outputs[0]))
          if (r > nodes.back() && !u.dropped(r)) next = std::min(next, r);
      if (next == SIZE_MAX) break;
      Step s;
      std::string unused;
      if (!as_step(u, g.nodes[next], values, &unused, &s)) break;
      steps.push_back(s);
      nodes.push_back(next);
      values.push_back(g.nodes[next].outputs[0]);
    }
    // The longest prefix whose values before its last are read only inside it.
    size_t len = nodes.size();
    for (; len >= 2; --len) {
      bool inside = true;
      for (size_t k = 0; inside && k + 1 < len; ++k) {
        const std::string& v = g.nodes[nodes[k]].outputs[0];
        if (u.is_output(v)) inside = false;
        for (size_t r : u.readers(v))
          if (std::find(nodes.begin(), nodes.begin() + ptrdiff_t(len), r) == nodes.begin() + ptrdiff_t(len)) inside = false;
      }
      if (inside) break;
    }
    // Only f32 chains: a step that takes f32 only (a map, or an f32 constant operand) fixes the
    // one dtype every value of the chain shares; a chain of value-by-value arithmetic alone may
    // be integer and stays as it is.
    bool f32 = false;
    for (size_t k = 0; k < len; ++k)
      f32 |= !ops::chain_op_binary(steps[k].op) || steps[k].a == ops::kChainConstant || steps[k].b == ops::kChainConstant;
    // One node alone stays as it is, unless a convolution or a matrix product writes X for it
    // alone: fuse_conv_chain or fuse_matmul_chain then runs the step in that node's epilogue.
    const size_t def = u.producer(x);
    const bool after_product = def != DefUse::kNone && u.single_internal_use(x) && [&n = g.nodes[def]] {
      if (is_default_domain(n.domain)) return n.op_type == "Conv" || n.op_type == "MatMul";
      return n.domain == kOnemodelDomain && (n.op_type == "FusedConv" || n.op_type == "FusedMatMul");
    }();
    if (len < (after_product ? 1u : 2u) || !f32) return 0;
    Node fused;
    fused.op_type = "FusedElementwise";
    fused.domain = kOnemodelDomain;
    fused.name = g.nodes[i].name;
    fused.inputs = {x};
    fused.outputs = {g.nodes[nodes[len - 1]].outputs[0]};
    std::vector<int64_t> op_codes, operands;
    std::vector<float> consts;
    int64_t out_rank = 0;
    for (size_t k = 0; k < len; ++k) {
      op_codes.push_back(int64_t(steps[k].op));
      operands.insert(operands.end(), {steps[k].a, steps[k].b});
      consts.insert(consts.end(), {steps[k].c0, steps[k].c1});
      if (ops::chain_op_binary(steps[k].op))  // a constant of higher rank than X broadcasts X to it
        for (const std::string& in : g.nodes[nodes[k]].inputs) {
          float v;
          int64_t r = 0;
          if (scalar_constant(u, in, &v, &r)) out_rank = std::max(out_rank, r);
        }
    }
    fused.attributes.push_back(Attribute::of_ints("ops", op_codes));
    fused.attributes.push_back(Attribute::of_ints("operands", operands));
    fused.attributes.push_back(Attribute::of_floats("consts", consts));
    if (out_rank > 0) fused.attributes.push_back(Attribute::of_int("rank", out_rank));
    for (size_t k = 1; k < len; ++k) u.drop(nodes[k]);
    u.replace(i, std::move(fused));
    return 1;
  });
}

}  // namespace om::graph::passes
