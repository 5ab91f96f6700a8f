// Creation from sizes (docs/tracing.md): om::full / zeros / ones / empty, om::eye and om::arange take plain
// integers, so like Reshape operands the tracer recovers their meaning from the example sizes.
// A size equal to exactly one symbol's example size (above 1), or to the product of exactly one
// pair of them (B*T), is recorded from `Shape` at run time: arange as Range(start, start + n * step, step), full as Expand of a scalar to a shape
// operand built like Reshape's, eye as EyeLike of such an Expand of zero. Otherwise the tensor stays a constant, as before.
// The same holds for `expand` of a constant (ViT's `cls_token.expand({B, -1, -1})`): a size-1
// axis expanded to a symbol's example size becomes an Expand whose shape operand reads that
// symbol's run-time size, so a later concatenation with traced tokens follows the batch.
#include <cstring>

#include "onemodel/core/tensor_internal.h"
#include "onemodel/trace/state.h"

namespace om::trace {

Result<ValueId> TraceState::scalar_constant(double v, DType dtype) {
  OM_ASSIGN_OR_RETURN(Tensor t, detail::make_tensor({}, dtype));
  if (dtype == DType::f32) *detail::raw_as<float>(t) = float(v);
  else if (dtype == DType::i64) *detail::raw_as<int64_t>(t) = int64_t(v);
  else *detail::raw_as<int32_t>(t) = int32_t(v);
  return capture_constant(t);
}

Status TraceState::on_create(detail::TensorImpl& t, detail::CreateKind kind, double a, double b) {
  if (t.dtype != DType::f32 && t.dtype != DType::i64 && t.dtype != DType::i32) return Status::ok();
  SymShape ext;
  bool symbolic = false;
  for (int64_t d : t.shape) {
    Extent e;
    if (extent_with_size(d, &e)) {
      ext.push_back(e);
      symbolic = true;
    } else {
      ext.push_back(Extent::fixed(d));
    }
  }
  if (!symbolic) return Status::ok();
  // arange's length must be one symbol (a Range up to its run-time size).
  if (kind == detail::CreateKind::Range && ext[0].atoms.size() != 1) return Status::ok();
  ValueId out;
  if (kind != detail::CreateKind::Range) {
    OM_ASSIGN_OR_RETURN(ValueId shape, shape_operand(ext, false));
    OM_ASSIGN_OR_RETURN(ValueId value, scalar_constant(a, t.dtype));
    OM_ASSIGN_OR_RETURN(out, emit("Expand", {value, shape}, {}, t.dtype, t.shape, ext));
    if (kind == detail::CreateKind::Eye) { OM_ASSIGN_OR_RETURN(out, emit("EyeLike", {out}, {}, t.dtype, t.shape, ext)); }
  } else {
    const uint32_t atom = ext[0].atoms[0];
    OM_ASSIGN_OR_RETURN(ValueId n1, atom_extent(atom));  // [1] i64
    OM_ASSIGN_OR_RETURN(ValueId axes, const_i64({0}));
    OM_ASSIGN_OR_RETURN(ValueId limit, emit("Squeeze", {n1, axes}, {}, DType::i64, {}, {}));
    if (t.dtype != DType::i64) {
      OM_ASSIGN_OR_RETURN(limit, emit("Cast", {limit}, {AttrSpec::of_int("to", int64_t(t.dtype))}, t.dtype, {}, {}));
    }
    OM_ASSIGN_OR_RETURN(ValueId start, scalar_constant(a, t.dtype));
    OM_ASSIGN_OR_RETURN(ValueId step, scalar_constant(b, t.dtype));
    if (b != 1) { OM_ASSIGN_OR_RETURN(limit, emit("Mul", {limit, step}, {}, t.dtype, {}, {})); }
    if (a != 0) { OM_ASSIGN_OR_RETURN(limit, emit("Add", {limit, start}, {}, t.dtype, {}, {})); }
    OM_ASSIGN_OR_RETURN(out, emit("Range", {start, limit, step}, {}, t.dtype, t.shape, ext));
  }
  t.trace_id = id_;
  t.trace_value = out;
  created_.insert(out);
  return Status::ok();
}

Status TraceState::expand_constant(const BackwardRecord& rec, detail::TensorImpl& output) {
  const Tensor& x = rec.inputs[0];
  const Shape& target = rec.output_shape;
  const size_t lead = target.size() - size_t(x.dim());
  bool symbolic = false;
  for (size_t k = 0; k < target.size() && !symbolic; ++k) {
    const bool expanded = k < lead || x.shape()[k - lead] == 1;
    Extent e;
    symbolic = expanded && extent_with_size(target[k], &e);
  }
  if (!symbolic) return Status::ok();
  OM_ASSIGN_OR_RETURN(ValueId in, capture_constant(x));
  OM_ASSIGN_OR_RETURN(ValueId out, lower(*this, rec, {in}));
  note_sizes(rec);
  output.trace_id = id_;
  output.trace_value = out;
  created_.insert(out);  // holds no input data: readable, like a creation from sizes
  return Status::ok();
}

}  // namespace om::trace
