// 1-D layers over [N, C, L] with PyTorch's parameters and defaults: Conv1d (weight
// [out, in/groups, k]), MaxPool1d, AvgPool1d. They run the 2-D operators on [N, C, 1, L] (a
// size-1 height), so gradients and kernels are those of conv2d and the pools; traced, each is
// one 1-D Conv / MaxPool / AveragePool node (onemodel/trace/lowering.cpp).
#pragma once
#include <cstdint>
#include <memory>

#include "onemodel/nn/module.h"
#include "onemodel/ops/conv_ops.h"

namespace om::nn {

class Conv1d : public Module {
 public:
  // Kaiming-uniform with a = sqrt(5) as PyTorch: U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = in/groups * k.
  Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride = 1, int64_t padding = 0, int64_t dilation = 1,
         int64_t groups = 1, bool bias = true, Generator& gen = default_generator());
  Tensor forward(const Tensor& x) override;
  Tensor weight;  // [out, in/groups, k]
  Tensor bias;    // undefined without bias

 private:
  int64_t in_channels_, stride_, padding_, dilation_, groups_;
};

class MaxPool1d : public Module {
 public:
  // stride 0 means the kernel size (PyTorch's default).
  explicit MaxPool1d(int64_t kernel_size, int64_t stride = 0, int64_t padding = 0, int64_t dilation = 1, bool ceil_mode = false);
  Tensor forward(const Tensor& x) override;

 private:
  int64_t kernel_, stride_, padding_, dilation_;
  bool ceil_mode_;
};

class AvgPool1d : public Module {
 public:
  explicit AvgPool1d(int64_t kernel_size, int64_t stride = 0, int64_t padding = 0, bool ceil_mode = false, bool count_include_pad = true);
  Tensor forward(const Tensor& x) override;

 private:
  int64_t kernel_, stride_, padding_;
  bool ceil_mode_, count_include_pad_;
};

}  // namespace om::nn
