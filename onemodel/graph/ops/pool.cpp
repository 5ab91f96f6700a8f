// Pools and inference batch normalisation over NCHW f32 tensors: MaxPool (dilations,
// ceil_mode; the Indices output is refused), AveragePool (count_include_pad, ceil_mode,
// dilations), GlobalAveragePool, GlobalMaxPool, BatchNormalization (inference form). The window
// kernels are kernels::f32_max_pool2d / f32_avg_pool2d, shared with the eager pools; their
// order is fixed, so both modes give the same bits on every ISA (docs/exactness.md).
#include <algorithm>
#include <cmath>

#include "onemodel/graph/ops/conv_geom.h"
#include "onemodel/graph/ops/op_util.h"

namespace om::graph::ops {
namespace {

Status require_f32_in(const InferContext& ctx, size_t i) {
  const ValueDesc* v = ctx.input(i);
  if (!v) return ctx.error(ErrorKind::InvalidArgument, msg("input ", i, " is required"));
  if (v->dtype != DType::f32)
    return ctx.error(ErrorKind::DTypeMismatch, msg("input ", i, " ('", ctx.node.inputs[i], "') must be f32, got ", dtype_name(v->dtype)));
  return Status::ok();
}

Status refuse_extra_outputs(const InferContext& ctx, const char* what) {
  for (size_t i = 1; i < ctx.node.outputs.size(); ++i)
    if (!ctx.node.outputs[i].empty())
      return ctx.error(ErrorKind::Unsupported, msg("the optional output ", i, " ('", ctx.node.outputs[i], "', ", what,
                                                   ") is not supported; remove it from the node"));
  return Status::ok();
}

Status infer_pool(InferContext& ctx) {
  OM_TRY(require_f32_in(ctx, 0));
  if (ctx.node.op_type == "MaxPool") {
    OM_TRY(refuse_extra_outputs(ctx, "Indices"));
    if (attr_int(ctx.node, "storage_order", 0) != 0)
      return ctx.error(ErrorKind::Unsupported, "storage_order 1 only affects Indices, which is not supported");
  }
  const auto& x = ctx.input(0)->shape;
  SpatialGeom sg;
  if (const char* why = spatial_geom(ctx.node, GeomKind::Pool, x.data(), x.size(), nullptr, 0, &sg))
    return ctx.error(ErrorKind::ShapeMismatch, geom_error_text(ctx.node, why, x, nullptr));
  std::vector<int64_t> y{sg.g.N, sg.g.C};
  if (sg.spatial == 2) y.push_back(sg.g.OH);
  y.push_back(sg.g.OW);
  ctx.set_output(0, DType::f32, std::move(y));
  return Status::ok();
}

SpatialGeom pool_geom(const KernelContext& k) {
  SpatialGeom sg;
  spatial_geom(*k.node, GeomKind::Pool, k.in(0).dims, k.in(0).rank, nullptr, 0, &sg);
  return sg;
}

Status max_pool_kernel(const KernelContext& k) {
  const SpatialGeom sg = pool_geom(k);
  kernels::f32_max_pool2d(sg.g, k.in(0).as<const float>(), k.out(0).as<float>(), nullptr);
  return Status::ok();
}

Status avg_pool_kernel(const KernelContext& k) {
  const SpatialGeom sg = pool_geom(k);
  const bool include = attr_int(*k.node, "count_include_pad", 0) != 0;
  kernels::f32_avg_pool2d(sg.g, sg.pad_b, sg.pad_r, include, k.in(0).as<const float>(), k.out(0).as<float>());
  return Status::ok();
}

Status infer_global(InferContext& ctx) {
  OM_TRY(require_f32_in(ctx, 0));
  const auto& x = ctx.input(0)->shape;
  if (x.size() < 3) return ctx.error(ErrorKind::ShapeMismatch, msg("the input must be [N, C, spatial...], got ", shape_str(x)));
  std::vector<int64_t> y(x.size(), 1);
  y[0] = x[0];
  y[1] = x[1];
  ctx.set_output(0, DType::f32, std::move(y));
  return Status::ok();
}

// Exact: the library's fixed-order sum of each plane, then one division by its size.
Status global_avg_kernel(const KernelContext& k) {
  const TensorArg& X = k.in(0);
  const int64_t planes = X.dims[0] * X.dims[1];
  const int64_t n = planes == 0 ? 0 : X.numel / planes;
  const float* x = X.as<const float>();
  float* y = k.out(0).as<float>();
  for (int64_t p = 0; p < planes; ++p) y[p] = kernels::f32_sum(x + p * n, size_t(n), k.mode) / float(n);
  return Status::ok();
}

Status global_max_kernel(const KernelContext& k) {
  const TensorArg& X = k.in(0);
  const int64_t planes = X.dims[0] * X.dims[1];
  const int64_t n = planes == 0 ? 0 : X.numel / planes;
  const float* x = X.as<const float>();
  float* y = k.out(0).as<float>();
  for (int64_t p = 0; p < planes; ++p) y[p] = kernels::f32_max(x + p * n, size_t(n));
  return Status::ok();
}

// ---- BatchNormalization (inference) ----

Status infer_batch_norm(InferContext& ctx) {
  for (size_t i = 0; i < 5; ++i) OM_TRY(require_f32_in(ctx, i));
  OM_TRY(refuse_extra_outputs(ctx, "training statistics"));
  if (attr_int(ctx.node, "training_mode", 0) != 0)
    return ctx.error(ErrorKind::Unsupported, "training_mode 1 is not supported (inference form only); export the model in evaluation mode");
  const auto& x = ctx.input(0)->shape;
  if (x.size() < 2) return ctx.error(ErrorKind::ShapeMismatch, msg("the input must be [N, C, ...], got ", shape_str(x)));
  static const char* names[] = {"X", "scale", "B", "input_mean", "input_var"};
  for (size_t i = 1; i < 5; ++i) {
    const auto& s = ctx.input(i)->shape;
    if (s.size() != 1 || s[0] != x[1])
      return ctx.error(ErrorKind::ShapeMismatch, msg(names[i], " must be [", x[1], "] (the channels of X ", shape_str(x), "), got ", shape_str(s)));
  }
  ctx.set_output(0, DType::f32, x);
  return Status::ok();
}

Status batch_norm_kernel(const KernelContext& k) {
  const TensorArg& X = k.in(0);
  const int64_t N = X.dims[0], C = X.dims[1];
  const int64_t inner = N * C == 0 ? 0 : X.numel / (N * C);
  kernels::f32_batch_norm_inference(X.as<const float>(), k.in(1).as<const float>(), k.in(2).as<const float>(),
                                    k.in(3).as<const float>(), k.in(4).as<const float>(), attr_float(*k.node, "epsilon", 1e-5f),
                                    N, C, inner, k.out(0).as<float>());
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
constexpr AttrSpec kBatchNormAttrs[] = {{"epsilon", AttrKind::Float}, {"momentum", AttrKind::Float}, {"training_mode", AttrKind::Int}};

constexpr OpDef kOps[] = {
    op("MaxPool").upgrades_from(7).inputs(1).attributes(kMaxPoolAttrs).shapes(infer_pool).kernel(max_pool_kernel)
        .doc("f32, 1-D and 2-D spatial; auto_pad, pads, strides, dilations, ceil_mode; NaN propagates; the Indices output is refused"),
    op("AveragePool").upgrades_from(7).inputs(1).attributes(kAvgPoolAttrs).shapes(infer_pool).kernel(avg_pool_kernel)
        .doc("f32, 1-D and 2-D spatial; count_include_pad, ceil_mode, dilations; window summed in (kh, kw) order, then divided"),
    op("GlobalAveragePool").upgrades_from(1).inputs(1).shapes(infer_global).kernel(global_avg_kernel)
        .doc("f32, any spatial rank; exact: fixed-order sum per plane, then one division"),
    op("GlobalMaxPool").upgrades_from(1).inputs(1).shapes(infer_global).kernel(global_max_kernel).doc("f32, any spatial rank; NaN propagates"),
    op("BatchNormalization").upgrades_from(9).inputs(5).attributes(kBatchNormAttrs).shapes(infer_batch_norm).kernel(batch_norm_kernel)
        .doc("f32, inference form: (x - mean) * (scale / sqrt(var + epsilon)) + B, one rounding per operation; training_mode refused"),
};

}  // namespace

OpTable pool_ops() { return table_of(kOps); }

}  // namespace om::graph::ops
