#include "onemodel/nn/conv_layers.h"

#include <cmath>

#include "onemodel/nn/init.h"
#include "onemodel/core/status.h"
#include "onemodel/core/tensor_internal.h"

namespace om::nn {

namespace {

void check_channels(const char* call, int64_t in, int64_t out, Size2d k, int64_t groups) {
  if (in < 1 || out < 1 || k.h < 1 || k.w < 1 || groups < 1 || in % groups != 0 || out % groups != 0)
    raise(Status::error(ErrorKind::InvalidArgument, msg(call, ": in_channels ", in, ", out_channels ", out, ", kernel (", k.h, ", ", k.w,
                                                        ") and groups ", groups, " must be positive, with groups dividing both channel counts")));
}

void check_input_channels(const Module& m, const char* call, const Tensor& x, int64_t in) {
  if (x.defined() && (x.dim() != 4 || x.shape()[1] != in))
    raise(Status::error(ErrorKind::ShapeMismatch, msg(call, " (module ", m.display_name(), "): input ", x.to_string(), " must be [N, ", in,
                                                      ", H, W]")));
}
}  // namespace

Conv2d::Conv2d(int64_t in, int64_t out, Size2d kernel, Size2d stride, Pad2d padding, Size2d dilation, int64_t groups, bool with_bias,
               Generator& gen)
    : Module("Conv2d"), in_channels_(in), stride_(stride), dilation_(dilation), padding_(padding), groups_(groups) {
  check_channels("om::nn::Conv2d", in, out, kernel, groups);
  const double bound = 1.0 / std::sqrt(double(in / groups * kernel.h * kernel.w));
  weight = register_parameter("weight", uniform_init({out, in / groups, kernel.h, kernel.w}, bound, gen));
  if (with_bias) bias = register_parameter("bias", uniform_init({out}, bound, gen));
}

Tensor Conv2d::forward(const Tensor& x) {
  check_input_channels(*this, "om::nn::Conv2d::forward", x, in_channels_);
  return conv2d(x, weight, bias, stride_, padding_, dilation_, groups_);
}

ConvTranspose2d::ConvTranspose2d(int64_t in, int64_t out, Size2d kernel, Size2d stride, Pad2d padding, Size2d output_padding,
                                 int64_t groups, bool with_bias, Size2d dilation, Generator& gen)
    : Module("ConvTranspose2d"),
      in_channels_(in),
      stride_(stride),
      output_padding_(output_padding),
      dilation_(dilation),
      padding_(padding),
      groups_(groups) {
  check_channels("om::nn::ConvTranspose2d", in, out, kernel, groups);
  const double bound = 1.0 / std::sqrt(double(out / groups * kernel.h * kernel.w));
  weight = register_parameter("weight", uniform_init({in, out / groups, kernel.h, kernel.w}, bound, gen));
  if (with_bias) bias = register_parameter("bias", uniform_init({out}, bound, gen));
}

Tensor ConvTranspose2d::forward(const Tensor& x) {
  check_input_channels(*this, "om::nn::ConvTranspose2d::forward", x, in_channels_);
  return conv_transpose2d(x, weight, bias, stride_, padding_, output_padding_, groups_, dilation_);
}

BatchNorm2d::BatchNorm2d(int64_t num_features, double eps, double momentum) : Module("BatchNorm2d"), eps_(eps), momentum_(momentum) {
  if (num_features < 1)
    raise(Status::error(ErrorKind::InvalidArgument, msg("om::nn::BatchNorm2d: num_features ", num_features, " must be positive")));
  weight = register_parameter("weight", ones({num_features}));
  bias = register_parameter("bias", zeros({num_features}));
  running_mean = register_buffer("running_mean", zeros({num_features}));
  running_var = register_buffer("running_var", ones({num_features}));
  num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, DType::i64));
}

Tensor BatchNorm2d::forward(const Tensor& x) {
  check_input_channels(*this, "om::nn::BatchNorm2d::forward", x, weight.shape()[0]);
  Tensor y = batch_norm2d(x, running_mean, running_var, weight, bias, is_training(), momentum_, eps_);
  if (is_training()) {
    ++detail::raw_as<int64_t>(num_batches_tracked)[0];
    detail::bump_version(num_batches_tracked);
  }
  return y;
}

AdaptiveAvgPool2d::AdaptiveAvgPool2d(Size2d output_size) : Module("AdaptiveAvgPool2d") {
  if (output_size.h != 1 || output_size.w != 1)
    raise(Status::error(ErrorKind::Unsupported, msg("om::nn::AdaptiveAvgPool2d: output size (", output_size.h, ", ", output_size.w,
                                                    ") is not supported; only 1 (global average pooling)")));
}

Upsample::Upsample(Size2d size, Interpolation mode, bool align_corners)
    : Module("Upsample"), size_(size), mode_(mode), align_corners_(align_corners) {
  if (size.h < 1 || size.w < 1)
    raise(Status::error(ErrorKind::InvalidArgument, msg("om::nn::Upsample: size (", size.h, ", ", size.w, ") must be positive")));
}

std::shared_ptr<Upsample> Upsample::with_scale(double scale_h, double scale_w, Interpolation mode, bool align_corners) {
  if (!(scale_h > 0) || !(scale_w > 0) || scale_h > 1e6 || scale_w > 1e6)
    raise(Status::error(ErrorKind::InvalidArgument, msg("om::nn::Upsample: scale factors (", scale_h, ", ", scale_w, ") must be in (0, 1e6]")));
  auto u = std::make_shared<Upsample>(Size2d(1, 1), mode, align_corners);
  u->scale_h_ = scale_h;
  u->scale_w_ = scale_w;
  return u;
}

Tensor Upsample::forward(const Tensor& x) {
  if (scale_h_ > 0) {
    if (!x.defined() || x.dim() != 4)
      raise(Status::error(ErrorKind::ShapeMismatch, msg("om::nn::Upsample::forward (module ", display_name(), "): input must be [N, C, H, W]")));
    return interpolate(x, scale_h_, scale_w_, mode_, align_corners_);
  }
  return resize2d(x, size_.h, size_.w, mode_, align_corners_);
}

Tensor Flatten::forward(const Tensor& x) {
  int64_t s = start_, e = end_;
  if (!x.defined() || !normalize_axis(start_, x.dim(), &s) || !normalize_axis(end_, x.dim(), &e) || s > e)
    raise(Status::error(ErrorKind::InvalidArgument, msg("om::nn::Flatten::forward (module ", display_name(), "): dims ", start_, "..", end_,
                                                        " do not fit the input ", x.defined() ? x.to_string() : std::string("(undefined)"))));
  Shape shape(x.shape().begin(), x.shape().begin() + s);
  int64_t n = 1;
  for (int64_t k = s; k <= e; ++k) n *= x.shape()[size_t(k)];
  shape.push_back(n);
  shape.insert(shape.end(), x.shape().begin() + e + 1, x.shape().end());
  return x.reshape(shape);
}

}  // namespace om::nn
