// exp log sqrt abs pow clamp, comparisons, where and elementwise max/min (docs/training.md).
// Comparisons have no gradient: they record only while a trace is active, so their bool
// results never require gradients in ordinary eager code.
#include <cmath>
#include <cstring>

#include "onemodel/core/grad_mode.h"
#include "onemodel/core/tensor_internal.h"
#include "onemodel/core/trace_hook.h"
#include "onemodel/kernels/kernels.h"
#include "onemodel/ops/math_ops.h"
#include "onemodel/ops/ops.h"
#include "onemodel/ops/record.h"

namespace om {
namespace ops {

Result<Tensor> broadcast_dense(const Tensor& x, const Shape& shape) {
  detail::InternalNoGrad no_grad;
  if (x.shape() == shape) return detail::dense(x);
  OM_ASSIGN_OR_RETURN(Tensor e, ops::expand(x, shape));
  return detail::dense(e);
}

Result<BroadcastPair> broadcast_pair(const Tensor& a, const Tensor& b, const char* call) {
  BroadcastPair p;
  OM_ASSIGN_OR_RETURN(p.shape, broadcast_shapes(a.shape(), b.shape(), call));
  OM_ASSIGN_OR_RETURN(p.a, broadcast_dense(a, p.shape));
  OM_ASSIGN_OR_RETURN(p.b, broadcast_dense(b, p.shape));
  return p;
}

namespace {

Status need_f32(const Tensor& x, const char* call) {
  OM_TRY(check_input(x, call));
  if (x.dtype() != DType::f32)
    return Status::error(ErrorKind::DTypeMismatch, msg(call, ": expects f32, got ", x.to_string(), "; cast with .to(om::DType::f32)"));
  return Status::ok();
}

// pow, maximum and minimum: two f32 operands broadcast together, dense, and their f32 output.
struct F32Binary {
  BroadcastPair in;
  Tensor out;
};
Result<F32Binary> f32_binary_operands(const Tensor& a, const Tensor& b, const char* call) {
  OM_TRY(need_f32(a, call));
  OM_TRY(need_f32(b, call));
  F32Binary r;
  OM_ASSIGN_OR_RETURN(r.in, broadcast_pair(a, b, call));
  OM_ASSIGN_OR_RETURN(r.out, detail::make_tensor(r.in.shape, DType::f32, false, call));
  return r;
}

Tensor scalar_like(const Tensor& a, double v) { return scalar_tensor(v, a.defined() ? a.dtype() : DType::f32); }

template <typename T>
void compare_loop(Compare c, const T* a, const T* b, bool* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const T x = a[i], z = b[i];
    switch (c) {
      case Compare::Eq: y[i] = x == z; break;
      case Compare::Ne: y[i] = x != z; break;
      case Compare::Lt: y[i] = x < z; break;
      case Compare::Le: y[i] = x <= z; break;
      case Compare::Gt: y[i] = x > z; break;
      case Compare::Ge: y[i] = x >= z; break;
    }
  }
}

OpId compare_op(Compare c) {
  switch (c) {
    case Compare::Eq: return OpId::Eq;
    case Compare::Ne: return OpId::Ne;
    case Compare::Lt: return OpId::Lt;
    case Compare::Le: return OpId::Le;
    case Compare::Gt: return OpId::Gt;
    default: return OpId::Ge;
  }
}

}  // namespace

Result<Tensor> unary_math(int op_int, const Tensor& x) {
  const OpId op = OpId(op_int);
  const char* call = op_name(op);
  OM_TRY(need_f32(x, call));
  kernels::UnaryOp k = kernels::UnaryOp::Exp;
  switch (op) {
    case OpId::Exp: k = kernels::UnaryOp::Exp; break;
    case OpId::Log: k = kernels::UnaryOp::Log; break;
    case OpId::Sqrt: k = kernels::UnaryOp::Sqrt; break;
    case OpId::Abs: k = kernels::UnaryOp::Abs; break;
    default: return Status::error(ErrorKind::Internal, msg(call, ": not a unary math operator"));
  }
  OM_ASSIGN_OR_RETURN(Tensor dx, detail::dense(x));
  OM_ASSIGN_OR_RETURN(Tensor out, detail::make_tensor(x.shape(), DType::f32, false, call));
  kernels::f32_unary(k, detail::raw_as<float>(dx), detail::raw_as<float>(out), size_t(x.numel()));
  // exp and sqrt keep their output for the gradient (d exp = y, d sqrt = 1 / 2y).
  const bool save_out = op == OpId::Exp || op == OpId::Sqrt;
  OM_TRY(record_op(op, {x}, out, NoAttrs{}, save_out ? detail::make_view(out, out.shape(), out.strides(), 0) : Tensor()));
  return out;
}

Result<Tensor> pow(const Tensor& a, const Tensor& b) {
  OM_ASSIGN_OR_RETURN(F32Binary r, f32_binary_operands(a, b, "om::pow"));
  kernels::f32_binary(kernels::BinaryOp::Pow, detail::raw_as<float>(r.in.a), 1, detail::raw_as<float>(r.in.b), 1,
                      detail::raw_as<float>(r.out), size_t(r.out.numel()));
  OM_TRY(record<OpId::Pow>({a, b}, r.out));
  return r.out;
}

Result<Tensor> clamp(const Tensor& x, std::optional<double> lo, std::optional<double> hi) {
  const char* call = "om::clamp";
  OM_TRY(need_f32(x, call));
  if (lo && hi && *lo > *hi)
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": min ", *lo, " is larger than max ", *hi, "; pass min <= max"));
  OM_ASSIGN_OR_RETURN(Tensor dx, detail::dense(x));
  OM_ASSIGN_OR_RETURN(Tensor out, detail::make_tensor(x.shape(), DType::f32, false, call));
  const float* px = detail::raw_as<float>(dx);
  float* py = detail::raw_as<float>(out);
  const float l = lo ? float(*lo) : -INFINITY, h = hi ? float(*hi) : INFINITY;
  // The graph's Clip computes exactly this (graph/ops/activations.cpp).
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float v = px[i] < l ? l : px[i];
    py[i] = v > h ? h : v;
  }
  OM_TRY(record<OpId::Clamp>({x}, out, ClampAttrs{bool(lo), bool(hi), lo ? *lo : 0.0, hi ? *hi : 0.0}));
  return out;
}

