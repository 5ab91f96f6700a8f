// Quantization: QuantizeLinear and DequantizeLinear (opset-13 form: per-tensor or per-axis scale
// and zero point), DynamicQuantizeLinear (u8), and the integer products MatMulInteger,
// QLinearMatMul, ConvInteger and QLinearConv (u8 or i8 operands, i32 accumulation). Integer
// products and sums are exact (the i32 accumulator wraps modulo 2^32, as the ONNX type does), and
// every float step is one IEEE operation (x / scale, the requantization multiplier, acc x
// multiplier, rounding half to even), so one kernel serves Fast and Exact (docs/exactness.md).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "onemodel/graph/ops/conv_geom.h"
#include "onemodel/graph/ops/matmul_dims.h"
#include "onemodel/graph/ops/op_util.h"

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

// saturate(round_half_even(v) + zp) into [lo, hi]. The comparison happens before the addition so
// large |v| cannot overflow; NaN (a 0/0 scale) gives the zero point, the quantized zero.
int32_t saturate_round(float v, int32_t zp, QRange r) {
  const float q = std::nearbyint(v);  // default rounding mode: halves to even, as ONNX says
  if (q != q) return zp < r.lo ? r.lo : (zp > r.hi ? r.hi : zp);
  if (q <= float(r.lo - zp)) return r.lo;
  if (q >= float(r.hi - zp)) return r.hi;
  return int32_t(q) + zp;
}

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

Status quantize_kernel(const KernelContext& k) {
  const TensorArg& X = k.in(0);
  const TensorArg& Y = k.out(0);
  const QRange r = range_of(Y.dtype);
  for_each_channel(k, [&](int64_t i, int64_t c) {
    const float x = X.dtype == DType::f32 ? X.as<const float>()[i] : float(X.as<const int32_t>()[i]);
    store_q(Y, i, saturate_round(x / scale_at(k.in(1), c), zp_at(k, 2, c), r));
  });
  return Status::ok();
}

Status dequantize_kernel(const KernelContext& k) {
  const TensorArg& X = k.in(0);
  float* y = k.out(0).as<float>();
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
  float lo = 0.0f, hi = 0.0f;  // the range always holds 0, so 0 quantizes exactly
  for (int64_t i = 0; i < X.numel; ++i) {
    if (!std::isfinite(x[i])) continue;
    if (x[i] < lo) lo = x[i];
    if (x[i] > hi) hi = x[i];
  }
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
  for (int64_t i = 0; i < X.numel; ++i) y[i] = uint8_t(scale > 0.0f ? saturate_round(x[i] / scale, zp, r) : zp);
  if (k.num_outputs > 1 && k.out(1).present) *k.out(1).as<float>() = scale;
  if (k.num_outputs > 2 && k.out(2).present) *k.out(2).as<uint8_t>() = uint8_t(zp);
  return Status::ok();
}

// ---- MatMulInteger and QLinearMatMul ----

// MatMulInteger's and QLinearMatMul's record: the matrix sizes and the broadcast of the batch
// axes (offsets in matrices). Work: the output rows, batch matrix by batch matrix.
struct IntMatMulParams {
  BroadcastIter batch;
  int64_t M = 1, K = 1, N = 1;
};

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
  out.work = ctx.outputs[0].numel() == 0 ? 0 : p.batch.size() * p.M;
  return Status::ok();
}

// The i32 product of A and B (numpy matmul shapes, broadcast batches) after subtracting the
// zero points (per-tensor, per-row of A, per-column of B) for output rows [k.begin, k.end);
// store(y_index, m, n, acc) writes it.
template <typename TA, typename TB, typename Store>
void int_matmul_typed(const KernelContext& k, size_t a_in, size_t azp_in, size_t b_in, size_t bzp_in, Store store) {
  const IntMatMulParams& p = k.params<IntMatMulParams>();
  const BroadcastIter& it = p.batch;
  const int64_t M = p.M, K = p.K, N = p.N;
  const TA* a = k.in(a_in).as<const TA>();
  const TB* b = k.in(b_in).as<const TB>();
  int64_t mat = k.begin / M;  // the batch matrix of the current row
  it.for_each(mat, (k.end + M - 1) / M, [&](const int64_t* off, int64_t n_inner) {
    for (int64_t j = 0; j < n_inner; ++j, ++mat) {
      const TA* pa = a + (off[1] + j * it.inner_step[1]) * M * K;
      const TB* pb = b + (off[2] + j * it.inner_step[2]) * K * N;
      const int64_t yo = (off[0] + j * it.inner_step[0]) * M * N;
      const int64_t m_end = std::min(M, k.end - mat * M);
      for (int64_t m = std::max<int64_t>(0, k.begin - mat * M); m < m_end; ++m) {
        const int32_t za = zp_at(k, azp_in, m);
        for (int64_t n = 0; n < N; ++n) {
          const int32_t zb = zp_at(k, bzp_in, n);
          uint32_t acc = 0;  // wraps modulo 2^32 like the i32 accumulator, without overflow UB
          for (int64_t q = 0; q < K; ++q) acc += uint32_t((int32_t(pa[m * K + q]) - za) * (int32_t(pb[q * N + n]) - zb));
          store(yo + m * N + n, m, n, int32_t(acc));
        }
      }
    }
  });
}

