// The dynamic form's float epilogue (docs/graph-passes.md). ONNX Runtime's quantize_dynamic, and
// the dynamic models it writes, follow each integer product with its dequantization in float:
//   MatMulInteger / ConvInteger -> Cast(to float) -> Mul(scale) [-> Add(bias)] [-> Relu]
// where the scale is one value (x's DynamicQuantizeLinear scale times the weights' constant
// one). fuse_integer_epilogue (Exact) makes that MatMulIntegerScaled / ConvIntegerScaled
// (com.onemodel), whose epilogue runs the same operations in the same order on each result as
// the product stores it: the same bits, without four passes over the activations.
//
// The scale must be one value by construction: a constant of one element, a
// DynamicQuantizeLinear's scale output, or a Mul of two such. The bias must be a constant f32
// broadcasting along the output's column (MatMulInteger: [N] or [1, N]) or channel axis
// (ConvInteger: [M, 1, ...] with a 1 per spatial axis, leading 1s allowed) of a constant weight.
#include <string>
#include <vector>

#include "onemodel/graph/op_registry.h"
#include "onemodel/graph/passes/pass.h"

namespace om::graph::passes {
namespace {

bool is_op(const Node& n, const char* type) { return is_default_domain(n.domain) && n.op_type == type; }

bool one_value_constant(const DefUse& u, const std::string& v) {
  const TensorData* t = u.constant(v);
  return t && t->dtype == DType::f32 && t->numel() == 1 && t->dims.size() <= 1;
}

// Whether `v` is one f32 value whatever the inputs: see the comment at the top.
bool one_value(const DefUse& u, const std::string& v, int depth = 0) {
  if (one_value_constant(u, v)) return true;
  const Node* p = u.producer_node(v);
  if (!p) return false;
  if (is_op(*p, "DynamicQuantizeLinear")) return p->outputs.size() > 1 && p->outputs[1] == v;
  if (depth == 0 && is_op(*p, "Mul") && p->inputs.size() == 2)
    return one_value(u, p->inputs[0], 1) && one_value(u, p->inputs[1], 1);
  return false;
}

// The bias values when `b` is a constant f32 of `count` values laid along the output's axis
// `axis_from_end` places from its end (0: the last axis), else empty.
std::vector<float> axis_bias(const DefUse& u, const std::string& b, int64_t count, size_t axis_from_end) {
  const TensorData* t = u.constant(b);
  if (!t || t->dtype != DType::f32 || t->numel() != count) return {};
  const std::vector<int64_t>& d = t->dims;
  if (d.size() < axis_from_end + 1) return {};
  for (size_t i = 0; i < d.size(); ++i) {
    const size_t from_end = d.size() - 1 - i;
    const int64_t want = from_end == axis_from_end ? count : 1;
    if (from_end <= axis_from_end ? d[i] != want : d[i] != 1) return {};
  }
  return std::vector<float>(t->data<float>(), t->data<float>() + count);
}

}  // namespace

Status fuse_integer_epilogue(Graph& g, ArithmeticMode, size_t* changes) {
  return rewrite_scan(g, changes, [&g](DefUse& u, size_t i) -> size_t {
    const Node& prod = g.nodes[i];
    const bool conv = is_op(prod, "ConvInteger");
    if ((!conv && !is_op(prod, "MatMulInteger")) || prod.outputs.size() != 1 || prod.inputs.size() < 2) return 0;
    const TensorData* w = u.constant(prod.inputs[1]);
    // Cast(to float).
    if (!u.single_internal_use(prod.outputs[0])) return 0;
    const size_t cast = u.reader(prod.outputs[0]);
    const Node& cn = g.nodes[cast];
    if (!is_op(cn, "Cast") || cn.attr_int("to", 0) != 1 || !u.single_internal_use(cn.outputs[0])) return 0;
    // Mul by one value.
    const size_t mul = u.reader(cn.outputs[0]);
    const Node& mn = g.nodes[mul];
    if (!is_op(mn, "Mul") || mn.inputs.size() != 2 || mn.inputs[0] == mn.inputs[1]) return 0;
    const std::string& scale = mn.inputs[mn.inputs[0] == cn.outputs[0] ? 1 : 0];
    if (!one_value(u, scale)) return 0;
    std::string out = mn.outputs[0];
    std::vector<size_t> fused = {cast, mul};
    // [Add(bias)]: per column of [K, N] weights, per output channel of [M, C/g, k...] ones.
    std::vector<float> bias;
    if (w && w->dims.size() >= 2 && u.single_internal_use(out)) {
      const size_t add = u.reader(out);
      const Node& an = g.nodes[add];
      if (is_op(an, "Add") && an.inputs.size() == 2 && an.inputs[0] != an.inputs[1]) {
        const std::string& b = an.inputs[an.inputs[0] == out ? 1 : 0];
        bias = conv ? axis_bias(u, b, w->dims[0], w->dims.size() - 2) : axis_bias(u, b, w->dims.back(), 0);
        if (!bias.empty()) {
          fused.push_back(add);
          out = an.outputs[0];
        }
      }
    }
    // [Relu].
    bool relu = false;
    if (u.single_internal_use(out) && is_op(g.nodes[u.reader(out)], "Relu")) {
      const size_t r = u.reader(out);
      fused.push_back(r);
      out = g.nodes[r].outputs[0];
      relu = true;
    }
    Node n;
    n.op_type = conv ? "ConvIntegerScaled" : "MatMulIntegerScaled";
    n.domain = kOnemodelDomain;
    n.name = prod.name;
    n.inputs = prod.inputs;
    n.inputs.resize(4);  // absent zero points stay absent ("")
    n.inputs.push_back(scale);
    if (!bias.empty()) {
      const std::string name = u.fresh_name(prod.name + "_bias");
      u.add_initializer(TensorData::from_vector(name, {int64_t(bias.size())}, bias));
      n.inputs.push_back(name);
    }
    if (conv) n.attributes = prod.attributes;
    n.attributes.push_back(Attribute::of_int("relu", relu ? 1 : 0));
    n.outputs = {out};
    // In the place of the last node fused: the scale may be computed after the product.
    const size_t last = fused.back();
    fused.pop_back();
    for (size_t f : fused) u.drop(f);
    u.drop(i);
    u.replace(last, std::move(n));
    return 1;
  });
}

}  // namespace om::graph::passes
