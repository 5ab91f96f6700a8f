// Tensor::backward: declared with the tensor (core) and defined here, where the reverse pass
// lives, so the tensor layer does not depend on autograd.
#include "onemodel/autograd/grad.h"
#include "onemodel/core/tensor_internal.h"

namespace om {

void Tensor::backward() const {
  check(detail::defined_or_error(*this, "om::Tensor::backward"));
  if (numel() != 1)
    raise(Status::error(ErrorKind::InvalidArgument, msg("om::Tensor::backward: the tensor ", to_string(),
                                                         " is not a scalar; pass the output gradient: backward(grad)")));
  Tensor seed = unwrap(detail::make_tensor(shape(), DType::f32));
  *detail::raw_as<float>(seed) = 1.0f;
  check(autograd::backward(*this, seed));
}

void Tensor::backward(const Tensor& grad) const {
  check(detail::defined_or_error(*this, "om::Tensor::backward"));
  if (grad.shape() != shape())
    raise(Status::error(ErrorKind::ShapeMismatch, msg("om::Tensor::backward: gradient ", grad.to_string(), " does not match the tensor ", to_string())));
  check(autograd::backward(*this, grad));
}

}  // namespace om
