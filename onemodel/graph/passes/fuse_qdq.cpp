// QDQ fusion (docs/graph-passes.md, docs/quantization.md).
//
// fuse_qdq_conv (FastOnly): DequantizeLinear(xq, xs, xz) and DequantizeLinear(wq, ws, wz) into
// Conv(., ., b) [-> Relu] -> QuantizeLinear(., ys, yz), the form quantize_static, ONNX Runtime's
// quantizer and converters from TFLite write, becomes QLinearConv(xq, xs, xz, wq, ws, wz, ys, yz,
// b') on the integer kernels. It runs before constant folding, which would turn the weights'
// DequantizeLinear back into floats. The scales and zero points must be constants: x's and y's
// per-tensor, w's per-tensor or per output channel (axis 0). The float bias becomes
// b'[m] = round(b[m] / (xs ws[m])) in i32, and the product is summed exactly in integers and
// requantized once, where the unfused graph rounds each float product and sum: results may
// differ by one quantization step, so Fast sessions only (Exact runs the QDQ graph as written).
// A Relu is fused only when y's zero point is the bottom of its range (0 for u8, -128 for i8),
// where the saturation is the Relu.
#include <cmath>
#include <cstdint>

#include "onemodel/graph/passes/pass.h"

namespace om::graph::passes {
namespace {

bool is_op(const Node& n, const char* type) { return is_default_domain(n.domain) && n.op_type == type; }

// A constant that is one value (a scalar or [1]), or null.
const TensorData* scalar_constant(const DefUse& u, const std::string& v) {
  const TensorData* t = v.empty() ? nullptr : u.constant(v);
  return t && t->numel() == 1 && t->dims.size() <= 1 ? t : nullptr;
}

// The DequantizeLinear writing `v` with constant scale and zero point, or null.
const Node* constant_dequantize(const DefUse& u, const std::string& v) {
  const Node* dq = u.producer_node(v);
  if (!dq || !is_op(*dq, "DequantizeLinear") || dq->inputs.size() != 3) return nullptr;
  if (!u.constant(dq->inputs[1]) || !u.constant(dq->inputs[2])) return nullptr;
  return dq;
}

int32_t q8_value(const TensorData& t, int64_t i) {
  return t.dtype == DType::i8 ? int32_t(t.data<int8_t>()[i]) : int32_t(t.data<uint8_t>()[i]);
}

}  // namespace

Status fuse_qdq_conv(Graph& g, ArithmeticMode, size_t* changes) {
  return rewrite_scan(g, changes, [&g](DefUse& u, size_t i) -> size_t {
    const Node& conv = g.nodes[i];
    if (!is_op(conv, "Conv") || conv.inputs.size() < 2 || conv.outputs.size() != 1) return 0;
    const Node* xdq = constant_dequantize(u, conv.inputs[0]);
    const Node* wdq = constant_dequantize(u, conv.inputs[1]);
    if (!xdq || !wdq) return 0;
    const TensorData* xs = scalar_constant(u, xdq->inputs[1]);
    const TensorData* xz = scalar_constant(u, xdq->inputs[2]);
    const TensorData* wq = u.constant(wdq->inputs[0]);
    const TensorData* ws = u.constant(wdq->inputs[1]);
    const TensorData* wz = u.constant(wdq->inputs[2]);
    if (!xs || !xz || xs->dtype != DType::f32 || !wq || wq->dims.size() < 3 || ws->dtype != DType::f32) return 0;
    if ((xz->dtype != DType::u8 && xz->dtype != DType::i8) || (wq->dtype != DType::u8 && wq->dtype != DType::i8) ||
        wz->dtype != wq->dtype)
      return 0;
    const int64_t M = wq->dims[0];
    const bool per_channel = ws->numel() != 1;
    if (per_channel && (ws->numel() != M || wz->numel() != M || wdq->attr_int("axis", 1) != 0)) return 0;
    if (!per_channel && wz->numel() != 1) return 0;
    const TensorData* b = nullptr;
    if (conv.inputs.size() >= 3 && !conv.inputs[2].empty()) {
      b = u.constant(conv.inputs[2]);
      if (!b || b->dtype != DType::f32 || b->numel() != M) return 0;
    }
    // Conv [-> Relu] -> QuantizeLinear, each value read once.
    if (!u.single_internal_use(conv.outputs[0])) return 0;
    size_t relu = DefUse::kNone, q = u.reader(conv.outputs[0]);
    if (is_op(g.nodes[q], "Relu")) {
      relu = q;
      if (!u.single_internal_use(g.nodes[relu].outputs[0])) return 0;
      q = u.reader(g.nodes[relu].outputs[0]);
    }
    const Node& qn = g.nodes[q];
    if (!is_op(qn, "QuantizeLinear") || qn.inputs.size() != 3) return 0;
    const TensorData* ys = scalar_constant(u, qn.inputs[1]);
    const TensorData* yz = scalar_constant(u, qn.inputs[2]);
    if (!ys || !yz || ys->dtype != DType::f32 || (yz->dtype != DType::u8 && yz->dtype != DType::i8)) return 0;
    if (relu != DefUse::kNone && q8_value(*yz, 0) != (yz->dtype == DType::i8 ? -128 : 0)) return 0;
    // The bias in i32 at the accumulator's scale xs ws[m].
    std::vector<int32_t> bias(static_cast<size_t>(M), 0);
    const float sx = xs->data<float>()[0];
    for (int64_t m = 0; m < M && b; ++m) {
      const double v = std::nearbyint(double(b->data<float>()[m]) / (double(sx) * double(ws->data<float>()[per_channel ? m : 0])));
      if (!(std::fabs(v) <= 2147483647.0)) return 0;  // out of range (or a zero scale): leave the graph as written
      bias[size_t(m)] = int32_t(v);
    }
    Node fused;
    fused.op_type = "QLinearConv";
    fused.name = conv.name;
    fused.attributes = conv.attributes;
    std::string bias_name;
    if (b) {
      bias_name = u.fresh_name(conv.name + "_qbias");
      u.add_initializer(TensorData::from_vector(bias_name, {M}, bias));
    }
    fused.inputs = {xdq->inputs[0], xdq->inputs[1], xdq->inputs[2], wdq->inputs[0], wdq->inputs[1], wdq->inputs[2],
                    qn.inputs[1],   qn.inputs[2]};
    if (b) fused.inputs.push_back(bias_name);
    fused.outputs = {qn.outputs[0]};
    u.drop(q);
    if (relu != DefUse::kNone) u.drop(relu);
    u.replace(i, std::move(fused));
    return 1;
  });
}

}  // namespace om::graph::passes
