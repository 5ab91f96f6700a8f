// add sub mul div neg with numpy broadcasting.
#include <algorithm>

#include "onemodel/ops/record.h"
#include "onemodel/core/tensor_internal.h"
#include "onemodel/kernels/int_arith.h"
#include "onemodel/kernels/kernels.h"
#include "onemodel/ops/ops.h"

namespace om {
namespace ops {

Status check_input(const Tensor& x, const char* call) { return detail::check_live(x, call); }

Status check_same_dtype(const Tensor& a, const Tensor& b, const char* call) {
  OM_TRY(check_input(a, call));
  OM_TRY(check_input(b, call));
  if (a.dtype() != b.dtype())
    return Status::error(ErrorKind::DTypeMismatch, msg(call, ": operands have dtypes ", dtype_name(a.dtype()), " and ", dtype_name(b.dtype()),
                                                       "; cast one with .to(...)"));
  return Status::ok();
}

Result<Shape> broadcast_shapes(const Shape& a, const Shape& b, const char* call) {
  const size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t k = 0; k < r; ++k) {
    const int64_t da = k < r - a.size() ? 1 : a[k - (r - a.size())];
    const int64_t db = k < r - b.size() ? 1 : b[k - (r - b.size())];
    if (da != db && da != 1 && db != 1)
      return Status::error(ErrorKind::ShapeMismatch, msg(call, ": shapes ", shape_str(a), " and ", shape_str(b), " do not broadcast (dim ", k,
                                                         ": ", da, " vs ", db, "); make the sizes equal or 1"));
    out[k] = da == 1 ? db : da;
  }
  return out;
}

namespace {

// Strides of `x` read in the index space of `out` (0 on broadcast dims).
Shape broadcast_strides(const Tensor& x, const Shape& out) {
  Shape s(out.size(), 0);
  const size_t lead = out.size() - size_t(x.dim());
  for (size_t k = 0; k < size_t(x.dim()); ++k) s[lead + k] = x.shape()[k] == 1 ? 0 : x.strides()[k];
  return s;
}

// Integer arithmetic as the graph kernels compute it (kernels/int_arith.h): wrap-around, and
// INT_MIN / -1 == INT_MIN. Divisors are checked for 0 before the loop (binary()).
template <typename T>
T apply(kernels::BinaryOp op, T a, T b) {
  switch (op) {
    case kernels::BinaryOp::Add: return kernels::int_wrap_add(a, b);
    case kernels::BinaryOp::Sub: return kernels::int_wrap_sub(a, b);
    case kernels::BinaryOp::Mul: return kernels::int_wrap_mul(a, b);
    case kernels::BinaryOp::Div: return b == 0 ? T(0) : kernels::int_div(a, b);
    default: return a;
  }
}

template <typename T>
Status check_divisor(const char* call, const Tensor& b) {
  int64_t at = 0;
  if (kernels::int_has_zero(detail::raw_as<T>(b), b.numel(), &at))
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": ", kernels::int_div_by_zero_text(), " (divisor element ", at, ")"));
  return Status::ok();
}

// Walks `out` with the innermost dim as one run; a and b are dense, so their inner strides are
// 0 or 1 and each run is one kernel call.
template <typename T>
void binary_loop(kernels::BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out) {
  const Shape& shape = out.shape();
  const Shape sa = broadcast_strides(a, shape), sb = broadcast_strides(b, shape);
  const T* pa = detail::raw_as<T>(a);
  const T* pb = detail::raw_as<T>(b);
  T* py = detail::raw_as<T>(out);
  const size_t rank = shape.size();
  const int64_t inner = rank ? shape.back() : 1;
  const int64_t outer = inner ? out.numel() / inner : 0;
  const int64_t ia = rank ? sa.back() : 0, ib = rank ? sb.back() : 0;
  std::vector<int64_t> idx(rank, 0);
  for (int64_t o = 0; o < outer; ++o) {
    int64_t oa = 0, ob = 0, rem = o;
    for (size_t k = rank ? rank - 1 : 0; k-- > 0;) {  // rank 0: no outer dims
      const int64_t i = rem % shape[k];
      rem /= shape[k];
      oa += i * sa[k];
      ob += i * sb[k];
    }
    if constexpr (std::is_same<T, float>::value) {
      kernels::f32_binary(op, pa + oa, size_t(ia), pb + ob, size_t(ib), py + o * inner, size_t(inner));
    } else {
      for (int64_t j = 0; j < inner; ++j) py[o * inner + j] = apply<T>(op, pa[oa + j * ia], pb[ob + j * ib]);
    }
  }
}

