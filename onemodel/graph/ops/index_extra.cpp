// Further indexing operators from exported models and the ONNX node tests: GatherND,
// ScatterND, OneHot, EyeLike, and the two whose output shape depends on input values —
// Compress (the condition) and NonZero (the input) — which run when those values are known
// when planning (constants, or value inputs: docs/memory.md). Copies and one operation per
// element in index order: exact by nature.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "onemodel/core/dtype_visit.h"
#include "onemodel/core/shape.h"
#include "onemodel/graph/ops/op_util.h"

namespace om::graph::ops {
namespace {

Status need_input(const InferContext& ctx, size_t i) {
  if (!ctx.input(i)) return ctx.error(ErrorKind::InvalidArgument, msg("input ", i, " is required"));
  return Status::ok();
}

int64_t prod(const int64_t* d, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t i = from; i < to; ++i) n *= d[i];
  return n;
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
  const int64_t per_batch = prod(idx.dims, size_t(batch), idx.rank - 1);
  int64_t o = batch > 0 ? (p / per_batch) * prod(data.dims, size_t(batch), data.rank) : 0;
  const int64_t* t = idx.as<const int64_t>() + p * k;
  for (int64_t j = 0; j < k; ++j) {
    const int64_t n = data.dims[batch + j];
    int64_t v = t[j];
    if (v < -n || v >= n) return "an index is out of range";
    if (v < 0) v += n;
    o += v * prod(data.dims, size_t(batch + j + 1), data.rank);
  }
  *off = o;
  return nullptr;
}

Status infer_gather_nd(InferContext& ctx) {
  OM_TRY(need_input(ctx, 0));
  OM_TRY(need_input(ctx, 1));
  const int64_t batch = attr_int(ctx.node, "batch_dims", 0);
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
  out.record<GatherNDParams>().batch = attr_int(ctx.node, "batch_dims", 0);
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
  const int64_t slice = prod(X.dims, size_t(batch + kk), X.rank);
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
  const Attribute* r = find_attr(ctx.node, "reduction");
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
  const std::string_view r = attr_text(ctx.node, "reduction", "none");  // checked by infer
  out.record<ScatterNDParams>().how = r == "none" ? 'n' : r == "add" ? 'a' : 'm';
  return Status::ok();
}

Status scatter_nd_kernel(const KernelContext& k) {
  const TensorArg& X = k.in(0);
  const TensorArg& I = k.in(1);
  const size_t es = dtype_size(X.dtype);
  const int64_t kk = I.dims[I.rank - 1];
  const int64_t slice = prod(X.dims, size_t(kk), X.rank);
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

// ---- OneHot(indices, depth, values[off, on]) ----

Status infer_one_hot(InferContext& ctx) {
  for (size_t i = 0; i < 3; ++i) OM_TRY(need_input(ctx, i));
  const ValueDesc* depth = ctx.input(1);
  if (depth->numel() != 1) return ctx.error(ErrorKind::InvalidArgument, "depth must hold one value");
  if (!depth->data) return ctx.error(ErrorKind::Unsupported, "depth must be known when the session plans (it decides the output shape)");
  if (ctx.input(2)->numel() != 2) return ctx.error(ErrorKind::InvalidArgument, "values must be [off_value, on_value]");
  int64_t d = 0;
  if (!index_at(depth->data, depth->dtype, 0, &d))
    return ctx.error(ErrorKind::InvalidArgument, msg("depth has no integer value (NaN, infinite or beyond int64); give a depth >= 1"));
  if (d < 1 || d > kMaxNumel) return ctx.error(ErrorKind::InvalidArgument, msg("depth must be in [1, 2^48], got ", d));
  std::vector<int64_t> shape = ctx.input(0)->shape;
  int64_t axis = 0;
  if (!normalize_axis(attr_int(ctx.node, "axis", -1), int64_t(shape.size()) + 1, &axis))
    return ctx.error(ErrorKind::InvalidArgument, "axis is out of range");
  shape.insert(shape.begin() + axis, d);
  int64_t n = 0;
  OM_TRY(check_shape(ctx.node.label() + " output", shape, &n));
  ctx.set_output(0, ctx.input(2)->dtype, std::move(shape));
  return Status::ok();
}

// OneHot's record. Work: the output rows (o, d) over the axes before the new one and the
// depth, each `inner` elements.
struct OneHotParams {
  int64_t depth = 0, inner = 0;
};

Status prepare_one_hot(const InferContext& ctx, Prepared& out) {
  const std::vector<int64_t>& is = ctx.input(0)->shape;
  int64_t axis = 0;
  normalize_axis(attr_int(ctx.node, "axis", -1), int64_t(is.size()) + 1, &axis);  // checked by infer
  OneHotParams& p = out.record<OneHotParams>();
  p.depth = ctx.outputs[0].shape[size_t(axis)];
  p.inner = prod(is.data(), size_t(axis), is.size());
  out.work = p.inner == 0 ? 0 : prod(is.data(), 0, size_t(axis)) * p.depth;
  return Status::ok();
}

Status one_hot_kernel(const KernelContext& k) {
  const OneHotParams& p = k.params<OneHotParams>();
  const TensorArg& I = k.in(0);
  const TensorArg& Y = k.out(0);
  const int64_t depth = p.depth, inner = p.inner;
  const size_t es = dtype_size(Y.dtype);
  const uint8_t* off_v = static_cast<const uint8_t*>(k.in(2).data);
  const uint8_t* on_v = off_v + es;
  uint8_t* y = static_cast<uint8_t*>(Y.data);
  // Indices outside [-depth, depth) give a row of off values (ONNX); one without an integer
  // (NaN, infinite, beyond int64) is refused before anything is written (each range checks
  // every index, so the outcome does not depend on the split).
  for (int64_t e = 0; e < I.numel; ++e) {
    int64_t v = 0;
    if (!index_at(I.data, I.dtype, e, &v))
      return k.error(ErrorKind::InvalidArgument, msg("indices element ", e, " has no integer value (NaN, infinite or beyond ",
                                                     "int64); give finite indices in [-depth, depth)"));
  }
  for (int64_t r = k.begin; r < k.end; ++r) {
    const int64_t o = r / depth, d = r % depth;
    for (int64_t i = 0; i < inner; ++i) {
      int64_t v = 0;
      index_at(I.data, I.dtype, o * inner + i, &v);
      if (v < 0 && v >= -depth) v += depth;
      std::memcpy(y + size_t(r * inner + i) * es, v == d ? on_v : off_v, es);
    }
  }
  return Status::ok();
}

// ---- EyeLike ----

Status infer_eye_like(InferContext& ctx) {
  OM_TRY(need_input(ctx, 0));
  if (ctx.input(0)->shape.size() != 2) return ctx.error(ErrorKind::InvalidArgument, "input must be 2-D");
  DType dt = ctx.input(0)->dtype;
  if (const Attribute* a = find_attr(ctx.node, "dtype")) OM_TRY(dtype_code_attr(ctx, "dtype", a->i, &dt));
  ctx.set_output(0, dt, ctx.input(0)->shape);
  return Status::ok();
}

// EyeLike's record: the diagonal k. Work: the output rows.
struct EyeLikeParams {
  int64_t diag = 0;
};

Status prepare_eye_like(const InferContext& ctx, Prepared& out) {
  out.record<EyeLikeParams>().diag = attr_int(ctx.node, "k", 0);
  out.work = ctx.outputs[0].numel() == 0 ? 0 : ctx.outputs[0].shape[0];
  return Status::ok();
}

Status eye_like_kernel(const KernelContext& k) {
  const TensorArg& Y = k.out(0);
  const int64_t diag = k.params<EyeLikeParams>().diag;
  const size_t es = dtype_size(Y.dtype), row = size_t(Y.dims[1]) * es;
  uint8_t* y = static_cast<uint8_t*>(Y.data);
  std::memset(y + size_t(k.begin) * row, 0, size_t(k.end - k.begin) * row);
  uint8_t one[8] = {};
  visit_dtype(Y.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T v;
    if constexpr (std::is_same<T, half>::value) v = float_to_half(1.0f);
    else v = T(1);
    std::memcpy(one, &v, sizeof(T));
  });
  // Row i holds its one at column i + k: the rows from max(0, -k) to min(rows, cols - k), found
  // without computing i + k for rows it cannot reach (k may be near INT64_MIN or INT64_MAX).
  const int64_t rows = Y.dims[0], cols = Y.dims[1];
  if (diag < cols && diag > -rows) {
    const int64_t first = std::max(k.begin, diag < 0 ? -diag : 0);
    const int64_t last = std::min(k.end, std::min(rows, cols - diag));  // cols - diag > 0 and cannot overflow: diag > -rows
    for (int64_t i = first; i < last; ++i) std::memcpy(y + size_t(i * cols + i + diag) * es, one, es);
  }
  return Status::ok();
}

// ---- Compress / NonZero: shapes from values known when planning ----

Status infer_compress(InferContext& ctx) {
  OM_TRY(need_input(ctx, 0));
  OM_TRY(need_input(ctx, 1));
  const ValueDesc* c = ctx.input(1);
  if (c->dtype != DType::boolean || c->shape.size() != 1) return ctx.error(ErrorKind::InvalidArgument, "condition must be a 1-D bool tensor");
  if (!c->data) return ctx.error(ErrorKind::Unsupported, "condition must be known when the session plans (it decides the output shape)");
  const auto& s = ctx.input(0)->shape;
  const Attribute* a = find_attr(ctx.node, "axis");
  int64_t axis = 0, len = 0;
  if (a && !normalize_axis(a->i, int64_t(s.size()), &axis)) return ctx.error(ErrorKind::InvalidArgument, "axis is out of range");
  int64_t total = 1;
  for (int64_t d : s) total *= d;
  const int64_t limit = a ? s[size_t(axis)] : total;
  if (c->shape[0] > limit) return ctx.error(ErrorKind::ShapeMismatch, "condition is longer than the axis");
  for (int64_t i = 0; i < c->shape[0]; ++i) len += static_cast<const uint8_t*>(c->data)[i] ? 1 : 0;
  std::vector<int64_t> shape = a ? s : std::vector<int64_t>{};
  if (a) shape[size_t(axis)] = len; else shape.push_back(len);
  ctx.set_output(0, ctx.input(0)->dtype, std::move(shape));
  return Status::ok();
}

// Compress's record: X as [outer, n, inner] around the axis (flattened: [1, numel, 1]). Work:
// the outer slices, each `kept` rows of the output.
struct CompressParams {
  int64_t n = 0, inner = 0;  // inner in bytes
  int64_t kept = 0;          // the true conditions among the first n
};

Status prepare_compress(const InferContext& ctx, Prepared& out) {
  const ValueDesc& x = *ctx.input(0);
  const ValueDesc& c = *ctx.input(1);
  const Attribute* a = find_attr(ctx.node, "axis");
  int64_t axis = 0;
  if (a) normalize_axis(a->i, int64_t(x.shape.size()), &axis);  // checked by infer
  const int64_t* dims = x.shape.data();
  CompressParams& p = out.record<CompressParams>();
  p.n = a ? dims[axis] : x.numel();
  p.inner = (a ? prod(dims, size_t(axis) + 1, x.shape.size()) : 1) * int64_t(dtype_size(x.dtype));
  for (int64_t j = 0; j < p.n && j < c.numel(); ++j) p.kept += static_cast<const uint8_t*>(c.data)[j] ? 1 : 0;
  out.work = a ? prod(dims, 0, size_t(axis)) : 1;
  return Status::ok();
}

Status compress_kernel(const KernelContext& k) {
  const CompressParams& p = k.params<CompressParams>();
  const TensorArg& X = k.in(0);
  const TensorArg& C = k.in(1);
  const int64_t n = p.n, inner = p.inner;
  const uint8_t* x = static_cast<const uint8_t*>(X.data);
  uint8_t* y = static_cast<uint8_t*>(k.out(0).data) + k.begin * p.kept * inner;
  const uint8_t* c = C.as<const uint8_t>();
  for (int64_t o = k.begin; o < k.end; ++o)
    for (int64_t j = 0; j < n && j < C.numel; ++j)
      if (c[j]) {
        std::memcpy(y, x + (o * n + j) * inner, size_t(inner));
        y += inner;
      }
  return Status::ok();
}

Status infer_nonzero(InferContext& ctx) {
  OM_TRY(need_input(ctx, 0));
  const ValueDesc* x = ctx.input(0);
  if (!x->data) return ctx.error(ErrorKind::Unsupported, "the input must be known when the session plans (it decides the output shape)");
  int64_t count = 0;
  const size_t es = dtype_size(x->dtype);
  const uint8_t zero[8] = {};
  for (int64_t i = 0; i < x->numel(); ++i) count += std::memcmp(static_cast<const uint8_t*>(x->data) + size_t(i) * es, zero, es) != 0;
  ctx.set_output(0, DType::i64, {int64_t(x->shape.size()), count});
  return Status::ok();
}

// One work unit (no prepare step): the column of each nonzero element is the count of those
// before it.
Status nonzero_kernel(const KernelContext& k) {
  const TensorArg& X = k.in(0);
  const int64_t count = k.out(0).dims[1];
  const size_t es = dtype_size(X.dtype);
  const uint8_t zero[8] = {};
  int64_t* y = k.out(0).as<int64_t>();
  int64_t idx[kMaxRank] = {};
  int64_t c = 0;
  for (int64_t i = 0; i < X.numel; ++i) {
    if (std::memcmp(static_cast<const uint8_t*>(X.data) + size_t(i) * es, zero, es) != 0 && c < count) {
      for (size_t d = 0; d < X.rank; ++d) y[int64_t(d) * count + c] = idx[d];
      ++c;
    }
    for (size_t d = X.rank; d-- > 0;) {
      if (++idx[d] < X.dims[d]) break;
      idx[d] = 0;
    }
  }
  return Status::ok();
}

constexpr AttrSpec kGatherNDAttrs[] = {{"batch_dims", AttrKind::Int}};
constexpr AttrSpec kScatterNDAttrs[] = {{"reduction", AttrKind::String}};
constexpr AttrSpec kAxisAttrs[] = {{"axis", AttrKind::Int}};
constexpr AttrSpec kEyeAttrs[] = {{"dtype", AttrKind::Int}, {"k", AttrKind::Int}};

constexpr OpDef kOps[] = {
    op("GatherND").upgrades_from(11).inputs(2).attributes(kGatherNDAttrs).shapes(infer_gather_nd)
        .prepared(prepare_gather_nd).kernel(gather_nd_kernel)
        .doc("any dtype, i64 indices, batch_dims; out of range is an error"),
    op("ScatterND").upgrades_from(11).inputs(3).attributes(kScatterNDAttrs).shapes(infer_scatter_nd)
        .prepared(prepare_scatter_nd).kernel(scatter_nd_kernel)
        .doc("any dtype, i64 indices; reduction none, add or mul (f32) in index order"),
    op("OneHot").upgrades_from(9).plan_time_inputs_mask(1u << 1).inputs(3).attributes(kAxisAttrs).shapes(infer_one_hot)
        .prepared(prepare_one_hot).kernel(one_hot_kernel).doc("indices f32 i64 i32; depth known at plan time; values of any dtype; axis"),
    op("EyeLike").upgrades_from(9).inputs(1).attributes(kEyeAttrs).shapes(infer_eye_like)
        .prepared(prepare_eye_like).kernel(eye_like_kernel)
        .doc("2-D, any dtype (input's or the dtype attribute's), k"),
    op("Compress").upgrades_from(9).plan_time_inputs_mask(1u << 1).inputs(2).attributes(kAxisAttrs).shapes(infer_compress)
        .prepared(prepare_compress).kernel(compress_kernel).doc("any dtype; condition known at plan time; axis or flattened"),
    op("NonZero").upgrades_from(9).plan_time_inputs_mask(1u << 0).inputs(1).shapes(infer_nonzero).kernel(nonzero_kernel)
        .doc("any dtype -> i64 [rank, count]; its input known at plan time"),
};

}  // namespace

OpTable index_extra_ops() { return table_of(kOps); }

}  // namespace om::graph::ops
