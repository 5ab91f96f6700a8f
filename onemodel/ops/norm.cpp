// batch_norm2d (NCHW f32). Evaluation runs the graph's BatchNormalization kernel (same bits in
// both layers); training normalises with the batch statistics (accumulated in double) and
// updates the running buffers as PyTorch does.
#include <cmath>
#include <vector>

#include "onemodel/core/grad_mode.h"
#include "onemodel/core/tensor_internal.h"
#include "onemodel/kernels/conv.h"
#include "onemodel/ops/conv_ops.h"
#include "onemodel/ops/record.h"

namespace om {
namespace ops {

Result<Tensor> batch_norm2d(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                            const Tensor& bias, bool training, double momentum, double eps) {
  const char* call = "om::batch_norm2d";
  OM_TRY(check_input(x, call));
  if (x.dtype() != DType::f32 || x.dim() != 4)
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": input must be a 4-D f32 tensor [N, C, H, W], got ", x.to_string()));
  const int64_t N = x.shape()[0], C = x.shape()[1], HW = x.shape()[2] * x.shape()[3];
  const Tensor* per_channel[] = {&running_mean, &running_var, &weight, &bias};
  const char* names[] = {"running_mean", "running_var", "weight", "bias"};
  for (int i = 0; i < 4; ++i) {
    OM_TRY(check_input(*per_channel[i], call));
    const Tensor& t = *per_channel[i];
    if (t.dtype() != DType::f32 || t.dim() != 1 || t.shape()[0] != C)
      return Status::error(ErrorKind::ShapeMismatch, msg(call, ": ", names[i], " must be [", C, "] f32 (the channels of ", shape_str(x.shape()),
                                                         "), got ", t.to_string()));
  }
  if (!(eps > 0) || !(momentum >= 0 && momentum <= 1))
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": eps (", eps, ") must be > 0 and momentum (", momentum, ") in [0, 1]"));
  const int64_t count = N * HW;
  if (training && count < 2)
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": training needs more than one value per channel, got input ",
                                                         shape_str(x.shape()), "; call eval() or use a larger batch"));
  OM_ASSIGN_OR_RETURN(Tensor xd, detail::dense(x));
  OM_ASSIGN_OR_RETURN(Tensor wd, detail::dense(weight));
  OM_ASSIGN_OR_RETURN(Tensor bd, detail::dense(bias));
  OM_ASSIGN_OR_RETURN(Tensor y, detail::make_tensor(x.shape(), DType::f32, false, call));
  const float* px = detail::raw_as<float>(xd);
  float* py = detail::raw_as<float>(y);
  BatchNormAttrs a{eps, momentum, training};
  if (!training) {
    OM_ASSIGN_OR_RETURN(Tensor md, detail::dense(running_mean));
    OM_ASSIGN_OR_RETURN(Tensor vd, detail::dense(running_var));
    kernels::f32_batch_norm_inference(px, detail::raw_as<float>(wd), detail::raw_as<float>(bd), detail::raw_as<float>(md),
                                      detail::raw_as<float>(vd), float(eps), N, C, HW, py);
    OM_TRY(record<OpId::BatchNorm2d>({x, weight, bias, running_mean, running_var}, y, a));
    return y;
  }
  // saved: [2, C] = batch mean, 1 / sqrt(biased var + eps).
  OM_ASSIGN_OR_RETURN(Tensor saved, detail::make_tensor({2, C}, DType::f32, false, call));
  float* ps = detail::raw_as<float>(saved);
  const float* pw = detail::raw_as<float>(wd);
  const float* pb = detail::raw_as<float>(bd);
  std::vector<double> mean(static_cast<size_t>(C)), var(static_cast<size_t>(C));
  for (int64_t c = 0; c < C; ++c) {
    double s = 0, ss = 0;
    for (int64_t n = 0; n < N; ++n) {
      const float* p = px + (n * C + c) * HW;
      for (int64_t i = 0; i < HW; ++i) s += p[i];
    }
    const double mu = s / double(count);
    for (int64_t n = 0; n < N; ++n) {
      const float* p = px + (n * C + c) * HW;
      for (int64_t i = 0; i < HW; ++i) ss += (p[i] - mu) * (p[i] - mu);
    }
    mean[size_t(c)] = mu;
    var[size_t(c)] = ss / double(count);
    const double inv = 1.0 / std::sqrt(var[size_t(c)] + eps);
    ps[c] = float(mu);
    ps[C + c] = float(inv);
    for (int64_t n = 0; n < N; ++n) {
      const float* p = px + (n * C + c) * HW;
      float* q = py + (n * C + c) * HW;
      for (int64_t i = 0; i < HW; ++i) q[i] = float((p[i] - mu) * inv * pw[c] + pb[c]);
    }
  }
  // The running buffers are state, not part of the graph of operations: updated in place.
  if (!running_mean.is_contiguous() || !running_var.is_contiguous())
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": running_mean and running_var must be contiguous"));
  float* rm = detail::raw_as<float>(running_mean);
  float* rv = detail::raw_as<float>(running_var);
  for (int64_t c = 0; c < C; ++c) {
    rm[c] = float((1 - momentum) * rm[c] + momentum * mean[size_t(c)]);
    rv[c] = float((1 - momentum) * rv[c] + momentum * var[size_t(c)] * double(count) / double(count - 1));
  }
  detail::bump_version(running_mean);
  detail::bump_version(running_var);
  OM_TRY(record<OpId::BatchNorm2d>({x, weight, bias, running_mean, running_var}, y, a, saved));
  return y;
}

}  // namespace ops

Tensor batch_norm2d(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight, const Tensor& bias,
                    bool training, double momentum, double eps) {
  return unwrap(ops::batch_norm2d(x, running_mean, running_var, weight, bias, training, momentum, eps));
}

}  // namespace om
