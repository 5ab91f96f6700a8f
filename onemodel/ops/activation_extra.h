// Activations composed of the recorded operators (PyTorch's names and formulas), so autograd and
// the tracer need nothing new: each lowers to the ONNX nodes of its parts (Clip, Mul, Sigmoid,
// Tanh, Exp, Log, Abs, Relu).
//
//   relu6(x)           = clamp(x, 0, 6)
//   hardtanh(x, lo, hi) = clamp(x, lo, hi)                    (defaults -1, 1)
//   hardswish(x)       = x * clamp(x + 3, 0, 6) / 6
//   silu(x)            = x * sigmoid(x)
//   softplus(x)        = relu(x) + log(1 + exp(-|x|))           (no overflow for large |x|)
//   mish(x)            = x * tanh(softplus(x))
#pragma once
#include "onemodel/core/tensor.h"

namespace om {

Tensor relu6(const Tensor& x);
Tensor hardtanh(const Tensor& x, double min_val = -1.0, double max_val = 1.0);
Tensor hardswish(const Tensor& x);
Tensor silu(const Tensor& x);
Tensor softplus(const Tensor& x);
Tensor mish(const Tensor& x);

}  // namespace om
