// relu sigmoid tanh gelu: one kernel call on a dense copy of the input.
#include "onemodel/ops/record.h"
#include "onemodel/core/tensor_internal.h"
#include "onemodel/kernels/kernels.h"
#include "onemodel/ops/ops.h"

namespace om {
namespace ops {
namespace {

Result<Tensor> unary(OpId id, kernels::UnaryOp op, const Tensor& x, OpAttrs attrs, bool save_output) {
  const char* call = op_name(id);
  OM_TRY(check_input(x, call));
  if (x.dtype() != DType::f32)
    return Status::error(ErrorKind::DTypeMismatch, msg(call, ": expects f32, got ", x.to_string(), "; cast with .to(om::DType::f32)"));
  OM_ASSIGN_OR_RETURN(Tensor dx, detail::dense(x));
  OM_ASSIGN_OR_RETURN(Tensor out, detail::make_tensor(x.shape(), DType::f32));
  kernels::f32_unary(op, detail::raw_as<float>(dx), detail::raw_as<float>(out), size_t(x.numel()));
  Tensor saved = save_output ? detail::make_view(out, out.shape(), out.strides(), 0) : Tensor();
  OM_TRY(record_op(id, {x}, out, std::move(attrs), saved));
  return out;
}

}  // namespace

Result<Tensor> relu(const Tensor& x) { return unary(OpId::Relu, kernels::UnaryOp::Relu, x, NoAttrs{}, false); }
Result<Tensor> sigmoid(const Tensor& x) { return unary(OpId::Sigmoid, kernels::UnaryOp::Sigmoid, x, NoAttrs{}, true); }
Result<Tensor> tanh(const Tensor& x) { return unary(OpId::Tanh, kernels::UnaryOp::Tanh, x, NoAttrs{}, true); }
Result<Tensor> gelu(const Tensor& x, GeluApproximate approximate) {
  const bool t = approximate == GeluApproximate::Tanh;
  return unary(OpId::Gelu, t ? kernels::UnaryOp::GeluTanh : kernels::UnaryOp::GeluErf, x, GeluAttrs{t}, false);
}

}  // namespace ops

Tensor relu(const Tensor& x) { return unwrap(ops::relu(x)); }
Tensor sigmoid(const Tensor& x) { return unwrap(ops::sigmoid(x)); }
Tensor tanh(const Tensor& x) { return unwrap(ops::tanh(x)); }
Tensor gelu(const Tensor& x, GeluApproximate approximate) { return unwrap(ops::gelu(x, approximate)); }

}  // namespace om
