#include "onemodel/nn/layers.h"

#include <cmath>
#include <string>

#include "onemodel/core/status.h"
#include "onemodel/core/tensor_internal.h"
#include "onemodel/nn/init.h"

namespace om::nn {

Tensor uniform_init(const Shape& shape, double bound, Generator& gen) {
  Tensor t = empty(shape, DType::f32);
  float* p = detail::raw_as<float>(t);
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = float((2.0 * double(gen.uniform()) - 1.0) * bound);
  return t;
}

Linear::Linear(int64_t in_features, int64_t out_features, bool with_bias, Generator& gen)
    : Module("Linear"), in_features_(in_features), out_features_(out_features) {
  if (in_features <= 0 || out_features <= 0)
    raise(Status::error(ErrorKind::InvalidArgument, msg("om::nn::Linear: in_features ", in_features, " and out_features ", out_features,
                                                        " must be positive")));
  // Kaiming-uniform with a = sqrt(5): gain sqrt(2 / (1 + 5)), bound gain * sqrt(3 / fan_in).
  const double bound = 1.0 / std::sqrt(double(in_features));
  weight = register_parameter("weight", uniform_init({out_features, in_features}, bound, gen));
  if (with_bias) bias = register_parameter("bias", uniform_init({out_features}, bound, gen));
}

Tensor Linear::forward(const Tensor& x) {
  if (x.defined() && (x.dim() == 0 || x.shape().back() != in_features_))
    raise(Status::error(ErrorKind::ShapeMismatch,
                        msg("om::nn::Linear::forward (module ", display_name(), "): input ", x.to_string(), " must end in in_features = ", in_features_,
                            x.dim() == 0 ? std::string("; give it a feature axis (reshape to [1, n])")
                                         : msg("; its last axis is ", x.shape().back(), ": construct Linear(", x.shape().back(), ", ", out_features_,
                                               ") for this input, or flatten/reshape the input to end in ", in_features_))));
  return linear(x, weight, bias);
}

Sequential::Sequential() : Module("Sequential") {}
Sequential::Sequential(const std::vector<std::shared_ptr<Module>>& modules) : Module("Sequential") {
  for (const auto& m : modules) push_back(m);
}

void Sequential::push_back(std::shared_ptr<Module> module) {
  register_module(std::to_string(modules_.size()), module);
  modules_.push_back(std::move(module));
}

Tensor Sequential::forward(const Tensor& x) {
  Tensor y = x;
  for (const auto& m : modules_) y = (*m)(y);  // operator() pushes the child's path
  return y;
}

}  // namespace om::nn
