// Tensor::backward(grad, retain_graph): the overload that can keep the graph (PyTorch's
// retain_graph = True). The one- and zero-argument forms release it.
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

}  // namespace om
