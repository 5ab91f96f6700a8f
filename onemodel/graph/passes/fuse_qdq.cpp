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
//
// fuse_qdq_matmul (FastOnly): the same for DequantizeLinear x and w (a constant [K, N], its
// parameters per-tensor or per column) into MatMul [-> Add(bias)] [-> Relu] -> QuantizeLinear,
// which becomes QLinearMatMul, or with a bias Add of a constant f32 [N] (a Linear layer as
// traced or exported as MatMul + Add) QLinearMatMulBias with b'[n] = round(b[n] / (xs ws[n])),
// with the same one-step caveat. A Gemm (alpha 1, A not transposed) fuses the same way, its C (a
// constant f32 [N], [1, N] or scalar, beta 1) as the bias and a transposed B ([N, K], per-row
// parameters) stored as [K, N] once.
#include <cmath>
#include <cstdint>

#include "onemodel/graph/op_registry.h"
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

// A product's output [-> Relu] -> QuantizeLinear with per-tensor constant parameters, each
// value read once; a Relu only where y's zero point is the bottom of its range.
// With `bias_of_n` (a product's column count), an Add of a constant f32 [N] first (its bias; a
// rank-1 bias broadcasts over the rows without changing the output's shape).
struct QuantizedTail {
  size_t q = DefUse::kNone, relu = DefUse::kNone, add = DefUse::kNone;
  const TensorData* bias = nullptr;
};
bool quantized_tail(const Graph& g, const DefUse& u, const std::string& out, QuantizedTail* t, int64_t bias_of_n = 0) {
  if (!u.single_internal_use(out)) return false;
  size_t q = u.reader(out);
  if (bias_of_n > 0 && is_op(g.nodes[q], "Add") && g.nodes[q].inputs.size() == 2) {
    const Node& add = g.nodes[q];
    const TensorData* b = u.constant(add.inputs[add.inputs[0] == out ? 1 : 0]);
    if (!b || b->dtype != DType::f32 || b->dims != std::vector<int64_t>{bias_of_n} || add.inputs[0] == add.inputs[1])
      return false;
    t->add = q;
    t->bias = b;
    if (!u.single_internal_use(add.outputs[0])) return false;
    q = u.reader(add.outputs[0]);
  }
  if (is_op(g.nodes[q], "Relu")) {
    t->relu = q;
    if (!u.single_internal_use(g.nodes[q].outputs[0])) return false;
    q = u.reader(g.nodes[q].outputs[0]);
  }
  const Node& qn = g.nodes[q];
  if (!is_op(qn, "QuantizeLinear") || qn.inputs.size() != 3) return false;
  const TensorData* ys = scalar_constant(u, qn.inputs[1]);
  const TensorData* yz = scalar_constant(u, qn.inputs[2]);
  if (!ys || !yz || ys->dtype != DType::f32 || (yz->dtype != DType::u8 && yz->dtype != DType::i8)) return false;
  if (t->relu != DefUse::kNone && q8_value(*yz, 0) != (yz->dtype == DType::i8 ? -128 : 0)) return false;
  t->q = q;
  return true;
}

// x's DequantizeLinear with per-tensor constant scale and an 8-bit zero point, or null.
const Node* activation_dequantize(const DefUse& u, const std::string& v) {
  const Node* dq = constant_dequantize(u, v);
  if (!dq) return nullptr;
  const TensorData* xs = scalar_constant(u, dq->inputs[1]);
  const TensorData* xz = scalar_constant(u, dq->inputs[2]);
  if (!xs || !xz || xs->dtype != DType::f32 || (xz->dtype != DType::u8 && xz->dtype != DType::i8)) return nullptr;
  return dq;
}

// The float bias b in i32 at the accumulator's scale xs ws[n] (ws per-tensor or per n): false
// where a value is out of range (or a scale is zero), which leaves the graph as written.
bool integer_bias(const TensorData& b, const TensorData& xs, const TensorData& ws, std::vector<int32_t>* out) {
  const float sx = xs.data<float>()[0];
  const bool per_n = ws.numel() != 1;
  out->assign(size_t(b.numel()), 0);
  for (int64_t n = 0; n < b.numel(); ++n) {
    const double v = std::nearbyint(double(b.data<float>()[n]) / (double(sx) * double(ws.data<float>()[per_n ? n : 0])));
    if (!(std::fabs(v) <= 2147483647.0)) return false;
    (*out)[size_t(n)] = int32_t(v);
  }
  return true;
}

}  // namespace