Result<Tensor> binary(OpId id, kernels::BinaryOp op, const Tensor& a, const Tensor& b) {
  const char* call = op_name(id);
  OM_TRY(check_same_dtype(a, b, call));
  OM_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(a.shape(), b.shape(), call));
  OM_ASSIGN_OR_RETURN(Tensor da, detail::dense(a));
  OM_ASSIGN_OR_RETURN(Tensor db, detail::dense(b));
  if (op == kernels::BinaryOp::Div && a.dtype() == DType::i64) OM_TRY(check_divisor<int64_t>(call, db));
  if (op == kernels::BinaryOp::Div && a.dtype() == DType::i32) OM_TRY(check_divisor<int32_t>(call, db));
  OM_ASSIGN_OR_RETURN(Tensor out, detail::make_tensor(shape, a.dtype(), false, call));
  switch (a.dtype()) {
    case DType::f32: binary_loop<float>(op, da, db, out); break;
    case DType::i64: binary_loop<int64_t>(op, da, db, out); break;
    case DType::i32: binary_loop<int32_t>(op, da, db, out); break;
    default:
      return Status::error(ErrorKind::DTypeMismatch, msg(call, ": ", dtype_name(a.dtype()), " arithmetic is not supported; cast to f32 first"));
  }
  OM_TRY(record_op(id, {a, b}, out));
  return out;
}

Tensor scalar_like(const Tensor& a, double v) { return scalar_tensor(v, a.defined() ? a.dtype() : DType::f32); }

}  // namespace

Result<Tensor> add(const Tensor& a, const Tensor& b) { return binary(OpId::Add, kernels::BinaryOp::Add, a, b); }
Result<Tensor> sub(const Tensor& a, const Tensor& b) { return binary(OpId::Sub, kernels::BinaryOp::Sub, a, b); }
Result<Tensor> mul(const Tensor& a, const Tensor& b) { return binary(OpId::Mul, kernels::BinaryOp::Mul, a, b); }
Result<Tensor> div(const Tensor& a, const Tensor& b) { return binary(OpId::Div, kernels::BinaryOp::Div, a, b); }

Result<Tensor> neg(const Tensor& x) {
  OM_TRY(check_input(x, "om::neg"));
  if (x.dtype() != DType::f32)
    return Status::error(ErrorKind::DTypeMismatch, msg("om::neg: expects f32, got ", x.to_string()));
  OM_ASSIGN_OR_RETURN(Tensor dx, detail::dense(x));
  OM_ASSIGN_OR_RETURN(Tensor out, detail::make_tensor(x.shape(), x.dtype()));
  kernels::f32_unary(kernels::UnaryOp::Neg, detail::raw_as<float>(dx), detail::raw_as<float>(out), size_t(x.numel()));
  OM_TRY(record<OpId::Neg>({x}, out));
  return out;
}

Result<Tensor> sum_to(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  Tensor cur = x;
  const size_t lead = size_t(x.dim()) - shape.size();
  for (size_t k = 0; k < lead; ++k) {
    OM_ASSIGN_OR_RETURN(cur, ops::sum(cur, 0, false));
  }
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == 1 && cur.shape()[k] != 1) {
      OM_ASSIGN_OR_RETURN(cur, ops::sum(cur, int64_t(k), true));
    }
  }
  return cur;
}

}  // namespace ops

Tensor add(const Tensor& a, const Tensor& b) { return unwrap(ops::add(a, b)); }
Tensor sub(const Tensor& a, const Tensor& b) { return unwrap(ops::sub(a, b)); }
Tensor mul(const Tensor& a, const Tensor& b) { return unwrap(ops::mul(a, b)); }
Tensor div(const Tensor& a, const Tensor& b) { return unwrap(ops::div(a, b)); }
Tensor add(const Tensor& a, double b) { return add(a, ops::scalar_like(a, b)); }
Tensor sub(const Tensor& a, double b) { return sub(a, ops::scalar_like(a, b)); }
Tensor mul(const Tensor& a, double b) { return mul(a, ops::scalar_like(a, b)); }
Tensor div(const Tensor& a, double b) { return div(a, ops::scalar_like(a, b)); }
Tensor neg(const Tensor& x) { return unwrap(ops::neg(x)); }
Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator+(const Tensor& a, double b) { return add(a, b); }
Tensor operator-(const Tensor& a, double b) { return sub(a, b); }
Tensor operator*(const Tensor& a, double b) { return mul(a, b); }
Tensor operator/(const Tensor& a, double b) { return div(a, b); }
Tensor operator*(double a, const Tensor& b) { return mul(b, a); }
Tensor operator-(const Tensor& x) { return neg(x); }

}  // namespace om
