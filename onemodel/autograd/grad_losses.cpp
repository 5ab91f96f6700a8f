// Gradients of the losses (ops/losses.cpp, ops/ctc.cpp), checked against finite differences in
// tests/autograd.
#include <cmath>

#include "onemodel/autograd/grad.h"
#include "onemodel/core/tensor_internal.h"
#include "onemodel/kernels/kernels.h"
#include "onemodel/ops/losses.h"

namespace om::ops {
Result<Tensor> broadcast_dense(const Tensor& x, const Shape& shape);  // ops/math.cpp
}

namespace om::autograd {
namespace {

// The incoming gradient for element i of an unreduced loss of n elements.
struct Scale {
  const float* g;
  Reduction reduction;
  double n;
  double at(int64_t i) const {
    if (reduction == Reduction::None) return g[i];
    return reduction == Reduction::Sum ? double(g[0]) : double(g[0]) / n;
  }
};

double softplus(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }
double sigmoid(double x) { return x >= 0 ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x) / (1.0 + std::exp(x)); }

// ga (dL/da in the broadcast shape) to both operands: a gets it, b its negative.
Status finish_pair(const BackwardRecord& r, const Tensor& ga, std::vector<Tensor>* gin) {
  if (r.inputs[0].requires_grad()) {
    OM_ASSIGN_OR_RETURN((*gin)[0], ops::sum_to(ga, r.inputs[0].shape()));
  }
  if (r.inputs[1].requires_grad()) {
    OM_ASSIGN_OR_RETURN(Tensor gb, ops::neg(ga));
    OM_ASSIGN_OR_RETURN((*gin)[1], ops::sum_to(gb, r.inputs[1].shape()));
  }
  return Status::ok();
}

// dL/da per element from d = a - b, for the elementwise losses.
template <typename F>
Status pair_grad(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin, Reduction reduction, F deriv) {
  OM_ASSIGN_OR_RETURN(Shape shape, ops::broadcast_shapes(r.inputs[0].shape(), r.inputs[1].shape(), op_name(r.op)));
  OM_ASSIGN_OR_RETURN(Tensor a, ops::broadcast_dense(r.inputs[0], shape));
  OM_ASSIGN_OR_RETURN(Tensor b, ops::broadcast_dense(r.inputs[1], shape));
  OM_ASSIGN_OR_RETURN(Tensor dg, detail::dense(g));
  OM_ASSIGN_OR_RETURN(Tensor ga, detail::make_tensor(shape, DType::f32));
  const float* pa = detail::raw_as<float>(a);
  const float* pb = detail::raw_as<float>(b);
  float* pga = detail::raw_as<float>(ga);
  const Scale sc{detail::raw_as<float>(dg), reduction, double(ga.numel())};
  for (int64_t i = 0; i < ga.numel(); ++i) pga[i] = float(sc.at(i) * deriv(double(pa[i]) - double(pb[i])));
  return finish_pair(r, ga, gin);
}

double sign(double d) { return d > 0 ? 1.0 : d < 0 ? -1.0 : 0.0; }

}  // namespace