Result<Tensor> compare(Compare c, const Tensor& a, const Tensor& b) {
  const OpId op = compare_op(c);
  const char* call = op_name(op);
  OM_TRY(check_same_dtype(a, b, call));
  OM_ASSIGN_OR_RETURN(BroadcastPair p, broadcast_pair(a, b, call));
  const Tensor &da = p.a, &db = p.b;
  OM_ASSIGN_OR_RETURN(Tensor out, detail::make_tensor(p.shape, DType::boolean, false, call));
  bool* y = detail::raw_as<bool>(out);
  const int64_t n = out.numel();
  switch (a.dtype()) {
    case DType::f32: compare_loop(c, detail::raw_as<float>(da), detail::raw_as<float>(db), y, n); break;
    case DType::i64: compare_loop(c, detail::raw_as<int64_t>(da), detail::raw_as<int64_t>(db), y, n); break;
    case DType::i32: compare_loop(c, detail::raw_as<int32_t>(da), detail::raw_as<int32_t>(db), y, n); break;
    case DType::boolean: compare_loop(c, detail::raw_as<bool>(da), detail::raw_as<bool>(db), y, n); break;
    default:
      return Status::error(ErrorKind::DTypeMismatch, msg(call, ": ", dtype_name(a.dtype()), " is not compared; cast to f32 first"));
  }
  if (detail::trace_hook()) OM_TRY(record_op(op, {a, b}, out));
  return out;
}

Result<Tensor> where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  const char* call = "om::where";
  OM_TRY(check_input(cond, call));
  OM_TRY(check_input(a, call));
  OM_TRY(check_input(b, call));
  if (cond.dtype() != DType::boolean)
    return Status::error(ErrorKind::DTypeMismatch, msg(call, ": the condition must be bool, got ", cond.to_string(), "; build it with om::gt, om::eq, ..."));
  if (a.dtype() != b.dtype())
    return Status::error(ErrorKind::DTypeMismatch, msg(call, ": the two branches have dtypes ", dtype_name(a.dtype()), " and ", dtype_name(b.dtype()),
                                                       "; cast one with .to(...)"));
  OM_ASSIGN_OR_RETURN(Shape s1, broadcast_shapes(cond.shape(), a.shape(), call));
  OM_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(s1, b.shape(), call));
  OM_ASSIGN_OR_RETURN(Tensor dc, broadcast_dense(cond, shape));
  OM_ASSIGN_OR_RETURN(Tensor da, broadcast_dense(a, shape));
  OM_ASSIGN_OR_RETURN(Tensor db, broadcast_dense(b, shape));
  OM_ASSIGN_OR_RETURN(Tensor out, detail::make_tensor(shape, a.dtype(), false, call));
  const size_t es = dtype_size(a.dtype());
  const bool* c = detail::raw_as<bool>(dc);
  const char* pa = static_cast<const char*>(detail::raw(da));
  const char* pb = static_cast<const char*>(detail::raw(db));
  char* py = static_cast<char*>(detail::raw(out));
  for (int64_t i = 0; i < out.numel(); ++i) std::memcpy(py + size_t(i) * es, (c[i] ? pa : pb) + size_t(i) * es, es);
  OM_TRY(record<OpId::Where>({cond, a, b}, out));
  return out;
}

