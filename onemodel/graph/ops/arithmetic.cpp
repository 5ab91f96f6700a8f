// Arithmetic graph operators: Add, Sub, Mul, Div and Pow with numpy broadcasting, Neg, the
// f32 maps Sqrt, Erf, Exp, Log, Abs and Reciprocal, Mod, Sign, rounding (Floor, Ceil, Round),
// the trigonometric, inverse and hyperbolic maps, and the variadic Sum/Mean. f32 work goes
// through the shared kernels; integer paths are plain loops. Each op is one rounding per element
// with the library's own transcendental functions (trig.h, kernels/exact), so the fast and the
// exact kernel are the same function.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "onemodel/core/dtype_visit.h"
#include "onemodel/graph/ops/op_util.h"
#include "onemodel/graph/ops/trig.h"
#include "onemodel/kernels/int_arith.h"
#include "onemodel/kernels/kernels.h"
#include "onemodel/kernels/scalar/elementwise.h"

namespace om::graph::ops {
namespace {

using kernels::BinaryOp;
using kernels::UnaryOp;

// ---- inference ----

Status infer_arith(InferContext& ctx) {
  return infer_same_binary(ctx, {DType::f32, DType::f64, DType::i64, DType::i32, DType::i8, DType::u8}, false);
}

Status infer_neg(InferContext& ctx) {
  OM_TRY(require_dtype(ctx, 0, {DType::f32, DType::i64, DType::i32}));
  ctx.set_output(0, ctx.input(0)->dtype, ctx.input(0)->shape);
  return Status::ok();
}

// ---- kernels ----
// Work units: output elements. The broadcasting ops keep their iterator in a BroadcastParams
// record (prepare_broadcast), the same-shape maps only the work size (prepare_elements).

void f32_binary_broadcast(const KernelContext& k, BinaryOp op) {
  const BroadcastIter& it = k.params<BroadcastParams>().it;
  const float* a = k.in(0).as<const float>();
  const float* b = k.in(1).as<const float>();
  float* y = k.out(0).as<float>();
  const size_t sa = size_t(it.inner_step[1]), sb = size_t(it.inner_step[2]);
  it.for_each(k.begin, k.end, [&](const int64_t* off, int64_t n) {
    kernels::f32_binary(op, a + off[1], sa, b + off[2], sb, y + off[0], size_t(n));
  });
}

template <typename T>
Status int_arith(const KernelContext& k, BinaryOp op) {
  switch (op) {
    // Wrap-around and division defined once for both layers (kernels/int_arith.h).
    case BinaryOp::Add: binary_range<T, T>(k, [](T x, T y) { return kernels::int_wrap_add(x, y); }); break;
    case BinaryOp::Sub: binary_range<T, T>(k, [](T x, T y) { return kernels::int_wrap_sub(x, y); }); break;
    case BinaryOp::Mul: binary_range<T, T>(k, [](T x, T y) { return kernels::int_wrap_mul(x, y); }); break;
    case BinaryOp::Div: {
      // The whole divisor, in every range: the run fails the same way however it is split.
      int64_t at = 0;
      if (kernels::int_has_zero(k.in(1).as<const T>(), k.in(1).numel, &at))
        return k.error(ErrorKind::InvalidArgument, msg(kernels::int_div_by_zero_text(), " (divisor, input 1, element ", at, ")"));
      binary_range<T, T>(k, [](T x, T y) { return kernels::int_div(x, y); });
      break;
    }
    default: return k.error(ErrorKind::Internal, "int_arith: unsupported op");
  }
  return Status::ok();
}

// f64: IEEE double, one rounding per element (exact by nature, as the f32 kernels are).
void f64_arith(const KernelContext& k, BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: binary_range<double, double>(k, [](double x, double y) { return x + y; }); break;
    case BinaryOp::Sub: binary_range<double, double>(k, [](double x, double y) { return x - y; }); break;
    case BinaryOp::Mul: binary_range<double, double>(k, [](double x, double y) { return x * y; }); break;
    default: binary_range<double, double>(k, [](double x, double y) { return x / y; }); break;
  }
}

template <BinaryOp Op>
Status arith_kernel(const KernelContext& k) {
  switch (k.in(0).dtype) {
    case DType::f32: f32_binary_broadcast(k, Op); return Status::ok();
    case DType::f64: f64_arith(k, Op); return Status::ok();
    case DType::i64: return int_arith<int64_t>(k, Op);
    case DType::i32: return int_arith<int32_t>(k, Op);
    case DType::i8: return int_arith<int8_t>(k, Op);
    case DType::u8: return int_arith<uint8_t>(k, Op);
    default: return k.error(ErrorKind::DTypeMismatch, "arith kernel: unsupported dtype");
  }
}

Status neg_kernel(const KernelContext& k) {
  const int64_t b = k.begin, e = k.end;
  switch (k.in(0).dtype) {
    case DType::f32: unary_range(k, UnaryOp::Neg); break;
    case DType::i64: for (int64_t i = b; i < e; ++i) k.out(0).as<int64_t>()[i] = kernels::int_wrap_neg(k.in(0).as<const int64_t>()[i]); break;
    case DType::i32: for (int64_t i = b; i < e; ++i) k.out(0).as<int32_t>()[i] = kernels::int_wrap_neg(k.in(0).as<const int32_t>()[i]); break;
    default: return k.error(ErrorKind::DTypeMismatch, "Neg: unsupported dtype");
  }
  return Status::ok();
}

// Pow(T, T1) -> T: an integer base with an integer exponent is raised exactly in integer
// arithmetic (int_pow); a float exponent of an integer base, or an integer exponent of an f32
// base, is raised in double and converted to T (integers truncate, as ONNX Runtime does).
Status infer_pow(InferContext& ctx) {
  OM_TRY(require_dtype(ctx, 0, {DType::f32, DType::i64, DType::i32}));
  OM_TRY(require_dtype(ctx, 1, {DType::f32, DType::f64, DType::i64, DType::i32, DType::i16, DType::i8, DType::u64, DType::u32,
                                DType::u16, DType::u8}));
  std::vector<int64_t> shape;
  OM_TRY(broadcast_shapes(ctx, {&ctx.input(0)->shape, &ctx.input(1)->shape}, &shape));
  ctx.set_output(0, ctx.input(0)->dtype, std::move(shape));
  return Status::ok();
}

template <typename T>
double as_double(const void* p, int64_t i) { return double(static_cast<const T*>(p)[i]); }

// base^e exactly, modulo 2^bits like the integer Mul (exponentiation by squaring with wrapping
// products; through double, INT64_MAX^1 and (-2)^63 came out wrong). A negative exponent has the
// integer part of 1 / base^|e|: 1 for base 1, +-1 for base -1 (by the exponent's parity), 0
// otherwise (base 0 included, where the real result is infinite).
template <typename R>
R int_pow(R base, bool negative, uint64_t e) {
  if (negative) {
    if (base == R(1)) return R(1);
    if (base == R(-1)) return (e & 1) ? R(-1) : R(1);
    return R(0);
  }
  R r = R(1);
  while (e) {
    if (e & 1) r = kernels::int_wrap_mul(r, base);
    e >>= 1;
    if (e) base = kernels::int_wrap_mul(base, base);
  }
  return r;
}

// An integer exponent as sign and magnitude (u64 magnitudes beyond INT64_MAX included).
template <typename T>
void exponent_of(const void* p, int64_t i, bool* negative, uint64_t* mag) {
  const T v = static_cast<const T*>(p)[i];
  if constexpr (std::is_signed_v<T>) {
    *negative = v < 0;
    *mag = v < 0 ? uint64_t(0) - uint64_t(v) : uint64_t(v);
  } else {
    *negative = false;
    *mag = uint64_t(v);
  }
}

template <typename R, typename E>
void pow_int_typed(const KernelContext& k) {
  const BroadcastIter& it = k.params<BroadcastParams>().it;
  const R* a = k.in(0).as<const R>();
  const void* b = k.in(1).data;
  R* y = k.out(0).as<R>();
  const int64_t sa = it.inner_step[1], sb = it.inner_step[2];
  it.for_each(k.begin, k.end, [&](const int64_t* off, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      bool negative = false;
      uint64_t mag = 0;
      exponent_of<E>(b, off[2] + i * sb, &negative, &mag);
      y[off[0] + i] = int_pow(a[off[1] + i * sa], negative, mag);
    }
  });
}

