// Internal: shared by cross_entropy (losses.cpp) and nll_loss (loss.cpp).
#pragma once
#include "onemodel/core/tensor.h"

namespace om::ops::loss_detail {

// [N, C, d1, ...] scores with [N, d1, ...] targets (PyTorch's K-dimensional losses): the class
// axis is moved last and both are flattened to [N * d1 * ..., C] / [N * d1 * ...], so the 2-D
// loss and its gradient apply; Reduction::None reshapes back to `per_element` = [N, d1, ...].
struct Flattened {
  Tensor scores, target;
  Shape per_element;
};
Result<Flattened> flatten_k_dim(const Tensor& scores, const Tensor& target, const char* call, const char* what);

}  // namespace om::ops::loss_detail
