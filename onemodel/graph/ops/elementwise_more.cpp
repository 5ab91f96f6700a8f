// More elementwise graph operators: logic (And, Or, Xor, Not), Mod, Sign, rounding, Cos/Sin,
// the parametric activations (PRelu, Elu, Selu, Softplus, Softsign, HardSigmoid, HardSwish)
// and the variadic Sum/Mean. One rounding per element with the library's own exp/log/sin/cos, so
// the fast and exact kernels are one function (docs/exactness.md).
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "onemodel/core/dtype_visit.h"
#include "onemodel/graph/ops/op_util.h"
#include "onemodel/graph/ops/trig.h"
#include "onemodel/kernels/int_arith.h"
#include "onemodel/kernels/kernels.h"

namespace om::graph::ops {
namespace {

Status need_dtype(const InferContext& ctx, size_t i, std::initializer_list<DType> allowed) {
  const ValueDesc* v = ctx.input(i);
  if (!v) return ctx.error(ErrorKind::InvalidArgument, msg("input ", i, " is required"));
  for (DType d : allowed)
    if (v->dtype == d) return Status::ok();
  std::string names;
  for (DType d : allowed) names += (names.empty() ? "" : ", ") + std::string(dtype_name(d));
  return ctx.error(ErrorKind::DTypeMismatch, msg("input ", i, " ('", ctx.node.inputs[i], "') has dtype ", dtype_name(v->dtype),
                                                 "; supported: ", names));
}

Status infer_same_binary(InferContext& ctx, std::initializer_list<DType> allowed, bool bool_out) {
  OM_TRY(need_dtype(ctx, 0, allowed));
  OM_TRY(need_dtype(ctx, 1, allowed));
  const ValueDesc* a = ctx.input(0);
  const ValueDesc* b = ctx.input(1);
  if (a->dtype != b->dtype)
    return ctx.error(ErrorKind::DTypeMismatch, msg("input dtypes differ: ", dtype_name(a->dtype), " and ", dtype_name(b->dtype)));
  std::vector<int64_t> shape;
  OM_TRY(broadcast_shapes(ctx, {&a->shape, &b->shape}, &shape));
  ctx.set_output(0, bool_out ? DType::boolean : a->dtype, std::move(shape));
  return Status::ok();
}

// Work units: output elements. The broadcasting ops keep their iterator in their record
// (BroadcastParams, ModParams), the maps their attributes.

// ---- logic ----

Status infer_logic(InferContext& ctx) { return infer_same_binary(ctx, {DType::boolean}, true); }

enum class Logic { And, Or, Xor };
template <Logic L>
Status logic_kernel(const KernelContext& k) {
  binary_range<bool, bool>(k, [](bool a, bool b) { return L == Logic::And ? (a && b) : L == Logic::Or ? (a || b) : (a != b); });
  return Status::ok();
}

Status infer_not(InferContext& ctx) {
  OM_TRY(need_dtype(ctx, 0, {DType::boolean}));
  ctx.set_output(0, DType::boolean, ctx.input(0)->shape);
  return Status::ok();
}
Status not_kernel(const KernelContext& k) {
  const bool* x = k.in(0).as<const bool>();
  bool* y = k.out(0).as<bool>();
  for (int64_t i = k.begin; i < k.end; ++i) y[i] = !x[i];
  return Status::ok();
}

// ---- Mod ----

Status infer_mod(InferContext& ctx) {
  OM_TRY(infer_same_binary(ctx, {DType::f32, DType::f64, DType::i64, DType::i32, DType::i16, DType::i8, DType::u64, DType::u32,
                                  DType::u16, DType::u8}, false));
  const bool fmod = attr_int(ctx.node, "fmod", 0) != 0;
  const DType dt = ctx.input(0)->dtype;
  if ((dt == DType::f32 || dt == DType::f64) && !fmod)
    return ctx.error(ErrorKind::InvalidArgument, msg(dtype_name(dt), " operands need fmod = 1 (ONNX Mod); set the attribute"));
  return Status::ok();
}

// Mod's record: the broadcast iterator and fmod. Work: output elements.
struct ModParams {
  BroadcastIter it;
  bool fmod = false;
};

Status prepare_mod(const InferContext& ctx, Prepared& out) {
  ModParams& p = out.record<ModParams>();
  const ValueDesc* operands[2] = {ctx.input(0), ctx.input(1)};
  p.it.init(ctx.outputs[0].shape, operands, 2);
  p.fmod = attr_int(ctx.node, "fmod", 0) != 0;
  out.work = p.it.size();
  return Status::ok();
}

template <typename T>
Status int_mod(const KernelContext& k, const BroadcastIter& it, bool fmod) {
  // The whole divisor, in every range: the run fails the same way however it is split.
  int64_t at = 0;
  if (kernels::int_has_zero(k.in(1).as<const T>(), k.in(1).numel, &at))
    return k.error(ErrorKind::InvalidArgument, msg("integer modulo by zero (divisor, input 1, element ", at, ")"));
  binary_loop<T, T>(k, it, k.begin, k.end, [fmod](T a, T b) -> T {
    if constexpr (std::is_signed_v<T>)
      if (b == T(-1)) return T(0);  // also INT_MIN % -1, undefined in C++
    T r = T(a % b);
    if constexpr (std::is_signed_v<T>)
      if (!fmod && r != 0 && ((r < 0) != (b < 0))) r = T(r + b);  // the sign of the divisor
    return r;
  });
  return Status::ok();
}

Status mod_kernel(const KernelContext& k) {
  const ModParams& p = k.params<ModParams>();
  // std::fmod is exact (the remainder is representable), so f32 and f64 are exact kernels too.
  return visit_dtype(k.in(0).dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      binary_loop<T, T>(k, p.it, k.begin, k.end, [](T a, T b) { return std::fmod(a, b); });
      return Status::ok();
    } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      return int_mod<T>(k, p.it, p.fmod);
    } else {
      return k.error(ErrorKind::DTypeMismatch, "Mod: unsupported dtype");  // refused at plan time
    }
  });
}

