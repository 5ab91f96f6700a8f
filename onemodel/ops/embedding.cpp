// embedding (rows of a table picked by i64/i32 indices of any rank) and dropout.
#include "onemodel/core/tensor_internal.h"
#include "onemodel/ops/ops.h"
#include "onemodel/ops/record.h"
#include "onemodel/ops/transformer.h"

namespace om {
namespace ops {

Result<Tensor> embedding(const Tensor& indices, const Tensor& weight, int64_t padding_idx) {
  const char* call = "om::embedding";
  OM_TRY(check_input(indices, call));
  OM_TRY(check_input(weight, call));
  if (weight.dtype() != DType::f32 || weight.dim() != 2)
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": weight must be an f32 table [num_embeddings, dim], got ", weight.to_string()));
  if (indices.dtype() != DType::i64 && indices.dtype() != DType::i32)
    return Status::error(ErrorKind::DTypeMismatch, msg(call, ": indices must be i64 or i32, got ", indices.to_string(),
                                                       "; cast with .to(om::DType::i64)"));
  const int64_t num = weight.shape()[0], dim = weight.shape()[1];
  int64_t pad = -1;
  if (padding_idx != INT64_MIN) {
    if (padding_idx < -num || padding_idx >= num)
      return Status::error(ErrorKind::InvalidArgument, msg(call, ": padding_idx ", padding_idx, " is outside the table of ", num, " rows"));
    pad = padding_idx < 0 ? padding_idx + num : padding_idx;
  }
  Shape shape = indices.shape();
  shape.push_back(dim);
  OM_ASSIGN_OR_RETURN(Tensor di, detail::dense(indices));
  OM_ASSIGN_OR_RETURN(Tensor dw, detail::dense(weight));
  OM_ASSIGN_OR_RETURN(Tensor out, detail::make_tensor(shape, DType::f32, false, call));
  const float* w = detail::raw_as<float>(dw);
  float* y = detail::raw_as<float>(out);
  const bool i64 = indices.dtype() == DType::i64;
  for (int64_t i = 0; i < indices.numel(); ++i) {
    const int64_t ix = i64 ? detail::raw_as<int64_t>(di)[i] : int64_t(detail::raw_as<int32_t>(di)[i]);
    if (ix < 0 || ix >= num)
      return Status::error(ErrorKind::InvalidArgument, msg(call, ": index ", ix, " (element ", i, " of ", indices.to_string(),
                                                           ") is out of range for a table of ", num, " rows; indices must be in [0, ", num, ")"));
    const float* row = w + ix * dim;
    for (int64_t j = 0; j < dim; ++j) y[i * dim + j] = row[j];
  }
  OM_TRY(record<OpId::Embedding>({weight, indices}, out, EmbeddingAttrs{pad}));
  return out;
}

Result<Tensor> dropout(const Tensor& x, double p, bool training, Generator& gen) {
  const char* call = "om::dropout";
  OM_TRY(check_input(x, call));
  if (!(p >= 0 && p < 1)) return Status::error(ErrorKind::InvalidArgument, msg(call, ": p ", p, " must be in [0, 1)"));
  if (!training || p == 0) return x;
  if (x.dtype() != DType::f32) return Status::error(ErrorKind::DTypeMismatch, msg(call, ": expects f32, got ", x.to_string()));
  OM_ASSIGN_OR_RETURN(Tensor dx, detail::dense(x));
  OM_ASSIGN_OR_RETURN(Tensor mask, detail::make_tensor(x.shape(), DType::f32, false, call));
  OM_ASSIGN_OR_RETURN(Tensor out, detail::make_tensor(x.shape(), DType::f32, false, call));
  const float scale = float(1.0 / (1.0 - p));
  const float* px = detail::raw_as<float>(dx);
  float* pm = detail::raw_as<float>(mask);
  float* py = detail::raw_as<float>(out);
  for (int64_t i = 0; i < x.numel(); ++i) {
    pm[i] = double(gen.uniform()) < p ? 0.0f : scale;
    py[i] = px[i] * pm[i];
  }
  OM_TRY(record<OpId::Dropout>({x}, out, DropoutAttrs{p}, mask));
  return out;
}

}  // namespace ops

Tensor embedding(const Tensor& indices, const Tensor& weight, int64_t padding_idx) {
  return unwrap(ops::embedding(indices, weight, padding_idx));
}
Tensor dropout(const Tensor& x, double p, bool training, Generator& gen) { return unwrap(ops::dropout(x, p, training, gen)); }

}  // namespace om
