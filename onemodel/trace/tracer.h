// The tracer: records one eager run and turns it into an ONNX-shaped graph (docs/tracing.md).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "onemodel/core/tensor.h"
#include "onemodel/graph/ir.h"
#include "onemodel/trace/traced_model.h"

namespace om {

struct TracerOptions {
  // Capacity of the fixed arena holding the trace's records (values, nodes, attributes,
  // symbolic extents). Raise it for very large models.
  size_t arena_bytes = size_t(4) << 20;
};

namespace trace {
class TraceState;
}

class Tracer {
 public:
  // Activates a recording on the calling thread; a second active tracer is InvalidUsage.
  static Tracer begin(const TracerOptions& options = {});
  Tracer(Tracer&&) noexcept;
  Tracer& operator=(Tracer&&) noexcept;
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;
  // Abandons the recording when finish() was not called (e.g. while an exception unwinds).
  ~Tracer();

  // Declares a graph input. `axis_names[k]` names a symbolic axis ("" = static); an empty list
  // makes every axis static. Returns the tensor to feed to the model (same values as `example`).
  Tensor input(const std::string& name, const Tensor& example, const std::vector<std::string>& axis_names = {});
  // Names a weight for the active trace on this thread (its initializer keeps the name).
  static void parameter(const std::string& name, const Tensor& tensor);
  // Ends the trace: prunes, names the outputs, checks captured constants, builds the graph.
  TracedModel finish(const std::vector<std::pair<std::string, Tensor>>& outputs);

  bool active() const { return state_ != nullptr; }

 private:
  explicit Tracer(std::unique_ptr<trace::TraceState> state);
  std::unique_ptr<trace::TraceState> state_;
};

}  // namespace om