template <typename Store>
void int_matmul(const KernelContext& k, size_t a_in, size_t azp_in, size_t b_in, size_t bzp_in, Store store) {
  const bool ai8 = k.in(a_in).dtype == DType::i8, bi8 = k.in(b_in).dtype == DType::i8;
  if (ai8 && bi8) int_matmul_typed<int8_t, int8_t>(k, a_in, azp_in, b_in, bzp_in, store);
  else if (ai8) int_matmul_typed<int8_t, uint8_t>(k, a_in, azp_in, b_in, bzp_in, store);
  else if (bi8) int_matmul_typed<uint8_t, int8_t>(k, a_in, azp_in, b_in, bzp_in, store);
  else int_matmul_typed<uint8_t, uint8_t>(k, a_in, azp_in, b_in, bzp_in, store);
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

Status matmul_integer_kernel(const KernelContext& k) {
  int32_t* y = k.out(0).as<int32_t>();
  int_matmul(k, 0, 2, 1, 3, [y](int64_t i, int64_t, int64_t, int32_t acc) { y[i] = acc; });
  return Status::ok();
}

// The requantized output's parameters (y_scale, y_zero_point): per-tensor, f32 and u8/i8.
Status check_output_params(InferContext& ctx, size_t y_scale, size_t y_zp) {
  OM_TRY(need_dtype(ctx, y_scale, {DType::f32}, "y_scale"));
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
  OM_TRY(need_zero_point_dtype(ctx, 2, ctx.input(0)->dtype, "a_zero_point"));
  OM_TRY(need_zero_point_dtype(ctx, 5, ctx.input(3)->dtype, "b_zero_point"));
  OM_TRY(check_output_params(ctx, 6, 7));
  ctx.set_output(0, ctx.input(7)->dtype, std::move(out));
  return Status::ok();
}

// y = saturate(round(acc x (s_in x s_w / s_y)) + zp_y): the multiplier in float, then one product.
int32_t requantize(int32_t acc, float s_in, float s_w, float s_y, int32_t zp_y, QRange r) {
  const float multiplier = s_in * s_w / s_y;
  return saturate_round(float(acc) * multiplier, zp_y, r);
}

Status qlinear_matmul_kernel(const KernelContext& k) {
  const TensorArg& Y = k.out(0);
  const QRange r = range_of(Y.dtype);
  const float sy = scale_at(k.in(6), 0);
  const int32_t zy = zp_at(k, 7, 0);
  int_matmul(k, 0, 2, 3, 5, [&](int64_t i, int64_t m, int64_t n, int32_t acc) {
    store_q(Y, i, requantize(acc, scale_at(k.in(1), m), scale_at(k.in(4), n), sy, zy, r));
  });
  return Status::ok();
}

// ---- ConvInteger and QLinearConv ----

// ConvInteger's and QLinearConv's record: the Conv geometry. Work: the N x M output planes.
struct IntConvParams {
  kernels::ConvGeom g;
};

// x is input 0, w input `w_in`.
template <size_t w_in>
Status prepare_int_conv(const InferContext& ctx, Prepared& out) {
  const std::vector<int64_t>& x = ctx.input(0)->shape;
  const std::vector<int64_t>& w = ctx.input(w_in)->shape;
  SpatialGeom sg;
  if (const char* why = spatial_geom(ctx.node, GeomKind::Conv, x.data(), x.size(), w.data(), w.size(), &sg))
    return ctx.error(ErrorKind::ShapeMismatch, geom_error_text(ctx.node, why, x, &w));
  out.record<IntConvParams>().g = sg.g;
  out.work = sg.g.N * sg.g.M;
  return Status::ok();
}

// The i32 convolution of x and w after subtracting the zero points (x per-tensor, w per-tensor
// or per output channel) for output planes [k.begin, k.end); taps in the padding add nothing
// (the padding holds the zero point). store(y_index, output_channel, acc) writes each output.
template <typename TX, typename TW, typename Store>
void int_conv_typed(const KernelContext& k, const kernels::ConvGeom& g, size_t x_in, size_t xzp_in, size_t w_in, size_t wzp_in,
                    Store store) {
  const TX* x = k.in(x_in).as<const TX>();
  const TW* w = k.in(w_in).as<const TW>();
  const int32_t zx = zp_at(k, xzp_in, 0);
  const int64_t cg = g.C / g.group, mg = g.M / g.group;
  int64_t yi = k.begin * g.OH * g.OW;
  for (int64_t n = k.begin / g.M; n * g.M < k.end; ++n)
    for (int64_t m = std::max<int64_t>(0, k.begin - n * g.M), m_end = std::min(g.M, k.end - n * g.M); m < m_end; ++m) {
      const int32_t zw = zp_at(k, wzp_in, m);
      const int64_t c0 = (m / mg) * cg;
      for (int64_t oh = 0; oh < g.OH; ++oh)
        for (int64_t ow = 0; ow < g.OW; ++ow) {
          uint32_t acc = 0;  // wraps modulo 2^32 like the i32 accumulator
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t kh = 0; kh < g.kH; ++kh) {
              const int64_t ih = oh * g.sH - g.pad_t + kh * g.dH;
              if (ih < 0 || ih >= g.H) continue;
              for (int64_t kw = 0; kw < g.kW; ++kw) {
                const int64_t iw = ow * g.sW - g.pad_l + kw * g.dW;
                if (iw < 0 || iw >= g.W) continue;
                const int32_t xv = int32_t(x[((n * g.C + c0 + c) * g.H + ih) * g.W + iw]) - zx;
                const int32_t wv = int32_t(w[((m * cg + c) * g.kH + kh) * g.kW + kw]) - zw;
                acc += uint32_t(xv * wv);
              }
            }
          store(yi++, m, int32_t(acc));
        }
    }
}

