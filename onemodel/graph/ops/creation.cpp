// Creation family: Range (unchanged since opset 11). Its output length depends on the input values,
// so they must be known when the session plans (constants or computed from `Shape`, as the
// tracer writes them for creation from sizes, docs/tracing.md); plan-time evaluation then folds
// the node once per input-shape signature. output[i] = start + i * delta (one rounding for the
// product, one for the sum), the same in both modes.
#include <cmath>

#include "onemodel/graph/ops/op_util.h"

namespace om::graph::ops {
namespace {

double scalar_of(const ValueDesc& v) {
  switch (v.dtype) {
    case DType::f32: return double(*static_cast<const float*>(v.data));
    case DType::i64: return double(*static_cast<const int64_t*>(v.data));
    default: return double(*static_cast<const int32_t*>(v.data));
  }
}

Status infer_range(InferContext& ctx) {
  const ValueDesc* in[3] = {ctx.input(0), ctx.input(1), ctx.input(2)};
  for (int i = 0; i < 3; ++i) {
    if (!in[i] || in[i]->numel() != 1 || !(in[i]->shape.empty() || in[i]->shape.size() == 1))
      return ctx.error(ErrorKind::ShapeMismatch, "start, limit and delta must be scalars");
    if (in[i]->dtype != in[0]->dtype || (in[i]->dtype != DType::f32 && in[i]->dtype != DType::i64 && in[i]->dtype != DType::i32))
      return ctx.error(ErrorKind::DTypeMismatch, msg("start, limit and delta must share one dtype of f32, i64, i32; got ",
                                                     dtype_name(in[i]->dtype)));
    if (!in[i]->data)
      return ctx.error(ErrorKind::Unsupported, "start, limit and delta must be known when the session plans (constants or "
                                               "computed from Shape)");
  }
  const double start = scalar_of(*in[0]), limit = scalar_of(*in[1]), delta = scalar_of(*in[2]);
  if (delta == 0) return ctx.error(ErrorKind::InvalidArgument, "delta is 0");
  const double count = std::max(0.0, std::ceil((limit - start) / delta));
  if (!(count <= double(kMaxNumel)))
    return ctx.error(ErrorKind::InvalidArgument, msg("start ", start, ", limit ", limit, ", delta ", delta, " give too many elements"));
  ctx.set_output(0, in[0]->dtype, {int64_t(count)});
  return Status::ok();
}

template <typename T>
void fill_range(const KernelContext& k) {
  const T start = *k.in(0).as<const T>(), delta = *k.in(2).as<const T>();
  T* y = k.out(0).as<T>();
  for (int64_t i = 0; i < k.out(0).numel; ++i) y[i] = start + T(i) * delta;
}

Status range_kernel(const KernelContext& k) {
  switch (k.in(0).dtype) {
    case DType::f32: fill_range<float>(k); break;
    case DType::i64: fill_range<int64_t>(k); break;
    default: fill_range<int32_t>(k); break;
  }
  return Status::ok();
}

constexpr OpDef kOps[] = {
    op("Range").upgrades_from(11).plan_time_inputs_mask(0x7u).inputs(3).shapes(infer_range).kernel(range_kernel)
        .doc("f32 i64 i32 scalars known at plan time; start + i * delta"),
};

}  // namespace

OpTable creation_ops() { return table_of(kOps); }

}  // namespace om::graph::ops
