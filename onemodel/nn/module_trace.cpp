#include "onemodel/nn/module.h"

namespace om::nn {

// Traces forward() and, unless TracerOptions::verify is off, verifies every symbolic axis by
// re-running this module at a second size (docs/tracing.md, "Verification").
TracedModel Module::trace(const Tensor& example, const std::vector<std::string>& axis_names, const std::string& input_name,
                          const std::string& output_name, const TracerOptions& options) {
  Tracer tracer = Tracer::begin(options);
  for (const auto& [path, tensor] : state_dict()) Tracer::parameter(path, tensor);
  Tensor x = tracer.input(input_name, example, axis_names);
  Tensor y = (*this)(x);
  return tracer.finish({{output_name, y}}, [this](const std::vector<Tensor>& inputs) { return std::vector<Tensor>{(*this)(inputs[0])}; });
}

}  // namespace om::nn
