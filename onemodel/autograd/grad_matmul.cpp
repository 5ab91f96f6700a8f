#include "onemodel/autograd/grad.h"
#include "onemodel/ops/ops.h"

namespace om::autograd {

// With 1-D operands promoted as the forward did: dA = g B^T, dB = A^T g, each summed over the
// broadcast batch dims and reshaped back.
Status grad_MatMul(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  const Tensor& a = r.inputs[0];
  const Tensor& b = r.inputs[1];
  Tensor a2 = a, b2 = b, g2 = g;
  if (a.dim() == 1) {
    OM_ASSIGN_OR_RETURN(a2, ops::unsqueeze(a, 0));
    OM_ASSIGN_OR_RETURN(g2, ops::unsqueeze(g2, g2.dim() - (b.dim() == 1 ? 0 : 1)));
  }
  if (b.dim() == 1) {
    OM_ASSIGN_OR_RETURN(b2, ops::unsqueeze(b, 1));
    OM_ASSIGN_OR_RETURN(g2, ops::unsqueeze(g2, g2.dim()));
  }
  if (a.requires_grad()) {
    OM_ASSIGN_OR_RETURN(Tensor bt, ops::transpose(b2, -1, -2));
    OM_ASSIGN_OR_RETURN(Tensor ga, ops::matmul(g2, bt));
    OM_ASSIGN_OR_RETURN(ga, ops::sum_to(ga, a2.shape()));
    OM_ASSIGN_OR_RETURN((*gin)[0], ops::reshape(ga, a.shape()));
  }
  if (b.requires_grad()) {
    OM_ASSIGN_OR_RETURN(Tensor at, ops::transpose(a2, -1, -2));
    OM_ASSIGN_OR_RETURN(Tensor gb, ops::matmul(at, g2));
    OM_ASSIGN_OR_RETURN(gb, ops::sum_to(gb, b2.shape()));
    OM_ASSIGN_OR_RETURN((*gin)[1], ops::reshape(gb, b.shape()));
  }
  return Status::ok();
}

}  // namespace om::autograd
