// The recording seam between the eager layer and the tracer. The eager layer consults a
// thread-local hook where operators build their records and where user code reads or writes
// tensor data; onemodel/trace installs the hook. The eager layer never depends on the tracer.
#pragma once
#include "onemodel/core/status.h"

namespace om {
struct BackwardRecord;
namespace detail {
struct TensorImpl;

// What a creation from sizes made (on_create).
enum class CreateKind { Full, Range, Eye };

class TraceHook {
 public:
  virtual ~TraceHook() = default;
  // True when `t` depends on a trace input (it then reports requires_grad()).
  virtual bool is_traced(const TensorImpl& t) const = 0;
  // Called after an operator with at least one input requiring gradients built its record
  // (and for an expand of inputs that need none: its target size may be a symbol's).
  virtual Status on_record(const BackwardRecord& record, TensorImpl& output) = 0;
  // User code reads or writes tensor data (`call` names the API, e.g. "om::Tensor::to_vector").
  virtual Status on_user_read(const TensorImpl& t, const char* call) = 0;
  virtual Status on_user_write(const TensorImpl& t, const char* call) = 0;
  // A NoGradGuard is being entered.
  virtual Status on_no_grad() = 0;
  // A tensor that aliases a traced one (contiguous, clone, same-shape reshape) shares its value.
  virtual void on_alias(const TensorImpl& source, TensorImpl& alias) = 0;
  // om::full / zeros / ones / empty (a = the value), om::arange (a = start, b = step) or om::eye
  // created `t`; the tracer records it when a size equals a symbol's example size.
  virtual Status on_create(TensorImpl& t, CreateKind kind, double a, double b) {
    (void)t; (void)kind; (void)a; (void)b;
    return Status::ok();
  }
};

TraceHook* trace_hook();
void set_trace_hook(TraceHook* hook);

}  // namespace detail
}  // namespace om
