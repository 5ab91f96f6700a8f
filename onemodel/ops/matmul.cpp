// matmul with torch semantics (1-D operands, batched, broadcast batch dims) on the GEMM kernel,
// which reads strided operands directly (a transposed weight needs no copy).
#include "onemodel/ops/record.h"
#include "onemodel/core/mode.h"
#include "onemodel/core/tensor_internal.h"
#include "onemodel/kernels/kernels.h"
#include "onemodel/ops/ops.h"

namespace om {
namespace ops {

Result<Tensor> matmul(const Tensor& a, const Tensor& b) {
  const char* call = "om::matmul";
  OM_TRY(check_input(a, call));
  OM_TRY(check_input(b, call));
  if (a.dtype() != DType::f32 || b.dtype() != DType::f32)
    return Status::error(ErrorKind::DTypeMismatch, msg(call, ": expects f32 operands, got ", a.to_string(), " and ", b.to_string()));
  if (a.dim() == 0 || b.dim() == 0)
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": operands must have at least 1 dim, got ", a.to_string(), " and ", b.to_string(),
                                                         "; use om::mul for scalars"));
  // Promote 1-D operands as torch does, remembering which dims to drop from the result.
  Tensor a2 = a.dim() == 1 ? detail::make_view(a, {1, a.shape()[0]}, {0, a.strides()[0]}, a.storage_offset()) : a;
  Tensor b2 = b.dim() == 1 ? detail::make_view(b, {b.shape()[0], 1}, {b.strides()[0], 0}, b.storage_offset()) : b;
  const int64_t M = a2.shape()[a2.dim() - 2], K = a2.shape()[a2.dim() - 1];
  const int64_t K2 = b2.shape()[b2.dim() - 2], N = b2.shape()[b2.dim() - 1];
  if (K != K2)
    return Status::error(ErrorKind::ShapeMismatch, msg(call, ": shapes ", shape_str(a.shape()), " and ", shape_str(b.shape()),
                                                       " cannot be multiplied (inner sizes ", K, " vs ", K2, ")"));
  const Shape batch_a(a2.shape().begin(), a2.shape().end() - 2), batch_b(b2.shape().begin(), b2.shape().end() - 2);
  OM_ASSIGN_OR_RETURN(Shape batch, broadcast_shapes(batch_a, batch_b, call));
  Shape out_shape = batch;
  out_shape.push_back(M);
  out_shape.push_back(N);
  OM_ASSIGN_OR_RETURN(Tensor out, detail::make_tensor(out_shape, DType::f32));

  const int64_t nbatch = shape_numel(batch);
  auto batch_offset = [&](const Tensor& t, const Shape& tb, int64_t flat) {
    int64_t off = 0;
    const size_t lead = batch.size() - tb.size();
    for (size_t k = batch.size(); k-- > 0;) {
      const int64_t i = flat % batch[k];
      flat /= batch[k];
      if (k >= lead && tb[k - lead] != 1) off += i * t.strides()[k - lead];
    }
    return off;
  };
  const float* pa = detail::raw_as<float>(a2);
  const float* pb = detail::raw_as<float>(b2);
  float* pc = detail::raw_as<float>(out);
  const ArithmeticMode mode = current_arithmetic_mode();
  for (int64_t bi = 0; bi < nbatch; ++bi) {
    kernels::GemmArgs g;
    g.M = size_t(M);
    g.N = size_t(N);
    g.K = size_t(K);
    g.a = pa + batch_offset(a2, batch_a, bi);
    g.a_rs = a2.strides()[a2.dim() - 2];
    g.a_cs = a2.strides()[a2.dim() - 1];
    g.b = pb + batch_offset(b2, batch_b, bi);
    g.b_rs = b2.strides()[b2.dim() - 2];
    g.b_cs = b2.strides()[b2.dim() - 1];
    g.c = pc + bi * M * N;
    g.ldc = size_t(N);
    kernels::f32_gemm(g, mode);
  }
  Shape final_shape = batch;
  if (a.dim() != 1) final_shape.push_back(M);
  if (b.dim() != 1) final_shape.push_back(N);
  if (final_shape != out_shape) out = detail::make_view(out, final_shape, contiguous_strides(final_shape), 0);
  OM_TRY(record<OpId::MatMul>({a, b}, out));
  return out;
}

}  // namespace ops

Tensor matmul(const Tensor& a, const Tensor& b) { return unwrap(ops::matmul(a, b)); }

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  if (weight.dim() != 2)
    raise(Status::error(ErrorKind::InvalidArgument, msg("om::linear: weight must be [out_features, in_features], got ", weight.to_string())));
  Tensor y = matmul(x, weight.t());
  return bias.defined() ? add(y, bias) : y;
}

}  // namespace om
