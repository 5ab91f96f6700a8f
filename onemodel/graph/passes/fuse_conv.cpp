// Convolution passes (docs/graph-passes.md).
//
// fold_conv_batchnorm (FastOnly): Conv(X, W[, b]) -> BatchNormalization(., scale, B, mean, var)
// with W, b and the four statistics f32 initializers becomes Conv(X, W', b') with
// W'[m] = W[m] * s[m], b' = (b - mean) * s + B, s = scale / sqrt(var + epsilon). The products
// are rounded into new weights, so outputs change in the last bits: Fast sessions only.
//
// fuse_conv_epilogue (Exact): Conv(X, W[, b]) [-> Add(., per-channel initializer) when the Conv
// has no bias] [-> BatchNormalization(., scale, B, mean, var) in inference mode with constant
// statistics] [-> Add(., R), R a graph input or a node's output defined before the Conv: a
// residual block's shortcut] [-> Relu|Sigmoid|Tanh|Gelu] becomes com.onemodel FusedConv(X, W, b[, scale, B,
// mean, var][, R], activation=...[, epsilon]). The convolution kernel adds the bias, normalises,
// adds R and applies the activation after each output's complete fma chain, each step rounded as
// the separate nodes round it (kernels/conv.h, ConvNorm and the residual), so no output bit
// changes; the outputs are written once instead of up to four times, and a residual Add and its
// Relu are no longer two passes over memory.
//
// fuse_conv_chain (Exact): Conv or FusedConv (without a chain) -> FusedElementwise, the
// convolution's output read only by the chain (fuse_elementwise_chains ran: it also makes a chain
// of one eligible node after a convolution: LeakyRelu, HardSwish, Clip...), becomes FusedConv with
// the chain's ops, operands and consts: the kernel runs the steps on each output row just written
// (kernels/conv.h, ConvActivation), while it is in cache, instead of a pass over the whole output.
// Each step is f32_chain's, the separate node's bits. A chain whose constants broadcast the output
// to a higher rank stays apart.
#include <cmath>

#include "onemodel/graph/op_registry.h"
#include "onemodel/graph/ops/epilogue.h"
#include "onemodel/graph/passes/pass.h"

