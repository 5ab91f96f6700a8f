#include "onemodel/kernels/sync.h"
#include "onemodel/core/mode.h"

namespace om {
namespace {
OM_THREAD_LOCAL ArithmeticMode t_mode = ArithmeticMode::Fast;
}
ArithmeticMode current_arithmetic_mode() { return t_mode; }
ArithmeticModeGuard::ArithmeticModeGuard(ArithmeticMode mode) : previous_(t_mode) { t_mode = mode; }
ArithmeticModeGuard::~ArithmeticModeGuard() { t_mode = previous_; }
}  // namespace om
