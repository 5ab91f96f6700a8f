// Layers: Linear, Sequential and the activations as modules (for Sequential).
#pragma once
#include <type_traits>
#include <memory>
#include <vector>

#include "onemodel/nn/module.h"
#include "onemodel/ops/activation_extra.h"
#include "onemodel/ops/ops.h"

namespace om::nn {

// y = x W^T + b. weight [out_features, in_features], bias [out_features]; both initialised as
// PyTorch does (Kaiming-uniform with a = sqrt(5), i.e. U(-1/sqrt(in), 1/sqrt(in))), drawn from
// `gen` so a seed fixes the model.
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true, Generator& gen = default_generator());
  Tensor forward(const Tensor& x) override;
  int64_t in_features() const { return in_features_; }
  int64_t out_features() const { return out_features_; }

  Tensor weight;
  Tensor bias;  // undefined without bias

 private:
  int64_t in_features_, out_features_;
};

// Runs its children in order; child i is registered as "i" (state-dict paths "0.weight", ...).
class Sequential : public Module {
 public:
  Sequential();
  // From modules directly, as libtorch's: Sequential(make_shared<Linear>(4, 16), make_shared<ReLU>()).
  // C++ evaluates function arguments in an unspecified order (GCC: right to left), so when the
  // layers draw from one Generator, pass a braced vector instead (evaluated left to right) or
  // create them in statements: the same seed then gives the same model on every compiler.
  template <typename... Ms, typename = std::enable_if_t<(sizeof...(Ms) > 0) && (std::is_base_of_v<Module, Ms> && ...)>>
  explicit Sequential(std::shared_ptr<Ms>... modules) : Sequential() {
    (push_back(std::move(modules)), ...);
  }
  explicit Sequential(const std::vector<std::shared_ptr<Module>>& modules);
  void push_back(std::shared_ptr<Module> module);
  Tensor forward(const Tensor& x) override;
  size_t size() const { return modules_.size(); }
  const std::shared_ptr<Module>& operator[](size_t i) const { return modules_.at(i); }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};

// A module that applies one parameterless function (the activations below, for Sequential).
class UnaryActivation : public Module {
 public:
  UnaryActivation(const char* type_name, Tensor (*fn)(const Tensor&)) : Module(type_name), fn_(fn) {}
  Tensor forward(const Tensor& x) override { return fn_(x); }

 private:
  Tensor (*fn_)(const Tensor&);
};

class ReLU : public UnaryActivation {
 public:
  ReLU() : UnaryActivation("ReLU", relu) {}
};

class Tanh : public UnaryActivation {
 public:
  Tanh() : UnaryActivation("Tanh", om::tanh) {}
};

class Sigmoid : public UnaryActivation {
 public:
  Sigmoid() : UnaryActivation("Sigmoid", sigmoid) {}
};

class ReLU6 : public UnaryActivation {
 public:
  ReLU6() : UnaryActivation("ReLU6", relu6) {}
};

class Hardtanh : public Module {
 public:
  explicit Hardtanh(double min_val = -1.0, double max_val = 1.0) : Module("Hardtanh"), min_(min_val), max_(max_val) {
    if (!(min_val < max_val))
      raise(Status::error(ErrorKind::InvalidArgument, msg("om::nn::Hardtanh: min_val ", min_val, " must be below max_val ", max_val)));
  }
  Tensor forward(const Tensor& x) override { return hardtanh(x, min_, max_); }

 private:
  double min_, max_;
};

class Hardswish : public UnaryActivation {
 public:
  Hardswish() : UnaryActivation("Hardswish", hardswish) {}
};

class SiLU : public UnaryActivation {
 public:
  SiLU() : UnaryActivation("SiLU", silu) {}
};

class Mish : public UnaryActivation {
 public:
  Mish() : UnaryActivation("Mish", mish) {}
};

class GELU : public Module {
 public:
  explicit GELU(GeluApproximate approximate = GeluApproximate::None) : Module("GELU"), approximate_(approximate) {}
  Tensor forward(const Tensor& x) override { return gelu(x, approximate_); }

 private:
  GeluApproximate approximate_;
};

}  // namespace om::nn
