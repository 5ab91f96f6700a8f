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

TracedModel Module::trace(const std::vector<TraceInput>& inputs, const TraceForward& forward, const std::vector<std::string>& output_names,
                          const TracerOptions& options) {
  const char* call = "om::nn::Module::trace";
  if (inputs.empty()) raise(Status::trace(TraceErrorKind::InvalidUsage, msg(call, " (module ", display_name(), "): no inputs were given")));
  if (!forward) raise(Status::trace(TraceErrorKind::InvalidUsage, msg(call, " (module ", display_name(), "): the forward callable is empty")));
  // The module's path is pushed around every call, as operator() does for forward(x).
  TraceForward run = [this, forward](const std::vector<Tensor>& xs) {
    ModuleCallGuard guard(*this);
    return forward(xs);
  };
  Tracer tracer = Tracer::begin(options);
  for (const auto& [path, tensor] : state_dict()) Tracer::parameter(path, tensor);
  std::vector<Tensor> xs;
  for (const TraceInput& in : inputs) xs.push_back(tracer.input(in.name, in.example, in.axis_names));
  const std::vector<Tensor> ys = run(xs);
  std::vector<std::string> names = output_names;
  if (names.empty()) {
    if (ys.size() == 1) names.push_back("output");
    else
      for (size_t k = 0; k < ys.size(); ++k) names.push_back(msg("output_", k));
  }
  if (names.size() != ys.size())
    raise(Status::trace(TraceErrorKind::InvalidUsage, msg(call, " (module ", display_name(), "): forward returned ", ys.size(), " outputs but ",
                                                          names.size(), " output names were given")));
  std::vector<std::pair<std::string, Tensor>> outs;
  for (size_t k = 0; k < ys.size(); ++k) outs.push_back({names[k], ys[k]});
  return tracer.finish(outs, run);
}

}  // namespace om::nn
