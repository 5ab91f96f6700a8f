#include <cmath>

#include "onemodel/autograd/grad.h"
#include "onemodel/core/tensor_internal.h"
#include "onemodel/kernels/kernels.h"
#include "onemodel/ops/ops.h"

namespace om::autograd {
namespace {

// gin = g * f'(x, y), elementwise over dense copies.
template <typename Deriv>
Status pointwise(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin, Deriv deriv) {
  OM_ASSIGN_OR_RETURN(Tensor x, detail::dense(r.inputs[0]));
  OM_ASSIGN_OR_RETURN(Tensor gd, detail::dense(g));
  Tensor y;
  if (r.saved.defined()) {
    OM_ASSIGN_OR_RETURN(y, detail::dense(r.saved));
  }
  OM_ASSIGN_OR_RETURN(Tensor out, detail::make_tensor(x.shape(), DType::f32));
  const float* px = detail::raw_as<float>(x);
  const float* pg = detail::raw_as<float>(gd);
  const float* py = y.defined() ? detail::raw_as<float>(y) : nullptr;
  float* po = detail::raw_as<float>(out);
  for (int64_t i = 0; i < x.numel(); ++i) po[i] = pg[i] * deriv(px[i], py ? py[i] : 0.0f);
  (*gin)[0] = out;
  return Status::ok();
}

}  // namespace

Status grad_Relu(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  return pointwise(r, g, gin, [](float x, float) { return x > 0 ? 1.0f : 0.0f; });
}

Status grad_Sigmoid(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  return pointwise(r, g, gin, [](float, float y) { return y * (1.0f - y); });
}

Status grad_Tanh(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  return pointwise(r, g, gin, [](float, float y) { return 1.0f - y * y; });
}

Status grad_Gelu(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  if (r.attrs_of<OpId::Gelu>().tanh) {
    return pointwise(r, g, gin, [](float x, float) {
      const float c = 0.7978845608028654f, k = 0.044715f;
      const float t = kernels::tanh_f32(c * (x + k * x * x * x));
      return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * c * (1.0f + 3.0f * k * x * x);
    });
  }
  return pointwise(r, g, gin, [](float x, float) {
    const float cdf = 0.5f * (1.0f + kernels::erf_f32(x * 0.7071067811865476f));
    const float pdf = kernels::exp_f32(-0.5f * x * x) * 0.3989422804014327f;
    return cdf + x * pdf;
  });
}

}  // namespace om::autograd
