// Parameter initialisation shared by the layers (PyTorch's bounds are computed by each layer).
#pragma once
#include "onemodel/core/tensor.h"

namespace om::nn {

// U(-bound, bound) from `gen`, f32, in the current store; the same draws on every platform.
Tensor uniform_init(const Shape& shape, double bound, Generator& gen);

}  // namespace om::nn
