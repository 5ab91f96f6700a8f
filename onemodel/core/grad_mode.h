// Grad mode: records are built only while it is enabled.
#pragma once

namespace om {

class GradMode {
 public:
  static bool is_enabled();
  static void set_enabled(bool on);
};

// Disables recording for its lifetime. Refused while tracing (NoGradInTrace): results computed
// inside would not be recorded and would be frozen into the graph as constants.
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

namespace detail {
// The library's own grad-off scope (backward pass, optimizers): not a user action, so the tracer
// is not consulted.
class InternalNoGrad {
 public:
  InternalNoGrad();
  ~InternalNoGrad();
  InternalNoGrad(const InternalNoGrad&) = delete;
  InternalNoGrad& operator=(const InternalNoGrad&) = delete;

 private:
  bool previous_;
};
}  // namespace detail

}  // namespace om