template <typename Store>
void int_conv(const KernelContext& k, size_t x_in, size_t xzp_in, size_t w_in, size_t wzp_in, Store store) {
  const kernels::ConvGeom& g = k.params<IntConvParams>().g;
  const bool xi8 = k.in(x_in).dtype == DType::i8, wi8 = k.in(w_in).dtype == DType::i8;
  if (xi8 && wi8) int_conv_typed<int8_t, int8_t>(k, g, x_in, xzp_in, w_in, wzp_in, store);
  else if (xi8) int_conv_typed<int8_t, uint8_t>(k, g, x_in, xzp_in, w_in, wzp_in, store);
  else if (wi8) int_conv_typed<uint8_t, int8_t>(k, g, x_in, xzp_in, w_in, wzp_in, store);
  else int_conv_typed<uint8_t, uint8_t>(k, g, x_in, xzp_in, w_in, wzp_in, store);
}

// The output shape [N, M, (OH,) OW] from the shared Conv geometry (graph/ops/conv_geom.h).
Status infer_int_conv_shape(InferContext& ctx, size_t x_in, size_t w_in, SpatialGeom* sg, std::vector<int64_t>* y) {
  OM_TRY(need_dtype(ctx, x_in, {DType::u8, DType::i8}, "x"));
  OM_TRY(need_dtype(ctx, w_in, {DType::u8, DType::i8}, "w"));
  const auto& x = ctx.input(x_in)->shape;
  const auto& w = ctx.input(w_in)->shape;
  if (const char* why = spatial_geom(ctx.node, GeomKind::Conv, x.data(), x.size(), w.data(), w.size(), sg))
    return ctx.error(ErrorKind::ShapeMismatch, geom_error_text(ctx.node, why, x, &w));
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
  int32_t* y = k.out(0).as<int32_t>();
  int_conv(k, 0, 2, 1, 3, [y](int64_t i, int64_t, int32_t acc) { y[i] = acc; });
  return Status::ok();
}

