// Convolutional layers with PyTorch's state-dict names and initialisation: Conv2d,
// ConvTranspose2d, BatchNorm2d (train()/eval() switch the statistics), MaxPool2d, AvgPool2d,
// AdaptiveAvgPool2d(1) / GlobalAvgPool2d, Upsample / Resize2d, Flatten.
#pragma once
#include "onemodel/nn/module.h"
#include "onemodel/ops/conv_ops.h"

namespace om::nn {

// weight [out, in/groups, kH, kW], bias [out]; Kaiming-uniform with a = sqrt(5) as PyTorch:
// U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in = in/groups * kH * kW, for both.
class Conv2d : public Module {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, Size2d kernel, Size2d stride = 1, Pad2d padding = 0, Size2d dilation = 1,
         int64_t groups = 1, bool bias = true, Generator& gen = default_generator());
  Tensor forward(const Tensor& x) override;
  Tensor weight;
  Tensor bias;  // undefined without bias

 private:
  int64_t in_channels_;
  Size2d stride_, dilation_;
  Pad2d padding_;
  int64_t groups_;
};

// weight [in, out/groups, kH, kW], bias [out]; fan_in = out/groups * kH * kW (PyTorch's).
class ConvTranspose2d : public Module {
 public:
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, Size2d kernel, Size2d stride = 1, Pad2d padding = 0,
                  Size2d output_padding = 0, int64_t groups = 1, bool bias = true, Size2d dilation = 1,
                  Generator& gen = default_generator());
  Tensor forward(const Tensor& x) override;
  Tensor weight;
  Tensor bias;

 private:
  int64_t in_channels_;
  Size2d stride_, output_padding_, dilation_;
  Pad2d padding_;
  int64_t groups_;
};

// weight (ones), bias (zeros), buffers running_mean (zeros), running_var (ones) and
// num_batches_tracked (i64 scalar). Training normalises with the batch statistics and updates
// the buffers; eval() uses the running statistics (and is what tracing requires).
class BatchNorm2d : public Module {
 public:
  explicit BatchNorm2d(int64_t num_features, double eps = 1e-5, double momentum = 0.1);
  Tensor forward(const Tensor& x) override;
  Tensor weight, bias, running_mean, running_var, num_batches_tracked;
  double eps() const { return eps_; }

 private:
  double eps_, momentum_;
};

class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(Size2d kernel, Size2d stride = 0, Pad2d padding = 0, Size2d dilation = 1, bool ceil_mode = false)
      : Module("MaxPool2d"), kernel_(kernel), stride_(stride), dilation_(dilation), padding_(padding), ceil_mode_(ceil_mode) {}
  Tensor forward(const Tensor& x) override { return max_pool2d(x, kernel_, stride_, padding_, dilation_, ceil_mode_); }

 private:
  Size2d kernel_, stride_, dilation_;
  Pad2d padding_;
  bool ceil_mode_;
};

class AvgPool2d : public Module {
 public:
  explicit AvgPool2d(Size2d kernel, Size2d stride = 0, Pad2d padding = 0, bool ceil_mode = false, bool count_include_pad = true)
      : Module("AvgPool2d"), kernel_(kernel), stride_(stride), padding_(padding), ceil_mode_(ceil_mode), count_include_pad_(count_include_pad) {}
  Tensor forward(const Tensor& x) override { return avg_pool2d(x, kernel_, stride_, padding_, ceil_mode_, count_include_pad_); }

 private:
  Size2d kernel_, stride_;
  Pad2d padding_;
  bool ceil_mode_, count_include_pad_;
};

// [N, C, H, W] -> [N, C, 1, 1].
class GlobalAvgPool2d : public Module {
 public:
  GlobalAvgPool2d() : Module("GlobalAvgPool2d") {}
  Tensor forward(const Tensor& x) override { return global_avg_pool2d(x); }
};

// Only output size 1 (global average pooling), the form classifiers use.
class AdaptiveAvgPool2d : public Module {
 public:
  explicit AdaptiveAvgPool2d(Size2d output_size = 1);
  Tensor forward(const Tensor& x) override { return global_avg_pool2d(x); }
};

// To a fixed size, or by a scale factor (output = floor(input * scale)). Nearest: asymmetric +
// floor; bilinear: half-pixel or align_corners.
class Upsample : public Module {
 public:
  // size given (h, w >= 1): that size; else scale_factor.
  Upsample(Size2d size, Interpolation mode = Interpolation::Nearest, bool align_corners = false);
  static std::shared_ptr<Upsample> with_scale(double scale_h, double scale_w, Interpolation mode = Interpolation::Nearest,
                                              bool align_corners = false);
  Tensor forward(const Tensor& x) override;

 private:
  Size2d size_;
  double scale_h_ = 0, scale_w_ = 0;
  Interpolation mode_;
  bool align_corners_;
};
using Resize2d = Upsample;

// Flattens dims start_dim..end_dim into one (default: everything after the batch).
class Flatten : public Module {
 public:
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1) : Module("Flatten"), start_(start_dim), end_(end_dim) {}
  Tensor forward(const Tensor& x) override;

 private:
  int64_t start_, end_;
};

}  // namespace om::nn
