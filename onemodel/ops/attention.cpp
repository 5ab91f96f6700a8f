// attention(q, k, v, mask, scale, causal): a composition of recorded operators, so gradients
// come from theirs and a trace writes the pattern of docs/tracing.md (Transpose, MatMul, Mul by
// the scale, Add of the mask, Softmax, MatMul) that the attention fusion pass recognises.
#include <cmath>

#include "onemodel/core/tensor_internal.h"
#include "onemodel/ops/ops.h"
#include "onemodel/ops/transformer.h"

namespace om {
namespace ops {

namespace {
// -1e30 (not -inf: -inf * 0 on the diagonal would be NaN) times how far above the diagonal,
// built from arange so a trace follows the sequence length (docs/tracing.md, creation from
// sizes): relu(col - row) * -1e30 is 0 on and below the diagonal.
Result<Tensor> causal_mask(int64_t lq, int64_t lk) {
  OM_ASSIGN_OR_RETURN(Tensor rows, detail::create_range(0, double(lq), 1, DType::f32));
  OM_ASSIGN_OR_RETURN(Tensor cols, detail::create_range(0, double(lk), 1, DType::f32));
  OM_ASSIGN_OR_RETURN(Tensor r, ops::unsqueeze(rows, 1));
  OM_ASSIGN_OR_RETURN(Tensor c, ops::unsqueeze(cols, 0));
  OM_ASSIGN_OR_RETURN(Tensor d, ops::sub(c, r));
  OM_ASSIGN_OR_RETURN(d, ops::relu(d));
  return ops::mul(d, scalar_tensor(-1e30));
}
}  // namespace

Result<Tensor> attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double scale, bool causal) {
  const char* call = "om::attention";
  for (const Tensor* t : {&q, &k, &v}) {
    OM_TRY(check_input(*t, call));
    if (t->dtype() != DType::f32 || t->dim() != 4)
      return Status::error(ErrorKind::InvalidArgument, msg(call, ": q, k and v must be f32 [batch, heads, length, dim], got ", t->to_string()));
  }
  const Shape& qs = q.shape();
  const Shape& ks = k.shape();
  if (ks != v.shape() || ks[0] != qs[0] || ks[1] != qs[1] || ks[3] != qs[3])
    return Status::error(ErrorKind::ShapeMismatch, msg(call, ": q ", q.to_string(), ", k ", k.to_string(), " and v ", v.to_string(),
                                                       " must agree in batch, heads and dim (k and v equal)"));
  const int64_t lq = qs[2], lk = ks[2];
  Tensor m = mask;
  if (m.defined()) {
    OM_TRY(check_input(m, call));
    if (m.dim() == 3) { OM_ASSIGN_OR_RETURN(m, ops::unsqueeze(m, 1)); }
    const Shape& s = m.shape();
    const Shape full = {qs[0], qs[1], lq, lk};
    bool ok = m.dtype() == DType::f32 && s.size() >= 2 && s.size() <= 4;
    for (size_t i = 0; ok && i < s.size(); ++i) {
      const int64_t want = full[4 - s.size() + i];
      ok = s[i] == want || s[i] == 1;
    }
    if (!ok)
      return Status::error(ErrorKind::ShapeMismatch, msg(call, ": the additive mask must be f32 [", lq, ", ", lk, "], [", qs[0], ", ", lq,
                                                         ", ", lk, "] or [", qs[0], ", ", qs[1], ", ", lq, ", ", lk,
                                                         "] (size-1 axes broadcast), got ", mask.to_string()));
  }
  if (scale <= 0) scale = 1.0 / std::sqrt(double(qs[3]));
  OM_ASSIGN_OR_RETURN(Tensor kt, ops::transpose(k, -1, -2));
  OM_ASSIGN_OR_RETURN(Tensor s, ops::matmul(q, kt));
  OM_ASSIGN_OR_RETURN(s, ops::mul(s, scalar_tensor(scale)));
  if (causal) {
    OM_ASSIGN_OR_RETURN(Tensor c, causal_mask(lq, lk));
    if (m.defined()) { OM_ASSIGN_OR_RETURN(m, ops::add(m, c)); }
    else m = c;
  }
  if (m.defined()) { OM_ASSIGN_OR_RETURN(s, ops::add(s, m)); }
  OM_ASSIGN_OR_RETURN(Tensor p, ops::softmax(s, -1, false));
  return ops::matmul(p, v);
}

}  // namespace ops

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double scale, bool causal) {
  return unwrap(ops::attention(q, k, v, mask, scale, causal));
}

}  // namespace om