// ---- unary ----

Status infer_f32(InferContext& ctx) {
  OM_TRY(need_dtype(ctx, 0, {DType::f32}));
  ctx.set_output(0, DType::f32, ctx.input(0)->shape);
  return Status::ok();
}

// y = f(x) over elements [k.begin, k.end).
template <typename F>
Status map_f32(const KernelContext& k, F f) {
  const float* x = k.in(0).as<const float>();
  float* y = k.out(0).as<float>();
  for (int64_t i = k.begin; i < k.end; ++i) y[i] = f(x[i]);
  return Status::ok();
}

Status floor_kernel(const KernelContext& k) { return map_f32(k, [](float v) { return std::floor(v); }); }
Status ceil_kernel(const KernelContext& k) { return map_f32(k, [](float v) { return std::ceil(v); }); }
// Halves to even, as ONNX Round (the default rounding mode of the C library).
Status round_kernel(const KernelContext& k) { return map_f32(k, [](float v) { return std::nearbyint(v); }); }
// sin and cos of a float, computed in double: x = q (pi/2) + r by a three-part Cody-Waite
// reduction (exact products for |x| < 2^19 pi/2; beyond, less accurate but still the same bits),
// then Taylor polynomials on |r| <= pi/4 and one rounding to float. Only +, -, * and nearbyint on
// doubles (the library is compiled without fma contraction), so every IEEE machine gives the
// same bits: exact-mode kernels (docs/exactness.md).
constexpr double kPio2a = 1.57079632673412561417e+00;  // pi/2 in three parts
constexpr double kPio2b = 6.07710050630396597660e-11;
constexpr double kPio2c = 2.02226624871116645580e-21;
constexpr double kTwoOverPi = 6.36619772367581382433e-01;

constexpr double fact(int n) { return n <= 1 ? 1.0 : double(n) * fact(n - 1); }

// Taylor coefficients (-1)^j / (2j+1)! and (-1)^j / (2j)!, j = 1..10, rounded once at compile time.
struct TrigCoeffs {
  double s[10], c[10];
};
constexpr TrigCoeffs trig_coeffs() {
  TrigCoeffs t{};
  for (int j = 1; j <= 10; ++j) {
    t.s[j - 1] = (j % 2 ? -1.0 : 1.0) / fact(2 * j + 1);
    t.c[j - 1] = (j % 2 ? -1.0 : 1.0) / fact(2 * j);
  }
  return t;
}
constexpr TrigCoeffs kTrig = trig_coeffs();

double sin_poly(double r) {  // r - r^3/3! + ... + r^21/21!
  const double r2 = r * r;
  double p = 0.0;
  for (int j = 9; j >= 0; --j) p = kTrig.s[j] + r2 * p;
  return r + r * r2 * p;
}
double cos_poly(double r) {  // 1 - r^2/2! + ... + r^20/20!
  const double r2 = r * r;
  double p = 0.0;
  for (int j = 9; j >= 0; --j) p = kTrig.c[j] + r2 * p;
  return 1.0 + r2 * p;
}