// The chain rule through log_softmax, in the order om::log_softmax's gradient uses: dz = G - p *
// rowsum(G), with G = dL/dlogp = -(1-eps) w_t [c = t] s_nll - (eps/C) w_c s_smooth per row.
Status grad_CrossEntropy(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  const CrossEntropyAttrs& a = r.attrs_of<OpId::CrossEntropy>();
  const Tensor& logp = r.saved;
  const int64_t n = logp.shape()[0], c = logp.shape()[1];
  OM_ASSIGN_OR_RETURN(Tensor tg, detail::dense(r.inputs[1]));
  OM_ASSIGN_OR_RETURN(Tensor gd, detail::dense(g));
  const int64_t* t = detail::raw_as<int64_t>(tg);
  const float* pg = detail::raw_as<float>(gd);
  const double eps = a.label_smoothing;
  OM_ASSIGN_OR_RETURN(Tensor G, detail::make_tensor(logp.shape(), DType::f32, true));
  float* po = detail::raw_as<float>(G);
  for (int64_t i = 0; i < n; ++i) {
    if (t[i] == a.ignore_index) continue;
    float gi = a.reduction == Reduction::None ? pg[i] : pg[0];
    if (eps == 0 && a.weight.empty()) {  // exactly om::nll_loss's gradient
      if (a.reduction == Reduction::Mean) gi /= float(a.divisor);
      po[i * c + t[i]] = -gi;
      continue;
    }
    const double s_nll = a.reduction == Reduction::Mean ? double(gi) / a.divisor : double(gi);
    const double s_smooth = a.reduction == Reduction::Mean ? double(gi) / a.smooth_divisor : double(gi);
    const double wt = a.weight.empty() ? 1.0 : a.weight[size_t(t[i])];
    for (int64_t k = 0; k < c; ++k) {
      const double wk = a.weight.empty() ? 1.0 : a.weight[size_t(k)];
      double v = -eps / double(c) * wk * s_smooth;
      if (k == t[i]) v -= (1 - eps) * wt * s_nll;
      po[i * c + k] = float(v);
    }
  }
  OM_ASSIGN_OR_RETURN(Tensor s, ops::sum(G, 1, true));
  OM_ASSIGN_OR_RETURN(Tensor y, detail::dense(logp));
  OM_ASSIGN_OR_RETURN(Tensor p, detail::make_tensor(y.shape(), DType::f32));
  const float* py = detail::raw_as<float>(y);
  float* pp = detail::raw_as<float>(p);
  for (int64_t i = 0; i < y.numel(); ++i) pp[i] = kernels::exp_f32(py[i]);
  OM_ASSIGN_OR_RETURN(Tensor ps, ops::mul(p, s));
  OM_ASSIGN_OR_RETURN((*gin)[0], ops::sub(G, ps));
  return Status::ok();
}

// The gradient of mean((a - b)^2) in the order sub, mul, mean compute it (q = g / n, then q d
// from each side of the product), so training bits equal those of the composition.
Status grad_MseLoss(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  const Reduction reduction = r.attrs_of<OpId::MseLoss>().reduction;
  OM_ASSIGN_OR_RETURN(Shape shape, ops::broadcast_shapes(r.inputs[0].shape(), r.inputs[1].shape(), "om::mse_loss"));
  OM_ASSIGN_OR_RETURN(Tensor a, ops::broadcast_dense(r.inputs[0], shape));
  OM_ASSIGN_OR_RETURN(Tensor b, ops::broadcast_dense(r.inputs[1], shape));
  OM_ASSIGN_OR_RETURN(Tensor dg, ops::broadcast_dense(g, reduction == Reduction::None ? shape : Shape{}));
  OM_ASSIGN_OR_RETURN(Tensor ga, detail::make_tensor(shape, DType::f32));
  const float* pa = detail::raw_as<float>(a);
  const float* pb = detail::raw_as<float>(b);
  const float* pg = detail::raw_as<float>(dg);
  float* y = detail::raw_as<float>(ga);
  const float n = float(ga.numel());
  for (int64_t i = 0; i < ga.numel(); ++i) {
    const float d = pa[i] - pb[i];
    const float gi = reduction == Reduction::None ? pg[i] : pg[0];
    const float q = reduction == Reduction::Mean ? gi / n : gi;
    const float qd = q * d;
    y[i] = qd + qd;
  }
  return finish_pair(r, ga, gin);
}

