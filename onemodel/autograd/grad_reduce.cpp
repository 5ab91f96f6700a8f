#include "onemodel/autograd/grad.h"
#include "onemodel/core/tensor_internal.h"
#include "onemodel/kernels/kernels.h"
#include "onemodel/ops/ops.h"

namespace om::autograd {
namespace {

// Spreads g back over the reduced axis, scaled for a mean.
Status spread(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin, bool mean) {
  const Tensor& x = r.inputs[0];
  Tensor gk = g;
  double count;
  const ReduceAttrs& a = r.attrs_as<ReduceAttrs>();
  if (a.all) {
    count = double(x.numel());
    OM_ASSIGN_OR_RETURN(gk, ops::reshape(g, Shape(size_t(x.dim()), 1)));
  } else {
    const int64_t axis = a.axis;
    count = double(x.shape()[size_t(axis)]);
    if (!a.keepdim) {
      OM_ASSIGN_OR_RETURN(gk, ops::unsqueeze(g, axis));
    }
  }
  OM_ASSIGN_OR_RETURN(Tensor e, ops::expand(gk, x.shape()));
  if (mean) {
    OM_ASSIGN_OR_RETURN(e, ops::div(e, scalar_tensor(count)));
  } else {
    OM_ASSIGN_OR_RETURN(e, ops::contiguous(e));
  }
  (*gin)[0] = e;
  return Status::ok();
}

}  // namespace

Status grad_Sum(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) { return spread(r, g, gin, false); }
Status grad_Mean(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) { return spread(r, g, gin, true); }

// softmax: dx = y * (g - sum(g*y)); log_softmax: dx = g - exp(y) * sum(g); sums along the axis.
Status grad_Softmax(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  const int64_t axis = r.attrs_as<SoftmaxAttrs>().axis;
  OM_ASSIGN_OR_RETURN(Tensor gy, ops::mul(g, r.saved));
  OM_ASSIGN_OR_RETURN(Tensor s, ops::sum(gy, axis, true));
  OM_ASSIGN_OR_RETURN(Tensor d, ops::sub(g, s));
  OM_ASSIGN_OR_RETURN((*gin)[0], ops::mul(r.saved, d));
  return Status::ok();
}

Status grad_LogSoftmax(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  const int64_t axis = r.attrs_as<SoftmaxAttrs>().axis;
  OM_ASSIGN_OR_RETURN(Tensor s, ops::sum(g, axis, true));
  OM_ASSIGN_OR_RETURN(Tensor y, detail::dense(r.saved));
  OM_ASSIGN_OR_RETURN(Tensor p, detail::make_tensor(y.shape(), DType::f32));
  // exp of the saved log-probabilities, with the library's exp
  {
    const float* py = detail::raw_as<float>(y);
    float* pp = detail::raw_as<float>(p);
    for (int64_t i = 0; i < y.numel(); ++i) pp[i] = kernels::exp_f32(py[i]);
  }
  OM_ASSIGN_OR_RETURN(Tensor ps, ops::mul(p, s));
  OM_ASSIGN_OR_RETURN((*gin)[0], ops::sub(g, ps));
  return Status::ok();
}

}  // namespace om::autograd