template <bool Cos>
float sin_cos_f32(float xf) {
  if (!std::isfinite(xf)) return std::numeric_limits<float>::quiet_NaN();
  const double x = xf;
  const double q = std::nearbyint(x * kTwoOverPi);
  const double r = ((x - q * kPio2a) - q * kPio2b) - q * kPio2c;
  const int quadrant = int(int64_t(std::fmod(q, 4.0) + 4.0) % 4) + (Cos ? 1 : 0);
  double v;
  switch (quadrant % 4) {
    case 0: v = sin_poly(r); break;
    case 1: v = cos_poly(r); break;
    case 2: v = -sin_poly(r); break;
    default: v = -cos_poly(r); break;
  }
  return float(v);
}

Status cos_kernel(const KernelContext& k) { return map_f32(k, [](float v) { return sin_cos_f32<true>(v); }); }
Status sin_kernel(const KernelContext& k) { return map_f32(k, [](float v) { return sin_cos_f32<false>(v); }); }

// The record of Elu (alpha), Selu (alpha; gamma in beta) and HardSigmoid (alpha, beta), filled
// by their own prepare. Work: elements.
struct ActivationParams {
  float alpha = 0.0f, beta = 0.0f;
};

Status prepare_elu(const InferContext& ctx, Prepared& out) {
  out.record<ActivationParams>().alpha = attr_float(ctx.node, "alpha", 1.0f);
  out.work = ctx.outputs[0].numel();
  return Status::ok();
}
Status prepare_selu(const InferContext& ctx, Prepared& out) {
  ActivationParams& p = out.record<ActivationParams>();
  p.alpha = attr_float(ctx.node, "alpha", 1.67326319217681884765625f);
  p.beta = attr_float(ctx.node, "gamma", 1.05070102214813232421875f);
  out.work = ctx.outputs[0].numel();
  return Status::ok();
}
Status prepare_hard_sigmoid(const InferContext& ctx, Prepared& out) {
  ActivationParams& p = out.record<ActivationParams>();
  p.alpha = attr_float(ctx.node, "alpha", 0.2f);
  p.beta = attr_float(ctx.node, "beta", 0.5f);
  out.work = ctx.outputs[0].numel();
  return Status::ok();
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
  const float alpha = k.params<ActivationParams>().alpha, beta = k.params<ActivationParams>().beta;
  return map_f32(k, [alpha, beta](float v) { return std::fmax(0.0f, std::fmin(1.0f, alpha * v + beta)); });
}
Status hard_swish_kernel(const KernelContext& k) {
  return map_f32(k, [](float v) { return v * std::fmax(0.0f, std::fmin(1.0f, v * (1.0f / 6.0f) + 0.5f)); });
}

Status infer_sign(InferContext& ctx) {
  OM_TRY(need_dtype(ctx, 0, {DType::f32, DType::i64, DType::i32, DType::i8, DType::u8}));
  ctx.set_output(0, ctx.input(0)->dtype, ctx.input(0)->shape);
  return Status::ok();
}
template <typename T>
void sign_typed(const KernelContext& k) {
  const T* x = k.in(0).as<const T>();
  T* y = k.out(0).as<T>();
  for (int64_t i = k.begin; i < k.end; ++i) y[i] = x[i] > T(0) ? T(1) : x[i] < T(0) ? T(-1) : x[i];
}
Status sign_kernel(const KernelContext& k) {
  switch (k.in(0).dtype) {
    case DType::f32: sign_typed<float>(k); break;
    case DType::i64: sign_typed<int64_t>(k); break;
    case DType::i32: sign_typed<int32_t>(k); break;
    case DType::i8: sign_typed<int8_t>(k); break;
    case DType::u8: sign_typed<uint8_t>(k); break;
    default: return k.error(ErrorKind::DTypeMismatch, "Sign: unsupported dtype");
  }
  return Status::ok();
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

// ---- Sum / Mean: ((x0 + x1) + x2) ... in input order, then one division for Mean ----

Status infer_variadic(InferContext& ctx) {
  std::vector<const std::vector<int64_t>*> shapes;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    OM_TRY(need_dtype(ctx, i, {DType::f32}));
    shapes.push_back(&ctx.input(i)->shape);
  }
  std::vector<int64_t> shape;
  OM_TRY(broadcast_shapes(ctx, shapes, &shape));
  ctx.set_output(0, DType::f32, std::move(shape));
  return Status::ok();
}

