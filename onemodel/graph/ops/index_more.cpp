// Element-indexed operators: GatherElements, ScatterElements (reduction none/add/mul/max/min)
// and Hardmax. Copies and one operation per element in index order: exact by nature.
#include <cstring>
#include <type_traits>

#include "onemodel/core/shape.h"
#include "onemodel/graph/ops/op_util.h"
#include "onemodel/graph/ops/reduce_util.h"
#include "onemodel/kernels/int_arith.h"

namespace om::graph::ops {
namespace {

Status need_input(const InferContext& ctx, size_t i) {
  if (!ctx.input(i)) return ctx.error(ErrorKind::InvalidArgument, msg("input ", i, " is required"));
  return Status::ok();
}

int64_t index_at(const TensorArg& t, int64_t i) {
  return t.dtype == DType::i64 ? t.as<const int64_t>()[i] : t.as<const int32_t>()[i];
}

Status check_indices(const InferContext& ctx, size_t i, const ValueDesc& data, int64_t* axis) {
  const ValueDesc* idx = ctx.input(i);
  if (idx->dtype != DType::i64 && idx->dtype != DType::i32)
    return ctx.error(ErrorKind::DTypeMismatch, msg("indices must be i64 or i32, got ", dtype_name(idx->dtype)));
  if (idx->shape.size() != data.shape.size())
    return ctx.error(ErrorKind::ShapeMismatch, msg("indices ", shape_str(idx->shape), " must have the rank of data ", shape_str(data.shape)));
  if (!normalize_axis(attr_int(ctx.node, "axis", 0), int64_t(data.shape.size()), axis))
    return ctx.error(ErrorKind::InvalidArgument, msg("axis ", attr_int(ctx.node, "axis", 0), " is out of range for ", shape_str(data.shape)));
  for (size_t d = 0; d < data.shape.size(); ++d)
    if (int64_t(d) != *axis && idx->shape[d] > data.shape[d])
      return ctx.error(ErrorKind::ShapeMismatch, msg("indices ", shape_str(idx->shape), " exceed data ", shape_str(data.shape), " on axis ", d,
                                                     " (only the indexed axis may differ)"));
  return Status::ok();
}

// Walks the elements [begin, end) of index tensor idx calling f(flat index, offset in data).
template <typename F>
Status walk(const KernelContext& k, const TensorArg& data, const TensorArg& idx, int64_t axis, int64_t begin, int64_t end, F f) {
  int64_t ds[kMaxRank];
  contiguous_strides(data.dims, data.rank, ds);
  int64_t pos[kMaxRank] = {};
  int64_t rest = begin;
  for (size_t d = idx.rank; d-- > 0 && rest > 0;) {
    pos[d] = rest % idx.dims[d];
    rest /= idx.dims[d];
  }
  for (int64_t e = begin; e < end; ++e) {
    int64_t base = 0;
    for (size_t d = 0; d < idx.rank; ++d)
      if (int64_t(d) != axis) base += pos[d] * ds[d];
    int64_t j = index_at(idx, e);
    const int64_t n = data.dims[axis];
    if (j < -n || j >= n)
      return k.error(ErrorKind::InvalidArgument, msg("index ", j, " is out of range for axis ", axis, " of size ", n));
    if (j < 0) j += n;
    f(e, base + j * ds[axis]);
    for (size_t d = idx.rank; d-- > 0;) {
      if (++pos[d] < idx.dims[d]) break;
      pos[d] = 0;
    }
  }
  return Status::ok();
}

// ---- GatherElements ----

Status infer_gather_elements(InferContext& ctx) {
  OM_TRY(need_input(ctx, 0));
  OM_TRY(need_input(ctx, 1));
  int64_t axis = 0;
  OM_TRY(check_indices(ctx, 1, *ctx.input(0), &axis));
  ctx.set_output(0, ctx.input(0)->dtype, ctx.input(1)->shape);
  return Status::ok();
}

// GatherElements' record. Work: the output elements (one per index element).
struct GatherElementsParams {
  int64_t axis = 0;
};

Status prepare_gather_elements(const InferContext& ctx, Prepared& out) {
  int64_t& axis = out.record<GatherElementsParams>().axis;
  normalize_axis(attr_int(ctx.node, "axis", 0), int64_t(ctx.input(0)->shape.size()), &axis);  // checked by infer
  out.work = ctx.input(1)->numel();
  return Status::ok();
}

Status gather_elements_kernel(const KernelContext& k) {
  const TensorArg& X = k.in(0);
  const int64_t axis = k.params<GatherElementsParams>().axis;
  const size_t es = dtype_size(X.dtype);
  const uint8_t* x = static_cast<const uint8_t*>(X.data);
  uint8_t* y = static_cast<uint8_t*>(k.out(0).data);
  return walk(k, X, k.in(1), axis, k.begin, k.end, [&](int64_t e, int64_t at) { std::memcpy(y + size_t(e) * es, x + size_t(at) * es, es); });
}

// ---- ScatterElements ----

Status infer_scatter_elements(InferContext& ctx) {
  for (size_t i = 0; i < 3; ++i) OM_TRY(need_input(ctx, i));
  int64_t axis = 0;
  OM_TRY(check_indices(ctx, 1, *ctx.input(0), &axis));
  const ValueDesc* u = ctx.input(2);
  if (u->dtype != ctx.input(0)->dtype || u->shape != ctx.input(1)->shape)
    return ctx.error(ErrorKind::ShapeMismatch, msg("updates ", dtype_name(u->dtype), " ", shape_str(u->shape),
                                                   " must have the data's dtype and the indices' shape ", shape_str(ctx.input(1)->shape)));
  const Attribute* r = find_attr(ctx.node, "reduction");
  if (r && !(r->s == "none" || r->s == "add" || r->s == "mul" || r->s == "max" || r->s == "min"))
    return ctx.error(ErrorKind::InvalidArgument, msg("reduction must be none, add, mul, max or min, got '", r->s, "'"));
  const DType dt = ctx.input(0)->dtype;
  if (r && r->s != "none" && dt != DType::f32 && dt != DType::i64 && dt != DType::i32)
    return ctx.error(ErrorKind::DTypeMismatch, msg("reduction '", r->s, "' needs f32, i64 or i32 data, got ", dtype_name(dt)));
  ctx.set_output(0, dt, ctx.input(0)->shape);
  return Status::ok();
}

// Scatter (the deprecated name) never had a reduction: one given is refused, not applied.
Status infer_scatter(InferContext& ctx) {
  if (find_attr(ctx.node, "reduction")) return ctx.error(ErrorKind::InvalidArgument, "Scatter has no reduction attribute: use ScatterElements");
  return infer_scatter_elements(ctx);
}

// ScatterElements' (and Scatter's) record. Work: one unit (the indices may point anywhere in
// the output, and repeated ones apply in index order).
struct ScatterParams {
  int64_t axis = 0;
  char how = 0;  // the reduction: 0 none, else 'a'dd, 'm'ul, ma'x', mi'n'
};

Status prepare_scatter(const InferContext& ctx, Prepared& out) {
  ScatterParams& p = out.record<ScatterParams>();
  normalize_axis(attr_int(ctx.node, "axis", 0), int64_t(ctx.input(0)->shape.size()), &p.axis);  // checked by infer
  const std::string_view r = attr_text(ctx.node, "reduction", "none");
  p.how = r == "none" ? 0 : r == "add" ? 'a' : r == "mul" ? 'm' : r == "max" ? 'x' : 'n';
  return Status::ok();
}

// Integer add and mul wrap modulo 2^bits like the integer Add and Mul (kernels/int_arith.h);
// max and min propagate NaN like the Max and Min operators (docs/operators.md, "NaN, signed
// zero and integer overflow").
template <typename T>
Status scatter_reduce(const KernelContext& k, int64_t axis, char how) {
  T* y = k.out(0).as<T>();
  const T* u = k.in(2).as<const T>();
  return walk(k, k.in(0), k.in(1), axis, 0, k.in(1).numel, [&](int64_t e, int64_t at) {
    const T v = u[e];
    if constexpr (std::is_integral_v<T>) {
      switch (how) {
        case 'a': y[at] = kernels::int_wrap_add(y[at], v); break;
        case 'm': y[at] = kernels::int_wrap_mul(y[at], v); break;
        case 'x': y[at] = y[at] < v ? v : y[at]; break;
        default: y[at] = y[at] > v ? v : y[at]; break;
      }
    } else {
      switch (how) {
        case 'a': y[at] = y[at] + v; break;
        case 'm': y[at] = y[at] * v; break;
        case 'x': y[at] = (v != v || y[at] < v) ? v : y[at]; break;
        default: y[at] = (v != v || y[at] > v) ? v : y[at]; break;
      }
    }
  });
}

Status scatter_elements_kernel(const KernelContext& k) {
  const ScatterParams& p = k.params<ScatterParams>();
  const TensorArg& X = k.in(0);
  const int64_t axis = p.axis;
  const size_t es = dtype_size(X.dtype);
  std::memcpy(k.out(0).data, X.data, size_t(X.numel) * es);
  if (!p.how) {
    const uint8_t* u = static_cast<const uint8_t*>(k.in(2).data);
    uint8_t* y = static_cast<uint8_t*>(k.out(0).data);
    return walk(k, X, k.in(1), axis, 0, k.in(1).numel,
                [&](int64_t e, int64_t at) { std::memcpy(y + size_t(at) * es, u + size_t(e) * es, es); });
  }
  switch (X.dtype) {
    case DType::f32: return scatter_reduce<float>(k, axis, p.how);
    case DType::i64: return scatter_reduce<int64_t>(k, axis, p.how);
    case DType::i32: return scatter_reduce<int32_t>(k, axis, p.how);
    default: return k.error(ErrorKind::DTypeMismatch, "unsupported dtype for a reduction");
  }
}

// ---- Hardmax (opset 13: one axis) ----

Status infer_hardmax(InferContext& ctx) {
  OM_TRY(need_input(ctx, 0));
  const ValueDesc* x = ctx.input(0);
  if (x->dtype != DType::f32) return ctx.error(ErrorKind::DTypeMismatch, msg("input must be f32, got ", dtype_name(x->dtype)));
  int64_t axis = 0;
  if (!normalize_axis(attr_int(ctx.node, "axis", -1), int64_t(x->shape.size()), &axis))
    return ctx.error(ErrorKind::InvalidArgument, msg("axis ", attr_int(ctx.node, "axis", -1), " is out of range for ", shape_str(x->shape)));
  ctx.set_output(0, DType::f32, x->shape);
  return Status::ok();
}

// Hardmax's record: X as [outer, n, inner] around the axis. Work: the outer * inner lines
// along the axis.
struct HardmaxParams {
  int64_t n = 0, inner = 1;
};

Status prepare_hardmax(const InferContext& ctx, Prepared& out) {
  const std::vector<int64_t>& x = ctx.input(0)->shape;
  int64_t axis = 0;
  normalize_axis(attr_int(ctx.node, "axis", -1), int64_t(x.size()), &axis);  // checked by infer
  HardmaxParams& p = out.record<HardmaxParams>();
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= x[size_t(i)];
  for (size_t i = size_t(axis) + 1; i < x.size(); ++i) p.inner *= x[i];
  p.n = x[size_t(axis)];
  out.work = outer * p.inner;
  return Status::ok();
}

Status hardmax_kernel(const KernelContext& k) {
  const HardmaxParams& p = k.params<HardmaxParams>();
  const int64_t n = p.n, inner = p.inner;
  const float* x = k.in(0).as<const float>();
  float* y = k.out(0).as<float>();
  for (int64_t line = k.begin; line < k.end; ++line) {
    const int64_t o = line / inner, i = line % inner;
    const float* px = x + o * n * inner + i;
    float* py = y + o * n * inner + i;
    int64_t best = 0;
    for (int64_t j = 0; j < n; ++j) {
      py[j * inner] = 0.0f;
      if (px[j * inner] > px[best * inner]) best = j;  // the first maximum wins
    }
    if (n > 0) py[best * inner] = 1.0f;
  }
  return Status::ok();
}

constexpr AttrSpec kAxisAttrs[] = {{"axis", AttrKind::Int}};
constexpr AttrSpec kScatterAttrs[] = {{"axis", AttrKind::Int}, {"reduction", AttrKind::String}};

constexpr OpDef kOps[] = {
    op("GatherElements").upgrades_from(11).inputs(2).attributes(kAxisAttrs).shapes(infer_gather_elements)
        .prepared(prepare_gather_elements).kernel(gather_elements_kernel)
        .doc("any dtype, axis; i64/i32 indices, negative indices; out of range is an error"),
    op("ScatterElements").upgrades_from(11).inputs(3).attributes(kScatterAttrs).shapes(infer_scatter_elements)
        .prepared(prepare_scatter).kernel(scatter_elements_kernel)
        .doc("any dtype, axis; reduction none (any dtype), add, mul, max, min (f32 i64 i32) in index order"),
    // The deprecated name of ScatterElements without a reduction (opset 9; 11 allowed negative
    // indices, which the kernel takes at any opset): read as is, run by ScatterElements' kernel.
    op("Scatter").since_opset(11).upgrades_from(9).inputs(3).attributes(kAxisAttrs).shapes(infer_scatter)
        .prepared(prepare_scatter).kernel(scatter_elements_kernel).doc("deprecated alias of ScatterElements (opsets 9 to 11), no reduction"),
    op("Hardmax").upgrades_from(1).upgrade_hook(softmax_upgrade).inputs(1).attributes(kAxisAttrs).shapes(infer_hardmax)
        .prepared(prepare_hardmax).kernel(hardmax_kernel).doc("f32, axis (opset 13 semantics); the first maximum"),
};

}  // namespace

OpTable index_more_ops() { return table_of(kOps); }

}  // namespace om::graph::ops
