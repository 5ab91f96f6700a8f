// Creation family: Range (unchanged since opset 11) and ConstantOfShape (opset 9 on; opset 20
// only added dtypes onemodel lacks). Their output shapes depend on the input values, so they
// must be known when the session plans (constants or computed from `Shape`, as the
// tracer writes them for creation from sizes, docs/tracing.md); plan-time evaluation then folds
// the node once per input-shape signature. output[i] = start + i * delta (one rounding for the
// product, one for the sum), the same in both modes.
#include <cmath>
#include <cstring>
#include <type_traits>

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
  double count = std::max(0.0, std::ceil((limit - start) / delta));
  if (in[0]->dtype != DType::f32) {
    // Integers: the count in exact integer arithmetic (a double rounds starts and limits beyond
    // 2^53, and the count with them). |limit - start| and |delta| of any two int64 values fit in
    // 64 unsigned bits (32-bit targets have no 128-bit type).
    const auto as_int = [](const ValueDesc& v) -> int64_t {
      return v.dtype == DType::i64 ? *static_cast<const int64_t*>(v.data) : *static_cast<const int32_t*>(v.data);
    };
    const int64_t s = as_int(*in[0]), l = as_int(*in[1]), d = as_int(*in[2]);
    const bool up = l > s;
    const uint64_t span = up ? uint64_t(l) - uint64_t(s) : uint64_t(s) - uint64_t(l);
    const uint64_t step = d > 0 ? uint64_t(d) : uint64_t(0) - uint64_t(d);
    const uint64_t n = l == s || up != (d > 0) ? 0 : span / step + (span % step != 0 ? 1 : 0);
    count = n > uint64_t(kMaxNumel) ? double(kMaxNumel) * 2.0 : double(n);
  }
  if (!(count <= double(kMaxNumel)))
    return ctx.error(ErrorKind::InvalidArgument, msg("start ", start, ", limit ", limit, ", delta ", delta, " give too many elements"));
  ctx.set_output(0, in[0]->dtype, {int64_t(count)});
  return Status::ok();
}

// start + i * delta. Integers are computed modulo 2^bits (unsigned arithmetic): every value of
// a Range lies between start and limit, so each wrapped result is the exact one, while the
// intermediate i * delta alone may exceed the type (start = INT64_MIN, delta = 2^62).
template <typename T>
void fill_range(const KernelContext& k) {
  const T start = *k.in(0).as<const T>(), delta = *k.in(2).as<const T>();
  T* y = k.out(0).as<T>();
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    for (int64_t i = k.begin; i < k.end; ++i) y[i] = T(U(U(start) + U(U(i) * U(delta))));
  } else {
    for (int64_t i = k.begin; i < k.end; ++i) y[i] = start + T(i) * delta;
  }
}

// Work: the output elements (prepare_elements).
Status range_kernel(const KernelContext& k) {
  switch (k.in(0).dtype) {
    case DType::f32: fill_range<float>(k); break;
    case DType::i64: fill_range<int64_t>(k); break;
    default: fill_range<int32_t>(k); break;
  }
  return Status::ok();
}

// ---- ConstantOfShape ----

// The fill value: attribute `value`, a one-element tensor whose dtype is the output's; without
// it, an f32 0.
Status fill_value(const InferContext& ctx, const TensorData** t) {
  *t = nullptr;
  const Attribute* a = ctx.node.attr("value");
  if (!a) return Status::ok();
  if (a->type != AttrType::Tensor || !a->t) return ctx.error(ErrorKind::Format, "attribute value must be a tensor");
  if (a->t->numel() != 1 || a->t->nbytes != dtype_size(a->t->dtype))
    return ctx.error(ErrorKind::InvalidArgument, msg("attribute value must hold exactly one element, it has shape ", shape_str(a->t->dims),
                                                     "; give the fill value as a one-element tensor"));
  *t = a->t.get();
  return Status::ok();
}

Status infer_constant_of_shape(InferContext& ctx) {
  const ValueDesc* s = ctx.input(0);
  if (!s || s->shape.size() != 1)
    return ctx.error(ErrorKind::ShapeMismatch, msg("input 0 (the output shape) must be 1-D, got ", s ? shape_str(s->shape) : "nothing"));
  std::vector<int64_t> shape;
  OM_TRY(const_ints(ctx, 0, &shape));
  for (int64_t d : shape)
    if (d < 0) return ctx.error(ErrorKind::InvalidArgument, msg("the output shape ", shape_str(shape), " has a negative size"));
  const TensorData* t;
  OM_TRY(fill_value(ctx, &t));
  ctx.set_output(0, t ? t->dtype : DType::f32, std::move(shape));
  return Status::ok();
}

// ConstantOfShape's record: the fill value's bytes. Work: the output elements.
struct FillParams {
  uint8_t value[8] = {};
  bool given = false;  // false: the default f32 0
};

Status prepare_constant_of_shape(const InferContext& ctx, Prepared& out) {
  const TensorData* t;
  OM_TRY(fill_value(ctx, &t));
  FillParams& p = out.record<FillParams>();
  if (t) {
    std::memcpy(p.value, t->bytes, t->nbytes);  // one element: at most 8 bytes
    p.given = true;
  }
  out.work = ctx.outputs[0].numel();
  return Status::ok();
}

// Repeats the value's bytes (a copy, so exact in both modes and for every dtype).
Status constant_of_shape_kernel(const KernelContext& k) {
  const FillParams& p = k.params<FillParams>();
  const size_t es = dtype_size(k.out(0).dtype);
  uint8_t* y = k.out(0).as<uint8_t>();
  if (!p.given) {  // f32 0
    std::memset(y + size_t(k.begin) * es, 0, size_t(k.end - k.begin) * es);
    return Status::ok();
  }
  for (int64_t i = k.begin; i < k.end; ++i) std::memcpy(y + size_t(i) * es, p.value, es);
  return Status::ok();
}

constexpr AttrSpec kConstantOfShapeAttrs[] = {{"value", AttrKind::Tensor}};

constexpr OpDef kOps[] = {
    op("Range").upgrades_from(11).plan_time_inputs_mask(0x7u).inputs(3).shapes(infer_range)
        .prepared(prepare_elements).kernel(range_kernel)
        .doc("f32 i64 i32 scalars known at plan time; start + i * delta"),
    op("ConstantOfShape").since_opset(9).plan_time_inputs_mask(1u << 0).inputs(1).attributes(kConstantOfShapeAttrs)
        .shapes(infer_constant_of_shape).prepared(prepare_constant_of_shape).kernel(constant_of_shape_kernel)
        .doc("i64 shape known at plan time; value: a one-element tensor of any onemodel dtype (default f32 0)"),
};

}  // namespace

}  // namespace om::graph::ops

// The family's operators, one symbol each (onemodel/op_list.h).
#define OM_CREATION_OPS(X) X(Range) X(ConstantOfShape)
OM_OP_FAMILY_TABLE(creation, OM_CREATION_OPS)