Status fuse_qdq_matmul(Graph& g, ArithmeticMode, size_t* changes) {
  return rewrite_scan(g, changes, [&g](DefUse& u, size_t i) -> size_t {
    const Node& mm = g.nodes[i];
    const bool gemm = is_op(mm, "Gemm");
    if ((!is_op(mm, "MatMul") && !gemm) || mm.outputs.size() != 1) return 0;
    if (!gemm && mm.inputs.size() != 2) return 0;
    // Gemm: alpha 1, A as is; B [K, N] or (transB) [N, K]; C absent or a constant f32 bias added
    // with beta 1 (as the MatMul's Add).
    const bool trans_b = gemm && mm.attr_int("transB", 0) != 0;
    if (gemm && (mm.inputs.size() < 2 || mm.attr_int("transA", 0) != 0 || mm.attr_float("alpha", 1.0f) != 1.0f)) return 0;
    const bool has_c = gemm && mm.inputs.size() >= 3 && !mm.inputs[2].empty();
    if (has_c && mm.attr_float("beta", 1.0f) != 1.0f) return 0;
    const Node* xdq = activation_dequantize(u, mm.inputs[0]);
    const Node* wdq = constant_dequantize(u, mm.inputs[1]);
    if (!xdq || !wdq) return 0;
    const TensorData* wq = u.constant(wdq->inputs[0]);
    const TensorData* ws = u.constant(wdq->inputs[1]);
    const TensorData* wz = u.constant(wdq->inputs[2]);
    if (!wq || wq->dims.size() != 2 || (wq->dtype != DType::u8 && wq->dtype != DType::i8) || wz->dtype != wq->dtype ||
        ws->dtype != DType::f32)
      return 0;
    // QLinearMatMul takes b's parameters per-tensor or per column (the N axis: 1 of [K, N], 0 of
    // Gemm's transposed [N, K]).
    const int64_t N = wq->dims[trans_b ? 0 : 1], K = wq->dims[trans_b ? 1 : 0];
    const bool per_column = ws->numel() != 1;
    if (per_column && (ws->dims.size() != 1 || ws->numel() != N || wz->numel() != N ||
                       wdq->attr_int("axis", 1) != (trans_b ? 0 : 1)))
      return 0;
    if (!per_column && wz->numel() != 1) return 0;
    // Gemm's C: f32 [N], [1, N] or one value, as the bias of N columns.
    const TensorData* c = has_c ? u.constant(mm.inputs[2]) : nullptr;
    if (has_c && (!c || c->dtype != DType::f32 || !(c->numel() == 1 || (c->numel() == N && c->dims.back() == N))))
      return 0;
    QuantizedTail tail;
    if (!quantized_tail(g, u, mm.outputs[0], &tail, gemm ? 0 : N)) return 0;
    TensorData c_bias;
    if (c) {
      c_bias = TensorData::from_vector("", {N}, std::vector<float>(size_t(N), c->data<float>()[0]));
      if (c->numel() == N) c_bias = TensorData::copy_of("", DType::f32, {N}, c->bytes, c->nbytes);
      tail.bias = &c_bias;
    }
    std::vector<int32_t> bias;
    if (tail.bias && !integer_bias(*tail.bias, *u.constant(xdq->inputs[1]), *ws, &bias)) return 0;
    const Node& qn = g.nodes[tail.q];
    Node fused;
    fused.op_type = "QLinearMatMul";
    fused.name = mm.name;
    std::string w_name = wdq->inputs[0];
    if (trans_b) {  // the weights as [K, N], once
      std::vector<uint8_t> t(size_t(K * N));
      const uint8_t* src = wq->bytes;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < K; ++k) t[size_t(k * N + n)] = src[n * K + k];
      w_name = u.fresh_name(mm.name + "_qweight");
      u.add_initializer(TensorData::copy_of(w_name, wq->dtype, {K, N}, t.data(), t.size()));
    }
    fused.inputs = {xdq->inputs[0], xdq->inputs[1], xdq->inputs[2], w_name, wdq->inputs[1], wdq->inputs[2],
                    qn.inputs[1],   qn.inputs[2]};
    if (tail.bias) {
      fused.op_type = "QLinearMatMulBias";
      fused.domain = kOnemodelDomain;
      const std::string bias_name = u.fresh_name(mm.name + "_qbias");
      u.add_initializer(TensorData::from_vector(bias_name, {N}, bias));
      fused.inputs.push_back(bias_name);
    }
    fused.outputs = {qn.outputs[0]};
    u.drop(tail.q);
    if (tail.relu != DefUse::kNone) u.drop(tail.relu);
    if (tail.add != DefUse::kNone) u.drop(tail.add);
    u.replace(i, std::move(fused));
    return 1;
  });
}

Status fuse_qdq_conv(Graph& g, ArithmeticMode, size_t* changes) {
  return rewrite_scan(g, changes, [&g](DefUse& u, size_t i) -> size_t {
    const Node& conv = g.nodes[i];
    if (!is_op(conv, "Conv") || conv.inputs.size() < 2 || conv.outputs.size() != 1) return 0;
    const Node* xdq = activation_dequantize(u, conv.inputs[0]);
    const Node* wdq = constant_dequantize(u, conv.inputs[1]);
    if (!xdq || !wdq) return 0;
    const TensorData* xs = u.constant(xdq->inputs[1]);
    const TensorData* wq = u.constant(wdq->inputs[0]);
    const TensorData* ws = u.constant(wdq->inputs[1]);
    const TensorData* wz = u.constant(wdq->inputs[2]);
    // The integer convolutions are 1-D and 2-D (weights of rank 3 or 4): a 3-D one stays in f32.
    if (!wq || wq->dims.size() < 3 || wq->dims.size() > 4 || ws->dtype != DType::f32 || (wq->dtype != DType::u8 && wq->dtype != DType::i8) ||
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
    QuantizedTail tail;
    if (!quantized_tail(g, u, conv.outputs[0], &tail)) return 0;
    const Node& qn = g.nodes[tail.q];
    std::vector<int32_t> bias;
    if (b && !integer_bias(*b, *xs, *ws, &bias)) return 0;
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
    u.drop(tail.q);
    if (tail.relu != DefUse::kNone) u.drop(tail.relu);
    u.replace(i, std::move(fused));
    return 1;
  });
}

}  // namespace om::graph::passes
