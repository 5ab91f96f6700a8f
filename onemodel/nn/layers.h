// Layers: Linear, Sequential and the activations as modules (for Sequential).
#pragma once
#include <initializer_list>
#include <memory>
#include <vector>

#include "onemodel/nn/module.h"
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
  Sequential(std::initializer_list<std::shared_ptr<Module>> modules);
  explicit Sequential(const std::vector<std::shared_ptr<Module>>& modules);
  void push_back(std::shared_ptr<Module> module);
  Tensor forward(const Tensor& x) override;
  size_t size() const { return modules_.size(); }
  const std::shared_ptr<Module>& operator[](size_t i) const { return modules_.at(i); }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};

class ReLU : public Module {
 public:
  ReLU() : Module("ReLU") {}
  Tensor forward(const Tensor& x) override { return relu(x); }
};

class Tanh : public Module {
 public:
  Tanh() : Module("Tanh") {}
  Tensor forward(const Tensor& x) override { return om::tanh(x); }
};

class Sigmoid : public Module {
 public:
  Sigmoid() : Module("Sigmoid") {}
  Tensor forward(const Tensor& x) override { return sigmoid(x); }
};

class GELU : public Module {
 public:
  explicit GELU(GeluApproximate approximate = GeluApproximate::None) : Module("GELU"), approximate_(approximate) {}
  Tensor forward(const Tensor& x) override { return gelu(x, approximate_); }

 private:
  GeluApproximate approximate_;
};

}  // namespace om::nn