Status grad_L1Loss(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  return pair_grad(r, g, gin, r.attrs_of<OpId::L1Loss>().reduction, [](double d) { return sign(d); });
}
Status grad_SmoothL1Loss(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  const SmoothL1Attrs& a = r.attrs_of<OpId::SmoothL1Loss>();
  const double beta = a.beta;
  return pair_grad(r, g, gin, a.reduction, [beta](double d) { return std::fabs(d) < beta ? d / beta : sign(d); });
}
Status grad_HuberLoss(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  const SmoothL1Attrs& a = r.attrs_of<OpId::HuberLoss>();
  const double delta = a.beta;
  return pair_grad(r, g, gin, a.reduction, [delta](double d) { return std::fabs(d) < delta ? d : delta * sign(d); });
}

// l = p y softplus(-x) + (1 - y) softplus(x): dl/dx = sigmoid(x) (p y + 1 - y) - p y,
// dl/dy = p softplus(-x) - softplus(x). pos_weight gets no gradient.
Status grad_BceWithLogits(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  const Reduction reduction = r.attrs_of<OpId::BceWithLogits>().reduction;
  const Tensor& xt = r.inputs[0];
  OM_ASSIGN_OR_RETURN(Tensor x, detail::dense(xt));
  OM_ASSIGN_OR_RETURN(Tensor t, detail::dense(r.inputs[1]));
  OM_ASSIGN_OR_RETURN(Tensor dg, detail::dense(g));
  Tensor pw;
  if (r.inputs[2].defined()) {
    OM_ASSIGN_OR_RETURN(pw, ops::broadcast_dense(r.inputs[2], xt.shape()));
  }
  const float* px = detail::raw_as<float>(x);
  const float* pt = detail::raw_as<float>(t);
  const float* pp = pw.defined() ? detail::raw_as<float>(pw) : nullptr;
  const Scale sc{detail::raw_as<float>(dg), reduction, double(x.numel())};
  OM_ASSIGN_OR_RETURN(Tensor gx, detail::make_tensor(xt.shape(), DType::f32));
  OM_ASSIGN_OR_RETURN(Tensor gt, detail::make_tensor(xt.shape(), DType::f32));
  float* pgx = detail::raw_as<float>(gx);
  float* pgt = detail::raw_as<float>(gt);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double p = pp ? pp[i] : 1.0, y = pt[i], v = px[i], s = sc.at(i);
    pgx[i] = float(s * (sigmoid(v) * (p * y + 1 - y) - p * y));
    pgt[i] = float(s * (p * softplus(-v) - softplus(v)));
  }
  if (xt.requires_grad()) (*gin)[0] = gx;
  if (r.inputs[1].requires_grad()) (*gin)[1] = gt;
  return Status::ok();
}

// The saved per-entry gradient scaled by the incoming gradient and the reduction (Mean: divided
// by the entry's target length, then by the batch).
Status grad_CtcLoss(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  const CtcAttrs& a = r.attrs_of<OpId::CtcLoss>();
  OM_ASSIGN_OR_RETURN(Tensor dg, detail::dense(g));
  OM_ASSIGN_OR_RETURN(Tensor saved, detail::dense(r.saved));
  const Shape& s = saved.shape();
  const int64_t T = s[0], N = s[1], C = s[2];
  const float* pg = detail::raw_as<float>(dg);
  const float* ps = detail::raw_as<float>(saved);
  OM_ASSIGN_OR_RETURN(Tensor out, detail::make_tensor(s, DType::f32));
  float* po = detail::raw_as<float>(out);
  for (int64_t b = 0; b < N; ++b) {
    double scale = a.reduction == Reduction::None ? double(pg[b]) : double(pg[0]);
    if (a.reduction == Reduction::Mean) scale /= double(std::max<int64_t>(a.target_lengths[size_t(b)], 1)) * double(N);
    for (int64_t t = 0; t < T; ++t)
      for (int64_t c = 0; c < C; ++c) {
        const size_t i = size_t((t * N + b) * C + c);
        po[i] = ps[i] == 0 ? 0.0f : float(scale * ps[i]);
      }
  }
  (*gin)[0] = out;
  return Status::ok();
}

}  // namespace om::autograd
