// Tensor::backward: declared with the tensor (core) and defined here, where the reverse pass
// lives, so the tensor layer does not depend on autograd. backward(grad, retain_graph) can keep
// the graph (PyTorch's retain_graph = True); the one- and zero-argument forms release it.
#include "onemodel/autograd/backward.h"
#include "onemodel/core/tensor_internal.h"

namespace om {

void Tensor::backward(const Tensor& grad, bool retain_graph) const {
  if (!impl_) raise(Status::error(ErrorKind::InvalidArgument, "om::Tensor::backward: the tensor is undefined (default-constructed)"));
  Tensor seed = grad;
  if (!seed.defined()) {
    if (numel() != 1)
      raise(Status::error(ErrorKind::InvalidArgument, msg("om::Tensor::backward: the tensor ", to_string(),
                                                           " is not a scalar; pass the output gradient: backward(grad, retain_graph)")));
    seed = unwrap(detail::make_tensor(shape(), DType::f32));
    *detail::raw_as<float>(seed) = 1.0f;
  } else if (seed.shape() != shape()) {
    raise(Status::error(ErrorKind::ShapeMismatch, msg("om::Tensor::backward: gradient ", seed.to_string(), " does not match the tensor ", to_string())));
  }
  check(autograd::backward(*this, seed, retain_graph));
}

void Tensor::backward() const { backward(Tensor(), false); }
void Tensor::backward(const Tensor& grad) const {
  if (!grad.defined()) raise(Status::error(ErrorKind::InvalidArgument, "om::Tensor::backward: the gradient is undefined"));
  backward(grad, false);
}

}  // namespace om
