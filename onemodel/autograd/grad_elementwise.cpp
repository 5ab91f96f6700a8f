#include "onemodel/autograd/grad.h"
#include "onemodel/ops/ops.h"

namespace om::autograd {

// d(a op b): each gradient is summed back to its operand's shape (reverse broadcasting).
Status grad_Add(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  OM_ASSIGN_OR_RETURN((*gin)[0], ops::sum_to(g, r.inputs[0].shape()));
  OM_ASSIGN_OR_RETURN((*gin)[1], ops::sum_to(g, r.inputs[1].shape()));
  return Status::ok();
}

Status grad_Sub(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  OM_ASSIGN_OR_RETURN((*gin)[0], ops::sum_to(g, r.inputs[0].shape()));
  OM_ASSIGN_OR_RETURN(Tensor ng, ops::neg(g));
  OM_ASSIGN_OR_RETURN((*gin)[1], ops::sum_to(ng, r.inputs[1].shape()));
  return Status::ok();
}

Status grad_Mul(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  if (r.inputs[0].requires_grad()) {
    OM_ASSIGN_OR_RETURN(Tensor ga, ops::mul(g, r.inputs[1]));
    OM_ASSIGN_OR_RETURN((*gin)[0], ops::sum_to(ga, r.inputs[0].shape()));
  }
  if (r.inputs[1].requires_grad()) {
    OM_ASSIGN_OR_RETURN(Tensor gb, ops::mul(g, r.inputs[0]));
    OM_ASSIGN_OR_RETURN((*gin)[1], ops::sum_to(gb, r.inputs[1].shape()));
  }
  return Status::ok();
}

Status grad_Div(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  const Tensor& a = r.inputs[0];
  const Tensor& b = r.inputs[1];
  OM_ASSIGN_OR_RETURN(Tensor ga, ops::div(g, b));
  if (a.requires_grad()) {
    OM_ASSIGN_OR_RETURN((*gin)[0], ops::sum_to(ga, a.shape()));
  }
  if (b.requires_grad()) {
    // d(a/b)/db = -(g/b) * a / b
    OM_ASSIGN_OR_RETURN(Tensor t, ops::mul(ga, a));
    OM_ASSIGN_OR_RETURN(t, ops::div(t, b));
    OM_ASSIGN_OR_RETURN(t, ops::neg(t));
    OM_ASSIGN_OR_RETURN((*gin)[1], ops::sum_to(t, b.shape()));
  }
  return Status::ok();
}

Status grad_Neg(const BackwardRecord&, const Tensor& g, std::vector<Tensor>* gin) {
  OM_ASSIGN_OR_RETURN((*gin)[0], ops::neg(g));
  return Status::ok();
}

}  // namespace om::autograd
