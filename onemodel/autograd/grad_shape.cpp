#include <cstring>

#include "onemodel/autograd/grad.h"
#include "onemodel/core/tensor_internal.h"
#include "onemodel/ops/ops.h"

namespace om::autograd {
namespace {

Status reshape_back(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  OM_ASSIGN_OR_RETURN((*gin)[0], ops::reshape(g, r.inputs[0].shape()));
  return Status::ok();
}

// Zeros of the input's shape with g written into the view `make_view(zeros)` selects.
template <typename ViewFn>
Status scatter_into_zeros(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin, ViewFn view) {
  OM_ASSIGN_OR_RETURN(Tensor z, detail::make_tensor(r.inputs[0].shape(), g.dtype(), true));
  OM_ASSIGN_OR_RETURN(Tensor dst, view(z));
  OM_TRY(detail::copy_elements(g, dst));
  (*gin)[0] = z;
  return Status::ok();
}

Status pass_through(const BackwardRecord&, const Tensor& g, std::vector<Tensor>* gin) {
  (*gin)[0] = g;
  return Status::ok();
}

}  // namespace

Status grad_Reshape(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) { return reshape_back(r, g, gin); }
Status grad_Squeeze(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) { return reshape_back(r, g, gin); }
Status grad_Unsqueeze(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) { return reshape_back(r, g, gin); }
Status grad_Contiguous(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) { return pass_through(r, g, gin); }
Status grad_Clone(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) { return pass_through(r, g, gin); }

Status grad_Permute(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  const std::vector<int64_t>& perm = r.attrs_of<OpId::Permute>().perm;
  std::vector<int64_t> inverse(perm.size());
  for (size_t k = 0; k < perm.size(); ++k) inverse[size_t(perm[k])] = int64_t(k);
  OM_ASSIGN_OR_RETURN((*gin)[0], ops::permute(g, inverse));
  return Status::ok();
}

Status grad_Expand(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  OM_ASSIGN_OR_RETURN((*gin)[0], ops::sum_to(g, r.inputs[0].shape()));
  return Status::ok();
}

Status grad_Slice(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  const SliceAttrs& a = r.attrs_of<OpId::Slice>();
  return scatter_into_zeros(r, g, gin, [&](const Tensor& z) { return ops::slice(z, a.dim, a.start, a.end, a.step); });
}

Status grad_Select(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  const SelectAttrs& a = r.attrs_of<OpId::Select>();
  return scatter_into_zeros(r, g, gin, [&](const Tensor& z) { return ops::select(z, a.dim, a.index); });
}

Status grad_Flip(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  OM_ASSIGN_OR_RETURN((*gin)[0], ops::flip(g, r.attrs_of<OpId::Flip>().dim));
  return Status::ok();
}

Status grad_IndexSelect(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  // Each output entry's gradient added back at the entry it came from (repeats accumulate).
  const Tensor& x = r.inputs[0];
  if (!x.requires_grad()) return Status::ok();
  const int64_t d = r.attrs_of<OpId::IndexSelect>().dim;
  OM_ASSIGN_OR_RETURN(Tensor di, detail::dense(r.inputs[1]));
  OM_ASSIGN_OR_RETURN(Tensor dg, detail::dense(g));
  OM_ASSIGN_OR_RETURN(Tensor gx, detail::make_tensor(x.shape(), DType::f32, true));
  const int64_t size = x.shape()[size_t(d)], n = r.inputs[1].numel();
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < d; ++k) outer *= x.shape()[size_t(k)];
  for (int64_t k = d + 1; k < x.dim(); ++k) inner *= x.shape()[size_t(k)];
  const bool i64 = di.dtype() == DType::i64;
  const float* pg = detail::raw_as<float>(dg);
  float* px = detail::raw_as<float>(gx);
  for (int64_t k = 0; k < n; ++k) {
    int64_t ix = i64 ? detail::raw_as<int64_t>(di)[k] : int64_t(detail::raw_as<int32_t>(di)[k]);
    if (ix < 0) ix += size;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < inner; ++j) px[(o * size + ix) * inner + j] += pg[(o * n + k) * inner + j];
  }
  (*gin)[0] = gx;
  return Status::ok();
}

Status grad_Cast(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  // Only float-to-float casts carry a gradient (f16 round trips); integer and bool results
  // have none, as in PyTorch.
  auto is_float = [](DType d) { return d == DType::f32 || d == DType::f16; };
  if (!is_float(r.inputs[0].dtype()) || !is_float(r.output_dtype)) return Status::ok();
  OM_ASSIGN_OR_RETURN((*gin)[0], ops::cast(g, r.inputs[0].dtype()));
  return Status::ok();
}

Status grad_Concat(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  const int64_t d = r.attrs_of<OpId::Concat>().axis;
  int64_t at = 0;
  for (size_t i = 0; i < r.inputs.size(); ++i) {
    const int64_t n = r.inputs[i].shape()[size_t(d)];
    OM_ASSIGN_OR_RETURN(Tensor part, ops::slice(g, d, at, at + n, 1));
    OM_ASSIGN_OR_RETURN((*gin)[i], ops::contiguous(part));
    at += n;
  }
  return Status::ok();
}

Status grad_NllLoss(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  const Tensor& logp = r.inputs[0];
  OM_ASSIGN_OR_RETURN(Tensor tg, detail::dense(r.inputs[1]));
  OM_ASSIGN_OR_RETURN(Tensor gd, detail::dense(g));
  const int64_t n = logp.shape()[0], c = logp.shape()[1];
  const NllLossAttrs& a = r.attrs_of<OpId::NllLoss>();
  const Reduction reduction = a.reduction;
  const int64_t ignore = a.ignore_index, counted = a.counted;
  OM_ASSIGN_OR_RETURN(Tensor out, detail::make_tensor(logp.shape(), DType::f32, true));
  float* po = detail::raw_as<float>(out);
  const int64_t* t = detail::raw_as<int64_t>(tg);
  const float* pg = detail::raw_as<float>(gd);
  for (int64_t i = 0; i < n; ++i) {
    if (t[i] == ignore) continue;
    float gi = reduction == Reduction::None ? pg[i] : pg[0];
    if (a.weight.empty()) {
      if (reduction == Reduction::Mean) gi /= float(counted);
      po[i * c + t[i]] = -gi;
    } else {  // class weights: the mean divides by the sum of the targets' weights
      double gw = double(gi) * a.weight[size_t(t[i])];
      if (reduction == Reduction::Mean) gw /= a.weight_sum;
      po[i * c + t[i]] = float(-gw);
    }
  }
  (*gin)[0] = out;
  return Status::ok();
}

}  // namespace om::autograd
