// Gradients of embedding (rows scattered back, the padding row left at zero), dropout (the
// saved scaled mask).
#include "onemodel/autograd/grad.h"
#include "onemodel/core/tensor_internal.h"
#include "onemodel/ops/ops.h"

namespace om::autograd {

Status grad_Embedding(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  const Tensor& w = r.inputs[0];
  const Tensor& idx = r.inputs[1];
  if (!w.requires_grad()) return Status::ok();
  const int64_t pad = r.attrs_of<OpId::Embedding>().padding_idx;
  const int64_t dim = w.shape()[1];
  OM_ASSIGN_OR_RETURN(Tensor di, detail::dense(idx));
  OM_ASSIGN_OR_RETURN(Tensor dg, detail::dense(g));
  OM_ASSIGN_OR_RETURN(Tensor gw, detail::make_tensor(w.shape(), DType::f32, true));
  const float* pg = detail::raw_as<float>(dg);
  float* pw = detail::raw_as<float>(gw);
  const bool i64 = idx.dtype() == DType::i64;
  for (int64_t i = 0; i < idx.numel(); ++i) {
    const int64_t ix = i64 ? detail::raw_as<int64_t>(di)[i] : int64_t(detail::raw_as<int32_t>(di)[i]);
    if (ix == pad) continue;
    for (int64_t j = 0; j < dim; ++j) pw[ix * dim + j] += pg[i * dim + j];
  }
  (*gin)[0] = gw;
  return Status::ok();
}

Status grad_Dropout(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  OM_ASSIGN_OR_RETURN((*gin)[0], ops::mul(g, r.saved));
  return Status::ok();
}

}  // namespace om::autograd
