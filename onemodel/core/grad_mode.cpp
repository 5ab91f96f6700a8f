#include "onemodel/kernels/sync.h"
#include "onemodel/core/grad_mode.h"

#include "onemodel/core/status.h"
#include "onemodel/core/trace_hook.h"

namespace om {
namespace {
OM_THREAD_LOCAL bool t_grad_enabled = true;
}

bool GradMode::is_enabled() { return t_grad_enabled; }
void GradMode::set_enabled(bool on) { t_grad_enabled = on; }

NoGradGuard::NoGradGuard() : previous_(t_grad_enabled) {
  if (detail::TraceHook* h = detail::trace_hook()) check(h->on_no_grad());
  t_grad_enabled = false;
}
NoGradGuard::~NoGradGuard() { t_grad_enabled = previous_; }

namespace detail {
InternalNoGrad::InternalNoGrad() : previous_(t_grad_enabled) { t_grad_enabled = false; }
InternalNoGrad::~InternalNoGrad() { t_grad_enabled = previous_; }
}  // namespace detail

}  // namespace om
