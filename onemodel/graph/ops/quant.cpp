// Quantization: QuantizeLinear and DequantizeLinear (opset-13 form: per-tensor or per-axis scale
// and zero point), DynamicQuantizeLinear (u8), and the integer products MatMulInteger,
// QLinearMatMul, ConvInteger and QLinearConv (u8 or i8 operands, i32 accumulation). Integer
// products and sums are exact (the i32 accumulator wraps modulo 2^32, as the ONNX type does), and
// every float step is one IEEE operation (x / scale, the requantization multiplier, acc x
// multiplier, rounding half to even), so one kernel serves Fast and Exact (docs/exactness.md).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "onemodel/graph/ops/conv_geom.h"
#include "onemodel/graph/ops/matmul_dims.h"
#include "onemodel/graph/ops/op_util.h"
#include "onemodel/graph/passes/pass.h"
#include "onemodel/kernels/q8_depthwise.h"
#include "onemodel/kernels/q8_gemm.h"

namespace om::graph::ops {
namespace {

// ---- shared pieces ----

bool is_q8(DType d) { return d == DType::u8 || d == DType::i8; }

std::string describe(const ValueDesc* v) { return v ? msg(dtype_name(v->dtype), " ", shape_str(v->shape)) : "absent"; }

// Input i must be present with one of `allowed` dtypes.
Status need_dtype(const InferContext& ctx, size_t i, std::initializer_list<DType> allowed, const char* role) {
  const ValueDesc* v = ctx.input(i);
  std::string names;
  for (DType d : allowed) names += (names.empty() ? "" : " or ") + std::string(dtype_name(d));
  if (!v) return ctx.error(ErrorKind::InvalidArgument, msg("input ", i, " (", role, ", ", names, ") is required"));
  for (DType d : allowed)
    if (v->dtype == d) return Status::ok();
  return ctx.error(ErrorKind::DTypeMismatch,
                   msg("input ", i, " (", role, ", '", ctx.node.inputs[i], "') must be ", names, ", got ", describe(v)));
}

// An optional zero point must have the dtype of the tensor it belongs to.
Status need_zero_point_dtype(const InferContext& ctx, size_t zp, DType want, const char* role) {
  const ValueDesc* v = ctx.input(zp);
  if (v && v->dtype != want)
    return ctx.error(ErrorKind::DTypeMismatch, msg("input ", zp, " (", role, ", '", ctx.node.inputs[zp], "') must be ", dtype_name(want),
                                                   " like the tensor it quantizes, got ", describe(v)));
  return Status::ok();
}

// A scale or zero point is per-tensor (one element: a scalar or [1]) or a 1-D vector of
// `count` values (count < 0: per-tensor only). Absent optional inputs pass.
Status need_param_shape(const InferContext& ctx, size_t i, int64_t count, const char* role, const char* per) {
  const ValueDesc* v = ctx.input(i);
  if (!v) return Status::ok();
  if (v->shape.size() <= 1 && v->numel() == 1) return Status::ok();
  if (count >= 0 && v->shape.size() == 1 && v->shape[0] == count) return Status::ok();
  if (count < 0)
    return ctx.error(ErrorKind::ShapeMismatch, msg("input ", i, " (", role, ") must be a scalar (per-tensor), got ", describe(v)));
  return ctx.error(ErrorKind::ShapeMismatch, msg("input ", i, " (", role, ") must be a scalar (per-tensor) or [", count, "] (per-", per,
                                                 "), got ", describe(v), "; other layouts are not supported"));
}

// A scale known when planning must be finite and non-zero: a zero divides by zero and a NaN or
// an infinity has no quantized value, so such a model is refused rather than run to saturated
// or zero-point outputs. (A scale computed at run time, unknown when planning, takes the
// documented NaN rule of saturate_round.)
Status need_usable_scale(const InferContext& ctx, size_t i, const char* role) {
  const ValueDesc* v = ctx.input(i);
  if (!v || !v->data || v->data == kEmptyValue || v->dtype != DType::f32) return Status::ok();
  const float* s = static_cast<const float*>(v->data);
  for (int64_t j = 0; j < v->numel(); ++j)
    if (!std::isfinite(s[j]) || s[j] == 0.0f)
      return ctx.error(ErrorKind::InvalidArgument,
                       msg("input ", i, " (", role, ", '", ctx.node.inputs[i], "') holds ", s[j], " at index ", j,
                           ": a scale must be finite and non-zero; recompute the quantization parameters (a constant range "
                           "gives a non-zero scale when widened to include 0)"));
  return Status::ok();
}

// The integer at element i of a u8, i8 or i32 tensor.
int32_t int_at(const TensorArg& t, int64_t i) {
  switch (t.dtype) {
    case DType::u8: return t.as<const uint8_t>()[i];
    case DType::i8: return t.as<const int8_t>()[i];
    case DType::i32: return t.as<const int32_t>()[i];
    default: return 0;
  }
}

// A per-tensor or per-row/column/channel parameter: element i, or the only one; 0 when absent.
int32_t zp_at(const KernelContext& k, size_t input, int64_t i) {
  if (!k.has_input(input)) return 0;
  const TensorArg& t = k.in(input);
  return int_at(t, t.numel == 1 ? 0 : i);
}
float scale_at(const TensorArg& t, int64_t i) { return t.as<const float>()[t.numel == 1 ? 0 : i]; }

struct QRange {
  int32_t lo, hi;
};
QRange range_of(DType d) { return d == DType::i8 ? QRange{-128, 127} : QRange{0, 255}; }

// QuantizeLinear's rounding and saturation, shared with every quantized kernel (q8_gemm.h).
inline int32_t saturate_round(float v, int32_t zp, QRange r) { return kernels::q8_saturate_round(v, zp, r.lo, r.hi); }

void store_q(const TensorArg& y, int64_t i, int32_t v) {
  if (y.dtype == DType::i8) y.as<int8_t>()[i] = int8_t(v);
  else y.as<uint8_t>()[i] = uint8_t(v);
}

// ---- QuantizeLinear / DequantizeLinear: y = saturate(round(x / s) + zp), y = (x - zp) * s ----

// The axis the scale runs along (normalized), after checking the scale and zero point shapes.
Status check_axis_params(const InferContext& ctx, int64_t* axis_out) {
  const std::vector<int64_t>& x = ctx.input(0)->shape;
  const int64_t a = ctx.node.attr_int("axis", 1);
  const ValueDesc* s = ctx.input(1);
  const bool per_tensor = s->shape.size() <= 1 && s->numel() == 1;
  int64_t axis = 0;
  if (!per_tensor && !normalize_axis(a, int64_t(x.size()), &axis))
    return ctx.error(ErrorKind::InvalidArgument, msg("axis ", a, " is out of range for the input ", shape_str(x)));
  const int64_t count = per_tensor ? 1 : x[size_t(axis)];
  OM_TRY(need_param_shape(ctx, 1, count, "scale", "axis"));
  OM_TRY(need_usable_scale(ctx, 1, "scale"));
  OM_TRY(need_param_shape(ctx, 2, count, "zero point", "axis"));
  if (const ValueDesc* zp = ctx.input(2))
    if (zp->numel() != s->numel())
      return ctx.error(ErrorKind::ShapeMismatch, msg("the zero point ", describe(zp), " must have the scale's shape ", describe(s)));
  *axis_out = axis;
  return Status::ok();
}

Status infer_quantize(InferContext& ctx) {
  OM_TRY(need_dtype(ctx, 0, {DType::f32, DType::i32}, "x"));
  OM_TRY(need_dtype(ctx, 1, {DType::f32}, "y_scale"));
  const ValueDesc* zp = ctx.input(2);
  if (zp && !is_q8(zp->dtype))
    return ctx.error(ErrorKind::DTypeMismatch, msg("input 2 (y_zero_point) must be u8 or i8 (it decides the output dtype), got ", describe(zp)));
  int64_t axis;
  OM_TRY(check_axis_params(ctx, &axis));
  ctx.set_output(0, zp ? zp->dtype : DType::u8, ctx.input(0)->shape);
  return Status::ok();
}

Status infer_dequantize(InferContext& ctx) {
  OM_TRY(need_dtype(ctx, 0, {DType::u8, DType::i8, DType::i32}, "x"));
  OM_TRY(need_dtype(ctx, 1, {DType::f32}, "x_scale"));
  OM_TRY(need_zero_point_dtype(ctx, 2, ctx.input(0)->dtype, "x_zero_point"));
  int64_t axis;
  OM_TRY(check_axis_params(ctx, &axis));
  ctx.set_output(0, DType::f32, ctx.input(0)->shape);
  return Status::ok();
}

// QuantizeLinear's and DequantizeLinear's record. Work: the elements when the parameters are
// per-tensor, else the outer x C runs of `inner` elements that share one channel.
struct AxisParams {
  int64_t channels = 1;  // 1: per-tensor
  int64_t inner = 1;
};

Status prepare_axis(const InferContext& ctx, Prepared& out) {
  int64_t axis;
  OM_TRY(check_axis_params(ctx, &axis));
  const std::vector<int64_t>& x = ctx.input(0)->shape;
  AxisParams& p = out.record<AxisParams>();
  const int64_t numel = ctx.input(0)->numel();
  if (ctx.input(1)->numel() == 1) {
    out.work = numel;
    return Status::ok();
  }
  p.channels = x[size_t(axis)];
  for (size_t d = size_t(axis) + 1; d < x.size(); ++d) p.inner = count_mul(p.inner, x[d]);
  out.work = p.inner == 0 ? 0 : numel / p.inner;
  return Status::ok();
}

// Calls f(i, channel) for the elements of input 0 in work units [k.begin, k.end), channel
// indexing the per-axis parameters (always 0 when they are per-tensor).
template <typename F>
void for_each_channel(const KernelContext& k, F f) {
  const AxisParams& p = k.params<AxisParams>();
  if (p.channels == 1) {
    for (int64_t i = k.begin; i < k.end; ++i) f(i, 0);
    return;
  }
  for (int64_t r = k.begin; r < k.end; ++r) {
    const int64_t c = r % p.channels;
    for (int64_t i = r * p.inner, e = i + p.inner; i < e; ++i) f(i, c);
  }
}

// Per tensor from f32: the ISA's loop (kernels::q8_quantize, the same steps as saturate_round).
Status quantize_kernel(const KernelContext& k) {
  const TensorArg& X = k.in(0);
  const TensorArg& Y = k.out(0);
  const QRange r = range_of(Y.dtype);
  if (k.params<AxisParams>().channels == 1 && X.dtype == DType::f32) {
    const float scale = scale_at(k.in(1), 0);
    const int32_t zp = zp_at(k, 2, 0);
    const bool s8 = Y.dtype == DType::i8;
    kernels::q8_quantize(X.as<const float>() + k.begin, size_t(k.end - k.begin), scale, zp, r.lo, r.hi,
                         static_cast<unsigned char*>(Y.data) + k.begin, s8);
    return Status::ok();
  }
  for_each_channel(k, [&](int64_t i, int64_t c) {
    const float x = X.dtype == DType::f32 ? X.as<const float>()[i] : float(X.as<const int32_t>()[i]);
    store_q(Y, i, saturate_round(x / scale_at(k.in(1), c), zp_at(k, 2, c), r));
  });
  return Status::ok();
}

// (x - zp) x scale over elements [begin, end) of u8 or i8 x, per-tensor: a plain loop that
// vectorises (the difference is exact in i32, then one rounding to float and one product).
template <typename T>
void dequantize_run(const T* x, float* y, int64_t begin, int64_t end, float scale, int32_t zp) {
  for (int64_t i = begin; i < end; ++i) y[i] = float(int32_t(x[i]) - zp) * scale;
}

Status dequantize_kernel(const KernelContext& k) {
  const TensorArg& X = k.in(0);
  float* y = k.out(0).as<float>();
  if (k.params<AxisParams>().channels == 1 && X.dtype != DType::i32) {
    const float scale = scale_at(k.in(1), 0);
    const int32_t zp = zp_at(k, 2, 0);
    if (X.dtype == DType::i8) dequantize_run(X.as<const int8_t>(), y, k.begin, k.end, scale, zp);
    else dequantize_run(X.as<const uint8_t>(), y, k.begin, k.end, scale, zp);
    return Status::ok();
  }
  // The difference is taken in i64 (exact for every i32 pair), then rounded once to float.
  for_each_channel(k, [&](int64_t i, int64_t c) {
    y[i] = float(int64_t(int_at(X, i)) - zp_at(k, 2, c)) * scale_at(k.in(1), c);
  });
  return Status::ok();
}

// ---- DynamicQuantizeLinear: u8 with the scale and zero point of the range [min(x, 0), max(x, 0)] ----

Status infer_dynamic_quantize(InferContext& ctx) {
  OM_TRY(need_dtype(ctx, 0, {DType::f32}, "x"));
  ctx.set_output(0, DType::u8, ctx.input(0)->shape);
  ctx.set_output(1, DType::f32, {});
  ctx.set_output(2, DType::u8, {});
  return Status::ok();
}

// One work unit: every element's scale and zero point come from the whole input's range.
// Non-finite inputs, which the ONNX reference leaves undefined (an infinite range gives an infinite
// scale and a NaN zero point): the range is that of the finite elements (and 0), so scale and
// zero point stay finite; +inf then saturates to 255, -inf to 0 and NaN quantizes to the zero
// point, as the reference's final saturate(round(x / scale) + zero point) does with a finite
// scale. Finite inputs get exactly the reference's result.
Status dynamic_quantize_kernel(const KernelContext& k) {
  const TensorArg& X = k.in(0);
  const float* x = X.as<const float>();
  // The range always holds 0, so 0 quantizes exactly; non-finite elements count as 0 (the ISA's
  // loop, kernels::q8_range).
  float lo = 0.0f, hi = 0.0f;
  kernels::q8_range(x, size_t(X.numel), &lo, &hi);
  const QRange r{0, 255};
  const float scale = (hi - lo) / 255.0f;  // inf only for a finite range wider than FLT_MAX
  // zero point = round(saturate(0 - lo / scale)); an all-zero input has scale 0 and zero point 0.
  int32_t zp = 0;
  if (scale > 0.0f) {
    float z = 0.0f - lo / scale;
    z = z < 0.0f ? 0.0f : (z > 255.0f ? 255.0f : z);
    zp = int32_t(std::nearbyint(z));  // z is in [0, 255]: lo and scale are finite, or scale is inf and z is 0
  }
  uint8_t* y = k.out(0).as<uint8_t>();
  if (scale > 0.0f) kernels::q8_quantize(x, size_t(X.numel), scale, zp, r.lo, r.hi, y, false);
  else std::memset(y, zp, size_t(X.numel));
  if (k.num_outputs > 1 && k.out(1).present) *k.out(1).as<float>() = scale;
  if (k.num_outputs > 2 && k.out(2).present) *k.out(2).as<uint8_t>() = uint8_t(zp);
  return Status::ok();
}

// ---- the integer products on kernels/q8_gemm.h ----
//
// Both products run as A'[rows, K] x B'[K, columns] blocks: MatMulInteger's A rows times its B
// (packed once by the plan when B is a constant matrix), a convolution's weights (packed once,
// A') times a block of up to 256 output pixels of the image (B', written per block). The raw block goes
// to a small i32 tile, the zero points are applied from the row and column sums (q8_correct),
// and the operator's epilogue stores each element: the i32 itself, or its requantization.

constexpr size_t kRowBlock = 48;       // rows of A' per raw block (a multiple of every ISA's tile rows)
constexpr size_t kColPanels = 16;      // panels of B' per raw block: 256 columns
constexpr size_t kConvPixels = 256;    // output pixels per convolution work unit, at most (16 panels)
constexpr size_t kConvRowBlock = 96;   // output channels per raw block of a convolution: AMX's 32-row steps too
constexpr size_t align64(size_t n) { return (n + 63) / 64 * 64; }

bool is_s8(DType d) { return d == DType::i8; }

// Whether zero points differ by index; *only gets the first. Per-index zero points that are all
// equal (symmetric weights write zeros per channel) act as per-tensor ones: the product then
// takes its faster per-tensor form.
bool zero_points_vary(const TensorArg& z, int32_t* only) {
  *only = int_at(z, 0);
  for (int64_t i = 1; i < z.numel; ++i)
    if (int_at(z, i) != *only) return true;
  return false;
}

// A zero point's form, decided once per plan when its values are known then (an absent one, or
// a constant: the weights' per-channel zero points are); a run-time one is looked at per run.
struct ZeroPointForm {
  bool known = false;
  bool per_index = false;
  int32_t only = 0;
};
ZeroPointForm zero_point_form(const InferContext& ctx, size_t input) {
  ZeroPointForm f;
  const ValueDesc* z = ctx.input(input);
  if (z && !z->data) return f;
  f.known = true;
  if (z && z->numel() > 0) {
    TensorArg view;
    view.present = true;
    view.dtype = z->dtype;
    view.numel = z->numel();
    view.data = const_cast<void*>(z->data);
    f.per_index = zero_points_vary(view, &f.only);
  }
  return f;
}

// A per-tensor or per-index zero point, read without a branch on its presence per element.
struct ZeroPoints {
  const TensorArg* t = nullptr;
  int32_t only = 0;  // the per-tensor value (or 0 when absent)
  ZeroPoints(const KernelContext& k, size_t input, const ZeroPointForm& form) {
    if (form.known) {
      only = form.only;
      if (form.per_index) t = &k.in(input);
      return;
    }
    if (k.has_input(input) && zero_points_vary(k.in(input), &only)) t = &k.in(input);
  }
  int32_t operator[](int64_t i) const { return t ? int_at(*t, i) : only; }
};

// B' panels and their column sums in one buffer (the plan's prepacked copy or scratch).
size_t packed_b_buffer_bytes(size_t K, size_t N) {
  return align64(kernels::q8_packed_b_bytes(K, N)) + kernels::q8_panels(N) * kernels::kQ8Panel * sizeof(int32_t);
}
struct PackedB {
  const int8_t* panels;
  const int32_t* col_sums;
};
PackedB packed_b_view(const void* buf, size_t K, size_t N) {
  const auto* base = static_cast<const unsigned char*>(buf);
  return {reinterpret_cast<const int8_t*>(base),
          reinterpret_cast<const int32_t*>(base + align64(kernels::q8_packed_b_bytes(K, N)))};
}
void pack_b_buffer(const void* b, bool b_s8, size_t K, size_t N, void* buf) {
  auto* base = static_cast<unsigned char*>(buf);
  kernels::q8_pack_b(b, b_s8, ptrdiff_t(N), 1, K, N, reinterpret_cast<int8_t*>(base),
                     reinterpret_cast<int32_t*>(base + align64(kernels::q8_packed_b_bytes(K, N))));
}

// A' rows and their sums in one buffer (a convolution's packed weights, or a block of rows).
size_t packed_a_buffer_bytes(size_t M, size_t K) { return align64(M * kernels::q8_lda(K)) + align64(M * sizeof(int32_t)); }
struct PackedA {
  uint8_t* rows;
  int32_t* row_sums;
};
PackedA packed_a_view(void* buf, size_t M, size_t K) {
  auto* base = static_cast<unsigned char*>(buf);
  return {base, reinterpret_cast<int32_t*>(base + align64(M * kernels::q8_lda(K)))};
}

// ---- MatMulInteger and QLinearMatMul ----

// MatMulInteger's and QLinearMatMul's record: the matrix sizes and the broadcast of the batch
// axes (offsets in matrices). Work: the output rows, batch matrix by batch matrix.
struct IntMatMulParams {
  BroadcastIter batch;
  int64_t M = 1, K = 1, N = 1;
  ZeroPointForm za, zb;  // A's (input 2) and B's (input b_in + 2)
  bool relu = false;     // MatMulIntegerScaled's attribute
};

// Scratch of a product: a block of A' rows and its raw tile, the epilogue's per-column
// multipliers, and B' when the plan cannot have packed it (B unknown when planning).
size_t int_matmul_scratch_bytes(size_t K, size_t N, bool b_known) {
  return packed_a_buffer_bytes(kRowBlock, K) + kRowBlock * kColPanels * kernels::kQ8Panel * sizeof(int32_t) +
         align64(N * sizeof(float)) + (b_known ? 0 : align64(packed_b_buffer_bytes(K, N)));
}

// A is input 0, B input `b_in`.
template <size_t b_in>
Status prepare_int_matmul(const InferContext& ctx, Prepared& out) {
  const ValueDesc& A = *ctx.input(0);
  const ValueDesc& B = *ctx.input(b_in);
  const std::vector<int64_t>& y = ctx.outputs[0].shape;
  const bool a1 = A.shape.size() == 1, b1 = B.shape.size() == 1;
  IntMatMulParams& p = out.record<IntMatMulParams>();
  p.M = a1 ? 1 : A.shape[A.shape.size() - 2];
  p.K = A.shape.back();
  p.N = b1 ? 1 : B.shape.back();
  // The batch axes as broadcast operands.
  ValueDesc ab, bb;
  ab.shape.assign(A.shape.begin(), A.shape.end() - (a1 ? 1 : 2));
  bb.shape.assign(B.shape.begin(), B.shape.end() - (b1 ? 1 : 2));
  const std::vector<int64_t> yb(y.begin(), y.end() - (a1 ? 0 : 1) - (b1 ? 0 : 1));
  const ValueDesc* ops[2] = {&ab, &bb};
  p.batch.init(yb, ops, 2);
  p.za = zero_point_form(ctx, 2);
  p.zb = zero_point_form(ctx, b_in + 2);
  p.relu = ctx.node.attr_int("relu", 0) != 0;
  out.work = ctx.outputs[0].numel() == 0 ? 0 : p.batch.size() * p.M;
  out.cost = ctx.outputs[0].numel() == 0 ? 0 : count_mul(count_mul(out.work, p.K), p.N) / 8;
  return Status::ok();
}

template <size_t b_in>
size_t int_matmul_scratch(const InferContext& ctx) {
  const ValueDesc& A = *ctx.input(0);
  const ValueDesc& B = *ctx.input(b_in);
  const size_t K = size_t(A.shape.back()), N = size_t(B.shape.size() == 1 ? 1 : B.shape.back());
  return int_matmul_scratch_bytes(K, N, B.data != nullptr);
}

void pack_int_matmul_b(const int64_t* params, const void* w, float* dst) {
  pack_b_buffer(w, params[2] != 0, size_t(params[0]), size_t(params[1]), dst);
}

// A constant 2-D B is packed once (B' and its column sums); batched B runs repack per matrix.
template <size_t b_in>
bool int_matmul_packable(const Node&, const std::vector<const ValueDesc*>& inputs, PackableB* out) {
  if (inputs.size() <= b_in || !inputs[0] || !inputs[b_in]) return false;
  const ValueDesc& B = *inputs[b_in];
  if (B.shape.size() != 2 || B.numel() == 0 || !is_q8(B.dtype)) return false;
  out->input = b_in;
  out->K = size_t(B.shape[0]);
  out->N = size_t(B.shape[1]);
  out->floats = (packed_b_buffer_bytes(out->K, out->N) + sizeof(float) - 1) / sizeof(float);
  out->pack = pack_int_matmul_b;
  out->params[0] = B.shape[0];
  out->params[1] = B.shape[1];
  out->params[2] = is_s8(B.dtype) ? 1 : 0;
  return true;
}

// Any epilogue (StoreI32, StoreRequantized, StoreScaled: prepare, store_row, finish_row) behind
// three function pointers, so that each product and convolution driver below is compiled once
// rather than once per epilogue: a call per row costs nothing beside the row, and a device
// program with every operator is kilobytes smaller (docs/performance.md, "Program size on a
// device"). It refers to the epilogue, which must outlive it.
class AnyEpilogue {
 public:
  template <typename E>
  explicit AnyEpilogue(E& e)
      : self_(&e),
        prepare_([](void* s, float* room, int64_t n) { static_cast<E*>(s)->prepare(room, n); }),
        store_([](const void* s, int64_t m, int64_t i, int64_t n0, const int32_t* acc, int64_t count) {
          static_cast<const E*>(s)->store_row(m, i, n0, acc, count);
        }),
        finish_([](const void* s, int64_t m, int64_t i, int64_t n0, int32_t* raw, const int32_t* col_sums, int32_t za,
                   uint32_t rt, int64_t count) { static_cast<const E*>(s)->finish_row(m, i, n0, raw, col_sums, za, rt, count); }) {}
  void prepare(float* room, int64_t n) { prepare_(self_, room, n); }
  void store_row(int64_t m, int64_t i, int64_t n0, const int32_t* acc, int64_t count) const {
    store_(self_, m, i, n0, acc, count);
  }
  void finish_row(int64_t m, int64_t i, int64_t n0, int32_t* raw, const int32_t* col_sums, int32_t za, uint32_t rt,
                  int64_t count) const {
    finish_(self_, m, i, n0, raw, col_sums, za, rt, count);
  }