namespace om::graph::passes {
namespace {

// An f32 initializer the caller cannot override, or null.
const TensorData* f32_constant(const DefUse& u, const std::string& v) {
  const TensorData* t = u.constant(v);
  return t && t->dtype == DType::f32 ? t : nullptr;
}

bool is_conv(const Node& n) { return is_default_domain(n.domain) && n.op_type == "Conv" && n.outputs.size() == 1; }

// Whether `bn` is an inference BatchNormalization of `in` whose four statistics are constant f32
// [M] initializers.
bool constant_batch_norm(const DefUse& u, const Node& bn, const std::string& in, int64_t M) {
  if (!is_default_domain(bn.domain) || bn.op_type != "BatchNormalization" || bn.inputs.size() != 5 || bn.inputs[0] != in ||
      bn.outputs.size() != 1 || bn.attr_int("training_mode", 0) != 0)
    return false;
  for (size_t k = 1; k < 5; ++k) {
    const TensorData* t = f32_constant(u, bn.inputs[k]);
    if (!t || t->dims.size() != 1 || t->dims[0] != M) return false;
  }
  return true;
}

}  // namespace

Status fold_conv_batchnorm(Graph& g, ArithmeticMode, size_t* changes) {
  return rewrite_scan(g, changes, [&g](DefUse& u, size_t i) -> size_t {
    if (!is_conv(g.nodes[i])) return 0;
    const Node& conv = g.nodes[i];
    const TensorData* w = conv.inputs.size() >= 2 ? f32_constant(u, conv.inputs[1]) : nullptr;
    if (!w || w->dims.size() < 3 || !u.single_internal_use(conv.outputs[0])) return 0;
    const int64_t M = w->dims[0];
    const TensorData* b = conv.inputs.size() >= 3 && !conv.inputs[2].empty() ? f32_constant(u, conv.inputs[2]) : nullptr;
    if (conv.inputs.size() >= 3 && !conv.inputs[2].empty() && (!b || b->numel() != M)) return 0;
    const size_t bi = u.reader(conv.outputs[0]);
    const Node& bn = g.nodes[bi];
    if (!constant_batch_norm(u, bn, conv.outputs[0], M)) return 0;
    const TensorData* st[4];
    for (int k = 0; k < 4; ++k) st[k] = f32_constant(u, bn.inputs[size_t(k) + 1]);
    const float eps = bn.attr_float("epsilon", 1e-5f);
    const int64_t per = M == 0 ? 0 : w->numel() / M;
    std::vector<float> nw(static_cast<size_t>(w->numel())), nb(static_cast<size_t>(M));
    for (int64_t m = 0; m < M; ++m) {
      const double s = double(st[0]->data<float>()[m]) / std::sqrt(double(st[3]->data<float>()[m]) + double(eps));
      for (int64_t k = 0; k < per; ++k) nw[size_t(m * per + k)] = float(double(w->data<float>()[m * per + k]) * s);
      const double bias = b ? double(b->data<float>()[m]) : 0.0;
      nb[size_t(m)] = float((bias - double(st[2]->data<float>()[m])) * s + double(st[1]->data<float>()[m]));
    }
    const std::string wn = u.fresh_name(conv.name + "_folded_weight"), bn_name = u.fresh_name(conv.name + "_folded_bias");
    u.add_initializer(TensorData::from_vector(wn, w->dims, nw));
    u.add_initializer(TensorData::from_vector(bn_name, {M}, nb));
    Node fused = conv;
    fused.inputs = {conv.inputs[0], wn, bn_name};
    fused.outputs = {bn.outputs[0]};
    u.drop(bi);
    u.replace(i, std::move(fused));
    return 1;
  });
}

Status fuse_conv_epilogue(Graph& g, ArithmeticMode, size_t* changes) {
  return rewrite_scan(g, changes, [&g](DefUse& u, size_t i) -> size_t {
    if (!is_conv(g.nodes[i])) return 0;
    const Node& conv = g.nodes[i];
    const TensorData* w = conv.inputs.size() >= 2 ? f32_constant(u, conv.inputs[1]) : nullptr;
    if (!w || w->dims.size() < 3) return 0;
    const int64_t M = w->dims[0];
    const bool has_bias = conv.inputs.size() >= 3 && !conv.inputs[2].empty();
    std::vector<std::string> inputs(conv.inputs.begin(), conv.inputs.begin() + (has_bias ? 3 : 2));
    std::string out = conv.outputs[0];
    bool fused_any = false;
    // A per-channel Add after a bias-free Conv: the bias [M] (shape [M, 1...] or [1, M, 1...]).
    if (!has_bias && u.single_internal_use(out)) {
      const size_t ai = u.reader(out);
      const Node& add = g.nodes[ai];
      if (is_default_domain(add.domain) && add.op_type == "Add" && add.inputs.size() == 2 && add.inputs[0] != add.inputs[1]) {
        const std::string& other = add.inputs[0] == out ? add.inputs[1] : add.inputs[0];
        const TensorData* b = f32_constant(u, other);
        bool per_channel = b && b->numel() == M && !b->dims.empty();
        if (per_channel) {
          // Right-aligned against [N, M, spatial...]: M at position rank-1-spatial, ones elsewhere.
          const size_t spatial = w->dims.size() - 2;
          const size_t r = b->dims.size();
          per_channel = r >= spatial + 1 && r <= spatial + 2 && b->dims[r - 1 - spatial] == M;
          for (size_t k = 0; per_channel && k < r; ++k)
            if (k != r - 1 - spatial && b->dims[k] != 1) per_channel = false;
        }
        if (per_channel) {
          const std::string bn = u.fresh_name(conv.name + "_bias");
          u.add_initializer(TensorData::copy_of(bn, DType::f32, {M}, b->bytes, b->nbytes));
          inputs.push_back(bn);
          out = add.outputs[0];
          u.drop(ai);
          fused_any = true;
        }
      }
    }
    // An inference BatchNormalization with constant statistics: inputs 3..6 and its epsilon.
    float eps = 0.0f;
    bool norm = false;
    if (u.single_internal_use(out)) {
      const size_t bi = u.reader(out);
      if (const Node& bn = g.nodes[bi]; constant_batch_norm(u, bn, out, M)) {
        inputs.resize(3);  // no bias: input 2 stays empty
        for (size_t k = 1; k < 5; ++k) inputs.push_back(bn.inputs[k]);
        eps = bn.attr_float("epsilon", 1e-5f);
        out = bn.outputs[0];
        u.drop(bi);
        norm = fused_any = true;
      }
    }
    // A residual Add: R must exist where the fused node will stand (the Conv's place).
    std::string residual;
    if (u.single_internal_use(out)) {
      const size_t ai = u.reader(out);
      const Node& add = g.nodes[ai];
      if (is_default_domain(add.domain) && add.op_type == "Add" && add.inputs.size() == 2 && add.outputs.size() == 1 &&
          add.inputs[0] != add.inputs[1]) {
        const std::string& other = add.inputs[0] == out ? add.inputs[1] : add.inputs[0];
        const size_t def = u.producer(other);
        // Constants stay separate Adds (a per-channel one after a biased Conv runs faster as its own pass).
        if (def == DefUse::kNone ? u.is_input(other) : def < i) {
          residual = other;
          out = add.outputs[0];
          u.drop(ai);
          fused_any = true;
        }
      }
    }
    std::string act = "Identity";
    if (u.single_internal_use(out)) {
      const size_t ci = u.reader(out);
      if (const EpilogueActivation* a = epilogue_activation_of(g.nodes[ci])) {
        act = a->name;
        out = g.nodes[ci].outputs[0];
        u.drop(ci);
        fused_any = true;
      }
    }
    if (!fused_any) return 0;
    Node fused = conv;
    fused.op_type = "FusedConv";
    fused.domain = kOnemodelDomain;
    fused.inputs = inputs;
    if (!residual.empty()) {
      fused.inputs.resize(7);  // absent bias and statistics stay empty names
      fused.inputs.push_back(residual);
    }
    fused.outputs = {out};
    fused.attributes.push_back(Attribute::of_string("activation", act));
    if (norm) fused.attributes.push_back(Attribute::of_float("epsilon", eps));
    u.replace(i, std::move(fused));
    return 1;
  });
}

Status fuse_conv_chain(Graph& g, ArithmeticMode, size_t* changes) {
  return rewrite_scan(g, changes, [&g](DefUse& u, size_t i) -> size_t {
    const Node& conv = g.nodes[i];
    const bool fused = conv.domain == kOnemodelDomain && conv.op_type == "FusedConv" && conv.outputs.size() == 1;
    if ((!is_conv(conv) && !fused) || conv.attr("ops") || !u.single_internal_use(conv.outputs[0])) return 0;
    const size_t ci = u.reader(conv.outputs[0]);
    const Node& chain = g.nodes[ci];
    if (chain.domain != kOnemodelDomain || chain.op_type != "FusedElementwise" || chain.inputs.size() != 1 ||
        chain.outputs.size() != 1)
      return 0;
    const TensorData* w = conv.inputs.size() >= 2 ? u.constant(conv.inputs[1]) : nullptr;
    const int64_t rank = chain.attr_int("rank", 0);  // > the output's: the chain broadcasts it
    if (rank > 0 && (!w || rank > int64_t(w->dims.size()))) return 0;
    return absorb_chain(g, u, i, ci, "FusedConv");
  });
}

}  // namespace om::graph::passes
