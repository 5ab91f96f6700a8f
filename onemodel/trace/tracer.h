// The tracer: records one eager run and turns it into an ONNX-shaped graph (docs/tracing.md).
#pragma once
#include <cstdint>
#include <functional>
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

  // Verification (docs/tracing.md, "Verification"): when the tracer can re-run the model
  // (Module::trace always; Tracer::finish when given a re-run callable), each symbolic axis is
  // re-run at a second size, eagerly and in a Fast Session on the traced graph, and the outputs
  // compared (shapes exactly, values within verify_tolerance scaled). A mismatch is a
  // TraceException of kind SymbolicShape. It does not change the graph finish returns.
  bool verify = true;
  // Sizes to re-run at, by symbol name; symbols not listed get the smallest size above their
  // example size that is no static size of the trace and no other symbol's size.
  std::vector<std::pair<std::string, int64_t>> verify_sizes;
  double verify_tolerance = 1e-4;  // max |eager - graph| / max(1, max |eager|), f32 outputs
  uint64_t verify_seed = 20240613;  // random f32 inputs of the re-run
};

// Runs the model eagerly on inputs given in the order Tracer::input declared them, returning the
// outputs in the order given to finish.
using RerunFn = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs)>;

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
  // Names a weight for the active trace on this thread (its initializer keeps the name). Outside
  // a trace it does nothing, so model code that names its weights also runs eagerly.
  static void parameter(const std::string& name, const Tensor& tensor);
  // Ends the trace: prunes, names the outputs, checks captured constants, builds the graph.
  TracedModel finish(const std::vector<std::pair<std::string, Tensor>>& outputs);
  // The same, then verification (TracerOptions::verify) re-running the model with `verify_with`.
  TracedModel finish(const std::vector<std::pair<std::string, Tensor>>& outputs, const RerunFn& verify_with);

  bool active() const { return state_ != nullptr; }

 private:
  explicit Tracer(std::unique_ptr<trace::TraceState> state);
  // Ends the recording on this thread and builds the graph; `ended` keeps the state (for the
  // verification plan). Shared by both finish overloads.
  TracedModel end_recording(const std::vector<std::pair<std::string, Tensor>>& outputs, std::unique_ptr<trace::TraceState>* ended);
  std::unique_ptr<trace::TraceState> state_;
};

}  // namespace om