// True when both operands are integers (then int_pow gives the exact result).
template <typename R>
bool pow_int(const KernelContext& k) {
  switch (k.in(1).dtype) {
    case DType::i64: pow_int_typed<R, int64_t>(k); return true;
    case DType::i32: pow_int_typed<R, int32_t>(k); return true;
    case DType::i16: pow_int_typed<R, int16_t>(k); return true;
    case DType::i8: pow_int_typed<R, int8_t>(k); return true;
    case DType::u64: pow_int_typed<R, uint64_t>(k); return true;
    case DType::u32: pow_int_typed<R, uint32_t>(k); return true;
    case DType::u16: pow_int_typed<R, uint16_t>(k); return true;
    case DType::u8: pow_int_typed<R, uint8_t>(k); return true;
    default: return false;
  }
}

template <typename R>
void pow_mixed(const KernelContext& k) {
  const BroadcastIter& it = k.params<BroadcastParams>().it;
  // Every operand dtype infer_pow admits, read as double: exact except i64/u64 magnitudes beyond
  // 2^53, which round to the nearest double first.
  auto read = [](const TensorArg& t) {
    return visit_dtype(t.dtype, [](auto tag) -> double (*)(const void*, int64_t) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) return as_double<T>;
      else return as_double<float>;  // f16 and bool: refused by infer_pow
    });
  };
  double (*ra)(const void*, int64_t) = read(k.in(0));
  double (*rb)(const void*, int64_t) = read(k.in(1));
  const void* a = k.in(0).data;
  const void* b = k.in(1).data;
  R* y = k.out(0).as<R>();
  const int64_t sa = it.inner_step[1], sb = it.inner_step[2];
  it.for_each(k.begin, k.end, [&](const int64_t* off, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      const double v = std::pow(ra(a, off[1] + i * sa), rb(b, off[2] + i * sb));
      if constexpr (std::is_integral_v<R>) {
        y[off[0] + i] = std::isfinite(v) && v > double(std::numeric_limits<R>::lowest()) && v < double(std::numeric_limits<R>::max())
                            ? R(v) : R(0);
      } else {
        y[off[0] + i] = R(v);
      }
    }
  });
}