 private:
  void* self_;
  void (*prepare_)(void*, float*, int64_t);
  void (*store_)(const void*, int64_t, int64_t, int64_t, const int32_t*, int64_t);
  void (*finish_)(const void*, int64_t, int64_t, int64_t, int32_t*, const int32_t*, int32_t, uint32_t, int64_t);
};

// The element loop: each output's sum in k order from the operands in place. It runs when
// the plan kept no packed B for a B known when planning (then the scratch has no room for one).
template <typename TA, typename TB, typename Epilogue>
void int_matmul_reference(const KernelContext& k, size_t a_in, size_t azp_in, size_t b_in, size_t bzp_in, const Epilogue& epi) {
  const IntMatMulParams& p = k.params<IntMatMulParams>();
  const BroadcastIter& it = p.batch;
  const int64_t M = p.M, K = p.K, N = p.N;
  const TA* a = k.in(a_in).as<const TA>();
  const TB* b = k.in(b_in).as<const TB>();
  const ZeroPoints za(k, azp_in, p.za), zb(k, bzp_in, p.zb);
  int64_t mat = k.begin / M;
  it.for_each(mat, (k.end + M - 1) / M, [&](const int64_t* off, int64_t n_inner) {
    for (int64_t j = 0; j < n_inner; ++j, ++mat) {
      const TA* pa = a + (off[1] + j * it.inner_step[1]) * M * K;
      const TB* pb = b + (off[2] + j * it.inner_step[2]) * K * N;
      const int64_t yo = (off[0] + j * it.inner_step[0]) * M * N;
      const int64_t m_end = std::min(M, k.end - mat * M);
      for (int64_t m = std::max<int64_t>(0, k.begin - mat * M); m < m_end; ++m) {
        for (int64_t n = 0; n < N; ++n) {
          uint32_t acc = 0;  // wraps modulo 2^32 like the i32 accumulator, without overflow UB
          for (int64_t q = 0; q < K; ++q) acc += uint32_t((int32_t(pa[m * K + q]) - za[m]) * (int32_t(pb[q * N + n]) - zb[n]));
          const int32_t v = int32_t(acc);
          epi.store_row(m, yo + m * N + n, n, &v, 1);
        }
      }
    }
  });
}

// Calls f(a, b) with values of the element types (int8_t or uint8_t) of two 8-bit operands.
template <typename F>
void with_q8_types(DType a, DType b, F f) {
  if (is_s8(a) && is_s8(b)) f(int8_t{}, int8_t{});
  else if (is_s8(a)) f(int8_t{}, uint8_t{});
  else if (is_s8(b)) f(uint8_t{}, int8_t{});
  else f(uint8_t{}, uint8_t{});
}

template <typename Epilogue>
void int_matmul_reference(const KernelContext& k, size_t a_in, size_t azp_in, size_t b_in, size_t bzp_in, const Epilogue& epi) {
  with_q8_types(k.in(a_in).dtype, k.in(b_in).dtype, [&](auto ta, auto tb) {
    int_matmul_reference<decltype(ta), decltype(tb)>(k, a_in, azp_in, b_in, bzp_in, epi);
  });
}

// The i32 product of A and B (numpy matmul shapes, broadcast batches) after subtracting the
// zero points (per-tensor, per-row of A, per-column of B) for output rows [k.begin, k.end).
// epi.store_row writes each row's results.
template <typename Epilogue>
void int_matmul_with(const KernelContext& k, size_t a_in, size_t azp_in, size_t b_in, size_t bzp_in, Epilogue epi) {
  const IntMatMulParams& p = k.params<IntMatMulParams>();
  const BroadcastIter& it = p.batch;
  const size_t K = size_t(p.K), N = size_t(p.N);
  if (!k.packed_b && k.scratch_bytes < int_matmul_scratch_bytes(K, N, false))
    return int_matmul_reference(k, a_in, azp_in, b_in, bzp_in, epi);
  const bool as = is_s8(k.in(a_in).dtype), bs = is_s8(k.in(b_in).dtype);
  const auto* a = k.in(a_in).as<const uint8_t>();
  const auto* b = k.in(b_in).as<const uint8_t>();
  const ZeroPoints za(k, azp_in, p.za), zb(k, bzp_in, p.zb);
  // Scratch: the row block, its raw tile, then B' when it is not prepacked.
  auto* scratch = static_cast<unsigned char*>(k.scratch);
  const PackedA blk = packed_a_view(scratch, kRowBlock, K);
  auto* raw = reinterpret_cast<int32_t*>(scratch + packed_a_buffer_bytes(kRowBlock, K));
  epi.prepare(reinterpret_cast<float*>(raw + kRowBlock * kColPanels * kernels::kQ8Panel), int64_t(N));
  void* b_buf = scratch + int_matmul_scratch_bytes(K, N, true);
  const size_t ldc = kColPanels * kernels::kQ8Panel, lda = kernels::q8_lda(K);
  const size_t groups = kernels::q8_groups(K), ps = kernels::q8_panel_stride(K), panels = kernels::q8_panels(N);
  int64_t packed_off = -1;  // the B matrix now in b_buf
  int64_t mat = k.begin / p.M;  // the batch matrix of the current row
  it.for_each(mat, (k.end + p.M - 1) / p.M, [&](const int64_t* off, int64_t n_inner) {
    for (int64_t j = 0; j < n_inner; ++j, ++mat) {
      const int64_t a_off = (off[1] + j * it.inner_step[1]) * p.M * p.K;
      const int64_t b_off = (off[2] + j * it.inner_step[2]) * p.K * p.N;
      const int64_t yo = (off[0] + j * it.inner_step[0]) * p.M * p.N;
      PackedB pb;
      if (k.packed_b) {
        pb = packed_b_view(k.packed_b, K, N);
      } else {
        if (packed_off != b_off) pack_b_buffer(b + b_off, bs, K, N, b_buf);
        packed_off = b_off;
        pb = packed_b_view(b_buf, K, N);
      }
      const size_t m_begin = size_t(std::max<int64_t>(0, k.begin - mat * p.M));
      const size_t m_end = size_t(std::min<int64_t>(p.M, k.end - mat * p.M));
      for (size_t r0 = m_begin; r0 < m_end; r0 += kRowBlock) {
        const size_t rows = std::min(kRowBlock, m_end - r0);
        kernels::q8_pack_a(a + a_off + int64_t(r0 * K), as, ptrdiff_t(K), 1, rows, K, blk.rows, lda, blk.row_sums);
        for (size_t c0 = 0; c0 < panels; c0 += kColPanels) {
          const size_t np = std::min(kColPanels, panels - c0);
          kernels::q8_dot(blk.rows, lda, rows, pb.panels + c0 * ps, ps, groups, np, raw, ldc);
          const size_t n0 = c0 * kernels::kQ8Panel, n1 = std::min(N, n0 + np * kernels::kQ8Panel);
          for (size_t r = 0; r < rows; ++r) {
            const size_t m = r0 + r;
            const int32_t ZA = kernels::q8_zero_a(za[int64_t(m)], as);
            const int64_t yrow = yo + int64_t(m * N);
            int32_t* raw_row = raw + r * ldc - n0;  // corrected in place, then stored
            if (!zb.t) {  // per-tensor B zero point: the row's terms once
              const uint32_t rt = kernels::q8_row_term(blk.row_sums[r], ZA, kernels::q8_zero_b(zb.only, bs), K);
              epi.finish_row(int64_t(m), yrow + int64_t(n0), int64_t(n0), raw_row + n0, pb.col_sums + n0, ZA, rt,
                             int64_t(n1 - n0));
            } else {
              for (size_t n = n0; n < n1; ++n)
                raw_row[n] = kernels::q8_correct(raw_row[n], blk.row_sums[r], pb.col_sums[n], ZA, kernels::q8_zero_b(zb[int64_t(n)], bs), K);
              epi.store_row(int64_t(m), yrow + int64_t(n0), int64_t(n0), raw_row + n0, int64_t(n1 - n0));
            }
          }
        }
      }
    }
  });
}

// The driver with any epilogue (compiled once, AnyEpilogue above).
template <typename Epilogue>
void int_matmul(const KernelContext& k, size_t a_in, size_t azp_in, size_t b_in, size_t bzp_in, Epilogue epi) {
  int_matmul_with(k, a_in, azp_in, b_in, bzp_in, AnyEpilogue(epi));
}

// Shapes of A (input a) and B (input b) and their per-row / per-column parameters.
Status infer_int_matmul_shapes(InferContext& ctx, size_t a, size_t b, std::initializer_list<size_t> a_params,
                               std::initializer_list<size_t> b_params, std::vector<int64_t>* out) {
  OM_TRY(need_dtype(ctx, a, {DType::u8, DType::i8}, "A"));
  OM_TRY(need_dtype(ctx, b, {DType::u8, DType::i8}, "B"));
  MatMulDims d;
  OM_TRY(matmul_dims(ctx, ctx.input(a)->shape, ctx.input(b)->shape, &d, out));
  for (size_t p : a_params) OM_TRY(need_param_shape(ctx, p, d.M, "a scale or zero point of A", "row"));
  for (size_t p : b_params) OM_TRY(need_param_shape(ctx, p, d.N, "a scale or zero point of B", "column"));
  return Status::ok();
}

Status infer_matmul_integer(InferContext& ctx) {
  std::vector<int64_t> out;
  OM_TRY(infer_int_matmul_shapes(ctx, 0, 1, {2}, {3}, &out));
  OM_TRY(need_zero_point_dtype(ctx, 2, ctx.input(0)->dtype, "a_zero_point"));
  OM_TRY(need_zero_point_dtype(ctx, 3, ctx.input(1)->dtype, "b_zero_point"));
  ctx.set_output(0, DType::i32, std::move(out));
  return Status::ok();
}

// The i32 results stored as they are. store_row(m, i, n0, acc, count): row m's outputs at
// y[i .. i + count), columns n0 .. (every epilogue has this form).
// finish_row(m, i, raw, col_sums, ZA, row_term, count) does the same from the raw product
// (q8_apply's correction first), for per-tensor column zero points.
struct StoreI32 {
  int32_t* y;
  void prepare(float*, int64_t) {}
  void store_row(int64_t, int64_t i, int64_t, const int32_t* acc, int64_t count) const {
    std::memcpy(y + i, acc, size_t(count) * sizeof(int32_t));
  }
  void finish_row(int64_t, int64_t i, int64_t, const int32_t* raw, const int32_t* col_sums, int32_t ZA, uint32_t rt,
                  int64_t count) const {
    for (int64_t j = 0; j < count; ++j) y[i + j] = kernels::q8_apply(raw[j], rt, ZA, col_sums[j]);
  }
};

Status matmul_integer_kernel(const KernelContext& k) {
  int_matmul(k, 0, 2, 1, 3, StoreI32{k.out(0).as<int32_t>()});
  return Status::ok();
}

// ---- The dynamic form's float epilogue (MatMulIntegerScaled, ConvIntegerScaled) ----
//
// fuse_integer_epilogue writes them for MatMulInteger / ConvInteger -> Cast(to float) -> Mul by a
// scalar scale [-> Add of a bias per column / output channel] [-> Relu], the form of ONNX
// Runtime's quantize_dynamic: y = relu(float(acc) x scale + bias). These are the unfused graph's
// operations in its order (one rounding to float, one product, one sum, Relu's select: x < 0 ?
// 0 : x), so the bits are the same and the pass runs in every mode. Inputs: the integer
// operator's four (zero points optional), the scale (input 4, f32, one value), the bias (input 5,
// optional, f32 [N] or [M]).
struct StoreScaled {
  float* y;
  float scale;
  const float* bias;  // per column of a product, per output channel (row) of a convolution, or null
  bool bias_per_row;
  bool relu;
  void prepare(float*, int64_t) {}
  // One row's outputs from its i32 sums (get(j)): loops specialised on the bias and Relu, with
  // selects, so they vectorise.
  template <typename Get>
  void row(int64_t m, float* out, int64_t n0, int64_t count, Get get) const {
    const float s = scale;
    const float rb = bias && bias_per_row ? bias[m] : 0.0f;
    const float* cb = bias && !bias_per_row ? bias + n0 : nullptr;
    auto emit = [&](auto with_relu, auto col_bias, auto row_bias) {
      for (int64_t j = 0; j < count; ++j) {
        float v = float(get(j)) * s;
        if (decltype(col_bias)::value) v = v + cb[j];
        if (decltype(row_bias)::value) v = v + rb;
        if (decltype(with_relu)::value) v = v < 0.0f ? 0.0f : v;
        out[j] = v;
      }
    };
    using T = std::true_type;
    using F = std::false_type;
    if (relu) {
      if (cb) emit(T{}, T{}, F{});
      else if (bias) emit(T{}, F{}, T{});
      else emit(T{}, F{}, F{});
    } else {
      if (cb) emit(F{}, T{}, F{});
      else if (bias) emit(F{}, F{}, T{});
      else emit(F{}, F{}, F{});
    }
  }
  void store_row(int64_t m, int64_t i, int64_t n0, const int32_t* acc, int64_t count) const {
    row(m, y + i, n0, count, [acc](int64_t j) { return acc[j]; });
  }
  void finish_row(int64_t m, int64_t i, int64_t n0, const int32_t* raw, const int32_t* col_sums, int32_t ZA, uint32_t rt,
                  int64_t count) const {
    row(m, y + i, n0, count, [=](int64_t j) { return kernels::q8_apply(raw[j], rt, ZA, col_sums[j]); });
  }
};

StoreScaled scaled_store(const KernelContext& k, bool per_row, bool relu) {
  return StoreScaled{k.out(0).as<float>(), *k.in(4).as<const float>(), k.has_input(5) ? k.in(5).as<const float>() : nullptr,
                     per_row, relu};
}

// The scale (input 4) is one f32 value; the bias (input 5) f32 [count].
Status check_scale_and_bias(const InferContext& ctx, int64_t count, const char* per) {
  OM_TRY(need_dtype(ctx, 4, {DType::f32}, "scale"));
  if (ctx.input(4)->numel() != 1 || ctx.input(4)->shape.size() > 1)
    return ctx.error(ErrorKind::ShapeMismatch, msg("input 4 (scale) must be one f32 value, got ", describe(ctx.input(4))));
  if (const ValueDesc* b = ctx.input(5))
    if (b->dtype != DType::f32 || b->shape != std::vector<int64_t>{count})
      return ctx.error(ErrorKind::ShapeMismatch,
                       msg("input 5 (bias) must be f32 [", count, "] (one per ", per, "), got ", describe(b)));
  return Status::ok();
}

Status infer_matmul_integer_scaled(InferContext& ctx) {
  OM_TRY(infer_matmul_integer(ctx));
  std::vector<int64_t> y = ctx.outputs[0].shape;
  OM_TRY(check_scale_and_bias(ctx, y.empty() ? 1 : y.back(), "output column"));
  ctx.set_output(0, DType::f32, std::move(y));
  return Status::ok();
}

Status matmul_integer_scaled_kernel(const KernelContext& k) {
  int_matmul(k, 0, 2, 1, 3, scaled_store(k, false, k.params<IntMatMulParams>().relu));
  return Status::ok();
}

// The requantized output's parameters (y_scale, y_zero_point): per-tensor, f32 and u8/i8.
Status check_output_params(InferContext& ctx, size_t y_scale, size_t y_zp) {
  OM_TRY(need_dtype(ctx, y_scale, {DType::f32}, "y_scale"));
  OM_TRY(need_usable_scale(ctx, y_scale, "y_scale"));
  OM_TRY(need_dtype(ctx, y_zp, {DType::u8, DType::i8}, "y_zero_point"));
  OM_TRY(need_param_shape(ctx, y_scale, -1, "y_scale", ""));
  return need_param_shape(ctx, y_zp, -1, "y_zero_point", "");
}

// QLinearMatMul inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.
Status infer_qlinear_matmul(InferContext& ctx) {
  std::vector<int64_t> out;
  OM_TRY(infer_int_matmul_shapes(ctx, 0, 3, {1, 2}, {4, 5}, &out));
  OM_TRY(need_dtype(ctx, 1, {DType::f32}, "a_scale"));
  OM_TRY(need_dtype(ctx, 4, {DType::f32}, "b_scale"));
  OM_TRY(need_usable_scale(ctx, 1, "a_scale"));
  OM_TRY(need_usable_scale(ctx, 4, "b_scale"));
  OM_TRY(need_zero_point_dtype(ctx, 2, ctx.input(0)->dtype, "a_zero_point"));
  OM_TRY(need_zero_point_dtype(ctx, 5, ctx.input(3)->dtype, "b_zero_point"));
  OM_TRY(check_output_params(ctx, 6, 7));
  ctx.set_output(0, ctx.input(7)->dtype, std::move(out));
  return Status::ok();
}

// The one requantization of every quantized product: y = saturate(round(acc x m) + zp_y) with the
// multiplier m = s_in x s_w / s_y computed in float in that order (two roundings), then one
// product and QuantizeLinear's rounding (requantize_multiplier, saturate_round).
float requantize_multiplier(float s_in, float s_w, float s_y) { return s_in * s_w / s_y; }

// Stores requantized results to u8 or i8: the multiplier of each (row, column) from the
// per-row (a) and per-column (w) scales, computed once per row when the column's is per-tensor.
template <typename T>
struct StoreRequantized {
  T* y;
  const TensorArg* row_scale;  // per-tensor or per-row: QLinearMatMul's a_scale, QLinearConv's w_scale
  const TensorArg* col_scale;  // per-tensor or per-column: b_scale, QLinearConv's x_scale
  float s_y;
  int32_t zp;
  QRange r;
  const int32_t* row_bias;  // QLinearConv's bias per output channel (row), or null
  const int32_t* col_bias = nullptr;  // QLinearMatMulBias's bias per column, or null
  const float* col_mults = nullptr;  // per-column multipliers when only the column scale varies (prepare)
  // Given room for n floats: the multipliers of the columns once, when the row scale is
  // per-tensor and the column one is not (a per-channel weight of QLinearMatMul).
  void prepare(float* room, int64_t n) {
    if (col_scale->numel == 1 || row_scale->numel != 1) return;
    for (int64_t j = 0; j < n; ++j) room[j] = requantize_multiplier(scale_at(*row_scale, 0), scale_at(*col_scale, j), s_y);
    col_mults = room;
  }
  // With a per-tensor column scale the correction, bias and requantization run as one pass of
  // the ISA's kernel (kernels::q8_requantize); else corrected here and stored by store_row.
  void finish_row(int64_t m, int64_t i, int64_t n0, int32_t* raw, const int32_t* col_sums, int32_t ZA, uint32_t rt,
                  int64_t count) const {
    if (col_bias)  // added to the raw sums: the same i32 (modulo 2^32) as added after the correction
      for (int64_t j = 0; j < count; ++j) raw[j] = int32_t(uint32_t(raw[j]) + uint32_t(col_bias[n0 + j]));
    if (col_scale->numel == 1 || col_mults) {
      kernels::Q8Requant q;
      q.raw = raw;
      q.col_sums = col_sums;
      q.za = ZA;
      q.row_add = rt + (row_bias ? uint32_t(row_bias[m]) : 0u);
      q.mult = requantize_multiplier(scale_at(*row_scale, m), scale_at(*col_scale, 0), s_y);
      q.mults = col_mults && col_scale->numel != 1 ? col_mults + n0 : nullptr;
      q.zp = zp;
      q.lo = r.lo;
      q.hi = r.hi;
      q.out = y + i;
      q.out_signed = std::is_same<T, int8_t>::value;
      q.n = size_t(count);
      kernels::q8_requantize(q);
      return;
    }
    for (int64_t j = 0; j < count; ++j) raw[j] = kernels::q8_apply(raw[j], rt, ZA, col_sums[j]);
    store_row(m, i, n0, raw, count, false);
  }
  // Plain loops over contiguous rows, so they vectorise (saturate_round is branch-free).
  // with_col_bias: col_bias is still to be added (finish_row adds it before its correction).
  void store_row(int64_t m, int64_t i, int64_t n0, const int32_t* acc, int64_t count, bool with_col_bias = true) const {
    const float sa = scale_at(*row_scale, m);
    const uint32_t bias = row_bias ? uint32_t(row_bias[m]) : 0u;
    T* out = y + i;
    const int32_t z = zp;
    const QRange q = r;
    if (col_bias && with_col_bias) {
      for (int64_t j = 0; j < count; ++j) {
        const float mult = requantize_multiplier(sa, scale_at(*col_scale, col_scale->numel == 1 ? 0 : n0 + j), s_y);
        out[j] = T(saturate_round(float(int32_t(uint32_t(acc[j]) + bias + uint32_t(col_bias[n0 + j]))) * mult, z, q));
      }
      return;
    }
    if (col_scale->numel == 1) {
      const float mult = requantize_multiplier(sa, scale_at(*col_scale, 0), s_y);
      for (int64_t j = 0; j < count; ++j) out[j] = T(saturate_round(float(int32_t(uint32_t(acc[j]) + bias)) * mult, z, q));
    } else {
      for (int64_t j = 0; j < count; ++j) {
        const float mult = requantize_multiplier(sa, scale_at(*col_scale, n0 + j), s_y);
        out[j] = T(saturate_round(float(int32_t(uint32_t(acc[j]) + bias)) * mult, z, q));
      }
    }
  }
};

template <typename T>
StoreRequantized<T> requantized_store(const KernelContext& k, const TensorArg* row_scale, const TensorArg* col_scale,
                                      size_t y_scale, size_t y_zp, const int32_t* row_bias) {
  return {k.out(0).as<T>(), row_scale, col_scale, scale_at(k.in(y_scale), 0), zp_at(k, y_zp, 0),
          range_of(k.out(0).dtype), row_bias};
}

Status qlinear_matmul_kernel(const KernelContext& k) {
  if (k.out(0).dtype == DType::i8) int_matmul(k, 0, 2, 3, 5, requantized_store<int8_t>(k, &k.in(1), &k.in(4), 6, 7, nullptr));
  else int_matmul(k, 0, 2, 3, 5, requantized_store<uint8_t>(k, &k.in(1), &k.in(4), 6, 7, nullptr));
  return Status::ok();
}

// QLinearMatMulBias (com.onemodel): QLinearMatMul's inputs and an i32 bias per column (input 8,
// [N], at the accumulator's scale s_a s_b as QLinearConv's B), added to the i32 sum before the
// requantization. fuse_qdq_matmul writes it for MatMul -> bias Add [-> Relu] -> QuantizeLinear.
Status infer_qlinear_matmul_bias(InferContext& ctx) {
  OM_TRY(infer_qlinear_matmul(ctx));
  const int64_t N = ctx.outputs[0].shape.empty() ? 1 : ctx.outputs[0].shape.back();
  const ValueDesc* b = ctx.input(8);
  if (!b || b->dtype != DType::i32 || b->shape != std::vector<int64_t>{N})
    return ctx.error(ErrorKind::ShapeMismatch,
                     msg("input 8 (B, the bias) must be i32 [", N, "] (the output columns), got ", describe(b)));
  return Status::ok();
}

Status qlinear_matmul_bias_kernel(const KernelContext& k) {
  const int32_t* bias = k.in(8).as<const int32_t>();
  if (k.out(0).dtype == DType::i8) {
    auto epi = requantized_store<int8_t>(k, &k.in(1), &k.in(4), 6, 7, nullptr);
    epi.col_bias = bias;
    int_matmul(k, 0, 2, 3, 5, epi);
  } else {
    auto epi = requantized_store<uint8_t>(k, &k.in(1), &k.in(4), 6, 7, nullptr);
    epi.col_bias = bias;
    int_matmul(k, 0, 2, 3, 5, epi);
  }
  return Status::ok();
}

// ---- ConvInteger and QLinearConv ----
//
// The GEMM's K runs over (kh, kw, channel) with the channels of each tap in groups of four, so a
// 32-bit lane of B' (four k) is four channels of one input position. A block of output pixels
// first lays the input rows it reads out as a strip of such words (channels interleaved, the top
// bit flipped for u8, the padding holding the zero point); each panel group is then 16 words of
// the strip (64 bytes copied at once when stride 1 keeps them side by side), and the column sums
// are sums of per-position channel sums over the taps. Padded channels are 0 in the weights and
// in the strip, so they add nothing to the product or the sums.

// ConvInteger's and QLinearConv's record: the Conv geometry. Work: blocks of IntConvDims::bp
// consecutive output pixels, by image and group: whole rows side by side when a row is shorter
// than a block, else pieces of one row.
struct IntConvParams {
  kernels::ConvGeom g;
  int64_t bp = 0;           // pixels per block
  int64_t blocks = 1;       // blocks per output plane
  int64_t row_pieces = 0;   // blocks per output row when rows are long (0: blocks span rows)
  ZeroPointForm zx, zw;     // X's (input 2) and W's (input w_in + 2)
  bool relu = false;        // ConvIntegerScaled's attribute
};

struct IntConvDims {
  size_t cg, c4, taps, kp, groups, ps;  // channels per group, their groups of 4, kH*kW, padded K, K/4, panel stride
  size_t bp;                             // output pixels per block (block_pixels)
  size_t strip_rows, strip_cols;         // the largest strip a block reads
  // The scratch, in this order: the strip (words), its channel sums, a row of flip bytes, B' (the
  // block's bp / 16 panels), their column sums, the raw tile, the panels read in place and the
  // taps' offsets in the strip (int_conv_image_block); then the weights as A' when the plan has
  // not packed them.
  size_t sums_at, flip_at, panels_at, col_sums_at, raw_at, in_place_at, offsets_at, end;
};
// The depthwise form's blocks (its kernels and loop: "The depthwise form" below).
constexpr int64_t kDwPixels = 2048;  // output pixels per depthwise block, about (whole rows)

bool int_conv_is_depthwise(const kernels::ConvGeom& g) { return g.C == g.group; }

struct IntDwDims {
  // Stride 2 with no column dilation pairs tap columns: a word is two neighbouring input values,
  // and one word row per input row serves every tap. The words start at even input columns, so
  // that a row's words inside the image are its bytes widened in order, with no word straddling
  // the padding: with an odd pad_l the pairs are taps (kw - 1, kw) for even kw, tap -1 a zero
  // weight (lead: the words of padding before column 0). Other geometries pair tap rows
  // (kh, kh + 1), the columns split by stride phase.
  bool col_pairs;
  int64_t shift = 0;  // pairing columns: pad_l mod 2, the taps the pairs start before tap 0
  int64_t lead = 0;   // pairing columns: the words before the one holding input columns 0 and 1
  int64_t rows;       // output rows per block
  int64_t pairs;      // taps in pairs along the paired axis: ceil((kW + shift) / 2) or ceil(kH / 2)
  int64_t cols;       // words of a word row (of each phase, pairing rows)
  int64_t row_words;  // words from one word row to the next
  int64_t taps;       // word runs (and weight words) of an output row
  // The scratch: the words, the block's input rows (pairing rows: a copy with zero-point rows
  // for those in the padding), the sums, the weight words and the runs' pointers.
  size_t rows_at, acc_at, wwords_at, src_at, end;
};

// The word rows of a block of `rows` output rows.
int64_t int_dw_word_rows_of(const kernels::ConvGeom& g, const IntDwDims& d, int64_t rows) {
  return d.col_pairs ? (rows - 1) * g.sH + (g.kH - 1) * g.dH + 1 : (rows - 1) * g.sH + 2 * (d.pairs - 1) * g.dH + 1;
}

IntDwDims int_dw_dims(const kernels::ConvGeom& g) {
  IntDwDims d;
  d.col_pairs = g.sW == 2 && g.dW == 1;
  d.rows = std::min(g.OH, std::max<int64_t>(1, (kDwPixels + g.OW - 1) / g.OW));
  if (d.col_pairs) {
    d.shift = g.pad_l % 2;
    d.lead = (g.pad_l + d.shift) / 2;
    d.pairs = (g.kW + d.shift + 1) / 2;
    d.cols = g.OW + d.pairs - 1;
    d.row_words = d.cols;
    d.taps = count_mul(g.kH, d.pairs);
  } else {
    d.pairs = (g.kH + 1) / 2;
    d.cols = g.OW + (g.kW - 1) * g.dW / g.sW;
    d.row_words = count_mul(g.sW, d.cols);
    d.taps = count_mul(d.pairs, g.kW);
  }
  const int64_t word_rows = int_dw_word_rows_of(g, d, d.rows);
  d.rows_at = align64(size_t(count_mul(count_mul(word_rows, d.row_words), 4)));
  d.acc_at = d.rows_at + (d.col_pairs ? 0 : align64(size_t(count_mul(word_rows + g.dH, g.W))));
  const size_t block = align64(size_t(count_mul(count_mul(d.rows, g.OW), 4)));
  d.wwords_at = d.acc_at + block;
  d.src_at = d.wwords_at + align64(size_t(d.taps) * sizeof(uint32_t));
  d.end = d.src_at + align64(size_t(d.taps) * sizeof(const uint32_t*));
  return d;
}

// Output pixels per block: up to kConvPixels, as larger blocks amortise the strip's halo rows and
// the per-block calls (64 -> 256 pixels took bench_int8's QLinear CNN from 354 to 277 us on
// AVX-512), but at least two blocks per plane of 128 pixels or more, so that two threads share one
// image's layer.
size_t block_pixels(const kernels::ConvGeom& g) {
  const int64_t big = int64_t(2 * kConvPixels);
  const int64_t half = g.OH >= big || g.OW >= big ? big / 2 : (g.OH * g.OW + 1) / 2;
  const size_t p = size_t((half + 15) / 16 * 16);
  return std::min(kConvPixels, std::max<size_t>(64, p));
}

IntConvDims int_conv_dims(const kernels::ConvGeom& g) {
  IntConvDims d;
  d.bp = block_pixels(g);
  d.cg = size_t(g.C / g.group);
  d.c4 = (d.cg + 3) / 4;
  d.taps = size_t(g.kH * g.kW);
  d.kp = d.taps * d.c4 * 4;
  d.groups = d.kp / 4;
  d.ps = d.groups * kernels::kQ8Group * kernels::kQ8Panel;
  const int64_t bp = int64_t(d.bp), row_span = g.OW >= bp ? 0 : (bp - 1) / g.OW + 1;
  d.strip_rows = size_t(row_span * g.sH + (g.kH - 1) * g.dH + 1);
  d.strip_cols = size_t((std::min<int64_t>(g.OW, bp) - 1) * g.sW + (g.kW - 1) * g.dW + 1);
  const size_t strip_words = d.strip_rows * d.strip_cols;
  d.sums_at = align64(strip_words * d.c4 * 4);
  d.flip_at = d.sums_at + align64(strip_words * 4);
  d.panels_at = d.flip_at + align64(d.strip_cols);
  d.col_sums_at = d.panels_at + align64(d.ps * (d.bp / kernels::kQ8Panel));
  d.raw_at = d.col_sums_at + align64(d.bp * 4);
  d.in_place_at = d.raw_at + align64(kConvRowBlock * d.bp * sizeof(int32_t));
  d.offsets_at = d.in_place_at + align64(d.bp / kernels::kQ8Panel * sizeof(const int8_t*));
  d.end = d.offsets_at + align64(d.taps * sizeof(ptrdiff_t));
  return d;
}

// The first output pixel and the pixel count of block b of a plane.
void int_conv_block(const IntConvParams& p, int64_t b, int64_t* p0, int64_t* np) {
  const kernels::ConvGeom& g = p.g;
  if (p.row_pieces) {
    const int64_t oh = b / p.row_pieces, ow0 = (b % p.row_pieces) * p.bp;
    *p0 = oh * g.OW + ow0;
    *np = std::min<int64_t>(p.bp, g.OW - ow0);
  } else {
    *p0 = b * p.bp;
    *np = std::min<int64_t>(p.bp, g.OH * g.OW - *p0);
  }
}

// Scratch of a convolution (IntConvDims), with A' (the weights) when the plan cannot have packed them.
size_t int_conv_scratch_bytes(const kernels::ConvGeom& g, bool w_known) {
  if (int_conv_is_depthwise(g)) return int_dw_dims(g).end;
  const IntConvDims d = int_conv_dims(g);
  return d.end + (w_known ? 0 : packed_a_buffer_bytes(size_t(g.M), d.kp));
}

// x is input 0, w input `w_in`.
template <size_t w_in>
Status prepare_int_conv(const InferContext& ctx, Prepared& out) {
  const std::vector<int64_t>& x = ctx.input(0)->shape;
  const std::vector<int64_t>& w = ctx.input(w_in)->shape;
  SpatialGeom sg;
  if (const char* why = spatial_geom(ctx.node, GeomKind::Conv, x.data(), x.size(), w.data(), w.size(), &sg))
    return ctx.error(ErrorKind::ShapeMismatch, geom_error_text(ctx.node, why, x, &w));
  IntConvParams& p = out.record<IntConvParams>();
  p.g = sg.g;
  p.zx = zero_point_form(ctx, 2);
  p.zw = zero_point_form(ctx, w_in + 2);
  p.relu = ctx.node.attr_int("relu", 0) != 0;
  p.bp = int_conv_is_depthwise(sg.g) ? int_dw_dims(sg.g).rows * sg.g.OW : int64_t(block_pixels(sg.g));
  const int64_t pixels = count_mul(sg.g.OH, sg.g.OW), bp = p.bp;
  if (sg.g.OW >= bp && !int_conv_is_depthwise(sg.g)) {
    p.row_pieces = (sg.g.OW + bp - 1) / bp;
    p.blocks = count_mul(sg.g.OH, p.row_pieces);
  } else {
    p.blocks = (pixels + bp - 1) / bp;
  }
  out.work = pixels == 0 ? 0 : count_mul(count_mul(sg.g.N, sg.g.group), p.blocks);
  out.cost = count_mul(count_mul(count_mul(sg.g.N, sg.g.M), pixels), count_mul(sg.g.C / sg.g.group, sg.g.kH * sg.g.kW)) / 8;
  return Status::ok();
}

template <size_t w_in>
size_t int_conv_scratch(const InferContext& ctx) {
  const auto& x = ctx.input(0)->shape;
  const auto& w = ctx.input(w_in)->shape;
  SpatialGeom sg;
  if (spatial_geom(ctx.node, GeomKind::Conv, x.data(), x.size(), w.data(), w.size(), &sg) != nullptr) return 0;
  return int_conv_scratch_bytes(sg.g, ctx.input(w_in)->data != nullptr);
}

// The weights [M, cg, kH, kW] as A' rows in the (kh, kw, channel group of 4) order, padded
// channels 0, and the rows' sums.
void pack_int_conv_weights_into(const void* w, bool ws, size_t M, size_t cg, size_t taps, PackedA pa) {
  const size_t c4 = (cg + 3) / 4, kp = taps * c4 * 4;
  const uint8_t flip = ws ? 0x80 : 0;
  const auto* src = static_cast<const uint8_t*>(w);
  for (size_t m = 0; m < M; ++m) {
    uint8_t* row = pa.rows + m * kp;
    uint32_t sum = 0;
    for (size_t t = 0; t < taps; ++t)
      for (size_t c = 0; c < c4 * 4; ++c) {
        const uint8_t v = c < cg ? uint8_t(src[(m * cg + c) * taps + t] ^ flip) : 0;
        row[t * c4 * 4 + c] = v;
        sum += v;
      }
    pa.row_sums[m] = int32_t(sum);
  }
}

void pack_int_conv_weights(const int64_t* params, const void* w, float* dst) {
  const size_t M = size_t(params[0]), cg = size_t(params[1]), taps = size_t(params[2]);
  pack_int_conv_weights_into(w, params[3] != 0, M, cg, taps, packed_a_view(dst, M, taps * ((cg + 3) / 4) * 4));
}

// The weights packed once (pack_int_conv_weights).
template <size_t w_in>
bool int_conv_packable(const Node&, const std::vector<const ValueDesc*>& inputs, PackableB* out) {
  if (inputs.size() <= w_in || !inputs[w_in] || !is_q8(inputs[w_in]->dtype)) return false;
  const ValueDesc& w = *inputs[w_in];
  if (w.shape.size() < 3 || w.numel() == 0 || w.shape[1] == 1) return false;  // one channel per group: the depthwise form reads w in place
  const int64_t M = w.shape[0], cg = w.shape[1], taps = w.numel() / (M * cg);
  const size_t kp = size_t(taps) * size_t((cg + 3) / 4) * 4;
  out->input = w_in;
  out->K = kp;
  out->N = size_t(M);
  out->floats = (packed_a_buffer_bytes(size_t(M), kp) + sizeof(float) - 1) / sizeof(float);
  out->pack = pack_int_conv_weights;
  out->params[0] = M;
  out->params[1] = cg;
  out->params[2] = taps;
  out->params[3] = is_s8(w.dtype) ? 1 : 0;
  return true;
}

// The image block of output pixels [p0, p0 + np) of image n, group gi as B' panels with their
// column sums (the comment at the top of this section). A group of fewer than four real channels
// reads the missing ones from a row of flip bytes (zero once flipped), as the zero weights there.
// A panel of 16 pixels side by side in the strip is read there (in_place[p] its first word; the
// walk returned gives its groups: a run of the channel groups, a plane apart, per tap), which
// saves copying each tap's panel (a fifth of bench_int8's QLinear CNN on AVX-512); the others are
// copied into `panels` (in_place[p] null).
kernels::Q8Walk int_conv_image_block(const kernels::ConvGeom& g, const IntConvDims& d, const uint8_t* x, bool xs,
                                     int8_t zero_byte, int64_t n, int64_t gi, int64_t p0, int64_t np,
                                     unsigned char* scratch, int8_t* panels, int32_t* col_sums,
                                     const int8_t** in_place) {
  const int64_t oh0 = p0 / g.OW, oh1 = (p0 + np - 1) / g.OW;
  const int64_t ow_lo = oh0 == oh1 ? p0 % g.OW : 0, ow_hi = oh0 == oh1 ? (p0 + np - 1) % g.OW : g.OW - 1;
  const int64_t rows = (oh1 - oh0) * g.sH + (g.kH - 1) * g.dH + 1, cols = (ow_hi - ow_lo) * g.sW + (g.kW - 1) * g.dW + 1;
  const int64_t ih0 = oh0 * g.sH - g.pad_t, iw0 = ow_lo * g.sW - g.pad_l;  // the strip's first input position
  const size_t plane = size_t(rows * cols);
  auto* strip = reinterpret_cast<uint32_t*>(scratch);
  auto* sums = reinterpret_cast<int32_t*>(scratch + d.sums_at);
  const uint8_t flip = xs ? 0 : 0x80;
  for (size_t i = 0; i < plane; ++i) sums[i] = 0;
  // The strip: for each group of 4 channels, rows x cols words.
  const int64_t c_lo = std::min(cols, std::max<int64_t>(0, -iw0)), c_hi = std::max(c_lo, std::min(cols, g.W - iw0));
  uint8_t* flip_row = nullptr;
  if (d.cg % 4) {
    flip_row = scratch + d.flip_at;
    std::memset(flip_row, flip, size_t(c_hi - c_lo));
  }
  for (size_t q = 0; q < d.c4; ++q) {
    const size_t nc = std::min<size_t>(4, d.cg - 4 * q);  // real channels in this group
    uint32_t pad_word = 0;
    for (size_t t = 0; t < nc; ++t) pad_word |= uint32_t(uint8_t(zero_byte)) << (8 * t);
    const int32_t pad_sum = int32_t(nc) * zero_byte;
    const uint8_t* ch = x + ((n * g.C + gi * int64_t(d.cg) + int64_t(4 * q)) * g.H) * g.W;
    for (int64_t r = 0; r < rows; ++r) {
      uint32_t* out = strip + q * plane + size_t(r * cols);
      int32_t* srow = sums + r * cols;
      const int64_t ih = ih0 + r;
      const bool inside = ih >= 0 && ih < g.H;
      const int64_t a = inside ? c_lo : cols, b = inside ? c_hi : cols;
      for (int64_t c = 0; c < a; ++c) out[c] = pad_word, srow[c] += pad_sum;
      for (int64_t c = b; c < cols; ++c) out[c] = pad_word, srow[c] += pad_sum;
      if (a >= b) continue;
      const int64_t off = ih * g.W + iw0 + a;
      const uint8_t* src[4];
      for (size_t t = 0; t < 4; ++t) src[t] = t < nc ? ch + int64_t(t) * g.H * g.W + off : flip_row;
      kernels::q8_interleave4(src, flip, size_t(b - a), out + a, kernels::kQ8Panel, srow + a);
    }
  }
  // Where each block column starts in the strip.
  int64_t at[kConvPixels];
  for (int64_t j = 0, oh = oh0, ow = p0 % g.OW; j < np; ++j) {
    at[j] = (oh - oh0) * g.sH * cols + (ow - ow_lo) * g.sW;
    if (++ow == g.OW) ow = 0, ++oh;
  }
  for (int64_t j = np; j < int64_t(d.bp); ++j) at[j] = -1;
  constexpr size_t kPanel = kernels::kQ8Panel, kGroupBytes = kernels::kQ8Group * kernels::kQ8Panel;
  auto* offsets = reinterpret_cast<ptrdiff_t*>(scratch + d.offsets_at);
  for (int64_t kh = 0; kh < g.kH; ++kh)
    for (int64_t kw = 0; kw < g.kW; ++kw)
      offsets[kh * g.kW + kw] = ptrdiff_t((kh * g.dH * cols + kw * g.dW) * int64_t(sizeof(uint32_t)));
  for (size_t j = 0; j < d.bp; ++j) col_sums[j] = 0;
  for (size_t pq = 0; pq < kernels::q8_panels(size_t(np)); ++pq) {
    const size_t j0 = pq * kPanel;
    int8_t* panel = panels + pq * d.ps;
    int32_t* cs = col_sums + j0;
    in_place[pq] = nullptr;
    if (at[j0 + kPanel - 1] >= 0 && at[j0 + kPanel - 1] - at[j0] == int64_t(kPanel - 1)) {
      // Side by side in the strip: read there; the sums vectorise (a local: nothing aliases it).
      in_place[pq] = reinterpret_cast<const int8_t*>(strip + at[j0]);
      int32_t acc[kPanel] = {};
      for (size_t t = 0; t < d.taps; ++t) {
        const int32_t* s = sums + at[j0] + offsets[t] / ptrdiff_t(sizeof(uint32_t));
        for (size_t j = 0; j < kPanel; ++j) acc[j] += s[j];
      }
      for (size_t j = 0; j < kPanel; ++j) cs[j] = acc[j];
    } else if (at[j0 + kPanel - 1] >= 0 && at[j0 + kPanel - 1] - at[j0] == int64_t(kPanel - 1) * g.sW) {
      // One output row at stride sW: words sW apart in the strip, copies that vectorise.
      const size_t c4 = d.c4, sw = size_t(g.sW);
      int32_t acc[kPanel] = {};
      auto* dst = reinterpret_cast<uint32_t*>(panel);
      for (int64_t kh = 0; kh < g.kH; ++kh)
        for (int64_t kw = 0; kw < g.kW; ++kw) {
          const int64_t tap = kh * g.dH * cols + kw * g.dW + at[j0];
          const int32_t* s = sums + tap;
          for (size_t j = 0; j < kPanel; ++j) acc[j] += s[j * sw];
          const uint32_t* src = strip + tap;
          for (size_t q = 0; q < c4; ++q, dst += kPanel)
            for (size_t j = 0; j < kPanel; ++j) dst[j] = src[q * plane + j * sw];
        }
      for (size_t j = 0; j < kPanel; ++j) cs[j] = acc[j];
    } else {
      for (size_t t = 0; t < d.taps; ++t) {
        const int64_t tap = int64_t(t) / g.kW * g.dH * cols + int64_t(t) % g.kW * g.dW;
        for (size_t j = 0; j < kPanel && int64_t(j0 + j) < np; ++j) cs[j] += sums[at[j0 + j] + tap];
        for (size_t q = 0; q < d.c4; ++q) {
          const uint32_t* src = strip + q * plane + tap;
          auto* lanes = reinterpret_cast<uint32_t*>(panel + (t * d.c4 + q) * kGroupBytes);
          for (size_t j = 0; j < kPanel; ++j) lanes[j] = at[j0 + j] >= 0 ? src[at[j0 + j]] : 0u;
        }
      }
    }
  }
  return kernels::Q8Walk{offsets, d.taps, d.c4, ptrdiff_t(plane * sizeof(uint32_t))};
}

// A pointwise convolution (1x1, stride 1, no padding) reads its block's pixels straight from the
// channel planes: each group of four channels is interleaved into the panels in place (no strip,
// no copies), the column sums being the interleave's. The words past np in the last panel are 0.
bool int_conv_is_pointwise(const kernels::ConvGeom& g) {
  return g.kH == 1 && g.kW == 1 && g.sH == 1 && g.sW == 1 && g.pad_t == 0 && g.pad_l == 0 && g.OH == g.H && g.OW == g.W;
}

void int_conv_pointwise_block(const kernels::ConvGeom& g, const IntConvDims& d, const uint8_t* x, bool xs, int64_t n,
                              int64_t gi, int64_t p0, int64_t np, unsigned char* scratch, int8_t* panels, int32_t* col_sums) {
  const uint8_t flip = xs ? 0 : 0x80;
  for (size_t j = 0; j < d.bp; ++j) col_sums[j] = 0;
  uint8_t* flip_row = nullptr;  // the missing channels of a last group of fewer than four (zero once flipped)
  if (d.cg % 4) {
    flip_row = scratch;  // the strip's room, unused here (at least bp bytes)
    std::memset(flip_row, flip, size_t(np));
  }
  const int64_t plane = g.H * g.W, tail = np % int64_t(kernels::kQ8Panel);
  for (size_t q = 0; q < d.c4; ++q) {
    const size_t nc = std::min<size_t>(4, d.cg - 4 * q);
    const uint8_t* ch = x + (n * g.C + gi * int64_t(d.cg) + int64_t(4 * q)) * plane + p0;
    const uint8_t* src[4];
    for (size_t t = 0; t < 4; ++t) src[t] = t < nc ? ch + int64_t(t) * plane : flip_row;
    auto* group = reinterpret_cast<uint32_t*>(panels + q * kernels::kQ8Group * kernels::kQ8Panel);
    kernels::q8_interleave4(src, flip, size_t(np), group, d.ps / 4, col_sums);
    if (tail) {
      uint32_t* last = group + size_t(np / int64_t(kernels::kQ8Panel)) * (d.ps / 4);
      for (size_t j = size_t(tail); j < kernels::kQ8Panel; ++j) last[j] = 0;
    }
  }
}

// ---- The depthwise form (one input channel per group: kernels/q8_depthwise.h) ----
//
// A block of output rows of one input channel first lays the input rows it reads out as words
// of two values minus the zero point (rows r and r + dH, columns split by phase c mod sW, the
// padding 0); each output row is then the sum over the tap pairs (kh, kh + 1) and the tap columns
// of one word run times one weight word, for every output channel of the group.

// Which block's rows outside the image are in place (int_dw_row_pair_rows: the copy's rows of
// zero-point bytes; int_dw_col_pair_rows: the word rows of zeros): every block of a plane's size
// has the same ones, so they are written once per kernel call rather than once per channel.
struct IntDwPadRows {
  int64_t ih0 = INT64_MIN, rows = 0;
};

// Pairing rows: the word rows of a block whose first word row reads input row ih0. The input rows
// it reads are copied first, with rows of zero-point bytes for those outside the image, so that
// each phase's word rows are one layout call (its columns inside the image): row halves in the
// padding are zeros as the zero point minus itself. (One call per row with a half outside, and a
// zeroing per row with both, cost a 16 x 16 plane's layer about a fifth of its time.) The padding
// columns are never written: the words are zeroed once per kernel call (int_conv_with).
void int_dw_row_pair_rows(const kernels::ConvGeom& g, const IntDwDims& d, const uint8_t* plane, uint8_t* copy,
                          IntDwPadRows* pad, bool xs, int32_t zx, int64_t ih0, int64_t word_rows, uint32_t* words) {
  const int64_t in_rows = word_rows + g.dH;  // word row r reads copy rows r and r + dH
  const int64_t lo = std::min(in_rows, std::max<int64_t>(0, -ih0)), hi = std::max(lo, std::min(in_rows, g.H - ih0));
  if (pad->ih0 != ih0 || pad->rows != in_rows) {
    std::memset(copy, uint8_t(zx), size_t(lo * g.W));
    std::memset(copy + hi * g.W, uint8_t(zx), size_t((in_rows - hi) * g.W));
    pad->ih0 = ih0;
    pad->rows = in_rows;
  }
  std::memcpy(copy + lo * g.W, plane + (ih0 + lo) * g.W, size_t((hi - lo) * g.W));
  for (int64_t ph = 0; ph < g.sW; ++ph) {
    // Columns c with 0 <= c sW + ph - pad_l < W read the rows.
    const int64_t first = g.pad_l - ph;
    const int64_t c_lo = std::min(d.cols, first <= 0 ? 0 : (first + g.sW - 1) / g.sW);
    const int64_t c_hi = std::max(c_lo, std::min(d.cols, (g.W + g.pad_l - ph + g.sW - 1) / g.sW));
    if (c_lo >= c_hi) continue;
    const int64_t off = c_lo * g.sW + ph - g.pad_l;
    kernels::q8_pair_rows(copy + off, copy + g.dH * g.W + off, size_t(word_rows), size_t(g.W), size_t(g.sW), zx, xs,
                          size_t(c_hi - c_lo), words + ph * d.cols + c_lo, size_t(d.row_words));
  }
}

// Pairing columns (stride 2, no column dilation): word row r is input row ih0 + r, word c the
// values at columns 2(c - lead) and 2(c - lead) + 1 (the taps 2q - shift and 2q + 1 - shift of
// output c - q). The words inside the image are its rows' bytes widened in order, one layout
// call for the rows of the image; words in the padding columns are never written (zeroed once
// per kernel call), so only an odd width leaves an edge here: its last column and the padding.
// Rows outside the image are zeros. (Pairing from column -pad_l instead put a word across each
// padded edge with an odd pad, two values computed one at a time per row: at 3x3 stride 2 pad 1
// that made two fifths of the layer's time.)
void int_dw_col_pair_rows(const kernels::ConvGeom& g, const IntDwDims& d, const uint8_t* plane, IntDwPadRows* pad,
                          bool xs, int32_t zx, int64_t ih0, int64_t word_rows, uint32_t* words) {
  const int64_t c_lo = std::min(d.cols, d.lead), c_hi = std::min(d.cols, d.lead + g.W / 2);
  const int64_t in_lo = std::min(word_rows, std::max<int64_t>(0, -ih0));
  const int64_t in_hi = std::max(in_lo, std::min(word_rows, g.H - ih0));
  if (pad->ih0 != ih0 || pad->rows != word_rows) {
    std::memset(words, 0, size_t(in_lo * d.row_words) * sizeof(uint32_t));
    std::memset(words + in_hi * d.row_words, 0, size_t((word_rows - in_hi) * d.row_words) * sizeof(uint32_t));
    pad->ih0 = ih0;
    pad->rows = word_rows;
  }
  if (in_lo >= in_hi) return;
  if (c_lo < c_hi) {
    const uint8_t* a = plane + (ih0 + in_lo) * g.W;
    kernels::q8_pair_rows(a, a + 1, size_t(in_hi - in_lo), size_t(g.W), 2, zx, xs, size_t(c_hi - c_lo),
                          words + in_lo * d.row_words + c_lo, size_t(d.row_words));
  }
  const int64_t e = d.lead + g.W / 2;  // the word of the last column of an odd width and the padding
  if (g.W % 2 == 0 || e >= d.cols) return;
  for (int64_t r = in_lo; r < in_hi; ++r) {
    const uint8_t v = plane[(ih0 + r) * g.W + g.W - 1];
    words[r * d.row_words + e] = kernels::q8_pair((xs ? int32_t(int8_t(v)) : int32_t(v)) - zx, 0);
  }
}

// The word runs of an output row's taps (the same for every block: the words start the scratch),
// set once per kernel call.
void int_dw_sources(const kernels::ConvGeom& g, const IntDwDims& d, unsigned char* scratch) {
  auto* words = reinterpret_cast<uint32_t*>(scratch);
  auto* src = reinterpret_cast<const uint32_t**>(scratch + d.src_at);
  if (d.col_pairs) {
    for (int64_t kh = 0; kh < g.kH; ++kh)
      for (int64_t q = 0; q < d.pairs; ++q) src[kh * d.pairs + q] = words + kh * g.dH * d.row_words + q;
    return;
  }
  for (int64_t q = 0; q < d.pairs; ++q)
    for (int64_t kw = 0; kw < g.kW; ++kw) {
      const int64_t col = kw * g.dW;
      src[q * g.kW + kw] = words + 2 * q * g.dH * d.row_words + (col % g.sW) * d.cols + col / g.sW;
    }
}

// Output pixels [p0, p0 + np) (whole rows) of image n for the output channels of group gi. The
// sums are final, so the epilogue's corrections are zero (ZA 0: any column sums do, the sums' own).
template <typename Epilogue>
void int_conv_depthwise_block(const kernels::ConvGeom& g, const IntDwDims& d, const uint8_t* x, bool xs, int32_t zx,
                              const void* w, bool ws, const ZeroPoints& zw, int64_t n, int64_t gi, int64_t p0, int64_t np,
                              unsigned char* scratch, IntDwPadRows* pad, const Epilogue& epi) {
  auto* words = reinterpret_cast<uint32_t*>(scratch);
  auto* acc = reinterpret_cast<int32_t*>(scratch + d.acc_at);
  auto* wwords = reinterpret_cast<uint32_t*>(scratch + d.wwords_at);
  auto* src = reinterpret_cast<const uint32_t* const*>(scratch + d.src_at);
  const int64_t oh0 = p0 / g.OW, nrows = np / g.OW, row_words = d.row_words;
  const int64_t ih0 = oh0 * g.sH - g.pad_t, word_rows = int_dw_word_rows_of(g, d, nrows);
  const uint8_t* plane = x + (n * g.C + gi) * g.H * g.W;
  if (d.col_pairs) {
    int_dw_col_pair_rows(g, d, plane, pad, xs, zx, ih0, word_rows, words);
  } else {
    int_dw_row_pair_rows(g, d, plane, scratch + d.rows_at, pad, xs, zx, ih0, word_rows, words);
  }
  const int64_t mg = g.M / g.group, pixels = g.OH * g.OW;
  const auto* wb = static_cast<const uint8_t*>(w);
  auto weight = [&](int64_t i) { return ws ? int32_t(int8_t(wb[i])) : int32_t(wb[i]); };
  for (int64_t m = gi * mg; m < (gi + 1) * mg; ++m) {
    const int32_t z = zw[m];
    const int64_t w0 = m * g.kH * g.kW;
    if (d.col_pairs) {
      for (int64_t kh = 0; kh < g.kH; ++kh)
        for (int64_t q = 0; q < d.pairs; ++q) {
          const int64_t kw = 2 * q - d.shift;
          wwords[kh * d.pairs + q] = kernels::q8_pair(kw >= 0 ? weight(w0 + kh * g.kW + kw) - z : 0,
                                                      kw + 1 < g.kW ? weight(w0 + kh * g.kW + kw + 1) - z : 0);
        }
    } else {
      for (int64_t q = 0; q < d.pairs; ++q)
        for (int64_t kw = 0; kw < g.kW; ++kw) {
          const int64_t kh = 2 * q;
          wwords[q * g.kW + kw] = kernels::q8_pair(weight(w0 + kh * g.kW + kw) - z,
                                                   kh + 1 < g.kH ? weight(w0 + (kh + 1) * g.kW + kw) - z : 0);
        }
    }
    kernels::q8_pair_dot(src, wwords, size_t(d.taps), size_t(g.OW), size_t(nrows), size_t(g.sH * row_words), acc);
    epi.finish_row(m, (n * g.M + m) * pixels + p0, p0, acc, acc, 0, 0u, np);
  }
}

// The element loop: each output's sum in (c, kh, kw) order over the in-bounds taps, from the
// operands in place. It runs when the plan kept no packed weights for weights known when
// planning (then the scratch has no room for them).
template <typename TX, typename TW, typename Epilogue>
void int_conv_reference(const KernelContext& k, size_t x_in, size_t xzp_in, size_t w_in, size_t wzp_in, const Epilogue& epi) {
  const IntConvParams& p = k.params<IntConvParams>();
  const kernels::ConvGeom& g = p.g;
  const TX* x = k.in(x_in).as<const TX>();
  const TW* w = k.in(w_in).as<const TW>();
  const ZeroPoints zx(k, xzp_in, p.zx), zw(k, wzp_in, p.zw);
  const int64_t cg = g.C / g.group, mg = g.M / g.group, pixels = g.OH * g.OW;
  for (int64_t u = k.begin; u < k.end; ++u) {
    const int64_t n = u / (g.group * p.blocks), gi = (u / p.blocks) % g.group;
    int64_t p0, np;
    int_conv_block(p, u % p.blocks, &p0, &np);
    for (int64_t m = gi * mg; m < (gi + 1) * mg; ++m) {
      for (int64_t px = p0; px < p0 + np; ++px) {
        const int64_t oh = px / g.OW, ow = px % g.OW;
        uint32_t acc = 0;  // wraps modulo 2^32 like the i32 accumulator
        for (int64_t c = 0; c < cg; ++c)
          for (int64_t kh = 0; kh < g.kH; ++kh) {
            const int64_t ih = oh * g.sH - g.pad_t + kh * g.dH;
            if (ih < 0 || ih >= g.H) continue;
            for (int64_t kw = 0; kw < g.kW; ++kw) {
              const int64_t iw = ow * g.sW - g.pad_l + kw * g.dW;
              if (iw < 0 || iw >= g.W) continue;
              const int32_t xv = int32_t(x[((n * g.C + gi * cg + c) * g.H + ih) * g.W + iw]) - zx[0];
              const int32_t wv = int32_t(w[((m * cg + c) * g.kH + kh) * g.kW + kw]) - zw[m];
              acc += uint32_t(xv * wv);
            }
          }
        const int32_t v = int32_t(acc);
        epi.store_row(m, (n * g.M + m) * pixels + px, px, &v, 1);
      }
    }
  }
}

template <typename Epilogue>
void int_conv_reference(const KernelContext& k, size_t x_in, size_t xzp_in, size_t w_in, size_t wzp_in, const Epilogue& epi) {
  with_q8_types(k.in(x_in).dtype, k.in(w_in).dtype, [&](auto tx, auto tw) {
    int_conv_reference<decltype(tx), decltype(tw)>(k, x_in, xzp_in, w_in, wzp_in, epi);
  });
}

// The i32 convolution of x and w after subtracting the zero points (x per-tensor, w per-tensor
// or per output channel) for work units [k.begin, k.end); taps in the padding add nothing (the
// padding holds the zero point). epi.store_row writes each output channel's results.
template <typename Epilogue>
void int_conv_with(const KernelContext& k, size_t x_in, size_t xzp_in, size_t w_in, size_t wzp_in, const Epilogue& epi) {
  const IntConvParams& p = k.params<IntConvParams>();
  const kernels::ConvGeom& g = p.g;
  if (int_conv_is_depthwise(g) && k.scratch_bytes >= int_conv_scratch_bytes(g, false)) {
    const IntDwDims d = int_dw_dims(g);
    const ZeroPoints zx(k, xzp_in, p.zx), zw(k, wzp_in, p.zw);
    const bool xs = is_s8(k.in(x_in).dtype), ws = is_s8(k.in(w_in).dtype);
    auto* scratch = static_cast<unsigned char*>(k.scratch);
    std::memset(scratch, 0, d.rows_at);  // the words' padding columns (int_dw_row_pair_rows)
    int_dw_sources(g, d, scratch);
    IntDwPadRows pad;
    for (int64_t u = k.begin; u < k.end; ++u) {
      int64_t p0, np;
      int_conv_block(p, u % p.blocks, &p0, &np);
      int_conv_depthwise_block(g, d, k.in(x_in).as<const uint8_t>(), xs, zx[0], k.in(w_in).data, ws, zw,
                               u / (g.group * p.blocks), (u / p.blocks) % g.group, p0, np,
                               static_cast<unsigned char*>(k.scratch), &pad, epi);
    }
    return;
  }
  if (!k.packed_b && k.scratch_bytes < int_conv_scratch_bytes(g, false))
    return int_conv_reference(k, x_in, xzp_in, w_in, wzp_in, epi);
  const bool xs = is_s8(k.in(x_in).dtype), ws = is_s8(k.in(w_in).dtype);
  const IntConvDims d = int_conv_dims(g);
  const size_t mg = size_t(g.M / g.group), K = d.cg * d.taps;  // K: the real k count, for the zero points
  const int64_t pixels = g.OH * g.OW;
  const ZeroPoints zx(k, xzp_in, p.zx), zw(k, wzp_in, p.zw);
  const int32_t ZB = kernels::q8_zero_b(zx[0], xs);
  auto* scratch = static_cast<unsigned char*>(k.scratch);
  auto* panels = reinterpret_cast<int8_t*>(scratch + d.panels_at);
  auto* col_sums = reinterpret_cast<int32_t*>(scratch + d.col_sums_at);
  auto* raw = reinterpret_cast<int32_t*>(scratch + d.raw_at);
  PackedA wa;
  if (k.packed_b) {
    wa = packed_a_view(const_cast<float*>(k.packed_b), size_t(g.M), d.kp);
  } else {
    wa = packed_a_view(scratch + d.end, size_t(g.M), d.kp);
    pack_int_conv_weights_into(k.in(w_in).data, ws, size_t(g.M), d.cg, d.taps, wa);
  }
  const auto* x = k.in(x_in).as<const uint8_t>();
  const bool pointwise = int_conv_is_pointwise(g);
  auto** in_place = reinterpret_cast<const int8_t**>(scratch + d.in_place_at);
  for (int64_t u = k.begin; u < k.end; ++u) {
    const int64_t n = u / (g.group * p.blocks), gi = (u / p.blocks) % g.group;
    int64_t p0, np;
    int_conv_block(p, u % p.blocks, &p0, &np);
    const size_t np_panels = kernels::q8_panels(size_t(np));
    kernels::Q8Walk walk{};
    if (pointwise) {
      int_conv_pointwise_block(g, d, x, xs, n, gi, p0, np, scratch, panels, col_sums);
      for (size_t pq = 0; pq < np_panels; ++pq) in_place[pq] = nullptr;
    } else {
      walk = int_conv_image_block(g, d, x, xs, int8_t(ZB), n, gi, p0, np, scratch, panels, col_sums, in_place);
    }
    for (size_t r0 = 0; r0 < mg; r0 += kConvRowBlock) {
      const size_t nr = std::min(kConvRowBlock, mg - r0), m0 = size_t(gi) * mg + r0;
      // Runs of panels read in place and of copied ones, each one product call.
      for (size_t pq = 0, end = 0; pq < np_panels; pq = end) {
        const bool here = in_place[pq] != nullptr;
        for (end = pq + 1; end < np_panels && (in_place[end] != nullptr) == here;) ++end;
        int32_t* c = raw + pq * kernels::kQ8Panel;
        if (here) {
          kernels::q8_dot_taps(wa.rows + m0 * d.kp, d.kp, nr, in_place + pq, end - pq, walk, c, d.bp,
                               panels + pq * d.ps);
        } else {
          kernels::q8_dot(wa.rows + m0 * d.kp, d.kp, nr, panels + pq * d.ps, d.ps, d.groups, end - pq, c, d.bp);
        }
      }
      for (size_t r = 0; r < nr; ++r) {
        const int64_t m = int64_t(m0 + r);
        const int32_t ZA = kernels::q8_zero_a(zw[m], ws);
        const uint32_t rt = kernels::q8_row_term(wa.row_sums[m], ZA, ZB, K);
        epi.finish_row(m, (n * g.M + m) * pixels + p0, p0, raw + r * d.bp, col_sums, ZA, rt, np);
      }
    }
  }
}

// The driver with any epilogue (compiled once, AnyEpilogue above).
template <typename Epilogue>
void int_conv(const KernelContext& k, size_t x_in, size_t xzp_in, size_t w_in, size_t wzp_in, Epilogue epi) {
  int_conv_with(k, x_in, xzp_in, w_in, wzp_in, AnyEpilogue(epi));
}

// The output shape [N, M, (OH,) OW] from the shared Conv geometry (graph/ops/conv_geom.h).
Status infer_int_conv_shape(InferContext& ctx, size_t x_in, size_t w_in, SpatialGeom* sg, std::vector<int64_t>* y) {
  OM_TRY(need_dtype(ctx, x_in, {DType::u8, DType::i8}, "x"));
  OM_TRY(need_dtype(ctx, w_in, {DType::u8, DType::i8}, "w"));
  const auto& x = ctx.input(x_in)->shape;
  const auto& w = ctx.input(w_in)->shape;
  if (const char* why = spatial_geom(ctx.node, GeomKind::Conv, x.data(), x.size(), w.data(), w.size(), sg))
    return ctx.error(ErrorKind::ShapeMismatch, geom_error_text(ctx.node, why, x, &w));
  if (sg->spatial == 3)
    return ctx.error(ErrorKind::Unsupported, msg("the integer convolutions take 1-D and 2-D inputs, got ", shape_str(x),
                                                 "; run a 3-D convolution as Conv in f32 (DequantizeLinear before it)"));
  *y = {sg->g.N, sg->g.M};
  if (sg->spatial == 2) y->push_back(sg->g.OH);
  y->push_back(sg->g.OW);
  return check_shape(msg(ctx.node.op_type, " node '", ctx.node.name, "'"), *y);
}

// ConvInteger inputs: x, w, x_zero_point, w_zero_point.
Status infer_conv_integer(InferContext& ctx) {
  SpatialGeom sg;
  std::vector<int64_t> y;
  OM_TRY(infer_int_conv_shape(ctx, 0, 1, &sg, &y));
  OM_TRY(need_zero_point_dtype(ctx, 2, ctx.input(0)->dtype, "x_zero_point"));
  OM_TRY(need_zero_point_dtype(ctx, 3, ctx.input(1)->dtype, "w_zero_point"));
  OM_TRY(need_param_shape(ctx, 2, -1, "x_zero_point", ""));
  OM_TRY(need_param_shape(ctx, 3, sg.g.M, "w_zero_point", "output-channel"));
  ctx.set_output(0, DType::i32, std::move(y));
  return Status::ok();
}

Status conv_integer_kernel(const KernelContext& k) {
  int_conv(k, 0, 2, 1, 3, StoreI32{k.out(0).as<int32_t>()});
  return Status::ok();
}

// ConvIntegerScaled (the dynamic form's float epilogue, above): ConvInteger's inputs, the scale
// and a bias per output channel.
Status infer_conv_integer_scaled(InferContext& ctx) {
  OM_TRY(infer_conv_integer(ctx));
  std::vector<int64_t> y = ctx.outputs[0].shape;
  OM_TRY(check_scale_and_bias(ctx, y[1], "output channel"));
  ctx.set_output(0, DType::f32, std::move(y));
  return Status::ok();
}

Status conv_integer_scaled_kernel(const KernelContext& k) {
  int_conv(k, 0, 2, 1, 3, scaled_store(k, true, k.params<IntConvParams>().relu));
  return Status::ok();
}

// QLinearConv inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B.
Status infer_qlinear_conv(InferContext& ctx) {
  SpatialGeom sg;
  std::vector<int64_t> y;
  OM_TRY(infer_int_conv_shape(ctx, 0, 3, &sg, &y));
  OM_TRY(need_dtype(ctx, 1, {DType::f32}, "x_scale"));
  OM_TRY(need_dtype(ctx, 4, {DType::f32}, "w_scale"));
  OM_TRY(need_usable_scale(ctx, 1, "x_scale"));
  OM_TRY(need_usable_scale(ctx, 4, "w_scale"));
  OM_TRY(need_zero_point_dtype(ctx, 2, ctx.input(0)->dtype, "x_zero_point"));
  OM_TRY(need_zero_point_dtype(ctx, 5, ctx.input(3)->dtype, "w_zero_point"));
  OM_TRY(need_param_shape(ctx, 1, -1, "x_scale", ""));
  OM_TRY(need_param_shape(ctx, 2, -1, "x_zero_point", ""));
  OM_TRY(need_param_shape(ctx, 4, sg.g.M, "w_scale", "output-channel"));
  OM_TRY(need_param_shape(ctx, 5, sg.g.M, "w_zero_point", "output-channel"));
  OM_TRY(check_output_params(ctx, 6, 7));
  if (const ValueDesc* b = ctx.input(8)) {
    if (b->dtype != DType::i32 || b->shape != std::vector<int64_t>{sg.g.M})
      return ctx.error(ErrorKind::ShapeMismatch, msg("input 8 (B, the bias) must be i32 [", sg.g.M, "] (the output channels), got ",
                                                     describe(b)));
  }
  ctx.set_output(0, ctx.input(7)->dtype, std::move(y));
  return Status::ok();
}

// The output channel is the row here: w_scale is the row's scale and x_scale the (per-tensor)
// column one; the multiplier's first product is commutative, so it is s_x x s_w[m] / s_y.
Status qlinear_conv_kernel(const KernelContext& k) {
  const int32_t* bias = k.has_input(8) ? k.in(8).as<const int32_t>() : nullptr;
  if (k.out(0).dtype == DType::i8) int_conv(k, 0, 2, 3, 5, requantized_store<int8_t>(k, &k.in(4), &k.in(1), 6, 7, bias));
  else int_conv(k, 0, 2, 3, 5, requantized_store<uint8_t>(k, &k.in(4), &k.in(1), 6, 7, bias));
  return Status::ok();
}

constexpr AttrSpec kAxisAttrs[] = {{"axis", AttrKind::Int}};
constexpr AttrSpec kConvAttrs[] = {{"auto_pad", AttrKind::String},      {"dilations", AttrKind::PositiveInts},
                                   {"group", AttrKind::PositiveInt},    {"kernel_shape", AttrKind::PositiveInts},
                                   {"pads", AttrKind::Ints},            {"strides", AttrKind::PositiveInts}};
constexpr AttrSpec kConvScaledAttrs[] = {{"auto_pad", AttrKind::String},   {"dilations", AttrKind::PositiveInts},
                                         {"group", AttrKind::PositiveInt}, {"kernel_shape", AttrKind::PositiveInts},
                                         {"pads", AttrKind::Ints},         {"relu", AttrKind::Int},
                                         {"strides", AttrKind::PositiveInts}};
constexpr AttrSpec kReluAttr[] = {{"relu", AttrKind::Int}};

constexpr OpDef kOps[] = {
    // Opset 10's forms are the per-tensor case of 13's (axis was added with per-axis scales).
    op("QuantizeLinear").upgrades_from(10).per_item(BatchRule::Broadcast).inputs(2, 3).attributes(kAxisAttrs).shapes(infer_quantize).prepared(prepare_axis)
        .kernel(quantize_kernel)
        .doc("f32 or i32 to u8 or i8 (the zero point's dtype, u8 without one); per-tensor or per-axis; x / scale rounded half to even, saturated"),
    op("DequantizeLinear").upgrades_from(10).per_item(BatchRule::Broadcast).inputs(2, 3).attributes(kAxisAttrs).shapes(infer_dequantize).prepared(prepare_axis)
        .kernel(dequantize_kernel)
        .doc("u8, i8 or i32 to f32; per-tensor or per-axis; (x - zero point) x scale, one rounding"),
    op("DynamicQuantizeLinear").since_opset(11).inputs(1).shapes(infer_dynamic_quantize).kernel(dynamic_quantize_kernel)
        .doc("f32 to u8, scale and zero point of [min(x, 0), max(x, 0)]; an all-zero input gives scale 0, zero point 0"),
    op("MatMulInteger").since_opset(10).per_item(BatchRule::Rows).inputs(2, 4).shapes(infer_matmul_integer).prepared(prepare_int_matmul<1>)
        .kernel(matmul_integer_kernel).with_scratch(int_matmul_scratch<1>).with_prepack(int_matmul_packable<1>)
        .doc("u8/i8 operands, i32 result (wraps modulo 2^32); numpy batch broadcasting; zero points per-tensor, per-row of A, per-column of B"),
    op("QLinearMatMul").since_opset(10).per_item(BatchRule::Items, 4).written_by_passes(writers<passes::fuse_qdq_matmul>).inputs(8).shapes(infer_qlinear_matmul).prepared(prepare_int_matmul<3>)
        .kernel(qlinear_matmul_kernel).with_scratch(int_matmul_scratch<3>).with_prepack(int_matmul_packable<3>)
        .doc("u8/i8; i32 accumulation, then round(acc x (s_a s_b / s_y)) + zp_y saturated; a per-row, b per-column, y per-tensor parameters"),
    op("QLinearMatMulBias").in_domain(kOnemodelDomain).per_item(BatchRule::Items, 4).written_by_passes(writers<passes::fuse_qdq_matmul>).inputs(9).shapes(infer_qlinear_matmul_bias)
        .prepared(prepare_int_matmul<3>).kernel(qlinear_matmul_bias_kernel).with_scratch(int_matmul_scratch<3>).with_prepack(int_matmul_packable<3>)
        .doc("written by the QDQ matmul fusion: QLinearMatMul's inputs and an i32 bias per column (input 8, [N], at the scale s_a s_b), added to the i32 sum before the requantization"),
    op("MatMulIntegerScaled").in_domain(kOnemodelDomain).per_item(BatchRule::Rows).written_by_passes(writers<passes::fuse_integer_epilogue>).inputs(5, 6)
        .attributes(kReluAttr).shapes(infer_matmul_integer_scaled).prepared(prepare_int_matmul<1>).kernel(matmul_integer_scaled_kernel)
        .with_scratch(int_matmul_scratch<1>).with_prepack(int_matmul_packable<1>)
        .doc("written by the dynamic form's epilogue fusion (fuse_integer_epilogue): MatMulInteger's inputs, a scale (input 4, one f32) and a bias per column (input 5, f32 [N]); f32 relu(float(acc) x scale + bias), relu an attribute"),
    op("ConvInteger").since_opset(10).per_item(BatchRule::Items).inputs(2, 4).attributes(kConvAttrs).shapes(infer_conv_integer).prepared(prepare_int_conv<1>)
        .kernel(conv_integer_kernel).with_scratch(int_conv_scratch<1>).with_prepack(int_conv_packable<1>)
        .doc("u8/i8, i32 result; Conv's 1-D/2-D geometry and groups; padding holds the zero point; w zero point per output channel"),
    op("ConvIntegerScaled").in_domain(kOnemodelDomain).per_item(BatchRule::Items).written_by_passes(writers<passes::fuse_integer_epilogue>).inputs(5, 6)
        .attributes(kConvScaledAttrs).shapes(infer_conv_integer_scaled).prepared(prepare_int_conv<1>).kernel(conv_integer_scaled_kernel)
        .with_scratch(int_conv_scratch<1>).with_prepack(int_conv_packable<1>)
        .doc("written by the dynamic form's epilogue fusion (fuse_integer_epilogue): ConvInteger's inputs and attributes, a scale (input 4, one f32) and a bias per output channel (input 5, f32 [M]); f32 relu(float(acc) x scale + bias), relu an attribute"),
    op("QLinearConv").since_opset(10).per_item(BatchRule::Items, 4).written_by_passes(writers<passes::fuse_qdq_conv>).inputs(8, 9).attributes(kConvAttrs).shapes(infer_qlinear_conv).prepared(prepare_int_conv<3>)
        .kernel(qlinear_conv_kernel).with_scratch(int_conv_scratch<3>).with_prepack(int_conv_packable<3>)
        .doc("u8/i8; i32 accumulation plus the i32 bias, then round(acc x (s_x s_w / s_y)) + zp_y saturated; w scale/zero point per output channel"),
};

}  // namespace

}  // namespace om::graph::ops

// The family's operators, one symbol each (onemodel/op_list.h).
#define OM_QUANT_OPS(X) \
  X(QuantizeLinear) X(DequantizeLinear) X(DynamicQuantizeLinear) X(MatMulInteger) \
  X(QLinearMatMul) X(QLinearMatMulBias) X(MatMulIntegerScaled) X(ConvInteger) X(ConvIntegerScaled) X(QLinearConv)
OM_OP_FAMILY_TABLE(quant, OM_QUANT_OPS)
