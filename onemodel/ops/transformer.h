// Eager operators of the transformer family (docs/operators.md, docs/tracing.md): layer norm,
// embedding, dropout and scaled dot-product attention. The public functions throw om::Error;
// each has a Status-returning twin in om::ops.
#pragma once
#include <cstdint>
#include <vector>

#include "onemodel/core/tensor.h"

namespace om {

// Normalises over the trailing `normalized_shape` axes (its sizes must equal x's last axes):
// y = (x - mean) / sqrt(var + eps) * weight + bias; weight and bias (shape normalized_shape)
// may be undefined. Statistics accumulate in double (docs/exactness.md).
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);

// Rows of `weight` [num, dim] picked by `indices` (i64 or i32, any rank): shape indices + [dim].
// Row `padding_idx` (negative: none; counted from the end like PyTorch when in [-num, 0)) gets
// no gradient. An index outside [0, num) is an om::Error naming it and the table size.
Tensor embedding(const Tensor& indices, const Tensor& weight, int64_t padding_idx = INT64_MIN);

// Training: each element kept with probability 1 - p (drawn from `gen`) and scaled by 1/(1-p);
// otherwise (or p == 0) x itself.
Tensor dropout(const Tensor& x, double p, bool training, Generator& gen = default_generator());

// softmax(q k^T * scale + mask) v on q [B,H,Lq,D], k and v [B,H,Lk,D]. `mask` (additive, f32)
// is [Lq,Lk], [B,Lq,Lk] or [B,H,Lq,Lk], or undefined; `causal` adds -inf above the diagonal;
// scale <= 0 means 1/sqrt(D). A composition of recorded operators (Transpose, MatMul, Mul, Add,
// Softmax, MatMul when traced: the pattern the attention fusion pass recognises).
Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask = Tensor(), double scale = 0,
                 bool causal = false);

namespace ops {
Result<Tensor> layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias, double eps);
Result<Tensor> embedding(const Tensor& indices, const Tensor& weight, int64_t padding_idx);
Result<Tensor> dropout(const Tensor& x, double p, bool training, Generator& gen);
Result<Tensor> attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double scale, bool causal);
}  // namespace ops

}  // namespace om
