// Further elementwise operators found in exported models and the ONNX node tests: the inverse
// and hyperbolic trigonometric functions and Tan (C library: fast only), GreaterOrEqual,
// LessOrEqual, IsNaN, IsInf, ThresholdedRelu, Shrink, Celu (library exp) and BitShift (unsigned integers).
// Apart from the C-library functions each is one rounding per element: exact by nature.
#include <cmath>

#include "onemodel/graph/ops/op_util.h"
#include "onemodel/kernels/kernels.h"

namespace om::graph::ops {
namespace {

Status infer_f32(InferContext& ctx) {
  const ValueDesc* x = ctx.input(0);
  if (!x || x->dtype != DType::f32)
    return ctx.error(ErrorKind::DTypeMismatch, msg("input must be f32", x ? msg(", got ", dtype_name(x->dtype)) : ""));
  ctx.set_output(0, DType::f32, x->shape);
  return Status::ok();
}

// Work units: output elements. The comparisons keep their broadcast iterator in a
// BroadcastParams record (prepare_broadcast), BitShift in its own with the direction, the maps
// their attributes.

template <float (*F)(float)>
Status libm_kernel(const KernelContext& k) {
  const float* x = k.in(0).as<const float>();
  float* y = k.out(0).as<float>();
  for (int64_t i = k.begin; i < k.end; ++i) y[i] = F(x[i]);
  return Status::ok();
}
float f_acos(float v) { return std::acos(v); }
float f_asin(float v) { return std::asin(v); }
float f_atan(float v) { return std::atan(v); }
float f_acosh(float v) { return std::acosh(v); }
float f_asinh(float v) { return std::asinh(v); }
float f_atanh(float v) { return std::atanh(v); }
float f_tan(float v) { return std::tan(v); }
float f_sinh(float v) { return std::sinh(v); }
float f_cosh(float v) { return std::cosh(v); }

// ---- comparisons ----

Status infer_compare(InferContext& ctx) {
  const ValueDesc* a = ctx.input(0);
  const ValueDesc* b = ctx.input(1);
  if (!a || !b) return ctx.error(ErrorKind::InvalidArgument, "needs two inputs");
  if (a->dtype != b->dtype)
    return ctx.error(ErrorKind::DTypeMismatch, msg("input dtypes differ: ", dtype_name(a->dtype), " and ", dtype_name(b->dtype)));
  if (a->dtype == DType::f16) return ctx.error(ErrorKind::DTypeMismatch, "f16 operands: Cast them to f32 first");
  std::vector<int64_t> shape;
  OM_TRY(broadcast_shapes(ctx, {&a->shape, &b->shape}, &shape));
  ctx.set_output(0, DType::boolean, std::move(shape));
  return Status::ok();
}

template <typename T, bool Greater>
void compare_typed(const KernelContext& k) {
  const BroadcastIter& it = k.params<BroadcastParams>().it;
  const T* a = k.in(0).as<const T>();
  const T* b = k.in(1).as<const T>();
  bool* y = k.out(0).as<bool>();
  const int64_t sa = it.inner_step[1], sb = it.inner_step[2];
  it.for_each(k.begin, k.end, [&](const int64_t* off, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      const T x = a[off[1] + i * sa], z = b[off[2] + i * sb];
      y[off[0] + i] = Greater ? x >= z : x <= z;
    }
  });
}

template <bool Greater>
Status compare_kernel(const KernelContext& k) {
  switch (k.in(0).dtype) {
    case DType::f32: compare_typed<float, Greater>(k); break;
    case DType::i64: compare_typed<int64_t, Greater>(k); break;
    case DType::i32: compare_typed<int32_t, Greater>(k); break;
    case DType::i8: compare_typed<int8_t, Greater>(k); break;
    case DType::u8: compare_typed<uint8_t, Greater>(k); break;
    case DType::boolean: compare_typed<bool, Greater>(k); break;
    default: return k.error(ErrorKind::DTypeMismatch, "comparison: unsupported dtype");
  }
  return Status::ok();
}

// ---- IsNaN / IsInf ----

Status infer_is(InferContext& ctx) {
  OM_TRY(infer_f32(ctx));
  ctx.outputs[0].dtype = DType::boolean;
  return Status::ok();
}
Status isnan_kernel(const KernelContext& k) {
  const float* x = k.in(0).as<const float>();
  bool* y = k.out(0).as<bool>();
  for (int64_t i = k.begin; i < k.end; ++i) y[i] = std::isnan(x[i]);
  return Status::ok();
}

// IsInf's record: which infinities count. Work: elements.
struct IsInfParams {
  bool negative = true, positive = true;
};

Status prepare_isinf(const InferContext& ctx, Prepared& out) {
  IsInfParams& p = out.record<IsInfParams>();
  p.negative = attr_int(ctx.node, "detect_negative", 1) != 0;
  p.positive = attr_int(ctx.node, "detect_positive", 1) != 0;
  out.work = ctx.outputs[0].numel();
  return Status::ok();
}

Status isinf_kernel(const KernelContext& k) {
  const bool neg = k.params<IsInfParams>().negative, pos = k.params<IsInfParams>().positive;
  const float* x = k.in(0).as<const float>();
  bool* y = k.out(0).as<bool>();
  for (int64_t i = k.begin; i < k.end; ++i) y[i] = std::isinf(x[i]) && (x[i] > 0 ? pos : neg);
  return Status::ok();
}

// ---- activations ----

// The record of ThresholdedRelu and Celu (alpha, default 1) and Shrink (bias, lambd), filled by
// their own prepare. Work: elements.
struct ActivationParams {
  float a = 1.0f, b = 0.0f;
};

Status prepare_alpha(const InferContext& ctx, Prepared& out) {
  out.record<ActivationParams>().a = attr_float(ctx.node, "alpha", 1.0f);
  out.work = ctx.outputs[0].numel();
  return Status::ok();
}

Status prepare_shrink(const InferContext& ctx, Prepared& out) {
  ActivationParams& p = out.record<ActivationParams>();
  p.a = attr_float(ctx.node, "bias", 0.0f);
  p.b = attr_float(ctx.node, "lambd", 0.5f);
  out.work = ctx.outputs[0].numel();
  return Status::ok();
}

Status thresholded_relu_kernel(const KernelContext& k) {
  const float alpha = k.params<ActivationParams>().a;
  const float* x = k.in(0).as<const float>();
  float* y = k.out(0).as<float>();
  for (int64_t i = k.begin; i < k.end; ++i) y[i] = x[i] > alpha ? x[i] : 0.0f;
  return Status::ok();
}
Status shrink_kernel(const KernelContext& k) {
  const float bias = k.params<ActivationParams>().a, lambd = k.params<ActivationParams>().b;
  const float* x = k.in(0).as<const float>();
  float* y = k.out(0).as<float>();
  for (int64_t i = k.begin; i < k.end; ++i) y[i] = x[i] < -lambd ? x[i] + bias : x[i] > lambd ? x[i] - bias : 0.0f;
  return Status::ok();
}
Status celu_kernel(const KernelContext& k) {
  const float alpha = k.params<ActivationParams>().a;
  const float* x = k.in(0).as<const float>();
  float* y = k.out(0).as<float>();
  for (int64_t i = k.begin; i < k.end; ++i)
    y[i] = x[i] > 0.0f ? x[i] : alpha * (kernels::exp_f32(x[i] / alpha) - 1.0f);
  return Status::ok();
}

// ---- BitShift (unsigned integers) ----

Status infer_bitshift(InferContext& ctx) {
  OM_TRY(infer_compare(ctx));
  const DType dt = ctx.input(0)->dtype;
  if (dt != DType::u8 && dt != DType::u16 && dt != DType::u32 && dt != DType::u64)
    return ctx.error(ErrorKind::DTypeMismatch, msg("BitShift takes unsigned integers (u8 u16 u32 u64), got ", dtype_name(dt)));
  const Attribute* d = find_attr(ctx.node, "direction");
  if (!d || (d->s != "LEFT" && d->s != "RIGHT"))
    return ctx.error(ErrorKind::InvalidArgument, "attribute direction must be \"LEFT\" or \"RIGHT\"");
  ctx.outputs[0].dtype = dt;
  return Status::ok();
}
// BitShift's record: the broadcast iterator and the direction. Work: output elements.
struct BitShiftParams {
  BroadcastIter it;
  bool left = false;
};

Status prepare_bitshift(const InferContext& ctx, Prepared& out) {
  BitShiftParams& p = out.record<BitShiftParams>();
  const ValueDesc* operands[2] = {ctx.input(0), ctx.input(1)};
  p.it.init(ctx.outputs[0].shape, operands, 2);
  p.left = attr_is(ctx.node, "direction", "LEFT");
  out.work = p.it.size();
  return Status::ok();
}

// A shift by the width or more is undefined in C++; ONNX's result there is 0 (all bits out).
template <typename T>
void bitshift_loop(const KernelContext& k) {
  constexpr T kBits = T(8 * sizeof(T));
  const BitShiftParams& p = k.params<BitShiftParams>();
  const bool left = p.left;
  binary_loop<T, T>(k, p.it, k.begin, k.end, [left](T v, T s) -> T {
    if (s >= kBits) return T(0);
    return left ? T(v << s) : T(v >> s);
  });
}

Status bitshift_kernel(const KernelContext& k) {
  switch (k.in(0).dtype) {
    case DType::u16: bitshift_loop<uint16_t>(k); break;
    case DType::u32: bitshift_loop<uint32_t>(k); break;
    case DType::u64: bitshift_loop<uint64_t>(k); break;
    default: bitshift_loop<uint8_t>(k); break;  // u8; others are refused at plan time
  }
  return Status::ok();
}

constexpr AttrSpec kIsInfAttrs[] = {{"detect_negative", AttrKind::Int}, {"detect_positive", AttrKind::Int}};
constexpr AttrSpec kAlphaAttrs[] = {{"alpha", AttrKind::Float}};
constexpr AttrSpec kShrinkAttrs[] = {{"bias", AttrKind::Float}, {"lambd", AttrKind::Float}};
constexpr AttrSpec kBitShiftAttrs[] = {{"direction", AttrKind::String}};

constexpr OpDef libm(const char* type, KernelFn k, int oldest) {
  return op(type).upgrades_from(oldest).inputs(1).shapes(infer_f32).prepared(prepare_elements).fast_only(k).doc("f32, C library; fast only");
}

constexpr OpDef kOps[] = {
    libm("Acos", libm_kernel<f_acos>, 7),
    libm("Asin", libm_kernel<f_asin>, 7),
    libm("Atan", libm_kernel<f_atan>, 7),
    libm("Acosh", libm_kernel<f_acosh>, 9),
    libm("Asinh", libm_kernel<f_asinh>, 9),
    libm("Atanh", libm_kernel<f_atanh>, 9),
    libm("Tan", libm_kernel<f_tan>, 7),
    libm("Sinh", libm_kernel<f_sinh>, 9),
    libm("Cosh", libm_kernel<f_cosh>, 9),
    op("GreaterOrEqual").upgrades_from(12).inputs(2).shapes(infer_compare).prepared(prepare_broadcast).kernel(compare_kernel<true>)
        .doc("f32 i64 i32 i8 u8 bool -> bool, broadcasting"),
    op("LessOrEqual").upgrades_from(12).inputs(2).shapes(infer_compare).prepared(prepare_broadcast).kernel(compare_kernel<false>)
        .doc("f32 i64 i32 i8 u8 bool -> bool, broadcasting"),
    op("IsNaN").upgrades_from(9).inputs(1).shapes(infer_is).prepared(prepare_elements).kernel(isnan_kernel).doc("f32 -> bool"),
    op("IsInf").upgrades_from(10).inputs(1).attributes(kIsInfAttrs).shapes(infer_is).prepared(prepare_isinf).kernel(isinf_kernel)
        .doc("f32 -> bool, detect_negative, detect_positive"),
    op("ThresholdedRelu").upgrades_from(10).inputs(1).attributes(kAlphaAttrs).shapes(infer_f32)
        .prepared(prepare_alpha).kernel(thresholded_relu_kernel)
        .doc("f32, alpha"),
    op("Shrink").upgrades_from(9).inputs(1).attributes(kShrinkAttrs).shapes(infer_f32)
        .prepared(prepare_shrink).kernel(shrink_kernel).doc("f32, bias, lambd"),
    op("Celu").since_opset(12).inputs(1).attributes(kAlphaAttrs).shapes(infer_f32)
        .prepared(prepare_alpha).kernel(celu_kernel).doc("f32, alpha; library exp"),
    op("BitShift").upgrades_from(11).inputs(2).attributes(kBitShiftAttrs).shapes(infer_bitshift).prepared(prepare_bitshift).kernel(bitshift_kernel)
        .doc("u8 u16 u32 u64, direction LEFT|RIGHT, broadcasting; shifts by the bit width or more give 0"),
};

}  // namespace

OpTable elementwise_extra_ops() { return table_of(kOps); }

}  // namespace om::graph::ops
