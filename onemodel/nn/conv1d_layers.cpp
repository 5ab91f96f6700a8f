#include "onemodel/nn/conv1d_layers.h"

#include <cmath>

#include "onemodel/core/error.h"
#include "onemodel/nn/init.h"
#include "onemodel/ops/ops.h"

namespace om::nn {
namespace {
void check_3d(const Module& m, const char* call, const Tensor& x, int64_t channels) {
  if (!x.defined() || x.dim() != 3 || (channels > 0 && x.shape()[1] != channels))
    raise(Status::error(ErrorKind::ShapeMismatch, msg(call, " (module ", m.display_name(), "): input ",
                                                      x.defined() ? x.to_string() : std::string("(undefined)"), " must be [N, ",
                                                      channels > 0 ? std::to_string(channels) : std::string("C"), ", L]")));
}
}  // namespace

Conv1d::Conv1d(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t padding, int64_t dilation, int64_t groups, bool with_bias,
               Generator& gen)
    : Module("Conv1d"), in_channels_(in), stride_(stride), padding_(padding), dilation_(dilation), groups_(groups) {
  if (in < 1 || out < 1 || k < 1 || groups < 1 || in % groups != 0 || out % groups != 0 || stride < 1 || dilation < 1 || padding < 0)
    raise(Status::error(ErrorKind::InvalidArgument, msg("om::nn::Conv1d: in_channels ", in, ", out_channels ", out, ", kernel_size ", k,
                                                        ", stride ", stride, ", padding ", padding, ", dilation ", dilation, ", groups ", groups,
                                                        " do not make a convolution (channels divisible by groups, sizes positive)")));
  const double bound = 1.0 / std::sqrt(double(in / groups * k));
  weight = register_parameter("weight", uniform_init({out, in / groups, k}, bound, gen));
  if (with_bias) bias = register_parameter("bias", uniform_init({out}, bound, gen));
}

Tensor Conv1d::forward(const Tensor& x) {
  check_3d(*this, "om::nn::Conv1d::forward", x, in_channels_);
  const Tensor y = conv2d(x.unsqueeze(2), weight.unsqueeze(2), bias, Size2d(1, stride_), Pad2d(0, padding_), Size2d(1, dilation_), groups_);
  return y.squeeze(2);
}

MaxPool1d::MaxPool1d(int64_t k, int64_t stride, int64_t padding, int64_t dilation, bool ceil_mode)
    : Module("MaxPool1d"), kernel_(k), stride_(stride == 0 ? k : stride), padding_(padding), dilation_(dilation), ceil_mode_(ceil_mode) {}

Tensor MaxPool1d::forward(const Tensor& x) {
  check_3d(*this, "om::nn::MaxPool1d::forward", x, 0);
  return max_pool2d(x.unsqueeze(2), Size2d(1, kernel_), Size2d(1, stride_), Pad2d(0, padding_), Size2d(1, dilation_), ceil_mode_).squeeze(2);
}

AvgPool1d::AvgPool1d(int64_t k, int64_t stride, int64_t padding, bool ceil_mode, bool count_include_pad)
    : Module("AvgPool1d"), kernel_(k), stride_(stride == 0 ? k : stride), padding_(padding), ceil_mode_(ceil_mode), count_include_pad_(count_include_pad) {}

Tensor AvgPool1d::forward(const Tensor& x) {
  check_3d(*this, "om::nn::AvgPool1d::forward", x, 0);
  return avg_pool2d(x.unsqueeze(2), Size2d(1, kernel_), Size2d(1, stride_), Pad2d(0, padding_), ceil_mode_, count_include_pad_).squeeze(2);
}

}  // namespace om::nn
