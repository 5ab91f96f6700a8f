// layer_norm's gradient from the saved per-row (mean, 1/std), in double:
//   xhat = (x - mean) * inv, gh = g * weight,
//   dx = inv * (gh - mean(gh) - xhat * mean(gh * xhat)), dweight = sum_rows g * xhat, dbias = sum_rows g.
#include "onemodel/autograd/grad.h"
#include "onemodel/core/tensor_internal.h"
#include "onemodel/ops/ops.h"

namespace om::autograd {

Status grad_LayerNorm(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  const Tensor& x = r.inputs[0];
  const Tensor& w = r.inputs[1];
  const Tensor b = r.inputs.size() > 2 ? r.inputs[2] : Tensor();
  const LayerNormAttrs& a = r.attrs_of<OpId::LayerNorm>();
  int64_t n = 1;
  for (int64_t i = 0; i < a.normalized_dims; ++i) n *= x.shape()[size_t(x.dim() - 1 - i)];
  const int64_t rows = n == 0 ? 0 : x.numel() / n;
  OM_ASSIGN_OR_RETURN(Tensor dx, detail::dense(x));
  OM_ASSIGN_OR_RETURN(Tensor dg, detail::dense(g));
  OM_ASSIGN_OR_RETURN(Tensor st, detail::dense(r.saved));
  Tensor dw;
  if (w.defined()) { OM_ASSIGN_OR_RETURN(dw, detail::dense(w)); }
  const float* px = detail::raw_as<float>(dx);
  const float* pg = detail::raw_as<float>(dg);
  const float* ps = detail::raw_as<float>(st);
  const float* pw = w.defined() ? detail::raw_as<float>(dw) : nullptr;
  OM_ASSIGN_OR_RETURN(Tensor gx, detail::make_tensor(x.shape(), DType::f32));
  float* pgx = detail::raw_as<float>(gx);
  std::vector<double> gw(size_t(n), 0.0), gb(size_t(n), 0.0);
  for (int64_t row = 0; row < rows; ++row) {
    const double m = ps[2 * row], inv = ps[2 * row + 1];
    const float* xr = px + row * n;
    const float* gr = pg + row * n;
    double s1 = 0, s2 = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double xh = (double(xr[i]) - m) * inv;
      const double gh = double(gr[i]) * (pw ? double(pw[i]) : 1.0);
      s1 += gh;
      s2 += gh * xh;
      gw[size_t(i)] += double(gr[i]) * xh;
      gb[size_t(i)] += double(gr[i]);
    }
    s1 /= double(n);
    s2 /= double(n);
    for (int64_t i = 0; i < n; ++i) {
      const double xh = (double(xr[i]) - m) * inv;
      const double gh = double(gr[i]) * (pw ? double(pw[i]) : 1.0);
      pgx[row * n + i] = float(inv * (gh - s1 - xh * s2));
    }
  }
  if (x.requires_grad()) (*gin)[0] = gx;
  for (int k = 1; k <= 2; ++k) {
    const Tensor& p = k == 1 ? w : b;
    if (!p.defined() || !p.requires_grad()) continue;
    OM_ASSIGN_OR_RETURN(Tensor t, detail::make_tensor(p.shape(), DType::f32));
    float* pt = detail::raw_as<float>(t);
    const std::vector<double>& src = k == 1 ? gw : gb;
    for (int64_t i = 0; i < n; ++i) pt[i] = float(src[size_t(i)]);
    (*gin)[size_t(k)] = t;
  }
  return Status::ok();
}

}  // namespace om::autograd
