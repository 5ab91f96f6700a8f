#include "onemodel/nn/module.h"

namespace om::nn {

TracedModel Module::trace(const Tensor& example, const std::vector<std::string>& axis_names, const std::string& input_name,
                          const std::string& output_name, const TracerOptions& options) {
  Tracer tracer = Tracer::begin(options);
  for (const auto& [path, tensor] : state_dict()) Tracer::parameter(path, tensor);
  Tensor x = tracer.input(input_name, example, axis_names);
  Tensor y = (*this)(x);
  return tracer.finish({{output_name, y}});
}

}  // namespace om::nn
