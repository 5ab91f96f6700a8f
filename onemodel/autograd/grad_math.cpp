// Gradients of the math, comparison and selection operators (ops/math.cpp, ops/select.cpp).
// Comparisons and indices have none. Checked against finite differences in tests/autograd.
#include <cmath>

#include "onemodel/autograd/grad.h"
#include "onemodel/core/tensor_internal.h"
#include "onemodel/ops/math_ops.h"
#include "onemodel/ops/ops.h"

namespace om::ops {
Result<Tensor> broadcast_dense(const Tensor& x, const Shape& shape);  // ops/math.cpp
}

namespace om::autograd {
namespace {

Status none(std::vector<Tensor>*) { return Status::ok(); }

// f(i) for every element of a fresh f32 tensor of `shape`.
template <typename F>
Result<Tensor> fill(const Shape& shape, F f) {
  OM_ASSIGN_OR_RETURN(Tensor t, detail::make_tensor(shape, DType::f32));
  float* p = detail::raw_as<float>(t);
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = f(i);
  return t;
}

// Gradients of a broadcasting binary operator from per-element derivatives (da, db), each
// summed back to its operand's shape.
template <typename F>
Status binary_grad(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin, F deriv) {
  const Shape& shape = r.output_shape;
  OM_ASSIGN_OR_RETURN(Tensor a, ops::broadcast_dense(r.inputs[0], shape));
  OM_ASSIGN_OR_RETURN(Tensor b, ops::broadcast_dense(r.inputs[1], shape));
  OM_ASSIGN_OR_RETURN(Tensor dg, ops::broadcast_dense(g, shape));
  const float* pa = detail::raw_as<float>(a);
  const float* pb = detail::raw_as<float>(b);
  const float* pg = detail::raw_as<float>(dg);
  for (int k = 0; k < 2; ++k) {
    if (!r.inputs[size_t(k)].requires_grad()) continue;
    OM_ASSIGN_OR_RETURN(Tensor t, fill(shape, [&](int64_t i) { return float(double(pg[i]) * deriv(k, pa[i], pb[i])); }));
    OM_ASSIGN_OR_RETURN((*gin)[size_t(k)], ops::sum_to(t, r.inputs[size_t(k)].shape()));
  }
  return Status::ok();
}

// Scatters g into zeros of the input's shape at `idx` along `axis` (idx and g share a shape
// that equals the input's except along axis; keepdim-less g/idx are unsqueezed first).
Status scatter(const BackwardRecord& r, const Tensor& g, const Tensor& idx, int64_t axis, bool keepdim, std::vector<Tensor>* gin) {
  const Tensor& x = r.inputs[0];
  Tensor gk = g, ik = idx;
  if (!keepdim) {
    OM_ASSIGN_OR_RETURN(gk, ops::unsqueeze(g, axis));
    OM_ASSIGN_OR_RETURN(ik, ops::unsqueeze(idx, axis));
  }
  OM_ASSIGN_OR_RETURN(Tensor dg, detail::dense(gk));
  OM_ASSIGN_OR_RETURN(Tensor di, detail::dense(ik));
  OM_ASSIGN_OR_RETURN(Tensor out, detail::make_tensor(x.shape(), DType::f32, true));
  const Shape& xs = x.shape();
  const int64_t outer = shape_numel(Shape(xs.begin(), xs.begin() + axis)), inner = shape_numel(Shape(xs.begin() + axis + 1, xs.end()));
  const int64_t extent = x.shape()[size_t(axis)], kk = dg.shape()[size_t(axis)];
  const float* pg = detail::raw_as<float>(dg);
  const int64_t* pi = detail::raw_as<int64_t>(di);
  float* po = detail::raw_as<float>(out);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < kk; ++j)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t src = (o * kk + j) * inner + i;
        po[(o * extent + pi[src]) * inner + i] += pg[src];
      }
  (*gin)[0] = out;
  return Status::ok();
}

Status reduce_extreme_grad(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  const ReduceAttrs& a = r.attrs_as<ReduceAttrs>();
  if (!a.all) return scatter(r, g, r.saved, a.axis, a.keepdim, gin);
  // The whole tensor: g shared evenly by every element equal to the result (PyTorch).
  OM_ASSIGN_OR_RETURN(Tensor x, detail::dense(r.inputs[0]));
  const float y = *detail::raw_as<float>(r.saved);
  const float* px = detail::raw_as<float>(x);
  const bool nan = std::isnan(y);
  int64_t ties = 0;
  for (int64_t i = 0; i < x.numel(); ++i) ties += (px[i] == y || (nan && std::isnan(px[i]))) ? 1 : 0;
  OM_ASSIGN_OR_RETURN(Tensor dg, detail::dense(g));
  const double share = double(*detail::raw_as<float>(dg)) / double(ties ? ties : 1);
  OM_ASSIGN_OR_RETURN((*gin)[0], fill(x.shape(), [&](int64_t i) { return (px[i] == y || (nan && std::isnan(px[i]))) ? float(share) : 0.0f; }));
  return Status::ok();
}

