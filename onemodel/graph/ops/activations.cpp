// Activation graph operators: Gelu, Clip, and the parametric activations (LeakyRelu, PRelu, Elu,
// Selu, Celu, ThresholdedRelu, Shrink, Softplus, Softsign, HardSigmoid, HardSwish); Relu, Sigmoid
// and Tanh are activation_maps.cpp's. One rounding per element with the library's own exp, log,
// tanh and erf, so the fast and exact kernels are one function (docs/exactness.md).
#include <cmath>
#include <limits>

#include "onemodel/graph/ops/op_util.h"
#include "onemodel/kernels/kernels.h"

namespace om::graph::ops {
namespace {

using kernels::UnaryOp;

// Work units: output elements. PRelu keeps its broadcast iterator in a BroadcastParams record
// (prepare_broadcast), the maps their attributes.

Status infer_clip(InferContext& ctx) {
  OM_TRY(require_dtype(ctx, 0, {DType::f32, DType::i64, DType::i32, DType::i8, DType::u8}));
  const DType dt = ctx.input(0)->dtype;
  ctx.set_output(0, dt, ctx.input(0)->shape);
  for (size_t i = 1; i < 3; ++i) {
    const ValueDesc* v = ctx.input(i);
    if (v && (v->dtype != dt || v->numel() != 1))
      return ctx.error(ErrorKind::InvalidArgument, msg("input ", i, " (", i == 1 ? "min" : "max", ") must be a ", dtype_name(dt),
                                                       " scalar like input 0, got ", dtype_name(v->dtype), " ", shape_str(v->shape)));
  }
  return Status::ok();
}

// Gelu's record: the approximation. Work: elements.
struct GeluParams {
  UnaryOp op = UnaryOp::GeluErf;
};

Status prepare_gelu(const InferContext& ctx, Prepared& out) {
  out.record<GeluParams>().op = ctx.node.attr_is("approximate", "tanh") ? UnaryOp::GeluTanh : UnaryOp::GeluErf;
  out.work = ctx.outputs[0].numel();
  return Status::ok();
}

Status gelu_kernel(const KernelContext& k) {
  unary_range(k, k.params<GeluParams>().op);
  return Status::ok();
}

Status infer_gelu(InferContext& ctx) {
  const Attribute* a = ctx.node.attr("approximate");
  if (a && !(a->type == AttrType::String && (a->s == "none" || a->s == "tanh")))
    return ctx.error(ErrorKind::InvalidArgument, msg("attribute approximate must be \"none\" or \"tanh\", got \"", a->s, "\""));
  return infer_f32_unary(ctx);
}

// The record of the parametric maps, filled by prepare_activation: LeakyRelu, Elu, Celu and
// ThresholdedRelu (alpha), Selu (alpha; gamma in beta), HardSigmoid (alpha, beta), Shrink
// (bias in alpha, lambd in beta). Work: elements.
struct ActivationParams {
  float alpha = 0.0f, beta = 0.0f;
};

// Which attributes fill alpha and beta, with their ONNX defaults (a null name: the field is
// unused). One prepare step serves every parametric map; each map binds its entry.
struct ActivationAttrs {
  const char* alpha;
  float alpha_default;
  const char* beta;
  float beta_default;
};
constexpr ActivationAttrs kReadLeakyRelu{"alpha", 0.01f, nullptr, 0.0f};
constexpr ActivationAttrs kReadAlpha{"alpha", 1.0f, nullptr, 0.0f};  // Elu, Celu, ThresholdedRelu
constexpr ActivationAttrs kReadSelu{"alpha", 1.67326319217681884765625f, "gamma", 1.05070102214813232421875f};
constexpr ActivationAttrs kReadHardSigmoid{"alpha", 0.2f, "beta", 0.5f};
constexpr ActivationAttrs kReadShrink{"bias", 0.0f, "lambd", 0.5f};

template <const ActivationAttrs& A>
Status prepare_activation(const InferContext& ctx, Prepared& out) {
  ActivationParams& p = out.record<ActivationParams>();
  p.alpha = ctx.node.attr_float(A.alpha, A.alpha_default);
  if constexpr (A.beta != nullptr) p.beta = ctx.node.attr_float(A.beta, A.beta_default);
  out.work = ctx.outputs[0].numel();
  return Status::ok();
}

// LeakyRelu, HardSigmoid, HardSwish and f32 Clip run as a one-step elementwise chain
// (kernels::f32_chain): vectorised on every ISA, and the formula a fused chain's step uses.
Status chain_step(const KernelContext& k, kernels::ChainOp op, float c0, float c1) {
  kernels::ChainProgram p;
  p.steps = 1;
  p.step[0] = kernels::ChainStep{op, 0, kernels::kChainNone, c0, c1};
  kernels::f32_chain(p, k.in(0).as<const float>() + k.begin, k.out(0).as<float>() + k.begin, size_t(k.end - k.begin));
  return Status::ok();
}

Status leaky_relu_kernel(const KernelContext& k) {
  return chain_step(k, kernels::ChainOp::LeakyRelu, k.params<ActivationParams>().alpha, 0.0f);
}
template <typename T>
void clip_int(const KernelContext& k) {
  const T lo = k.has_input(1) ? *k.in(1).as<const T>() : std::numeric_limits<T>::lowest();
  const T hi = k.has_input(2) ? *k.in(2).as<const T>() : std::numeric_limits<T>::max();
  const T* x = k.in(0).as<const T>();
  T* y = k.out(0).as<T>();
  for (int64_t i = k.begin; i < k.end; ++i) {
    const T v = x[i] < lo ? lo : x[i];
    y[i] = v > hi ? hi : v;
  }
}

Status clip_kernel(const KernelContext& k) {
  switch (k.in(0).dtype) {
    case DType::i64: clip_int<int64_t>(k); return Status::ok();
    case DType::i32: clip_int<int32_t>(k); return Status::ok();
    case DType::i8: clip_int<int8_t>(k); return Status::ok();
    case DType::u8: clip_int<uint8_t>(k); return Status::ok();
    default: break;
  }
  const float lo = k.has_input(1) ? *k.in(1).as<const float>() : -INFINITY;
  const float hi = k.has_input(2) ? *k.in(2).as<const float>() : INFINITY;
  return chain_step(k, kernels::ChainOp::Clip, lo, hi);
}

Status elu_kernel(const KernelContext& k) {
  const float alpha = k.params<ActivationParams>().alpha;
  return map_f32(k, [alpha](float v) { return v < 0.0f ? alpha * (kernels::exp_f32(v) - 1.0f) : v; });
}
Status selu_kernel(const KernelContext& k) {
  const float alpha = k.params<ActivationParams>().alpha;
  const float gamma = k.params<ActivationParams>().beta;  // Selu's gamma
  return map_f32(k, [alpha, gamma](float v) { return v > 0.0f ? gamma * v : gamma * (alpha * kernels::exp_f32(v) - alpha); });
}
Status softplus_kernel(const KernelContext& k) {
  // log(1 + exp(x)) without overflow: x + log(1 + exp(-x)) for positive x.
  return map_f32(k, [](float v) {
    return v > 0.0f ? v + kernels::log_f32(1.0f + kernels::exp_f32(-v)) : kernels::log_f32(1.0f + kernels::exp_f32(v));
  });
}
Status softsign_kernel(const KernelContext& k) { return map_f32(k, [](float v) { return v / (1.0f + std::fabs(v)); }); }
Status hard_sigmoid_kernel(const KernelContext& k) {
  return chain_step(k, kernels::ChainOp::HardSigmoid, k.params<ActivationParams>().alpha, k.params<ActivationParams>().beta);
}
Status hard_swish_kernel(const KernelContext& k) {
  return chain_step(k, kernels::ChainOp::HardSwish, 0.0f, 0.0f);
}
Status thresholded_relu_kernel(const KernelContext& k) {
  const float alpha = k.params<ActivationParams>().alpha;
  return map_f32(k, [alpha](float v) { return v > alpha ? v : 0.0f; });
}
Status shrink_kernel(const KernelContext& k) {
  const float bias = k.params<ActivationParams>().alpha, lambd = k.params<ActivationParams>().beta;
  return map_f32(k, [bias, lambd](float v) { return v < -lambd ? v + bias : v > lambd ? v - bias : 0.0f; });
}
Status celu_kernel(const KernelContext& k) {
  const float alpha = k.params<ActivationParams>().alpha;
  return map_f32(k, [alpha](float v) { return v > 0.0f ? v : alpha * (kernels::exp_f32(v / alpha) - 1.0f); });
}

// ---- PRelu: slope broadcast to X (unidirectional) ----

Status infer_prelu(InferContext& ctx) {
  OM_TRY(infer_same_binary(ctx, {DType::f32}, false));
  if (ctx.outputs[0].shape != ctx.input(0)->shape)
    return ctx.error(ErrorKind::ShapeMismatch, msg("slope ", shape_str(ctx.input(1)->shape), " must broadcast to X ",
                                                   shape_str(ctx.input(0)->shape)));
  return Status::ok();
}
Status prelu_kernel(const KernelContext& k) {
  binary_range<float, float>(k, [](float x, float s) { return x < 0.0f ? s * x : x; });
  return Status::ok();
}

constexpr AttrSpec kGeluAttrs[] = {{"approximate", AttrKind::String}};
constexpr AttrSpec kAlphaAttrs[] = {{"alpha", AttrKind::Float}};
constexpr AttrSpec kSeluAttrs[] = {{"alpha", AttrKind::Float}, {"gamma", AttrKind::Float}};
constexpr AttrSpec kHardSigmoidAttrs[] = {{"alpha", AttrKind::Float}, {"beta", AttrKind::Float}};
constexpr AttrSpec kShrinkAttrs[] = {{"bias", AttrKind::Float}, {"lambd", AttrKind::Float}};

constexpr OpDef kOps[] = {
    op("Gelu").since_opset(20).per_item(BatchRule::Broadcast).inputs(1).attributes(kGeluAttrs).shapes(infer_gelu).prepared(prepare_gelu).kernel(gelu_kernel)
        .doc("f32, approximate none|tanh").with_flags(kOpF16InF32),
    op("LeakyRelu").upgrades_from(6).per_item(BatchRule::Broadcast).inputs(1).attributes(kAlphaAttrs).shapes(infer_f32_unary)
        .prepared(prepare_activation<kReadLeakyRelu>).kernel(leaky_relu_kernel).doc("f32, alpha").with_flags(kOpF16InF32),
    op("Clip").upgrades_from(6).per_item(BatchRule::Broadcast).attr_became_input("min", 1, 11).attr_became_input("max", 2, 11).inputs(1, 3).shapes(infer_clip)
        .prepared(prepare_elements).kernel(clip_kernel).doc("f32 i64 i32 i8 u8, optional scalar min/max inputs").with_flags(kOpF16InF32),
    op("PRelu").upgrades_from(7).per_item(BatchRule::Broadcast).inputs(2).shapes(infer_prelu).prepared(prepare_broadcast).kernel(prelu_kernel).doc("f32, slope broadcast to X").with_flags(kOpF16InF32),
    f32_unary_op("Elu", elu_kernel, "f32, alpha; library exp").attributes(kAlphaAttrs).prepared(prepare_activation<kReadAlpha>).with_flags(kOpF16InF32),
    f32_unary_op("Selu", selu_kernel, "f32, alpha, gamma; library exp").attributes(kSeluAttrs).prepared(prepare_activation<kReadSelu>).with_flags(kOpF16InF32),
    f32_unary_op("Softplus", softplus_kernel, "f32; library exp and log").upgrades_from(1).with_flags(kOpF16InF32),
    f32_unary_op("Softsign", softsign_kernel, "f32").upgrades_from(1).with_flags(kOpF16InF32),
    f32_unary_op("HardSigmoid", hard_sigmoid_kernel, "f32, alpha, beta").attributes(kHardSigmoidAttrs).prepared(prepare_activation<kReadHardSigmoid>).with_flags(kOpF16InF32),
    op("HardSwish").since_opset(14).per_item(BatchRule::Broadcast).inputs(1).shapes(infer_f32_unary).prepared(prepare_elements).kernel(hard_swish_kernel).doc("f32").with_flags(kOpF16InF32),
    op("ThresholdedRelu").upgrades_from(10).per_item(BatchRule::Broadcast).inputs(1).attributes(kAlphaAttrs).shapes(infer_f32_unary)
        .prepared(prepare_activation<kReadAlpha>).kernel(thresholded_relu_kernel)
        .doc("f32, alpha"),
    op("Shrink").upgrades_from(9).per_item(BatchRule::Broadcast).inputs(1).attributes(kShrinkAttrs).shapes(infer_f32_unary)
        .prepared(prepare_activation<kReadShrink>).kernel(shrink_kernel).doc("f32, bias, lambd"),
    op("Celu").since_opset(12).per_item(BatchRule::Broadcast).inputs(1).attributes(kAlphaAttrs).shapes(infer_f32_unary)
        .prepared(prepare_activation<kReadAlpha>).kernel(celu_kernel).doc("f32, alpha; library exp"),
};

}  // namespace

}  // namespace om::graph::ops

// The family's operators, one symbol each (onemodel/op_list.h).
#define OM_ACTIVATIONS_OPS(X) \
  X(Gelu) X(LeakyRelu) X(Clip) X(PRelu) X(Elu) X(Selu) X(Softplus) \
  X(Softsign) X(HardSigmoid) X(HardSwish) X(ThresholdedRelu) X(Shrink) X(Celu)
OM_OP_FAMILY_TABLE(activations, OM_ACTIVATIONS_OPS)
