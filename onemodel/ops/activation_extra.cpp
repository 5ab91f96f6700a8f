#include "onemodel/ops/activation_extra.h"

#include "onemodel/core/error.h"
#include "onemodel/ops/math_ops.h"
#include "onemodel/ops/ops.h"

namespace om {

Tensor relu6(const Tensor& x) { return clamp(x, 0.0, 6.0); }

Tensor hardtanh(const Tensor& x, double min_val, double max_val) {
  if (!(min_val < max_val))
    raise(Status::error(ErrorKind::InvalidArgument, msg("om::hardtanh: min_val ", min_val, " must be below max_val ", max_val)));
  return clamp(x, min_val, max_val);
}

Tensor hardswish(const Tensor& x) { return mul(mul(x, clamp(add(x, 3.0), 0.0, 6.0)), 1.0 / 6.0); }

Tensor silu(const Tensor& x) { return mul(x, sigmoid(x)); }

Tensor softplus(const Tensor& x) { return add(relu(x), log(add(exp(neg(abs(x))), 1.0))); }

Tensor mish(const Tensor& x) { return mul(x, om::tanh(softplus(x))); }

}  // namespace om