Status maximum_grad(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin, bool max) {
  return binary_grad(r, g, gin, [max](int k, float a, float b) {
    if (a == b) return 0.5;  // ties split the gradient in half (PyTorch)
    const bool a_wins = max ? a > b : a < b;
    return (k == 0) == a_wins ? 1.0 : 0.0;
  });
}

}  // namespace

Status grad_Exp(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  OM_ASSIGN_OR_RETURN((*gin)[0], ops::mul(g, r.saved));
  return Status::ok();
}
Status grad_Log(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  OM_ASSIGN_OR_RETURN((*gin)[0], ops::div(g, r.inputs[0]));
  return Status::ok();
}
Status grad_Sqrt(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  OM_ASSIGN_OR_RETURN(Tensor two_y, ops::add(r.saved, r.saved));
  OM_ASSIGN_OR_RETURN((*gin)[0], ops::div(g, two_y));
  return Status::ok();
}
Status grad_Abs(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  OM_ASSIGN_OR_RETURN(Tensor x, detail::dense(r.inputs[0]));
  OM_ASSIGN_OR_RETURN(Tensor dg, detail::dense(g));
  const float* px = detail::raw_as<float>(x);
  const float* pg = detail::raw_as<float>(dg);
  OM_ASSIGN_OR_RETURN((*gin)[0], fill(x.shape(), [&](int64_t i) { return px[i] > 0 ? pg[i] : px[i] < 0 ? -pg[i] : 0.0f; }));
  return Status::ok();
}
Status grad_Pow(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  return binary_grad(r, g, gin, [](int k, float a, float b) {
    if (k == 0) return b == 0 ? 0.0 : double(b) * std::pow(double(a), double(b) - 1);
    if (a == 0 && b >= 0) return 0.0;  // PyTorch masks 0^b (b >= 0) to 0
    return std::pow(double(a), double(b)) * std::log(double(a));
  });
}
Status grad_Clamp(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  const ClampAttrs& a = r.attrs_of<OpId::Clamp>();
  OM_ASSIGN_OR_RETURN(Tensor x, detail::dense(r.inputs[0]));
  OM_ASSIGN_OR_RETURN(Tensor dg, detail::dense(g));
  const float* px = detail::raw_as<float>(x);
  const float* pg = detail::raw_as<float>(dg);
  const float lo = float(a.min), hi = float(a.max);
  OM_ASSIGN_OR_RETURN((*gin)[0], fill(x.shape(), [&](int64_t i) {
    const bool in = (!a.has_min || px[i] >= lo) && (!a.has_max || px[i] <= hi);
    return in ? pg[i] : 0.0f;
  }));
  return Status::ok();
}
Status grad_Eq(const BackwardRecord&, const Tensor&, std::vector<Tensor>* gin) { return none(gin); }
Status grad_Ne(const BackwardRecord&, const Tensor&, std::vector<Tensor>* gin) { return none(gin); }
Status grad_Lt(const BackwardRecord&, const Tensor&, std::vector<Tensor>* gin) { return none(gin); }
Status grad_Le(const BackwardRecord&, const Tensor&, std::vector<Tensor>* gin) { return none(gin); }
Status grad_Gt(const BackwardRecord&, const Tensor&, std::vector<Tensor>* gin) { return none(gin); }
Status grad_Ge(const BackwardRecord&, const Tensor&, std::vector<Tensor>* gin) { return none(gin); }
Status grad_ArgMax(const BackwardRecord&, const Tensor&, std::vector<Tensor>* gin) { return none(gin); }
Status grad_ArgMin(const BackwardRecord&, const Tensor&, std::vector<Tensor>* gin) { return none(gin); }
Status grad_TopKIndices(const BackwardRecord&, const Tensor&, std::vector<Tensor>* gin) { return none(gin); }

Status grad_Where(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  const Shape& shape = r.output_shape;
  OM_ASSIGN_OR_RETURN(Tensor c, ops::broadcast_dense(r.inputs[0], shape));
  OM_ASSIGN_OR_RETURN(Tensor dg, ops::broadcast_dense(g, shape));
  const bool* pc = detail::raw_as<bool>(c);
  const float* pg = detail::raw_as<float>(dg);
  for (size_t k = 1; k < 3; ++k) {
    if (!r.inputs[k].requires_grad() || r.inputs[k].dtype() != DType::f32) continue;
    OM_ASSIGN_OR_RETURN(Tensor t, fill(shape, [&](int64_t i) { return pc[i] == (k == 1) ? pg[i] : 0.0f; }));
    OM_ASSIGN_OR_RETURN((*gin)[k], ops::sum_to(t, r.inputs[k].shape()));
  }
  return Status::ok();
}

Status grad_Maximum(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) { return maximum_grad(r, g, gin, true); }
Status grad_Minimum(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) { return maximum_grad(r, g, gin, false); }
Status grad_MaxReduce(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) { return reduce_extreme_grad(r, g, gin); }
Status grad_MinReduce(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) { return reduce_extreme_grad(r, g, gin); }
Status grad_TopK(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  return scatter(r, g, r.saved, r.attrs_of<OpId::TopK>().axis, true, gin);
}

}  // namespace om::autograd