Status pow_kernel(const KernelContext& k) {
  if (k.in(0).dtype == DType::f32 && k.in(1).dtype == DType::f32) {
    f32_binary_broadcast(k, BinaryOp::Pow);
    return Status::ok();
  }
  switch (k.in(0).dtype) {
    case DType::f32: pow_mixed<float>(k); break;
    case DType::i64: if (!pow_int<int64_t>(k)) pow_mixed<int64_t>(k); break;
    case DType::i32: if (!pow_int<int32_t>(k)) pow_mixed<int32_t>(k); break;
    default: return k.error(ErrorKind::DTypeMismatch, "Pow: unsupported dtype");
  }
  return Status::ok();
}

// Exact sessions: the library's pow (kernels/scalar/scalar.cpp: its own exp and log, no C
// library) for an f32 base, the exponent rounded to f32 first when it has another dtype (exact
// for integers below 2^24); integer base and exponent by squaring, exact by nature, and so an
// integer base with integral floating exponents. A fractional exponent of an integer base would
// need the C library's pow: refused when running, naming the fix.
template <typename E>
void pow_f32_exponent_as_f32(const KernelContext& k) {
  const BroadcastIter& it = k.params<BroadcastParams>().it;
  const float* a = k.in(0).as<const float>();
  const E* b = k.in(1).as<const E>();
  float* y = k.out(0).as<float>();
  const int64_t sa = it.inner_step[1], sb = it.inner_step[2];
  it.for_each(k.begin, k.end, [&](const int64_t* off, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[off[0] + i] = kernels::elem::pow(a[off[1] + i * sa], float(b[off[2] + i * sb]));
  });
}

