// Shape-level operators: Reshape, Flatten, Squeeze, Unsqueeze, Identity (aliases: the plan
// gives the output the input's bytes), Shape (always evaluated when the session plans),
// Constant, Expand and Transpose.
#include <cstring>

#include "onemodel/core/shape.h"
#include "onemodel/graph/ops/op_util.h"
#include "onemodel/graph/ops/strided_view.h"

namespace om::graph::ops {
namespace {

// The aliases' kernel, run only when the plan folds the node or cannot alias it. Work: the
// elements (prepare_elements).
Status copy_kernel(const KernelContext& k) {
  const size_t es = dtype_size(k.in(0).dtype), b = size_t(k.begin) * es, n = size_t(k.end - k.begin) * es;
  if (k.out(0).data != k.in(0).data)
    std::memcpy(static_cast<uint8_t*>(k.out(0).data) + b, static_cast<const uint8_t*>(k.in(0).data) + b, n);
  return Status::ok();
}

Status require_input(const InferContext& ctx, size_t i) {
  if (!ctx.input(i)) return ctx.error(ErrorKind::InvalidArgument, msg("input ", i, " is required"));
  return Status::ok();
}

Status infer_identity(InferContext& ctx) {
  OM_TRY(require_input(ctx, 0));
  ctx.set_output(0, ctx.input(0)->dtype, ctx.input(0)->shape);
  return Status::ok();
}

Status infer_reshape(InferContext& ctx) {
  OM_TRY(require_input(ctx, 0));
  std::vector<int64_t> target;
  OM_TRY(const_ints(ctx, 1, &target));
  const std::vector<int64_t>& in = ctx.input(0)->shape;
  const bool allowzero = ctx.node.attr_int("allowzero", 0) != 0;
  int64_t known = 1, infer_at = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t& d = target[i];
    if (d == 0 && !allowzero) {
      if (i >= in.size())
        return ctx.error(ErrorKind::ShapeMismatch, msg("shape ", shape_str(target), " copies axis ", i, " (a 0) but the input ",
                                                       shape_str(in), " has rank ", in.size()));
      d = in[i];
    }
    if (d == -1) {
      if (infer_at >= 0) return ctx.error(ErrorKind::InvalidArgument, msg("shape ", shape_str(target), " has more than one -1"));
      infer_at = int64_t(i);
      continue;
    }
    if (d < 0) return ctx.error(ErrorKind::InvalidArgument, msg("shape ", shape_str(target), " has a negative size ", d));
  }
  std::vector<int64_t> given;  // the sizes other than the -1, counted checked (core/shape.h)
  for (size_t i = 0; i < target.size(); ++i)
    if (int64_t(i) != infer_at) given.push_back(target[i]);
  if (!checked_numel(given, &known))
    return ctx.error(ErrorKind::InvalidArgument, msg("shape ", shape_str(target), " has more than 2^48 elements (docs/memory.md)"));
  const int64_t total = ctx.input(0)->numel();
  if (infer_at >= 0) {
    if (known == 0 || total % known != 0)
      return ctx.error(ErrorKind::ShapeMismatch, msg("cannot reshape ", shape_str(in), " (", total, " elements) to ", shape_str(target)));
    target[size_t(infer_at)] = total / known;
  } else if (known != total) {
    return ctx.error(ErrorKind::ShapeMismatch,
                     msg("cannot reshape ", shape_str(in), " (", total, " elements) to ", shape_str(target), " (", known, " elements)"));
  }
  ctx.set_output(0, ctx.input(0)->dtype, std::move(target));
  return Status::ok();
}

Status infer_flatten(InferContext& ctx) {
  OM_TRY(require_input(ctx, 0));
  const auto& in = ctx.input(0)->shape;
  int64_t axis = ctx.node.attr_int("axis", 1);
  const int64_t r = int64_t(in.size());
  if (axis < -r || axis > r) return ctx.error(ErrorKind::InvalidArgument, msg("axis ", axis, " is out of range for rank ", r));
  if (axis < 0) axis += r;
  int64_t a = 1, b = 1;
  for (int64_t i = 0; i < r; ++i) (i < axis ? a : b) *= in[size_t(i)];
  ctx.set_output(0, ctx.input(0)->dtype, {a, b});
  return Status::ok();
}

// Axes from input 1 when present, else the (pre-13) attribute.
Status axes_operand(const InferContext& ctx, std::vector<int64_t>* axes, bool* given) {
  if (ctx.input(1)) {
    OM_TRY(const_ints(ctx, 1, axes));
    *given = true;
  } else if (const Attribute* a = ctx.node.attr("axes")) {
    *axes = a->ints;
    *given = true;
  } else {
    *given = false;
  }
  return Status::ok();
}

Status infer_squeeze(InferContext& ctx) {
  OM_TRY(require_input(ctx, 0));
  const auto& in = ctx.input(0)->shape;
  std::vector<int64_t> axes;
  bool given;
  OM_TRY(axes_operand(ctx, &axes, &given));
  std::vector<bool> drop(in.size(), false);
  if (!given) {
    for (size_t i = 0; i < in.size(); ++i) drop[i] = in[i] == 1;
  } else {
    for (int64_t a : axes) {
      int64_t ax;
      if (!normalize_axis(a, int64_t(in.size()), &ax))
        return ctx.error(ErrorKind::InvalidArgument, msg("axis ", a, " is out of range for ", shape_str(in)));
      if (in[size_t(ax)] != 1)
        return ctx.error(ErrorKind::ShapeMismatch, msg("cannot squeeze axis ", a, " of ", shape_str(in), ": its size is not 1"));
      drop[size_t(ax)] = true;
    }
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < in.size(); ++i) if (!drop[i]) out.push_back(in[i]);
  ctx.set_output(0, ctx.input(0)->dtype, std::move(out));
  return Status::ok();
}

Status infer_unsqueeze(InferContext& ctx) {
  OM_TRY(require_input(ctx, 0));
  const auto& in = ctx.input(0)->shape;
  std::vector<int64_t> axes;
  bool given;
  OM_TRY(axes_operand(ctx, &axes, &given));
  if (!given) return ctx.error(ErrorKind::InvalidArgument, "axes are required");
  const int64_t r = int64_t(in.size() + axes.size());
  std::vector<bool> inserted(size_t(r), false);
  for (int64_t a : axes) {
    int64_t ax;
    if (!normalize_axis(a, r, &ax)) return ctx.error(ErrorKind::InvalidArgument, msg("axis ", a, " is out of range for output rank ", r));
    if (inserted[size_t(ax)]) return ctx.error(ErrorKind::InvalidArgument, msg("axis ", a, " appears twice"));
    inserted[size_t(ax)] = true;
  }
  std::vector<int64_t> out;
  size_t j = 0;
  for (int64_t i = 0; i < r; ++i) out.push_back(inserted[size_t(i)] ? 1 : in[j++]);
  ctx.set_output(0, ctx.input(0)->dtype, std::move(out));
  return Status::ok();
}

// ---- Shape ----

void shape_range(int64_t rank, const Node& node, int64_t* lo, int64_t* hi) {
  int64_t s = node.attr_int("start", 0), e = node.attr_int("end", rank);
  if (s < 0) s += rank;
  if (e < 0) e += rank;
  *lo = std::min(std::max<int64_t>(s, 0), rank);
  *hi = std::min(std::max<int64_t>(e, 0), rank);
  if (*hi < *lo) *hi = *lo;
}

Status infer_shape(InferContext& ctx) {
  OM_TRY(require_input(ctx, 0));
  int64_t lo, hi;
  shape_range(int64_t(ctx.input(0)->shape.size()), ctx.node, &lo, &hi);
  ctx.set_output(0, DType::i64, {hi - lo});
  return Status::ok();
}

// Shape's record: the first axis it reports. Work: the output elements (axes).
struct ShapeParams {
  int64_t lo = 0;
};

Status prepare_shape(const InferContext& ctx, Prepared& out) {
  int64_t lo, hi;
  shape_range(int64_t(ctx.input(0)->shape.size()), ctx.node, &lo, &hi);
  out.record<ShapeParams>().lo = lo;
  out.work = hi - lo;
  return Status::ok();
}

Status shape_kernel(const KernelContext& k) {
  const int64_t lo = k.params<ShapeParams>().lo;
  for (int64_t i = k.begin; i < k.end; ++i) k.out(0).as<int64_t>()[i] = k.in(0).dims[lo + i];
  return Status::ok();
}

// ---- Constant ----

Status infer_constant(InferContext& ctx) {
  const Node& n = ctx.node;
  if (const Attribute* a = n.attr("value")) {
    if (a->type != AttrType::Tensor || !a->t) return ctx.error(ErrorKind::Format, "attribute value must be a tensor");
    ctx.set_output(0, a->t->dtype, a->t->dims);
  } else if (n.attr("value_float")) {
    ctx.set_output(0, DType::f32, {});
  } else if (const Attribute* f = n.attr("value_floats")) {
    ctx.set_output(0, DType::f32, {int64_t(f->floats.size())});
  } else if (n.attr("value_int")) {
    ctx.set_output(0, DType::i64, {});
  } else if (const Attribute* i = n.attr("value_ints")) {
    ctx.set_output(0, DType::i64, {int64_t(i->ints.size())});
  } else {
    return ctx.error(ErrorKind::Unsupported, "needs one of value, value_float(s), value_int(s)");
  }
  return Status::ok();
}

// Constant's record: where the value's bytes are. Constant has no inputs, so it is always
// evaluated when planning (or folded by a pass) while its node is alive: the one record that
// points into the node, at the value it carries. Work: the output elements.
struct ConstantParams {
  const uint8_t* bytes = nullptr;
  size_t elem = 0;
};

Status prepare_constant(const InferContext& ctx, Prepared& out) {
  const Node& n = ctx.node;
  const ValueDesc& y = ctx.outputs[0];
  ConstantParams& p = out.record<ConstantParams>();
  p.elem = dtype_size(y.dtype);
  if (const Attribute* a = n.attr("value")) {
    if (a->t->nbytes != y.nbytes())
      return ctx.error(ErrorKind::Format, msg("tensor holds ", a->t->nbytes, " bytes, its shape needs ", y.nbytes()));
    p.bytes = a->t->bytes;
  } else if (const Attribute* f = n.attr("value_float")) {
    p.bytes = reinterpret_cast<const uint8_t*>(&f->f);
  } else if (const Attribute* fs = n.attr("value_floats")) {
    p.bytes = reinterpret_cast<const uint8_t*>(fs->floats.data());
  } else if (const Attribute* i = n.attr("value_int")) {
    p.bytes = reinterpret_cast<const uint8_t*>(&i->i);
  } else if (const Attribute* is = n.attr("value_ints")) {
    p.bytes = reinterpret_cast<const uint8_t*>(is->ints.data());
  }
  out.work = y.numel();
  return Status::ok();
}

Status constant_kernel(const KernelContext& k) {
  const ConstantParams& p = k.params<ConstantParams>();
  const size_t b = size_t(k.begin) * p.elem;
  std::memcpy(static_cast<uint8_t*>(k.out(0).data) + b, p.bytes + b, size_t(k.end - k.begin) * p.elem);
  return Status::ok();
}

// ---- Expand ----

Status infer_expand(InferContext& ctx) {
  OM_TRY(require_input(ctx, 0));
  std::vector<int64_t> target, out;
  OM_TRY(const_ints(ctx, 1, &target));
  for (int64_t d : target)
    if (d < 0) return ctx.error(ErrorKind::InvalidArgument, msg("shape ", shape_str(target), " has a negative size ", d));
  OM_TRY(broadcast_shapes(ctx, {&ctx.input(0)->shape, &target}, &out));
  ctx.set_output(0, ctx.input(0)->dtype, std::move(out));
  return Status::ok();
}

// Expand's record is the output's iterator over X (not over the shape operand). Work: the
// output elements.
Status prepare_expand(const InferContext& ctx, Prepared& out) {
  BroadcastIter& it = out.record<BroadcastParams>().it;
  it.init(ctx.outputs[0].shape, ctx.inputs.data(), 1);
  out.work = it.size();
  return Status::ok();
}

template <typename T>
void expand_typed(const KernelContext& k) {
  const BroadcastIter& it = k.params<BroadcastParams>().it;
  const T* x = k.in(0).as<const T>();
  T* y = k.out(0).as<T>();
  const int64_t sx = it.inner_step[1];
  it.for_each(k.begin, k.end, [&](const int64_t* off, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[off[0] + i] = x[off[1] + i * sx];
  });
}

Status expand_kernel(const KernelContext& k) {
  switch (dtype_size(k.in(0).dtype)) {
    case 1: expand_typed<uint8_t>(k); break;
    case 2: expand_typed<uint16_t>(k); break;
    case 4: expand_typed<uint32_t>(k); break;
    default: expand_typed<uint64_t>(k); break;
  }
  return Status::ok();
}

constexpr AttrSpec kReshapeAttrs[] = {{"allowzero", AttrKind::Int}};
constexpr AttrSpec kAxisAttrs[] = {{"axis", AttrKind::Int}};
constexpr AttrSpec kShapeAttrs[] = {{"start", AttrKind::Int}, {"end", AttrKind::Int}};
constexpr AttrSpec kConstantAttrs[] = {
    {"value", AttrKind::Tensor},      {"value_float", AttrKind::Float},   {"value_floats", AttrKind::Floats},
    {"value_int", AttrKind::Int},     {"value_ints", AttrKind::Ints},     {"value_string", AttrKind::String},
    {"value_strings", AttrKind::Strings}};

constexpr OpDef alias(const char* type, InferFn f) {
  return op(type).shapes(f).prepared(prepare_elements).kernel(copy_kernel).with_flags(kOpAlias).per_item(BatchRule::Items);
}

constexpr OpDef kOps[] = {
    alias("Identity", infer_identity).upgrades_from(1).inputs(1).doc("any dtype; aliases its input").with_flags(kOpF16InF32),
    alias("Reshape", infer_reshape).upgrades_from(5).plan_time_inputs_mask(1u << 1).inputs(2).attributes(kReshapeAttrs)
        .doc("any dtype; shape input known at plan time, 0 copies, one -1, allowzero; aliases its input").with_flags(kOpF16InF32),
    alias("Flatten", infer_flatten).upgrades_from(1).per_item(BatchRule::Axis, 1).inputs(1).attributes(kAxisAttrs).doc("any dtype, axis; aliases its input").with_flags(kOpF16InF32),
    alias("Squeeze", infer_squeeze).upgrades_from(1).plan_time_inputs_mask(1u << 1).attr_became_input("axes", 1, 13).inputs(1, 2).doc("any dtype; axes input or attribute; aliases").with_flags(kOpF16InF32),
    alias("Unsqueeze", infer_unsqueeze).upgrades_from(1).plan_time_inputs_mask(1u << 1).attr_became_input("axes", 1, 13).inputs(1, 2).doc("any dtype; axes input or attribute; aliases").with_flags(kOpF16InF32),
    op("Shape").upgrades_from(1).inputs(1).attributes(kShapeAttrs).shapes(infer_shape)
        .prepared(prepare_shape).kernel(shape_kernel).with_flags(kOpShapeOnly)
        .doc("start/end; always folded when planning"),
    op("Constant").upgrades_from(1).inputs(0).attributes(kConstantAttrs).shapes(infer_constant)
        .prepared(prepare_constant).kernel(constant_kernel)
        .doc("value, value_float(s), value_int(s); folded when planning"),
    op("Expand").upgrades_from(8).plan_time_inputs_mask(1u << 1).inputs(2).shapes(infer_expand)
        .prepared(prepare_expand).kernel(expand_kernel).doc("any dtype; shape input known at plan time").with_flags(kOpF16InF32),
};

}  // namespace

}  // namespace om::graph::ops

// The family's operators, one symbol each (onemodel/op_list.h).
#define OM_SHAPE_OPS(X) \
  X(Identity) X(Reshape) X(Flatten) X(Squeeze) X(Unsqueeze) X(Shape) X(Constant) X(Expand)
OM_OP_FAMILY_TABLE(shape, OM_SHAPE_OPS)