template <bool Mean>
Status variadic_kernel(const KernelContext& k) {
  fold_inputs<float>(k, k.begin, k.end, [](float acc, float x) { return acc + x; });
  if (Mean) {
    float* y = k.out(0).as<float>();
    const float count = float(k.num_inputs);
    for (int64_t i = k.begin; i < k.end; ++i) y[i] = y[i] / count;
  }
  return Status::ok();
}

constexpr AttrSpec kModAttrs[] = {{"fmod", AttrKind::Int}};
constexpr AttrSpec kAlphaAttrs[] = {{"alpha", AttrKind::Float}};
constexpr AttrSpec kSeluAttrs[] = {{"alpha", AttrKind::Float}, {"gamma", AttrKind::Float}};
constexpr AttrSpec kHardSigmoidAttrs[] = {{"alpha", AttrKind::Float}, {"beta", AttrKind::Float}};

constexpr OpDef f32_unary(const char* type, KernelFn k, const char* notes) {
  return op(type).upgrades_from(6).inputs(1).shapes(infer_f32).prepared(prepare_elements).kernel(k).doc(notes);
}

constexpr OpDef kOps[] = {
    op("And").upgrades_from(7).inputs(2).shapes(infer_logic).prepared(prepare_broadcast).kernel(logic_kernel<Logic::And>).doc("bool, broadcasting"),
    op("Or").upgrades_from(7).inputs(2).shapes(infer_logic).prepared(prepare_broadcast).kernel(logic_kernel<Logic::Or>).doc("bool, broadcasting"),
    op("Xor").upgrades_from(7).inputs(2).shapes(infer_logic).prepared(prepare_broadcast).kernel(logic_kernel<Logic::Xor>).doc("bool, broadcasting"),
    op("Not").upgrades_from(1).inputs(1).shapes(infer_not).prepared(prepare_elements).kernel(not_kernel).doc("bool"),
    op("Mod").upgrades_from(10).inputs(2).attributes(kModAttrs).shapes(infer_mod).prepared(prepare_mod).kernel(mod_kernel)
        .doc("f32 f64 (fmod 1) i64 i32 i16 i8 u64 u32 u16 u8, broadcasting; fmod 0: the sign of the divisor; by zero is an error"),
    op("Sign").upgrades_from(9).inputs(1).shapes(infer_sign).prepared(prepare_elements).kernel(sign_kernel).doc("f32 i64 i32 i8 u8"),
    f32_unary("Floor", floor_kernel, "f32"),
    f32_unary("Ceil", ceil_kernel, "f32"),
    f32_unary("Round", round_kernel, "f32, halves to even").upgrades_from(11),
    op("Cos").upgrades_from(7).inputs(1).shapes(infer_f32)
        .prepared(prepare_elements).kernel(cos_kernel).doc("f32, library cos (double Cody-Waite and Taylor)"),
    op("Sin").upgrades_from(7).inputs(1).shapes(infer_f32)
        .prepared(prepare_elements).kernel(sin_kernel).doc("f32, library sin (double Cody-Waite and Taylor)"),
    op("PRelu").upgrades_from(7).inputs(2).shapes(infer_prelu).prepared(prepare_broadcast).kernel(prelu_kernel).doc("f32, slope broadcast to X"),
    f32_unary("Elu", elu_kernel, "f32, alpha; library exp").attributes(kAlphaAttrs).prepared(prepare_elu),
    f32_unary("Selu", selu_kernel, "f32, alpha, gamma; library exp").attributes(kSeluAttrs).prepared(prepare_selu),
    f32_unary("Softplus", softplus_kernel, "f32; library exp and log").upgrades_from(1),
    f32_unary("Softsign", softsign_kernel, "f32").upgrades_from(1),
    f32_unary("HardSigmoid", hard_sigmoid_kernel, "f32, alpha, beta").attributes(kHardSigmoidAttrs).prepared(prepare_hard_sigmoid),
    op("HardSwish").since_opset(14).inputs(1).shapes(infer_f32).prepared(prepare_elements).kernel(hard_swish_kernel).doc("f32"),
    op("Sum").upgrades_from(6).inputs(1, 64).shapes(infer_variadic).prepared(prepare_elements).kernel(variadic_kernel<false>)
        .doc("f32, broadcasting; summed in input order"),
    op("Mean").upgrades_from(6).inputs(1, 64).shapes(infer_variadic).prepared(prepare_elements).kernel(variadic_kernel<true>)
        .doc("f32, broadcasting; summed in input order, one division"),
};

}  // namespace

float library_cos_f32(float x) { return sin_cos_f32<true>(x); }
float library_sin_f32(float x) { return sin_cos_f32<false>(x); }

OpTable elementwise_more_ops() { return table_of(kOps); }

}  // namespace om::graph::ops