Result<Tensor> maximum(const Tensor& a, const Tensor& b, bool max) {
  const OpId op = max ? OpId::Maximum : OpId::Minimum;
  OM_ASSIGN_OR_RETURN(F32Binary r, f32_binary_operands(a, b, op_name(op)));
  const float* pa = detail::raw_as<float>(r.in.a);
  const float* pb = detail::raw_as<float>(r.in.b);
  float* py = detail::raw_as<float>(r.out);
  // NaN propagates (PyTorch's maximum/minimum).
  for (int64_t i = 0; i < r.out.numel(); ++i)
    py[i] = std::isnan(pa[i]) || std::isnan(pb[i]) ? NAN : max ? (pa[i] < pb[i] ? pb[i] : pa[i]) : (pb[i] < pa[i] ? pb[i] : pa[i]);
  OM_TRY(record_op(op, {a, b}, r.out));
  return r.out;
}

}  // namespace ops

Tensor exp(const Tensor& x) { return unwrap(ops::unary_math(int(OpId::Exp), x)); }
Tensor log(const Tensor& x) { return unwrap(ops::unary_math(int(OpId::Log), x)); }
Tensor sqrt(const Tensor& x) { return unwrap(ops::unary_math(int(OpId::Sqrt), x)); }
Tensor abs(const Tensor& x) { return unwrap(ops::unary_math(int(OpId::Abs), x)); }
Tensor pow(const Tensor& a, const Tensor& b) { return unwrap(ops::pow(a, b)); }
Tensor pow(const Tensor& a, double b) { return pow(a, ops::scalar_like(a, b)); }
Tensor clamp(const Tensor& x, std::optional<double> lo, std::optional<double> hi) { return unwrap(ops::clamp(x, lo, hi)); }
Tensor eq(const Tensor& a, const Tensor& b) { return unwrap(ops::compare(ops::Compare::Eq, a, b)); }
Tensor ne(const Tensor& a, const Tensor& b) { return unwrap(ops::compare(ops::Compare::Ne, a, b)); }
Tensor lt(const Tensor& a, const Tensor& b) { return unwrap(ops::compare(ops::Compare::Lt, a, b)); }
Tensor le(const Tensor& a, const Tensor& b) { return unwrap(ops::compare(ops::Compare::Le, a, b)); }
Tensor gt(const Tensor& a, const Tensor& b) { return unwrap(ops::compare(ops::Compare::Gt, a, b)); }
Tensor ge(const Tensor& a, const Tensor& b) { return unwrap(ops::compare(ops::Compare::Ge, a, b)); }
Tensor eq(const Tensor& a, double b) { return eq(a, ops::scalar_like(a, b)); }
Tensor ne(const Tensor& a, double b) { return ne(a, ops::scalar_like(a, b)); }
Tensor lt(const Tensor& a, double b) { return lt(a, ops::scalar_like(a, b)); }
Tensor le(const Tensor& a, double b) { return le(a, ops::scalar_like(a, b)); }
Tensor gt(const Tensor& a, double b) { return gt(a, ops::scalar_like(a, b)); }
Tensor ge(const Tensor& a, double b) { return ge(a, ops::scalar_like(a, b)); }
Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
Tensor operator<(const Tensor& a, double b) { return lt(a, b); }
Tensor operator<=(const Tensor& a, double b) { return le(a, b); }
Tensor operator>(const Tensor& a, double b) { return gt(a, b); }
Tensor operator>=(const Tensor& a, double b) { return ge(a, b); }
Tensor where(const Tensor& c, const Tensor& a, const Tensor& b) { return unwrap(ops::where(c, a, b)); }
Tensor max(const Tensor& a, const Tensor& b) { return unwrap(ops::maximum(a, b, true)); }
Tensor min(const Tensor& a, const Tensor& b) { return unwrap(ops::maximum(a, b, false)); }

}  // namespace om
