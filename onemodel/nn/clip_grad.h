// Gradient clipping, as libtorch's torch::nn::utils (torch/nn/utils/clip_grad.h).
#pragma once
#include <vector>

#include "onemodel/core/tensor.h"

namespace om::nn::utils {

// Scales every gradient by max_norm / (total + 1e-6) when the total norm of all gradients
// (parameters without one are skipped) exceeds max_norm; returns the total norm before clipping.
// norm_type 2 (default), any p >= 1, or INFINITY (the largest magnitude). As PyTorch's
// torch.nn.utils.clip_grad_norm_.
double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type = 2.0);

}  // namespace om::nn::utils
