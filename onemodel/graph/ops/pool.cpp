// Pools and batch normalisation over NCHW tensors: MaxPool (f32 and u8; dilations, ceil_mode,
// the Indices output; 1-D to 3-D), AveragePool (1-D to 3-D; count_include_pad, ceil_mode,
// dilations), GlobalAveragePool, GlobalMaxPool, MaxUnpool, BatchNormalization (inference form,
// and training_mode's batch statistics). The window kernels are kernels::f32_max_pool2d /
// f32_avg_pool2d, shared with the eager pools; their order is fixed, so both modes give the
// same bits on every ISA (docs/exactness.md).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "onemodel/graph/ops/conv_geom.h"
#include "onemodel/graph/ops/op_util.h"

namespace om::graph::ops {
namespace {

Status infer_pool(InferContext& ctx) {
  const bool max = ctx.node.op_type == "MaxPool";
  const bool u8 = max && ctx.input(0) && ctx.input(0)->dtype == DType::u8;
  if (!u8) OM_TRY(require_dtype(ctx, 0, {DType::f32}));
  if (max) {
    const int64_t order = ctx.node.attr_int("storage_order", 0);
    if (order != 0 && order != 1) return ctx.error(ErrorKind::InvalidArgument, msg("storage_order must be 0 or 1, got ", order));
  }
  const auto& x = ctx.input(0)->shape;
  SpatialGeom sg;
  if (const char* why = spatial_geom(ctx.node, GeomKind::Pool, x.data(), x.size(), nullptr, 0, &sg))
    return ctx.error(ErrorKind::ShapeMismatch, geom_error_text(ctx.node, why, x, nullptr));
  const bool indices = max && ctx.node.outputs.size() > 1 && !ctx.node.outputs[1].empty();
  if (sg.spatial == 3 && (u8 || indices))
    return ctx.error(ErrorKind::Unsupported, "3-D MaxPool is f32 without the Indices output; Cast to f32 or drop Indices");
  std::vector<int64_t> y{sg.g.N, sg.g.C};
  if (sg.spatial == 3) y.push_back(sg.depth.OD);
  if (sg.spatial >= 2) y.push_back(sg.g.OH);
  y.push_back(sg.g.OW);
  ctx.set_output(0, ctx.input(0)->dtype, y);
  if (max && ctx.outputs.size() > 1) ctx.set_output(1, DType::i64, std::move(y));
  return Status::ok();
}

SpatialGeom pool_geom(const Node& node, const int64_t* x, size_t rank) {
  SpatialGeom sg;
  spatial_geom(node, GeomKind::Pool, x, rank, nullptr, 0, &sg);
  return sg;
}

// The window pools' record. Work: the N * C planes (each plane's outputs depend on that plane
// only; a 3-D pool's plane is its whole [D, H, W] volume).
struct PoolParams {
  SpatialGeom sg;
  bool count_include_pad = false;
  bool column_major = false;  // MaxPool's storage_order 1
};

Status prepare_pool(const InferContext& ctx, Prepared& out) {
  const ValueDesc& x = *ctx.input(0);
  PoolParams& p = out.record<PoolParams>();
  p.sg = pool_geom(ctx.node, x.shape.data(), x.shape.size());
  p.count_include_pad = ctx.node.attr_int("count_include_pad", 0) != 0;
  p.column_major = ctx.node.attr_int("storage_order", 0) == 1;
  out.work = p.sg.g.N * p.sg.g.C;
  return Status::ok();
}

// The geometry of planes [begin, end) only: the kernels run N * C planes of one channel each.
kernels::ConvGeom plane_range(kernels::ConvGeom g, int64_t begin, int64_t end) {
  g.N = end - begin;
  g.C = g.M = 1;
  return g;
}

// A 3-D pool runs the 2-D kernel twice: over the (H, W) plane of every depth slice into the
// scratch [N*C*D, OH, OW], then over depth, the scratch viewed as [N*C, D, OH*OW] with a (kD, 1)
// window. Max: the maximum of the plane maxima (NaN still propagates). Average: the average
// over kd of the (kh, kw) window averages, which is the 3-D average because the window's count
// is the product of the per-axis counts; each stage sums in its fixed order and divides once.
struct PoolStages {
  kernels::ConvGeom plane, depth;
};
PoolStages pool_stages(const SpatialGeom& sg) {
  const DepthGeom& d = sg.depth;
  PoolStages st;
  st.plane = sg.g;
  st.plane.N = sg.g.N * sg.g.C * d.D;
  st.plane.C = st.plane.M = 1;
  kernels::ConvGeom& g = st.depth;
  g.N = sg.g.N * sg.g.C;
  g.C = g.M = 1;
  g.H = d.D;
  g.W = g.OW = sg.g.OH * sg.g.OW;
  g.OH = d.OD;
  g.kH = d.kD;
  g.sH = d.sD;
  g.dH = d.dD;
  g.pad_t = d.pad_front;
  return st;
}

// Scratch: the plane results of a 3-D pool (above), or u8 MaxPool's f32 copies of X and Y (the
// f32 kernel runs on them: the conversion is exact both ways and max only selects).
size_t pool_scratch(const InferContext& ctx) {
  const ValueDesc& x = *ctx.input(0);
  const SpatialGeom sg = pool_geom(ctx.node, x.shape.data(), x.shape.size());
  int64_t n = 0;
  if (sg.spatial == 3) {
    const int64_t dims[5] = {sg.g.N, sg.g.C, sg.depth.D, sg.g.OH, sg.g.OW};
    if (!checked_numel(dims, 5, &n)) return SIZE_MAX;
  } else if (x.dtype == DType::u8) {
    n = x.numel() + ctx.outputs[0].numel();
  }
  return size_t(n) * sizeof(float);
}

// The kernel's argmax is the row-major offset in the window's plane; ONNX Indices count over
// the whole input [N, C, H, W], the plane's offset in row-major (storage_order 0) or
// column-major (1) order.
void onnx_indices(const kernels::ConvGeom& g, bool column_major, int64_t begin, int64_t end, int64_t* idx) {
  const int64_t P = g.OH * g.OW, HW = g.H * g.W;
  for (int64_t nc = begin; nc < end; ++nc)
    for (int64_t p = 0; p < P; ++p) {
      int64_t& at = idx[nc * P + p];
      if (at < 0) continue;  // a window without an input element (pads as large as the kernel)
      at = nc * HW + (column_major ? (at % g.W) * g.H + at / g.W : at);
    }
}

// Planes [k.begin, k.end): a 3-D pool's planes are D (H, W) slices in the first stage and one
// depth column set in the second, so both stages take the same volumes' rows of the scratch.
Status max_pool_kernel(const KernelContext& k) {
  const PoolParams& p = k.params<PoolParams>();
  const SpatialGeom& sg = p.sg;
  const int64_t b = k.begin, e = k.end;
  const int64_t HW = sg.g.H * sg.g.W, P = sg.g.OH * sg.g.OW;
  int64_t* idx = k.num_outputs > 1 && k.out(1).present ? k.out(1).as<int64_t>() : nullptr;
  if (sg.spatial == 3) {
    const PoolStages st = pool_stages(sg);
    const int64_t D = sg.depth.D, OD = sg.depth.OD;
    float* t = static_cast<float*>(k.scratch) + b * D * P;
    kernels::f32_max_pool2d(plane_range(st.plane, b * D, e * D), k.in(0).as<const float>() + b * D * HW, t, nullptr);
    kernels::f32_max_pool2d(plane_range(st.depth, b, e), t, k.out(0).as<float>() + b * OD * P, nullptr);
  } else if (k.in(0).dtype == DType::u8) {
    const uint8_t* x = k.in(0).as<const uint8_t>();
    uint8_t* y = k.out(0).as<uint8_t>();
    float* xs = static_cast<float*>(k.scratch);
    float* ys = xs + k.in(0).numel;
    for (int64_t i = b * HW; i < e * HW; ++i) xs[i] = float(x[i]);
    kernels::f32_max_pool2d(plane_range(sg.g, b, e), xs + b * HW, ys + b * P, idx ? idx + b * P : nullptr);
    for (int64_t i = b * P; i < e * P; ++i) y[i] = ys[i] >= 0.0f ? uint8_t(ys[i]) : 0;  // empty window: -inf
  } else {
    kernels::f32_max_pool2d(plane_range(sg.g, b, e), k.in(0).as<const float>() + b * HW, k.out(0).as<float>() + b * P,
                            idx ? idx + b * P : nullptr);
  }
  if (idx) onnx_indices(sg.g, p.column_major, b, e, idx);
  return Status::ok();
}

Status avg_pool_kernel(const KernelContext& k) {
  const PoolParams& p = k.params<PoolParams>();
  const SpatialGeom& sg = p.sg;
  const int64_t b = k.begin, e = k.end;
  const int64_t HW = sg.g.H * sg.g.W, P = sg.g.OH * sg.g.OW;
  if (sg.spatial == 3) {
    const PoolStages st = pool_stages(sg);
    const int64_t D = sg.depth.D, OD = sg.depth.OD;
    float* t = static_cast<float*>(k.scratch) + b * D * P;
    kernels::f32_avg_pool2d(plane_range(st.plane, b * D, e * D), sg.pad_b, sg.pad_r, p.count_include_pad,
                            k.in(0).as<const float>() + b * D * HW, t);
    kernels::f32_avg_pool2d(plane_range(st.depth, b, e), sg.depth.pad_back, 0, p.count_include_pad, t,
                            k.out(0).as<float>() + b * OD * P);
    return Status::ok();
  }
  kernels::f32_avg_pool2d(plane_range(sg.g, b, e), sg.pad_b, sg.pad_r, p.count_include_pad, k.in(0).as<const float>() + b * HW,
                          k.out(0).as<float>() + b * P);
  return Status::ok();
}

Status infer_global(InferContext& ctx) {
  OM_TRY(require_dtype(ctx, 0, {DType::f32}));
  const auto& x = ctx.input(0)->shape;
  if (x.size() < 3) return ctx.error(ErrorKind::ShapeMismatch, msg("the input must be [N, C, spatial...], got ", shape_str(x)));
  std::vector<int64_t> y(x.size(), 1);
  y[0] = x[0];
  y[1] = x[1];
  ctx.set_output(0, DType::f32, std::move(y));
  return Status::ok();
}

// The global pools' record. Work: the N * C planes.
struct PlaneParams {
  int64_t plane = 0;  // elements per plane
};

Status prepare_global(const InferContext& ctx, Prepared& out) {
  const ValueDesc& x = *ctx.input(0);
  const int64_t planes = x.shape[0] * x.shape[1];
  out.record<PlaneParams>().plane = planes == 0 ? 0 : x.numel() / planes;
  out.work = planes;
  return Status::ok();
}

// Exact: the library's fixed-order sum of each plane, then one division by its size.
Status global_avg_kernel(const KernelContext& k) {
  const int64_t n = k.params<PlaneParams>().plane;
  const float* x = k.in(0).as<const float>();
  float* y = k.out(0).as<float>();
  for (int64_t p = k.begin; p < k.end; ++p) y[p] = kernels::f32_sum(x + p * n, size_t(n), k.mode) / float(n);
  return Status::ok();
}

Status global_max_kernel(const KernelContext& k) {
  const int64_t n = k.params<PlaneParams>().plane;
  const float* x = k.in(0).as<const float>();
  float* y = k.out(0).as<float>();
  for (int64_t p = k.begin; p < k.end; ++p) y[p] = kernels::f32_max(x + p * n, size_t(n));
  return Status::ok();
}

// ---- MaxUnpool ----

// The unpooled shape I indexes: N, C, then per spatial axis (in - 1) * stride + kernel -
// pad_begin - pad_end. nullptr when valid, else a static reason.
const char* unpool_shape(const Node& node, const int64_t* x, size_t rank, int64_t* y) {
  if (rank < 3 || rank > kMaxRank) return "X must be [N, C, spatial...]";
  const size_t sp = rank - 2;
  int64_t k[kMaxRank], s[kMaxRank], pads[2 * kMaxRank];
  if (!node.attr("kernel_shape") || !read_ints(node, "kernel_shape", sp, 1, 1, k) || !read_ints(node, "strides", sp, 1, 1, s) ||
      !read_ints(node, "pads", 2 * sp, 0, 0, pads))
    return "kernel_shape (required) and strides must have one value >= 1 per spatial axis, pads two values >= 0";
  y[0] = x[0];
  y[1] = x[1];
  for (size_t i = 0; i < sp; ++i) {
    int64_t full;
    if (!checked_mul(x[2 + i] - 1, s[i], &full) || full + k[i] > kMaxNumel || full + k[i] - pads[i] - pads[sp + i] < 1)
      return "a spatial axis gives no valid output size";
    y[2 + i] = full + k[i] - pads[i] - pads[sp + i];
  }
  return nullptr;
}

bool has_pads(const Node& node) {
  const Attribute* p = node.attr("pads");
  return p && std::any_of(p->ints.begin(), p->ints.end(), [](int64_t v) { return v != 0; });
}

// Y is zero but where I points: I (MaxPool's Indices) holds flat offsets into the unpooled shape
// (unpool_shape), and Y[I[j]] = X[j] in element order. output_shape (known at plan time) may
// enlarge that shape on any axis; the extra elements are zeros at the end of each axis.
Status infer_max_unpool(InferContext& ctx) {
  OM_TRY(require_dtype(ctx, 0, {DType::f32}));
  const ValueDesc* x = ctx.input(0);
  const ValueDesc* ind = ctx.input(1);
  if (!ind || ind->dtype != DType::i64 || ind->shape != x->shape)
    return ctx.error(ErrorKind::InvalidArgument, msg("I must be i64 with X's shape ", shape_str(x->shape)));
  std::vector<int64_t> y(x->shape.size());
  if (const char* why = unpool_shape(ctx.node, x->shape.data(), x->shape.size(), y.data()))
    return ctx.error(ErrorKind::InvalidArgument, msg(why, "; X is ", shape_str(x->shape)));
  if (ctx.input(2) && ctx.input(2)->numel() > 0) {
    std::vector<int64_t> want;
    OM_TRY(const_ints(ctx, 2, &want));
    bool covers = want.size() == y.size();
    for (size_t i = 0; covers && i < y.size(); ++i) covers = want[i] >= y[i];
    if (!covers)
      return ctx.error(ErrorKind::InvalidArgument, msg("output_shape ", shape_str(want), " must have rank ", y.size(),
                                                       " and cover the unpooled shape ", shape_str(y), " on every axis"));
    if (has_pads(ctx.node))
      return ctx.error(ErrorKind::Unsupported, "output_shape together with non-zero pads is not supported (ONNX ignores pads then, "
                                               "which leaves the frame of I undefined); drop one of them");
    y = std::move(want);
  }
  OM_TRY(check_shape(msg("MaxUnpool node '", ctx.node.name, "'"), y));
  ctx.set_output(0, DType::f32, std::move(y));
  return Status::ok();
}

// MaxUnpool's record: the unpooled shape. Work: one unit (I may point anywhere in Y).
struct UnpoolParams {
  int64_t u[kMaxRank] = {};
};

Status prepare_max_unpool(const InferContext& ctx, Prepared& out) {
  const ValueDesc& x = *ctx.input(0);
  unpool_shape(ctx.node, x.shape.data(), x.shape.size(), out.record<UnpoolParams>().u);
  return Status::ok();
}

Status max_unpool_kernel(const KernelContext& k) {
  const TensorArg& Y = k.out(0);
  const size_t rank = Y.rank;
  const int64_t* u = k.params<UnpoolParams>().u;  // the unpooled shape I indexes
  int64_t unpooled = 1;
  for (size_t i = 0; i < rank; ++i) unpooled *= u[i];  // <= Y.numel, checked when planning
  const bool same = std::equal(u, u + rank, Y.dims);
  const float* x = k.in(0).as<const float>();
  const int64_t* ind = k.in(1).as<const int64_t>();
  float* y = Y.as<float>();
  std::fill(y, y + Y.numel, 0.0f);
  for (int64_t j = 0; j < k.in(0).numel; ++j) {
    int64_t at = ind[j];
    if (at < 0 || at >= unpooled)
      return k.error(ErrorKind::InvalidArgument, msg("I[", j, "] = ", at, " is outside the ", unpooled,
                                                     " elements of the unpooled shape; I must be MaxPool's Indices"));
    if (!same) {  // the same coordinates in Y's larger frame
      int64_t off = 0, stride = 1;
      for (size_t d = rank; d-- > 0;) {
        off += (at % u[d]) * stride;
        at /= u[d];
        stride *= Y.dims[d];
      }
      at = off;
    }
    y[at] = x[j];
  }
  return Status::ok();
}

constexpr AttrSpec kMaxPoolAttrs[] = {{"auto_pad", AttrKind::String},        {"ceil_mode", AttrKind::Int},
                                      {"dilations", AttrKind::PositiveInts}, {"kernel_shape", AttrKind::PositiveInts},
                                      {"pads", AttrKind::Ints},              {"storage_order", AttrKind::Int},
                                      {"strides", AttrKind::PositiveInts}};
constexpr AttrSpec kAvgPoolAttrs[] = {{"auto_pad", AttrKind::String},         {"ceil_mode", AttrKind::Int},
                                      {"count_include_pad", AttrKind::Int},   {"dilations", AttrKind::PositiveInts},
                                      {"kernel_shape", AttrKind::PositiveInts}, {"pads", AttrKind::Ints},
                                      {"strides", AttrKind::PositiveInts}};
constexpr AttrSpec kMaxUnpoolAttrs[] = {{"kernel_shape", AttrKind::PositiveInts}, {"pads", AttrKind::Ints}, {"strides", AttrKind::PositiveInts}};

constexpr OpDef kOps[] = {
    op("MaxPool").upgrades_from(7).per_item(BatchRule::FirstOutput).inputs(1).attributes(kMaxPoolAttrs).shapes(infer_pool).prepared(prepare_pool).kernel(max_pool_kernel)
        .with_scratch(pool_scratch)
        .doc("f32 u8, 1-D, 2-D and 3-D (f32) spatial; auto_pad, pads, strides, dilations, ceil_mode; NaN propagates; Indices output (1-D and 2-D; storage_order 0 or 1; the first maximum)").with_flags(kOpF16InF32),
    op("AveragePool").upgrades_from(7).per_item(BatchRule::Items).inputs(1).attributes(kAvgPoolAttrs).shapes(infer_pool).prepared(prepare_pool).kernel(avg_pool_kernel)
        .with_scratch(pool_scratch)
        .doc("f32, 1-D, 2-D and 3-D spatial; count_include_pad, ceil_mode, dilations; window summed in (kh, kw) order, then divided; 3-D: the average over kd of those averages").with_flags(kOpF16InF32),
    op("MaxUnpool").since_opset(11).plan_time_inputs_mask(1u << 2).inputs(2, 3).attributes(kMaxUnpoolAttrs).shapes(infer_max_unpool)
        .prepared(prepare_max_unpool).kernel(max_unpool_kernel)
        .doc("f32, i64 indices (MaxPool's Indices) flat over the shape kernel_shape, strides and pads give, any spatial rank; output_shape known at plan time enlarges it with zeros at the axis ends; out of range is an error"),
    op("GlobalAveragePool").upgrades_from(1).per_item(BatchRule::Items).inputs(1).shapes(infer_global).prepared(prepare_global).kernel(global_avg_kernel)
        .doc("f32, any spatial rank; exact: fixed-order sum per plane, then one division").with_flags(kOpF16InF32),
    op("GlobalMaxPool").upgrades_from(1).per_item(BatchRule::Items).inputs(1).shapes(infer_global).prepared(prepare_global).kernel(global_max_kernel).doc("f32, any spatial rank; NaN propagates").with_flags(kOpF16InF32),
};

}  // namespace

}  // namespace om::graph::ops

// The family's operators, one symbol each (onemodel/op_list.h).
#define OM_POOL_OPS(X) X(MaxPool) X(AveragePool) X(MaxUnpool) X(GlobalAveragePool) X(GlobalMaxPool)
OM_OP_FAMILY_TABLE(pool, OM_POOL_OPS)
