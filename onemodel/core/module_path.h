// The state-dict path of the module whose forward is running on this thread ("encoder.layers.1";
// "" outside any module, or in a root module). Module calls push their path in a RAII guard, so
// tracer and operator errors can say where in a model they happened.
#pragma once
#include <string>

namespace om::nn {

// The innermost running module's path on this thread ("" when none).
std::string current_module_path();

// Pushes `path` for its lifetime (strictly nested, like the calls it brackets).
class ModulePathGuard {
 public:
  explicit ModulePathGuard(std::string path);
  ~ModulePathGuard();
  ModulePathGuard(const ModulePathGuard&) = delete;
  ModulePathGuard& operator=(const ModulePathGuard&) = delete;
};

}  // namespace om::nn
