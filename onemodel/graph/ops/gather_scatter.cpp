// Gather and scatter graph operators: Gather (any axis, scalar or tensor indices, negative
// indices), GatherElements, ScatterElements (reduction none/add/mul/max/min) and its deprecated
// alias Scatter, GatherND and ScatterND. Copies and one operation per element in index order:
// exact by nature.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "onemodel/core/dtype_visit.h"
#include "onemodel/core/shape.h"
#include "onemodel/graph/ops/op_util.h"
#include "onemodel/kernels/int_arith.h"

namespace om::graph::ops {
namespace {

// ---- Gather ----

Status infer_gather(InferContext& ctx) {
  const ValueDesc* x = ctx.input(0);
  const ValueDesc* ind = ctx.input(1);
  if (!x || !ind) return ctx.error(ErrorKind::InvalidArgument, "needs data and indices");
  if (ind->dtype != DType::i64 && ind->dtype != DType::i32)
    return ctx.error(ErrorKind::DTypeMismatch, msg("indices must be i64 or i32, got ", dtype_name(ind->dtype)));
  int64_t axis;
  if (!normalize_axis(ctx.node.attr_int("axis", 0), int64_t(x->shape.size()), &axis))
    return ctx.error(ErrorKind::InvalidArgument, msg("axis ", ctx.node.attr_int("axis", 0), " is out of range for ", shape_str(x->shape)));
  if (ind->data) {  // known indices: check them now, so a bad constant fails at creation
    const int64_t d = x->shape[size_t(axis)];
    for (int64_t i = 0; i < ind->numel(); ++i) {
      const int64_t v = read_int(ind->data, ind->dtype, i);
      if (v < -d || v >= d)
        return ctx.error(ErrorKind::InvalidArgument, msg("index ", v, " is out of range for axis ", axis, " of size ", d));
    }
  }
  std::vector<int64_t> out(x->shape.begin(), x->shape.begin() + axis);
  out.insert(out.end(), ind->shape.begin(), ind->shape.end());
  out.insert(out.end(), x->shape.begin() + axis + 1, x->shape.end());
  ctx.set_output(0, x->dtype, std::move(out));
  return Status::ok();
}

// Gather's record. Work: the output rows, one per (outer index, index element): each is one
// row of X's axes after `axis`.
struct GatherParams {
  int64_t axis = 0;
  int64_t d = 0;    // the gathered axis' size
  int64_t row = 0;  // bytes of one row
};

Status prepare_gather(const InferContext& ctx, Prepared& out) {
  const ValueDesc& x = *ctx.input(0);
  GatherParams& p = out.record<GatherParams>();
  p.axis = checked_axis(ctx, 0, int64_t(x.shape.size()));
  const AxisSplit s = split_at_axis(x.shape, p.axis);
  p.d = s.size;
  p.row = s.inner * int64_t(dtype_size(x.dtype));
  out.work = s.outer * ctx.input(1)->numel();
  return Status::ok();
}

// Every call checks all the indices before writing, as a whole-range call does.
Status gather_kernel(const KernelContext& k) {
  const GatherParams& p = k.params<GatherParams>();
  const TensorArg& X = k.in(0);
  const TensorArg& I = k.in(1);
  const int64_t d = p.d;
  const size_t row = size_t(p.row);
  const uint8_t* x = X.as<const uint8_t>();
  uint8_t* y = k.out(0).as<uint8_t>();
  for (int64_t j = 0; j < I.numel; ++j) {
    const int64_t v = read_int(I.data, I.dtype, j);
    if (v < -d || v >= d)
      return k.error(ErrorKind::InvalidArgument, msg("index ", v, " (element ", j, " of the indices) is out of range for axis ", p.axis,
                                                     " of size ", d));
  }
  for (int64_t r = k.begin; r < k.end; ++r) {
    const int64_t o = r / I.numel, j = r % I.numel;
    int64_t v = read_int(I.data, I.dtype, j);
    if (v < 0) v += d;
    if (row) std::memcpy(y + size_t(r) * row, x + size_t(o * d + v) * row, row);
  }
  return Status::ok();
}

// ---- GatherElements / ScatterElements: one index per element along `axis` ----

Status check_indices(const InferContext& ctx, size_t i, const ValueDesc& data, int64_t* axis) {
  const ValueDesc* idx = ctx.input(i);
  if (idx->dtype != DType::i64 && idx->dtype != DType::i32)
    return ctx.error(ErrorKind::DTypeMismatch, msg("indices must be i64 or i32, got ", dtype_name(idx->dtype)));
  if (idx->shape.size() != data.shape.size())
    return ctx.error(ErrorKind::ShapeMismatch, msg("indices ", shape_str(idx->shape), " must have the rank of data ", shape_str(data.shape)));
  if (!normalize_axis(ctx.node.attr_int("axis", 0), int64_t(data.shape.size()), axis))
    return ctx.error(ErrorKind::InvalidArgument, msg("axis ", ctx.node.attr_int("axis", 0), " is out of range for ", shape_str(data.shape)));
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
    int64_t j = read_int(idx.data, idx.dtype, e);
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
  normalize_axis(ctx.node.attr_int("axis", 0), int64_t(ctx.input(0)->shape.size()), &axis);  // checked by infer
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
  const Attribute* r = ctx.node.attr("reduction");
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
  if (ctx.node.attr("reduction")) return ctx.error(ErrorKind::InvalidArgument, "Scatter has no reduction attribute: use ScatterElements");
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
  normalize_axis(ctx.node.attr_int("axis", 0), int64_t(ctx.input(0)->shape.size()), &p.axis);  // checked by infer
  const std::string_view r = ctx.node.attr_text("reduction", "none");
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

// ---- GatherND / ScatterND ----

Status check_nd(const InferContext& ctx, int64_t batch, int64_t* k) {
  const ValueDesc* data = ctx.input(0);
  const ValueDesc* idx = ctx.input(1);
  if (idx->dtype != DType::i64) return ctx.error(ErrorKind::DTypeMismatch, msg("indices must be i64, got ", dtype_name(idx->dtype)));
  if (idx->shape.empty()) return ctx.error(ErrorKind::InvalidArgument, "indices must have rank >= 1");
  *k = idx->shape.back();
  const int64_t r = int64_t(data->shape.size());
  if (batch < 0 || batch >= int64_t(idx->shape.size()) || batch > r || *k < 1 || batch + *k > r)
    return ctx.error(ErrorKind::InvalidArgument, msg("indices ", shape_str(idx->shape), " (batch_dims ", batch, ") do not fit data ",
                                                     shape_str(data->shape)));
  for (int64_t i = 0; i < batch; ++i)
    if (idx->shape[size_t(i)] != data->shape[size_t(i)])
      return ctx.error(ErrorKind::ShapeMismatch, "the batch axes of data and indices differ");
  return Status::ok();
}

// Element offset in data of index tuple p (p counts tuples over indices.shape[:-1]); an error
// text when an index is out of range.
const char* nd_offset(const TensorArg& data, const TensorArg& idx, int64_t batch, int64_t p, int64_t* off) {
  const int64_t k = idx.dims[idx.rank - 1];
  const int64_t per_batch = dims_product(idx.dims, size_t(batch), idx.rank - 1);
  int64_t o = batch > 0 ? (p / per_batch) * dims_product(data.dims, size_t(batch), data.rank) : 0;
  const int64_t* t = idx.as<const int64_t>() + p * k;
  for (int64_t j = 0; j < k; ++j) {
    const int64_t n = data.dims[batch + j];
    int64_t v = t[j];
    if (v < -n || v >= n) return "an index is out of range";
    if (v < 0) v += n;
    o += v * dims_product(data.dims, size_t(batch + j + 1), data.rank);
  }
  *off = o;
  return nullptr;
}

Status infer_gather_nd(InferContext& ctx) {
  OM_TRY(need_input(ctx, 0));
  OM_TRY(need_input(ctx, 1));
  const int64_t batch = ctx.node.attr_int("batch_dims", 0);
  int64_t k = 0;
  OM_TRY(check_nd(ctx, batch, &k));
  const auto& is = ctx.input(1)->shape;
  const auto& ds = ctx.input(0)->shape;
  std::vector<int64_t> shape(is.begin(), is.end() - 1);
  shape.insert(shape.end(), ds.begin() + batch + k, ds.end());
  ctx.set_output(0, ctx.input(0)->dtype, std::move(shape));
  return Status::ok();
}

// GatherND's record. Work: the index tuples, each one slice of the output.
struct GatherNDParams {
  int64_t batch = 0;  // batch_dims
};

Status prepare_gather_nd(const InferContext& ctx, Prepared& out) {
  out.record<GatherNDParams>().batch = ctx.node.attr_int("batch_dims", 0);
  const ValueDesc& idx = *ctx.input(1);
  const int64_t kk = idx.shape.back();
  out.work = kk == 0 ? 0 : idx.numel() / kk;
  return Status::ok();
}

Status gather_nd_kernel(const KernelContext& k) {
  const TensorArg& X = k.in(0);
  const TensorArg& I = k.in(1);
  const int64_t batch = k.params<GatherNDParams>().batch;
  const int64_t kk = I.dims[I.rank - 1];
  const size_t es = dtype_size(X.dtype);
  const int64_t slice = dims_product(X.dims, size_t(batch + kk), X.rank);
  uint8_t* y = static_cast<uint8_t*>(k.out(0).data);
  for (int64_t p = k.begin; p < k.end; ++p) {
    int64_t off = 0;
    if (const char* err = nd_offset(X, I, batch, p, &off)) return k.error(ErrorKind::InvalidArgument, err);
    std::memcpy(y + size_t(p * slice) * es, static_cast<const uint8_t*>(X.data) + size_t(off) * es, size_t(slice) * es);
  }
  return Status::ok();
}

Status infer_scatter_nd(InferContext& ctx) {
  for (size_t i = 0; i < 3; ++i) OM_TRY(need_input(ctx, i));
  int64_t k = 0;
  OM_TRY(check_nd(ctx, 0, &k));
  const auto& is = ctx.input(1)->shape;
  const auto& ds = ctx.input(0)->shape;
  std::vector<int64_t> want(is.begin(), is.end() - 1);
  want.insert(want.end(), ds.begin() + k, ds.end());
  if (ctx.input(2)->shape != want || ctx.input(2)->dtype != ctx.input(0)->dtype)
    return ctx.error(ErrorKind::ShapeMismatch, msg("updates ", shape_str(ctx.input(2)->shape), " must be ", shape_str(want), " of the data's dtype"));
  const Attribute* r = ctx.node.attr("reduction");
  if (r && r->s != "none" && r->s != "add" && r->s != "mul")
    return ctx.error(ErrorKind::InvalidArgument, msg("reduction must be none, add or mul, got '", r->s, "'"));
  if (r && r->s != "none" && ctx.input(0)->dtype != DType::f32)
    return ctx.error(ErrorKind::DTypeMismatch, "reductions need f32 data");
  ctx.set_output(0, ctx.input(0)->dtype, ds);
  return Status::ok();
}

// ScatterND's record: the reduction ('n'one, 'a'dd, 'm'ul). Work: one unit (the indices may
// point anywhere in the output, and repeated ones apply in index order).
struct ScatterNDParams {
  char how = 'n';
};

Status prepare_scatter_nd(const InferContext& ctx, Prepared& out) {
  const std::string_view r = ctx.node.attr_text("reduction", "none");  // checked by infer
  out.record<ScatterNDParams>().how = r == "none" ? 'n' : r == "add" ? 'a' : 'm';
  return Status::ok();
}

Status scatter_nd_kernel(const KernelContext& k) {
  const TensorArg& X = k.in(0);
  const TensorArg& I = k.in(1);
  const size_t es = dtype_size(X.dtype);
  const int64_t kk = I.dims[I.rank - 1];
  const int64_t slice = dims_product(X.dims, size_t(kk), X.rank);
  const int64_t tuples = I.numel / kk;
  std::memcpy(k.out(0).data, X.data, size_t(X.numel) * es);
  const char how = k.params<ScatterNDParams>().how;
  uint8_t* y = static_cast<uint8_t*>(k.out(0).data);
  const uint8_t* u = static_cast<const uint8_t*>(k.in(2).data);
  for (int64_t p = 0; p < tuples; ++p) {
    int64_t off = 0;
    if (const char* err = nd_offset(X, I, 0, p, &off)) return k.error(ErrorKind::InvalidArgument, err);
    if (how == 'n') {
      std::memcpy(y + size_t(off) * es, u + size_t(p * slice) * es, size_t(slice) * es);
      continue;
    }
    float* py = reinterpret_cast<float*>(y) + off;
    const float* pu = reinterpret_cast<const float*>(u) + p * slice;
    for (int64_t i = 0; i < slice; ++i) py[i] = how == 'a' ? py[i] + pu[i] : py[i] * pu[i];
  }
  return Status::ok();
}

constexpr AttrSpec kAxisAttrs[] = {{"axis", AttrKind::Int}};
constexpr AttrSpec kScatterAttrs[] = {{"axis", AttrKind::Int}, {"reduction", AttrKind::String}};
constexpr AttrSpec kGatherNDAttrs[] = {{"batch_dims", AttrKind::Int}};
constexpr AttrSpec kScatterNDAttrs[] = {{"reduction", AttrKind::String}};

constexpr OpDef kOps[] = {
    op("Gather").upgrades_from(1).per_item(BatchRule::Axis).inputs(2).attributes(kAxisAttrs).shapes(infer_gather).prepared(prepare_gather).kernel(gather_kernel)
        .doc("any dtype, axis; i64/i32 indices of any rank, negative indices; out of range is an error").with_flags(kOpF16InF32),
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
    op("GatherND").upgrades_from(11).inputs(2).attributes(kGatherNDAttrs).shapes(infer_gather_nd)
        .prepared(prepare_gather_nd).kernel(gather_nd_kernel)
        .doc("any dtype, i64 indices, batch_dims; out of range is an error"),
    op("ScatterND").upgrades_from(11).inputs(3).attributes(kScatterNDAttrs).shapes(infer_scatter_nd)
        .prepared(prepare_scatter_nd).kernel(scatter_nd_kernel)
        .doc("any dtype, i64 indices; reduction none, add or mul (f32) in index order"),
};

}  // namespace

}  // namespace om::graph::ops

// The family's operators, one symbol each (onemodel/op_list.h).
#define OM_GATHER_SCATTER_OPS(X) \
  X(Gather) X(GatherElements) X(ScatterElements) X(Scatter) X(GatherND) X(ScatterND)
OM_OP_FAMILY_TABLE(gather_scatter, OM_GATHER_SCATTER_OPS)
