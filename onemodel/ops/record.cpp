#include "onemodel/ops/record.h"

#include "onemodel/core/grad_mode.h"
#include "onemodel/core/tensor_internal.h"
#include "onemodel/core/trace_hook.h"

namespace om {

Status record_op(OpId op, std::vector<Tensor> inputs, Tensor& output, OpAttrs attrs, Tensor saved) {
  if (attrs.index() != attrs_index(op))
    return Status::error(ErrorKind::Internal, msg(op_name(op), ": record built with the wrong attribute struct (ops.def names another)"));
  if (!GradMode::is_enabled()) return Status::ok();
  bool any = false;
  for (const Tensor& t : inputs) any = any || (t.defined() && t.requires_grad());
  detail::TraceHook* hook = detail::trace_hook();
  // While a trace records, an expand of constants that need no gradient (a buffer expanded to
  // the batch) is still shown to the tracer: its target size may be a symbol's (creation from
  // sizes, docs/tracing.md). No gradient record is attached.
  if (!any && !(hook && op == OpId::Expand)) return Status::ok();
  auto rec = std::make_shared<BackwardRecord>();
  rec->op = op;
  rec->inputs = std::move(inputs);
  rec->attrs = std::move(attrs);
  rec->saved = std::move(saved);
  rec->output_shape = output.shape();
  rec->output_dtype = output.dtype();
  detail::TensorImpl* out = output.impl();
  // The same impl may come back (contiguous of a contiguous tensor returns its input).
  for (const Tensor& t : rec->inputs)
    if (t.impl() == out) return Status::ok();
  if (any) {
    out->grad_fn = rec;
    out->requires_grad = true;
  }
  if (hook) OM_TRY(hook->on_record(*rec, *out));
  return Status::ok();
}

}  // namespace om
