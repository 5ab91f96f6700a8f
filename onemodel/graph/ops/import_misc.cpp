// CumSum, InstanceNormalization and Det, as exported models use them (Det: LU in element order). CumSum adds in element order
// (exact by nature); InstanceNormalization sums through kernels::f32_sum, whose Exact-mode order
// is fixed (docs/exactness.md), so one kernel serves both modes.
#include <cmath>
#include <utility>

#include "onemodel/graph/ops/op_util.h"
#include "onemodel/kernels/kernels.h"

namespace om::graph::ops {
namespace {

// ---- CumSum ----

Status infer_cumsum(InferContext& ctx) {
  const ValueDesc* x = ctx.input(0);
  const ValueDesc* axis = ctx.input(1);
  if (!x || !axis) return ctx.error(ErrorKind::InvalidArgument, "needs x and axis");
  if (x->dtype == DType::f16 || x->dtype == DType::boolean || x->dtype == DType::i8 || x->dtype == DType::u8)
    return ctx.error(ErrorKind::DTypeMismatch, msg("x must be f32, f64, i64, i32, i16, u64, u32 or u16, got ", dtype_name(x->dtype)));
  if ((axis->dtype != DType::i64 && axis->dtype != DType::i32) || axis->numel() != 1)
    return ctx.error(ErrorKind::InvalidArgument, msg("axis must be an i64 or i32 scalar, got ", dtype_name(axis->dtype), " ",
                                                     shape_str(axis->shape)));
  if (x->shape.empty()) return ctx.error(ErrorKind::InvalidArgument, "x must have rank >= 1");
  if (axis->data) {
    const int64_t a = axis->dtype == DType::i64 ? *static_cast<const int64_t*>(axis->data) : *static_cast<const int32_t*>(axis->data);
    int64_t norm = 0;
    if (!normalize_axis(a, int64_t(x->shape.size()), &norm))
      return ctx.error(ErrorKind::InvalidArgument, msg("axis ", a, " is out of range for ", shape_str(x->shape)));
  }
  ctx.set_output(0, x->dtype, x->shape);
  return Status::ok();
}

// Integers add in their unsigned counterpart so overflow wraps (defined) instead of being
// undefined behaviour; floats add in their own precision.
template <typename T> struct SumType { using type = T; };
template <> struct SumType<int16_t> { using type = uint16_t; };
template <> struct SumType<int32_t> { using type = uint32_t; };
template <> struct SumType<int64_t> { using type = uint64_t; };

// CumSum's record. Work: the outer * inner independent lines along the axis when the axis is
// known when planning; else one unit, the axis read from its tensor while running.
struct CumSumParams {
  bool exclusive = false, reverse = false;
  bool axis_known = false;
  int64_t axis = 0;  // when axis_known
};

int64_t lines_of(const int64_t* dims, size_t rank, int64_t axis, int64_t* inner) {
  int64_t outer = 1;
  *inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= dims[i];
  for (size_t i = size_t(axis) + 1; i < rank; ++i) *inner *= dims[i];
  return outer * *inner;
}

Status prepare_cumsum(const InferContext& ctx, Prepared& out) {
  CumSumParams& p = out.record<CumSumParams>();
  p.exclusive = attr_int(ctx.node, "exclusive", 0) != 0;
  p.reverse = attr_int(ctx.node, "reverse", 0) != 0;
  const ValueDesc& x = *ctx.input(0);
  const ValueDesc& a = *ctx.input(1);
  if (a.data) {
    const int64_t v = a.dtype == DType::i64 ? *static_cast<const int64_t*>(a.data) : *static_cast<const int32_t*>(a.data);
    p.axis_known = normalize_axis(v, int64_t(x.shape.size()), &p.axis);  // checked by infer
    int64_t inner;
    out.work = lines_of(x.shape.data(), x.shape.size(), p.axis, &inner);
  }
  return Status::ok();
}

// Lines [begin, end) of X as [outer, n, inner] around the axis.
template <typename T>
void cumsum_typed(const KernelContext& k, int64_t axis, int64_t begin, int64_t end) {
  using A = typename SumType<T>::type;
  const TensorArg& X = k.in(0);
  const CumSumParams& p = k.params<CumSumParams>();
  const bool exclusive = p.exclusive;
  const bool reverse = p.reverse;
  int64_t inner;
  lines_of(X.dims, X.rank, axis, &inner);
  const int64_t n = X.dims[axis];
  const T* x = X.as<const T>();
  T* y = k.out(0).as<T>();
  for (int64_t line = begin; line < end; ++line) {
    const int64_t o = line / inner, i = line % inner;
    A acc = A(0);
    for (int64_t s = 0; s < n; ++s) {
      const int64_t j = reverse ? n - 1 - s : s;
      const int64_t at = (o * n + j) * inner + i;
      if (exclusive) {
        y[at] = T(acc);
        acc = A(acc + A(x[at]));
      } else {
        acc = A(acc + A(x[at]));
        y[at] = T(acc);
      }
    }
  }
}

Status cumsum_kernel(const KernelContext& k) {
  const CumSumParams& p = k.params<CumSumParams>();
  int64_t axis = p.axis, begin = k.begin, end = k.end;
  if (!p.axis_known) {
    const TensorArg& A = k.in(1);
    const int64_t a = A.dtype == DType::i64 ? *A.as<const int64_t>() : *A.as<const int32_t>();
    if (!normalize_axis(a, int64_t(k.in(0).rank), &axis))
      return k.error(ErrorKind::InvalidArgument, msg("axis ", a, " is out of range for rank ", k.in(0).rank));
    int64_t inner;
    begin = 0;
    end = lines_of(k.in(0).dims, k.in(0).rank, axis, &inner);
  }
  switch (k.in(0).dtype) {
    case DType::f32: cumsum_typed<float>(k, axis, begin, end); break;
    case DType::i64: cumsum_typed<int64_t>(k, axis, begin, end); break;
    case DType::i32: cumsum_typed<int32_t>(k, axis, begin, end); break;
    case DType::f64: cumsum_typed<double>(k, axis, begin, end); break;
    case DType::i16: cumsum_typed<int16_t>(k, axis, begin, end); break;
    case DType::u64: cumsum_typed<uint64_t>(k, axis, begin, end); break;
    case DType::u32: cumsum_typed<uint32_t>(k, axis, begin, end); break;
    case DType::u16: cumsum_typed<uint16_t>(k, axis, begin, end); break;
    default: return k.error(ErrorKind::DTypeMismatch, "unsupported dtype");
  }
  return Status::ok();
}

// ---- InstanceNormalization: per (n, c), y = scale[c] (x - mean) / sqrt(var + epsilon) + B[c] ----

Status infer_instance_norm(InferContext& ctx) {
  for (size_t i = 0; i < 3; ++i) {
    const ValueDesc* v = ctx.input(i);
    if (!v || v->dtype != DType::f32)
      return ctx.error(ErrorKind::DTypeMismatch, msg("input ", i, " must be f32", v ? msg(", got ", dtype_name(v->dtype)) : ""));
  }
  const ValueDesc* x = ctx.input(0);
  if (x->shape.size() < 3) return ctx.error(ErrorKind::InvalidArgument, msg("input must be (N, C, D1, ...), got ", shape_str(x->shape)));
  for (size_t i = 1; i < 3; ++i)
    if (ctx.input(i)->shape != std::vector<int64_t>{x->shape[1]})
      return ctx.error(ErrorKind::ShapeMismatch, msg(i == 1 ? "scale " : "B ", shape_str(ctx.input(i)->shape), " must be [", x->shape[1], "]"));
  ctx.set_output(0, DType::f32, x->shape);
  return Status::ok();
}

// InstanceNormalization's record. Work: the N * C planes.
struct InstanceNormParams {
  int64_t C = 0, spatial = 1;
  float epsilon = 1e-5f;
};

Status prepare_instance_norm(const InferContext& ctx, Prepared& out) {
  const auto& s = ctx.input(0)->shape;
  InstanceNormParams& p = out.record<InstanceNormParams>();
  p.C = s[1];
  for (size_t i = 2; i < s.size(); ++i) p.spatial *= s[i];
  p.epsilon = attr_float(ctx.node, "epsilon", 1e-5f);
  out.work = s[0] * s[1];
  return Status::ok();
}

// The plane's own output holds its squared deviations until they are summed: no other plane
// reads it, and the output never shares the input's buffer.
Status instance_norm_kernel(const KernelContext& k) {
  const InstanceNormParams& p = k.params<InstanceNormParams>();
  const TensorArg& X = k.in(0);
  const float eps = p.epsilon;
  const int64_t C = p.C, spatial = p.spatial;
  const float* x = X.as<const float>();
  const float* scale = k.in(1).as<const float>();
  const float* bias = k.in(2).as<const float>();
  float* y = k.out(0).as<float>();
  for (int64_t plane = k.begin; plane < k.end; ++plane) {
    const int64_t c = plane % C;
    const float* px = x + plane * spatial;
    float* py = y + plane * spatial;
    float* dev = py;
    const float mean = kernels::f32_sum(px, size_t(spatial), k.mode) / float(spatial);
    for (int64_t i = 0; i < spatial; ++i) {
      const float d = px[i] - mean;
      dev[i] = d * d;
    }
    const float var = kernels::f32_sum(dev, size_t(spatial), k.mode) / float(spatial);
    const float inv = 1.0f / std::sqrt(var + eps);
    for (int64_t i = 0; i < spatial; ++i) py[i] = scale[c] * ((px[i] - mean) * inv) + bias[c];
  }
  return Status::ok();
}

// ---- Det: LU with partial pivoting per matrix, in element order ----

Status infer_det(InferContext& ctx) {
  const ValueDesc* x = ctx.input(0);
  if (!x || x->dtype != DType::f32) return ctx.error(ErrorKind::DTypeMismatch, "input must be f32");
  const auto& s = x->shape;
  if (s.size() < 2 || s[s.size() - 1] != s[s.size() - 2])
    return ctx.error(ErrorKind::InvalidArgument, msg("input must be [..., M, M], got ", shape_str(s)));
  ctx.set_output(0, DType::f32, std::vector<int64_t>(s.begin(), s.end() - 2));
  return Status::ok();
}

// Scratch: one M x M working copy per matrix, so the matrices factor independently.
size_t det_scratch(const InferContext& ctx) {
  return size_t(ctx.input(0)->numel()) * sizeof(float);
}

// Work: the matrices (output elements; M = 0 gives determinants of empty matrices, 1).
Status prepare_det(const InferContext& ctx, Prepared& out) {
  out.work = ctx.outputs[0].numel();
  return Status::ok();
}

Status det_kernel(const KernelContext& k) {
  const TensorArg& X = k.in(0);
  const int64_t m = X.dims[X.rank - 1];
  for (int64_t b = k.begin; b < k.end; ++b) {
    float* a = static_cast<float*>(k.scratch) + b * m * m;
    for (int64_t i = 0; i < m * m; ++i) a[i] = X.as<const float>()[b * m * m + i];
    float det = 1.0f;
    for (int64_t c = 0; c < m; ++c) {
      int64_t p = c;
      for (int64_t r = c + 1; r < m; ++r)
        if (std::fabs(a[r * m + c]) > std::fabs(a[p * m + c])) p = r;
      if (a[p * m + c] == 0.0f) { det = 0.0f; break; }
      if (p != c) {
        for (int64_t j = 0; j < m; ++j) std::swap(a[p * m + j], a[c * m + j]);
        det = -det;
      }
      det = det * a[c * m + c];
      for (int64_t r = c + 1; r < m; ++r) {
        const float f = a[r * m + c] / a[c * m + c];
        for (int64_t j = c; j < m; ++j) a[r * m + j] = a[r * m + j] - f * a[c * m + j];
      }
    }
    k.out(0).as<float>()[b] = det;
  }
  return Status::ok();
}

constexpr AttrSpec kCumSumAttrs[] = {{"exclusive", AttrKind::Int}, {"reverse", AttrKind::Int}};
constexpr AttrSpec kInstanceNormAttrs[] = {{"epsilon", AttrKind::Float}};

constexpr OpDef kOps[] = {
    op("CumSum").upgrades_from(11).inputs(2).attributes(kCumSumAttrs).shapes(infer_cumsum).prepared(prepare_cumsum).kernel(cumsum_kernel)
        .doc("f32 f64 i64 i32 i16 u64 u32 u16 (integers wrap); axis input (scalar), exclusive, reverse; added in element order"),
    op("InstanceNormalization").upgrades_from(6).inputs(3).attributes(kInstanceNormAttrs).shapes(infer_instance_norm)
        .prepared(prepare_instance_norm).kernel(instance_norm_kernel)
        .doc("f32, (N, C, ...), epsilon; exact: fixed-order sums for mean and variance"),
    op("Det").upgrades_from(11).inputs(1).shapes(infer_det).prepared(prepare_det).kernel(det_kernel)
        .with_scratch(det_scratch)
        .doc("f32 [..., M, M]; LU with partial pivoting in element order"),
};

}  // namespace

OpTable import_misc_ops() { return table_of(kOps); }

}  // namespace om::graph::ops
