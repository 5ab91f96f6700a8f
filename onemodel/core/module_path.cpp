#include "onemodel/kernels/sync.h"
#include "onemodel/core/module_path.h"

#include <utility>
#include <vector>

namespace om::nn {
namespace {
OM_THREAD_LOCAL std::vector<std::string> t_paths;
}

std::string current_module_path() { return t_paths.empty() ? std::string() : t_paths.back(); }

ModulePathGuard::ModulePathGuard(std::string path) { t_paths.push_back(std::move(path)); }
ModulePathGuard::~ModulePathGuard() {
  if (!t_paths.empty()) t_paths.pop_back();
}

}  // namespace om::nn