// QLinearConv inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B.
Status infer_qlinear_conv(InferContext& ctx) {
  SpatialGeom sg;
  std::vector<int64_t> y;
  OM_TRY(infer_int_conv_shape(ctx, 0, 3, &sg, &y));
  OM_TRY(need_dtype(ctx, 1, {DType::f32}, "x_scale"));
  OM_TRY(need_dtype(ctx, 4, {DType::f32}, "w_scale"));
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

Status qlinear_conv_kernel(const KernelContext& k) {
  const TensorArg& Y = k.out(0);
  const QRange r = range_of(Y.dtype);
  const float sx = scale_at(k.in(1), 0), sy = scale_at(k.in(6), 0);
  const int32_t zy = zp_at(k, 7, 0);
  const int32_t* bias = k.has_input(8) ? k.in(8).as<const int32_t>() : nullptr;
  int_conv(k, 0, 2, 3, 5, [&](int64_t i, int64_t m, int32_t acc) {
    if (bias) acc = int32_t(uint32_t(acc) + uint32_t(bias[m]));
    store_q(Y, i, requantize(acc, sx, scale_at(k.in(4), m), sy, zy, r));
  });
  return Status::ok();
}

constexpr AttrSpec kAxisAttrs[] = {{"axis", AttrKind::Int}};
constexpr AttrSpec kConvAttrs[] = {{"auto_pad", AttrKind::String},      {"dilations", AttrKind::PositiveInts},
                                   {"group", AttrKind::PositiveInt},    {"kernel_shape", AttrKind::PositiveInts},
                                   {"pads", AttrKind::Ints},            {"strides", AttrKind::PositiveInts}};

constexpr OpDef kOps[] = {
    // Opset 10's forms are the per-tensor case of 13's (axis was added with per-axis scales).
    op("QuantizeLinear").upgrades_from(10).inputs(2, 3).attributes(kAxisAttrs).shapes(infer_quantize).prepared(prepare_axis)
        .kernel(quantize_kernel)
        .doc("f32 or i32 to u8 or i8 (the zero point's dtype, u8 without one); per-tensor or per-axis; x / scale rounded half to even, saturated"),
    op("DequantizeLinear").upgrades_from(10).inputs(2, 3).attributes(kAxisAttrs).shapes(infer_dequantize).prepared(prepare_axis)
        .kernel(dequantize_kernel)
        .doc("u8, i8 or i32 to f32; per-tensor or per-axis; (x - zero point) x scale, one rounding"),
    op("DynamicQuantizeLinear").since_opset(11).inputs(1).shapes(infer_dynamic_quantize).kernel(dynamic_quantize_kernel)
        .doc("f32 to u8, scale and zero point of [min(x, 0), max(x, 0)]; an all-zero input gives scale 0, zero point 0"),
    op("MatMulInteger").since_opset(10).inputs(2, 4).shapes(infer_matmul_integer).prepared(prepare_int_matmul<1>)
        .kernel(matmul_integer_kernel)
        .doc("u8/i8 operands, i32 result (wraps modulo 2^32); numpy batch broadcasting; zero points per-tensor, per-row of A, per-column of B"),
    op("QLinearMatMul").since_opset(10).inputs(8).shapes(infer_qlinear_matmul).prepared(prepare_int_matmul<3>)
        .kernel(qlinear_matmul_kernel)
        .doc("u8/i8; i32 accumulation, then round(acc x (s_a s_b / s_y)) + zp_y saturated; a per-row, b per-column, y per-tensor parameters"),
    op("ConvInteger").since_opset(10).inputs(2, 4).attributes(kConvAttrs).shapes(infer_conv_integer).prepared(prepare_int_conv<1>)
        .kernel(conv_integer_kernel)
        .doc("u8/i8, i32 result; Conv's 1-D/2-D geometry and groups; padding holds the zero point; w zero point per output channel"),
    op("QLinearConv").since_opset(10).inputs(8, 9).attributes(kConvAttrs).shapes(infer_qlinear_conv).prepared(prepare_int_conv<3>)
        .kernel(qlinear_conv_kernel)
        .doc("u8/i8; i32 accumulation plus the i32 bias, then round(acc x (s_x s_w / s_y)) + zp_y saturated; w scale/zero point per output channel"),
};

}  // namespace

OpTable quant_ops() { return table_of(kOps); }

}  // namespace om::graph::ops