// An integer base with integral floating exponents: exactly int_pow's result (what Fast's
// double pow then truncation gives while nothing overflows). The whole exponent is checked
// first, so every split of the work fails alike on a fractional one.
template <typename R, typename E>
Status pow_int_integral_exponent(const KernelContext& k) {
  const E* b = k.in(1).as<const E>();
  for (int64_t i = 0; i < k.in(1).numel; ++i)
    if (!(std::fabs(b[i]) < 9.2e18) || std::trunc(b[i]) != b[i])
      return k.error(ErrorKind::Unsupported, msg("Pow of a ", dtype_name(k.in(0).dtype), " base with the ", dtype_name(k.in(1).dtype), " exponent ",
                                                 double(b[i]), " (element ", i, ") has no exact kernel (it needs the C library's pow); cast the "
                                                 "base to f32 or use a Fast session"));
  const BroadcastIter& it = k.params<BroadcastParams>().it;
  const R* a = k.in(0).as<const R>();
  R* y = k.out(0).as<R>();
  const int64_t sa = it.inner_step[1], sb = it.inner_step[2];
  it.for_each(k.begin, k.end, [&](const int64_t* off, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      const double e = double(b[off[2] + i * sb]);
      y[off[0] + i] = int_pow(a[off[1] + i * sa], e < 0, uint64_t(std::fabs(e)));
    }
  });
  return Status::ok();
}

template <typename R>
Status pow_int_exact(const KernelContext& k) {
  if (pow_int<R>(k)) return Status::ok();
  if (k.in(1).dtype == DType::f32) return pow_int_integral_exponent<R, float>(k);
  if (k.in(1).dtype == DType::f64) return pow_int_integral_exponent<R, double>(k);
  return k.error(ErrorKind::DTypeMismatch, "Pow: unsupported exponent dtype");
}

Status pow_exact_kernel(const KernelContext& k) {
  if (k.in(0).dtype == DType::f32) {
    switch (k.in(1).dtype) {
      case DType::f32: f32_binary_broadcast(k, BinaryOp::Pow); return Status::ok();
      case DType::f64: pow_f32_exponent_as_f32<double>(k); return Status::ok();
      case DType::i64: pow_f32_exponent_as_f32<int64_t>(k); return Status::ok();
      case DType::i32: pow_f32_exponent_as_f32<int32_t>(k); return Status::ok();
      case DType::i16: pow_f32_exponent_as_f32<int16_t>(k); return Status::ok();
      case DType::i8: pow_f32_exponent_as_f32<int8_t>(k); return Status::ok();
      case DType::u64: pow_f32_exponent_as_f32<uint64_t>(k); return Status::ok();
      case DType::u32: pow_f32_exponent_as_f32<uint32_t>(k); return Status::ok();
      case DType::u16: pow_f32_exponent_as_f32<uint16_t>(k); return Status::ok();
      case DType::u8: pow_f32_exponent_as_f32<uint8_t>(k); return Status::ok();
      default: break;
    }
  } else if (k.in(0).dtype == DType::i64) {
    return pow_int_exact<int64_t>(k);
  } else if (k.in(0).dtype == DType::i32) {
    return pow_int_exact<int32_t>(k);
  }
  return k.error(ErrorKind::DTypeMismatch, "Pow: unsupported dtype");
}

