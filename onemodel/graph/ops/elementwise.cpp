// Elementwise graph operators: arithmetic with numpy broadcasting, comparisons, Where, and the
// unary activations. f32 work goes through the shared kernels; integer and bool paths are plain
// loops. Every op here is exact by nature (one rounding per element, the library's own
// transcendental functions), so the fast and the exact kernel are the same function — except
// Pow, whose kernel is not guaranteed identical across ISAs.
#include <cmath>
#include <limits>
#include <type_traits>

#include "onemodel/core/dtype_visit.h"
#include "onemodel/graph/ops/op_util.h"
#include "onemodel/kernels/int_arith.h"
#include "onemodel/kernels/kernels.h"

namespace om::graph::ops {
namespace {

using kernels::BinaryOp;
using kernels::UnaryOp;

// ---- inference ----

Status infer_broadcast_same_dtype(InferContext& ctx, bool bool_result) {
  const ValueDesc* a = ctx.input(0);
  const ValueDesc* b = ctx.input(1);
  if (!a || !b) return ctx.error(ErrorKind::InvalidArgument, "needs two inputs");
  if (a->dtype != b->dtype)
    return ctx.error(ErrorKind::DTypeMismatch, msg("input dtypes differ: ", dtype_name(a->dtype), " and ", dtype_name(b->dtype),
                                                   "; insert a Cast so both operands have one dtype"));
  std::vector<int64_t> shape;
  OM_TRY(broadcast_shapes(ctx, {&a->shape, &b->shape}, &shape));
  ctx.set_output(0, bool_result ? DType::boolean : a->dtype, std::move(shape));
  return Status::ok();
}

Status require_dtype(const InferContext& ctx, size_t i, std::initializer_list<DType> allowed) {
  const ValueDesc* v = ctx.input(i);
  if (!v) return ctx.error(ErrorKind::InvalidArgument, msg("input ", i, " is required"));
  for (DType d : allowed)
    if (v->dtype == d) return Status::ok();
  std::string names;
  for (DType d : allowed) names += (names.empty() ? "" : ", ") + std::string(dtype_name(d));
  return ctx.error(ErrorKind::DTypeMismatch, msg("input ", i, " has dtype ", dtype_name(v->dtype), "; supported: ", names));
}

Status infer_arith(InferContext& ctx) {
  OM_TRY(require_dtype(ctx, 0, {DType::f32, DType::i64, DType::i32, DType::i8, DType::u8}));
  return infer_broadcast_same_dtype(ctx, false);
}
Status infer_compare(InferContext& ctx) {
  OM_TRY(require_dtype(ctx, 0, {DType::f32, DType::i64, DType::i32, DType::boolean}));
  return infer_broadcast_same_dtype(ctx, true);
}

Status infer_where(InferContext& ctx) {
  OM_TRY(require_dtype(ctx, 0, {DType::boolean}));
  const ValueDesc* x = ctx.input(1);
  const ValueDesc* y = ctx.input(2);
  if (!x || !y) return ctx.error(ErrorKind::InvalidArgument, "needs three inputs (condition, X, Y)");
  if (x->dtype != y->dtype)
    return ctx.error(ErrorKind::DTypeMismatch, msg("X and Y dtypes differ: ", dtype_name(x->dtype), " and ", dtype_name(y->dtype)));
  std::vector<int64_t> shape;
  OM_TRY(broadcast_shapes(ctx, {&ctx.input(0)->shape, &x->shape, &y->shape}, &shape));
  ctx.set_output(0, x->dtype, std::move(shape));
  return Status::ok();
}

Status infer_f32_unary(InferContext& ctx) {
  OM_TRY(require_dtype(ctx, 0, {DType::f32}));
  ctx.set_output(0, DType::f32, ctx.input(0)->shape);
  return Status::ok();
}

Status infer_neg(InferContext& ctx) {
  OM_TRY(require_dtype(ctx, 0, {DType::f32, DType::i64, DType::i32}));
  ctx.set_output(0, ctx.input(0)->dtype, ctx.input(0)->shape);
  return Status::ok();
}

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

template <BinaryOp Op>
Status arith_kernel(const KernelContext& k) {
  switch (k.in(0).dtype) {
    case DType::f32: f32_binary_broadcast(k, Op); return Status::ok();
    case DType::i64: return int_arith<int64_t>(k, Op);
    case DType::i32: return int_arith<int32_t>(k, Op);
    case DType::i8: return int_arith<int8_t>(k, Op);
    case DType::u8: return int_arith<uint8_t>(k, Op);
    default: return k.error(ErrorKind::DTypeMismatch, "arith kernel: unsupported dtype");
  }
}

enum class Cmp { Eq, Lt, Gt };

template <typename T, Cmp C>
void compare_typed(const KernelContext& k) {
  binary_range<T, bool>(k, [](T x, T y) { return C == Cmp::Eq ? x == y : C == Cmp::Lt ? x < y : x > y; });
}

template <Cmp C>
Status compare_kernel(const KernelContext& k) {
  switch (k.in(0).dtype) {
    case DType::f32: compare_typed<float, C>(k); break;
    case DType::i64: compare_typed<int64_t, C>(k); break;
    case DType::i32: compare_typed<int32_t, C>(k); break;
    case DType::boolean: compare_typed<bool, C>(k); break;
    default: return k.error(ErrorKind::DTypeMismatch, "compare kernel: unsupported dtype");
  }
  return Status::ok();
}

template <typename T>
void where_typed(const KernelContext& k) {
  const BroadcastIter& it = k.params<BroadcastParams>().it;
  const bool* c = k.in(0).as<const bool>();
  const T* x = k.in(1).as<const T>();
  const T* y = k.in(2).as<const T>();
  T* out = k.out(0).as<T>();
  const int64_t sc = it.inner_step[1], sx = it.inner_step[2], sy = it.inner_step[3];
  it.for_each(k.begin, k.end, [&](const int64_t* off, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[off[0] + i] = c[off[1] + i * sc] ? x[off[2] + i * sx] : y[off[3] + i * sy];
  });
}

Status where_kernel(const KernelContext& k) {
  switch (dtype_size(k.in(1).dtype)) {
    case 1: where_typed<uint8_t>(k); break;
    case 2: where_typed<uint16_t>(k); break;
    case 4: where_typed<uint32_t>(k); break;
    case 8: where_typed<uint64_t>(k); break;
    default: return k.error(ErrorKind::Internal, "Where: unsupported element size");
  }
  return Status::ok();
}

// f32_unary over elements [k.begin, k.end).
void unary_range(const KernelContext& k, UnaryOp op) {
  kernels::f32_unary(op, k.in(0).as<const float>() + k.begin, k.out(0).as<float>() + k.begin, size_t(k.end - k.begin));
}

template <UnaryOp Op>
Status unary_kernel(const KernelContext& k) {
  unary_range(k, Op);
  return Status::ok();
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

// Gelu's record: the approximation. Work: elements.
struct GeluParams {
  UnaryOp op = UnaryOp::GeluErf;
};

Status prepare_gelu(const InferContext& ctx, Prepared& out) {
  out.record<GeluParams>().op = attr_is(ctx.node, "approximate", "tanh") ? UnaryOp::GeluTanh : UnaryOp::GeluErf;
  out.work = ctx.outputs[0].numel();
  return Status::ok();
}

Status gelu_kernel(const KernelContext& k) {
  unary_range(k, k.params<GeluParams>().op);
  return Status::ok();
}

Status infer_gelu(InferContext& ctx) {
  const Attribute* a = find_attr(ctx.node, "approximate");
  if (a && !(a->type == AttrType::String && (a->s == "none" || a->s == "tanh")))
    return ctx.error(ErrorKind::InvalidArgument, msg("attribute approximate must be \"none\" or \"tanh\", got \"", a->s, "\""));
  return infer_f32_unary(ctx);
}

// LeakyRelu's record: alpha. Work: elements.
struct LeakyParams {
  float alpha = 0.01f;
};

Status prepare_leaky_relu(const InferContext& ctx, Prepared& out) {
  out.record<LeakyParams>().alpha = attr_float(ctx.node, "alpha", 0.01f);
  out.work = ctx.outputs[0].numel();
  return Status::ok();
}

Status leaky_relu_kernel(const KernelContext& k) {
  const float alpha = k.params<LeakyParams>().alpha;
  const float* x = k.in(0).as<const float>();
  float* y = k.out(0).as<float>();
  for (int64_t i = k.begin; i < k.end; ++i) y[i] = x[i] < 0.0f ? alpha * x[i] : x[i];
  return Status::ok();
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
  const float* x = k.in(0).as<const float>();
  float* y = k.out(0).as<float>();
  for (int64_t i = k.begin; i < k.end; ++i) {
    const float v = x[i] < lo ? lo : x[i];
    y[i] = v > hi ? hi : v;
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

constexpr AttrSpec kGeluAttrs[] = {{"approximate", AttrKind::String}};
constexpr AttrSpec kLeakyAttrs[] = {{"alpha", AttrKind::Float}};

constexpr OpDef unary(const char* type, KernelFn k, const char* notes) {
  return op(type).upgrades_from(6).inputs(1).shapes(infer_f32_unary).prepared(prepare_elements).kernel(k).doc(notes);
}

constexpr OpDef kOps[] = {
    op("Add").upgrades_from(7).inputs(2).shapes(infer_arith)
        .prepared(prepare_broadcast).kernel(arith_kernel<BinaryOp::Add>).doc("f32 i64 i32 i8 u8, broadcasting"),
    op("Sub").upgrades_from(7).inputs(2).shapes(infer_arith)
        .prepared(prepare_broadcast).kernel(arith_kernel<BinaryOp::Sub>).doc("f32 i64 i32 i8 u8, broadcasting"),
    op("Mul").upgrades_from(7).inputs(2).shapes(infer_arith)
        .prepared(prepare_broadcast).kernel(arith_kernel<BinaryOp::Mul>).doc("f32 i64 i32 i8 u8, broadcasting"),
    op("Div").upgrades_from(7).inputs(2).shapes(infer_arith).prepared(prepare_broadcast).kernel(arith_kernel<BinaryOp::Div>)
        .doc("f32 i64 i32 i8 u8, broadcasting; integer division truncates, by zero is an error"),
    op("Pow").upgrades_from(7).inputs(2).shapes(infer_pow).prepared(prepare_broadcast).fast_only(pow_kernel)
        .doc("f32 i64 i32 base, f32 f64 i64 i32 i16 i8 u64 u32 u16 u8 exponent, broadcasting; result has the base's dtype; integer base and exponent: exact, wrapping, a negative exponent gives 1 (base 1), +-1 (base -1) or 0; fast only"),
    op("Equal").upgrades_from(7).inputs(2).shapes(infer_compare)
        .prepared(prepare_broadcast).kernel(compare_kernel<Cmp::Eq>).doc("f32 i64 i32 bool -> bool"),
    op("Less").upgrades_from(7).inputs(2).shapes(infer_compare)
        .prepared(prepare_broadcast).kernel(compare_kernel<Cmp::Lt>).doc("f32 i64 i32 bool -> bool"),
    op("Greater").upgrades_from(7).inputs(2).shapes(infer_compare)
        .prepared(prepare_broadcast).kernel(compare_kernel<Cmp::Gt>).doc("f32 i64 i32 bool -> bool"),
    op("Where").upgrades_from(9).inputs(3).shapes(infer_where)
        .prepared(prepare_broadcast).kernel(where_kernel).doc("any dtype, three-way broadcasting"),
    op("Neg").upgrades_from(6).inputs(1).shapes(infer_neg).prepared(prepare_elements).kernel(neg_kernel).doc("f32 i64 i32"),
    unary("Relu", unary_kernel<UnaryOp::Relu>, "f32"),
    unary("Sigmoid", unary_kernel<UnaryOp::Sigmoid>, "f32, library sigmoid"),
    unary("Tanh", unary_kernel<UnaryOp::Tanh>, "f32, library tanh"),
    unary("Sqrt", unary_kernel<UnaryOp::Sqrt>, "f32"),
    unary("Erf", unary_kernel<UnaryOp::Erf>, "f32, library erf").upgrades_from(9),
    unary("Exp", unary_kernel<UnaryOp::Exp>, "f32, library exp"),
    unary("Log", unary_kernel<UnaryOp::Log>, "f32, library log"),
    unary("Abs", unary_kernel<UnaryOp::Abs>, "f32"),
    unary("Reciprocal", unary_kernel<UnaryOp::Reciprocal>, "f32"),
    op("Gelu").since_opset(20).inputs(1).attributes(kGeluAttrs).shapes(infer_gelu).prepared(prepare_gelu).kernel(gelu_kernel)
        .doc("f32, approximate none|tanh"),
    op("LeakyRelu").upgrades_from(6).inputs(1).attributes(kLeakyAttrs).shapes(infer_f32_unary)
        .prepared(prepare_leaky_relu).kernel(leaky_relu_kernel).doc("f32, alpha"),
    op("Clip").upgrades_from(6).attr_became_input("min", 1, 11).attr_became_input("max", 2, 11).inputs(1, 3).shapes(infer_clip)
        .prepared(prepare_elements).kernel(clip_kernel).doc("f32 i64 i32 i8 u8, optional scalar min/max inputs"),
};

}  // namespace

OpTable elementwise_ops() { return table_of(kOps); }

}  // namespace om::graph::ops
