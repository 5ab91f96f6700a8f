// The optimizer steps of ONNX's training domain (ai.onnx.preview.training, version 1): Adagrad,
// Momentum and Adam. Each node updates n tensors at once: inputs R (learning rate, f32 scalar),
// T (update count, i64 scalar), then n X, n G and n of each state; outputs n new X, then n of each
// new state. One fixed sequence of f32 operations per element (the library compiles without fp
// contraction); Adagrad and Momentum use only correctly rounded operations, so they are exact;
// Adam's bias correction needs pow, so it is fast only.
#include <algorithm>
#include <cmath>

#include "onemodel/graph/ops/op_util.h"

namespace om::graph::ops {
namespace {

constexpr const char* kTrainingDomain = "ai.onnx.preview.training";

enum class Step { Adagrad, Momentum, Adam };

int states_of(Step s) { return s == Step::Adam ? 2 : 1; }

template <Step s>
Status infer_step(InferContext& ctx) {
  const size_t per = size_t(2 + states_of(s));  // X, G and the states
  const size_t ins = ctx.num_inputs();
  if (ins < 2 + per || (ins - 2) % per != 0)
    return ctx.error(ErrorKind::InvalidArgument, msg("takes R, T and then ", per, " groups of n tensors (X, G, state", per > 3 ? "s" : "",
                                                     "); got ", ins, " inputs"));
  const size_t n = (ins - 2) / per;
  const ValueDesc* r = ctx.input(0);
  const ValueDesc* t = ctx.input(1);
  if (!r || r->dtype != DType::f32 || r->numel() != 1) return ctx.error(ErrorKind::ShapeMismatch, "R (the learning rate) must be one f32 value");
  if (!t || t->dtype != DType::i64 || t->numel() != 1) return ctx.error(ErrorKind::ShapeMismatch, "T (the update count) must be one i64 value");
  if (ctx.node.outputs.size() > n * size_t(1 + states_of(s)))
    return ctx.error(ErrorKind::InvalidArgument, msg("has ", ctx.node.outputs.size(), " outputs; at most ", n * size_t(1 + states_of(s))));
  if (s == Step::Momentum) {
    const Attribute* mode = ctx.node.attr("mode");
    if (!mode || (mode->s != "standard" && mode->s != "nesterov"))
      return ctx.error(ErrorKind::InvalidArgument, "mode must be 'standard' or 'nesterov'");
    for (const char* a : {"alpha", "beta", "norm_coefficient"})
      if (!ctx.node.attr(a)) return ctx.error(ErrorKind::InvalidArgument, msg("the attribute ", a, " is required"));
  }
  for (size_t i = 0; i < n; ++i) {
    const ValueDesc* x = ctx.input(2 + i);
    for (size_t k = 1; k < per; ++k) {
      const ValueDesc* v = ctx.input(2 + k * n + i);
      if (!x || !v || x->dtype != DType::f32 || v->dtype != DType::f32 || v->shape != x->shape)
        return ctx.error(ErrorKind::ShapeMismatch, msg("tensor ", i, ": X, G and the states must be f32 of one shape"));
    }
  }
  for (size_t o = 0; o < ctx.node.outputs.size(); ++o) ctx.set_output(o, DType::f32, ctx.input(2 + (o < n ? o : o + n))->shape);
  return Status::ok();
}

// The optimizers' record: their attributes. Work: the elements of the n tensors, one after
// another (tensor i's elements follow tensor i-1's).
struct StepParams {
  float norm = 0.0f, decay = 0.0f, eps = 1e-6f, alpha = 0.0f, beta = 0.0f, post = 0.0f;
  bool nesterov = false;
};

template <Step s>
Status prepare_step(const InferContext& ctx, Prepared& out) {
  const Node& node = ctx.node;
  StepParams& p = out.record<StepParams>();
  p.norm = node.attr_float("norm_coefficient", 0.0f);
  if (s == Step::Adagrad) {
    p.decay = node.attr_float("decay_factor", 0.0f);
    p.eps = node.attr_float("epsilon", 1e-6f);
  } else if (s == Step::Momentum) {
    p.alpha = node.attr_float("alpha", 0.0f);
    p.beta = node.attr_float("beta", 0.0f);
    p.nesterov = node.attr_is("mode", "nesterov");
  } else {
    p.alpha = node.attr_float("alpha", 0.9f);
    p.beta = node.attr_float("beta", 0.999f);
    p.eps = node.attr_float("epsilon", 1e-6f);
    p.post = node.attr_float("norm_coefficient_post", 0.0f);
  }
  const size_t n = (ctx.num_inputs() - 2) / size_t(2 + states_of(s));
  out.work = 0;
  for (size_t i = 0; i < n; ++i) out.work += ctx.input(2 + i)->numel();
  return Status::ok();
}

template <Step s>
Status step_kernel(const KernelContext& k) {
  const StepParams& p = k.params<StepParams>();
  const size_t n = (k.num_inputs - 2) / size_t(2 + states_of(s));
  const float R = k.in(0).as<const float>()[0];
  const int64_t T = k.in(1).as<const int64_t>()[0];
  const float norm = p.norm;
  // Outputs a node leaves out are computed into nothing: write only present ones.
  auto out = [&](size_t o) -> float* { return o < k.num_outputs && k.out(o).present ? k.out(o).as<float>() : nullptr; };
  int64_t first = 0;  // tensor i's first element in the work units
  for (size_t i = 0; i < n; ++i) {
    const int64_t count = k.in(2 + i).numel;
    const int64_t lo = std::max<int64_t>(k.begin - first, 0), hi = std::min(k.end - first, count);
    first += count;
    if (lo >= hi) continue;
    const float* x = k.in(2 + i).as<const float>();
    const float* g = k.in(2 + n + i).as<const float>();
    const float* v = k.in(2 + 2 * n + i).as<const float>();
    float* x_new = out(i);
    float* v_new = out(n + i);
    if (s == Step::Adagrad) {
      const float r = R / (1.0f + float(T) * p.decay);
      const float eps = p.eps;
      for (int64_t j = lo; j < hi; ++j) {
        const float gr = norm * x[j] + g[j];
        const float h = v[j] + gr * gr;
        if (v_new) v_new[j] = h;
        if (x_new) x_new[j] = x[j] - r * gr / (std::sqrt(h) + eps);
      }
    } else if (s == Step::Momentum) {
      const float alpha = p.alpha;
      const float beta = T > 0 ? p.beta : 1.0f;  // the first step takes the whole gradient
      const bool nesterov = p.nesterov;
      for (int64_t j = lo; j < hi; ++j) {
        const float gr = norm * x[j] + g[j];
        const float vn = alpha * v[j] + beta * gr;
        if (v_new) v_new[j] = vn;
        if (x_new) x_new[j] = nesterov ? x[j] - R * (gr + alpha * vn) : x[j] - R * vn;
      }
    } else {
      const float* h = k.in(2 + 3 * n + i).as<const float>();
      float* h_new = out(2 * n + i);
      const float alpha = p.alpha, beta = p.beta;
      const float eps = p.eps, post = p.post;
      const double td = double(T);
      const float r = T > 0 ? float(double(R) * std::sqrt(1.0 - std::pow(double(beta), td)) / (1.0 - std::pow(double(alpha), td))) : R;
      for (int64_t j = lo; j < hi; ++j) {
        const float gr = norm * x[j] + g[j];
        const float vn = alpha * v[j] + (1.0f - alpha) * gr;
        const float hn = beta * h[j] + (1.0f - beta) * gr * gr;
        if (v_new) v_new[j] = vn;
        if (h_new) h_new[j] = hn;
        if (x_new) x_new[j] = (1.0f - post) * (x[j] - r * (vn / (std::sqrt(hn) + eps)));
      }
    }
  }
  return Status::ok();
}

constexpr AttrSpec kAdagradAttrs[] = {{"decay_factor", AttrKind::Float}, {"epsilon", AttrKind::Float}, {"norm_coefficient", AttrKind::Float}};
constexpr AttrSpec kMomentumAttrs[] = {
    {"alpha", AttrKind::Float}, {"beta", AttrKind::Float}, {"mode", AttrKind::String}, {"norm_coefficient", AttrKind::Float}};
constexpr AttrSpec kAdamAttrs[] = {{"alpha", AttrKind::Float},
                                   {"beta", AttrKind::Float},
                                   {"epsilon", AttrKind::Float},
                                   {"norm_coefficient", AttrKind::Float},
                                   {"norm_coefficient_post", AttrKind::Float}};

constexpr OpDef kOps[] = {
    op("Adagrad").in_domain(kTrainingDomain).since_opset(1).inputs(5, 2 + 3 * 64).attributes(kAdagradAttrs)
        .shapes(infer_step<Step::Adagrad>).prepared(prepare_step<Step::Adagrad>).kernel(step_kernel<Step::Adagrad>)
        .doc("f32; n tensors per node; r = R / (1 + T decay_factor), g = norm_coefficient x + G, H' = H + g^2, X' = X - r g / (sqrt(H') + epsilon)"),
    op("Momentum").in_domain(kTrainingDomain).since_opset(1).inputs(5, 2 + 3 * 64).attributes(kMomentumAttrs)
        .shapes(infer_step<Step::Momentum>).prepared(prepare_step<Step::Momentum>).kernel(step_kernel<Step::Momentum>)
        .doc("f32; standard or nesterov; V' = alpha V + beta g (beta = 1 at T = 0), X' = X - R V' or X - R (g + alpha V')"),
    op("Adam").in_domain(kTrainingDomain).since_opset(1).inputs(6, 2 + 4 * 64).attributes(kAdamAttrs)
        .shapes(infer_step<Step::Adam>).prepared(prepare_step<Step::Adam>).fast_only(step_kernel<Step::Adam>)
        .doc("f32; bias correction R sqrt(1 - beta^T) / (1 - alpha^T) with the C library pow (fast only); norm_coefficient_post"),
};

}  // namespace

}  // namespace om::graph::ops

// The family's operators, one symbol each (onemodel/op_list.h).
#define OM_OPTIMIZER_OPS(X) X(Adagrad) X(Momentum) X(Adam)
OM_OP_FAMILY_TABLE(optimizer, OM_OPTIMIZER_OPS)