// ---- Mod ----

Status infer_mod(InferContext& ctx) {
  OM_TRY(infer_same_binary(ctx, {DType::f32, DType::f64, DType::i64, DType::i32, DType::i16, DType::i8, DType::u64, DType::u32,
                                  DType::u16, DType::u8}, false));
  const bool fmod = ctx.node.attr_int("fmod", 0) != 0;
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
  broadcast_record<ModParams>(ctx, out).fmod = ctx.node.attr_int("fmod", 0) != 0;
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

// ---- f32 maps ----

Status floor_kernel(const KernelContext& k) { return map_f32(k, [](float v) { return std::floor(v); }); }
Status ceil_kernel(const KernelContext& k) { return map_f32(k, [](float v) { return std::ceil(v); }); }
// Halves to even, as ONNX Round (the default rounding mode of the C library).
Status round_kernel(const KernelContext& k) { return map_f32(k, [](float v) { return std::nearbyint(v); }); }

// The library's own functions (trig.h): the same bits on every machine, so one kernel for both modes.
template <float (*F)(float)>
Status library_kernel(const KernelContext& k) { return map_f32(k, F); }

// ---- Sign ----

Status infer_sign(InferContext& ctx) {
  OM_TRY(require_dtype(ctx, 0, {DType::f32, DType::i64, DType::i32, DType::i8, DType::u8}));
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

// ---- Sum / Mean: ((x0 + x1) + x2) ... in input order, then one division for Mean ----

Status infer_variadic(InferContext& ctx) {
  std::vector<const std::vector<int64_t>*> shapes;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    OM_TRY(require_dtype(ctx, i, {DType::f32}));
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
constexpr OpDef library_op(const char* type, KernelFn k, int oldest) {
  return f32_unary_op(type, k, "f32, the library's own (double reduction and series, one rounding; graph/ops/trig.h)").upgrades_from(oldest)
      .with_flags(kOpF16InF32);
}

constexpr OpDef kOps[] = {
    broadcast_op("Add", 7, infer_arith, arith_kernel<BinaryOp::Add>, "f32 f64 i64 i32 i8 u8, broadcasting").with_flags(kOpF16InF32),
    broadcast_op("Sub", 7, infer_arith, arith_kernel<BinaryOp::Sub>, "f32 f64 i64 i32 i8 u8, broadcasting").with_flags(kOpF16InF32),
    broadcast_op("Mul", 7, infer_arith, arith_kernel<BinaryOp::Mul>, "f32 f64 i64 i32 i8 u8, broadcasting").with_flags(kOpF16InF32),
    broadcast_op("Div", 7, infer_arith, arith_kernel<BinaryOp::Div>,
                 "f32 f64 i64 i32 i8 u8, broadcasting; integer division truncates, by zero is an error").with_flags(kOpF16InF32),
    op("Pow").upgrades_from(7).per_item(BatchRule::Broadcast).inputs(2).shapes(infer_pow).prepared(prepare_broadcast).kernels(pow_kernel, pow_exact_kernel)
        .doc("f32 i64 i32 base, f32 f64 i64 i32 i16 i8 u64 u32 u16 u8 exponent, broadcasting; result has the base's dtype; integer base and exponent: exact, wrapping, a negative exponent gives 1 (base 1), +-1 (base -1) or 0; f32 base: the library's pow (Exact rounds another exponent dtype to f32 first); Exact refuses an integer base with a fractional exponent").with_flags(kOpF16InF32),
    op("Neg").upgrades_from(6).per_item(BatchRule::Broadcast).inputs(1).shapes(infer_neg).prepared(prepare_elements).kernel(neg_kernel).doc("f32 i64 i32").with_flags(kOpF16InF32),
    f32_unary_op("Sqrt", unary_kernel<UnaryOp::Sqrt>, "f32").with_flags(kOpF16InF32),
    f32_unary_op("Erf", unary_kernel<UnaryOp::Erf>, "f32, library erf").upgrades_from(9).with_flags(kOpF16InF32),
    f32_unary_op("Exp", unary_kernel<UnaryOp::Exp>, "f32, library exp").with_flags(kOpF16InF32),
    f32_unary_op("Log", unary_kernel<UnaryOp::Log>, "f32, library log").with_flags(kOpF16InF32),
    f32_unary_op("Abs", unary_kernel<UnaryOp::Abs>, "f32").with_flags(kOpF16InF32),
    f32_unary_op("Reciprocal", unary_kernel<UnaryOp::Reciprocal>, "f32").with_flags(kOpF16InF32),
    op("Mod").upgrades_from(10).per_item(BatchRule::Broadcast).inputs(2).attributes(kModAttrs).shapes(infer_mod).prepared(prepare_mod).kernel(mod_kernel)
        .doc("f32 f64 (fmod 1) i64 i32 i16 i8 u64 u32 u16 u8, broadcasting; fmod 0: the sign of the divisor; by zero is an error; "
             "f16 in f32 (fmod's result is exact, so rounding back changes nothing)").with_flags(kOpF16InF32),
    op("Sign").upgrades_from(9).per_item(BatchRule::Broadcast).inputs(1).shapes(infer_sign).prepared(prepare_elements).kernel(sign_kernel).doc("f32 i64 i32 i8 u8"),
    f32_unary_op("Floor", floor_kernel, "f32").with_flags(kOpF16InF32),
    f32_unary_op("Ceil", ceil_kernel, "f32").with_flags(kOpF16InF32),
    f32_unary_op("Round", round_kernel, "f32, halves to even").upgrades_from(11).with_flags(kOpF16InF32),
    library_op("Cos", library_kernel<library_cos_f32>, 7),
    library_op("Sin", library_kernel<library_sin_f32>, 7),
    library_op("Tan", library_kernel<library_tan_f32>, 7),
    library_op("Acos", library_kernel<library_acos_f32>, 7),
    library_op("Asin", library_kernel<library_asin_f32>, 7),
    library_op("Atan", library_kernel<library_atan_f32>, 7),
    library_op("Acosh", library_kernel<library_acosh_f32>, 9),
    library_op("Asinh", library_kernel<library_asinh_f32>, 9),
    library_op("Atanh", library_kernel<library_atanh_f32>, 9),
    library_op("Sinh", library_kernel<library_sinh_f32>, 9),
    library_op("Cosh", library_kernel<library_cosh_f32>, 9),
    op("Sum").upgrades_from(6).per_item(BatchRule::Broadcast).inputs(1, 64).shapes(infer_variadic).prepared(prepare_elements).kernel(variadic_kernel<false>)
        .doc("f32, broadcasting; summed in input order").with_flags(kOpF16InF32),
    op("Mean").upgrades_from(6).per_item(BatchRule::Broadcast).inputs(1, 64).shapes(infer_variadic).prepared(prepare_elements).kernel(variadic_kernel<true>)
        .doc("f32, broadcasting; summed in input order, one division").with_flags(kOpF16InF32),
};

}  // namespace

}  // namespace om::graph::ops

// The family's operators, one symbol each (onemodel/op_list.h).
#define OM_ARITHMETIC_OPS(X) \
  X(Add) X(Sub) X(Mul) X(Div) X(Pow) X(Neg) X(Sqrt) X(Erf) X(Exp) X(Log) X(Abs) X(Reciprocal) \
  X(Mod) X(Sign) X(Floor) X(Ceil) X(Round) X(Cos) X(Sin) X(Acos) X(Asin) X(Atan) X(Acosh) \
  X(Asinh) X(Atanh) X(Tan) X(Sinh) X(Cosh) X(Sum) X(Mean)
OM_OP_FAMILY_TABLE(arithmetic, OM_ARITHMETIC_OPS)
