#include "onemodel/nn/clip_grad.h"

#include <algorithm>
#include <cmath>

#include "onemodel/core/grad_mode.h"
#include "onemodel/core/status.h"
#include "onemodel/core/tensor_internal.h"

namespace om::nn::utils {

double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type) {
  const char* call = "om::nn::utils::clip_grad_norm_";
  if (!(max_norm >= 0) || !(norm_type >= 1))
    raise(Status::error(ErrorKind::InvalidArgument, msg(call, ": max_norm ", max_norm, " must be >= 0 and norm_type ", norm_type,
                                                        " >= 1 (or INFINITY)")));
  detail::InternalNoGrad no_grad;
  std::vector<Tensor> grads;
  for (const Tensor& p : params) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    check(detail::check_live(g, call));
    grads.push_back(g);
  }
  // Per-tensor norms accumulated in double, then the norm of the norms (PyTorch's order).
  double total = 0;
  for (const Tensor& g : grads) {
    Tensor d = unwrap(detail::dense(g));
    const float* pg = detail::raw_as<float>(d);
    double n = 0;
    for (int64_t k = 0; k < d.numel(); ++k) {
      const double a = std::fabs(double(pg[k]));
      if (std::isinf(norm_type)) n = std::max(n, a);
      else n += std::pow(a, norm_type);
    }
    if (std::isinf(norm_type)) total = std::max(total, n);
    else total += std::pow(std::pow(n, 1.0 / norm_type), norm_type);
  }
  if (!std::isinf(norm_type)) total = std::pow(total, 1.0 / norm_type);
  const double coef = max_norm / (total + 1e-6);
  if (coef < 1) {
    for (Tensor& g : grads) {
      if (!g.is_contiguous()) raise(Status::error(ErrorKind::InvalidArgument, msg(call, ": a gradient is not contiguous")));
      float* pg = detail::raw_as<float>(g);
      const float c = float(coef);
      for (int64_t k = 0; k < g.numel(); ++k) pg[k] = pg[k] * c;
      detail::bump_version(g);
    }
  }
  return total;
}

}  // namespace om::nn::utils
