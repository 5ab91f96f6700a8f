#include "onemodel/kernels/sync.h"
#include "onemodel/core/trace_hook.h"

namespace om::detail {
namespace {
OM_THREAD_LOCAL TraceHook* t_hook = nullptr;
}
TraceHook* trace_hook() { return t_hook; }
void set_trace_hook(TraceHook* hook) { t_hook = hook; }
}  // namespace om::detail
