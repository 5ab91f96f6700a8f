// com.onemodel Attention: softmax(Q K^T * scale + mask) V in one kernel, written by the
// attention fusion pass (docs/graph-passes.md) in Fast sessions only.
//
// Inputs: Q [..., L, D]; K [..., S, D] (transpose_k = 1, the default) or K^T [..., D, S]
// (transpose_k = 0); V [..., S, Dv]; optional additive mask broadcastable to [..., L, S]. Ranks 2
// to 4; the leading (batch, head) axes broadcast as MatMul's do. Output [..., L, Dv].
//
// The [L, S] score matrix is never materialised: each block of kRows query rows walks the keys
// in blocks of kCols with a row-wise online softmax (running max m, running sum l, the output
// accumulator rescaled by exp(m_old - m_new) when the max grows), so the scratch is
// kRows x kCols scores plus kRows x Dv accumulators whatever L is. Both products go through
// kernels::f32_gemm with the plan's scratch as workspace (nothing allocated while running).
// Summation order differs from the separate operators (hence Fast only).
#include <algorithm>
#include <cmath>

#include "onemodel/graph/ops/op_util.h"
#include "onemodel/kernels/kernels.h"

namespace om::graph::ops {
namespace {

constexpr int64_t kRows = 32;
constexpr int64_t kCols = 256;

bool transpose_k(const Node& n) { return attr_int(n, "transpose_k", 1) != 0; }

// dims right-aligned into 4 axes (leading 1s).
void pad4(const int64_t* dims, size_t rank, int64_t out[4]) {
  for (size_t i = 0; i < 4; ++i) out[i] = i < 4 - rank ? 1 : dims[i - (4 - rank)];
}

Status infer_attention(InferContext& ctx) {
  const ValueDesc *q = ctx.input(0), *k = ctx.input(1), *v = ctx.input(2), *m = ctx.input(3);
  for (const ValueDesc* t : {q, k, v})
    if (!t || t->dtype != DType::f32 || t->shape.size() < 2 || t->shape.size() > 4)
      return ctx.error(ErrorKind::ShapeMismatch, "Q, K and V must be f32 of rank 2 to 4");
  int64_t qd[4], kd[4], vd[4];
  pad4(q->shape.data(), q->shape.size(), qd);
  pad4(k->shape.data(), k->shape.size(), kd);
  pad4(v->shape.data(), v->shape.size(), vd);
  const bool tk = transpose_k(ctx.node);
  const int64_t D = qd[3], S = tk ? kd[2] : kd[3], KD = tk ? kd[3] : kd[2];
  if (KD != D || vd[2] != S)
    return ctx.error(ErrorKind::ShapeMismatch, msg("Q ", shape_str(q->shape), ", K ", shape_str(k->shape), " (transpose_k ", tk ? 1 : 0,
                                                   ") and V ", shape_str(v->shape), " do not agree in D and S"));
  int64_t lead[2];
  for (int a = 0; a < 2; ++a) {
    lead[a] = std::max(qd[a], std::max(kd[a], vd[a]));
    for (int64_t x : {qd[a], kd[a], vd[a]})
      if (x != lead[a] && x != 1)
        return ctx.error(ErrorKind::ShapeMismatch, msg("the leading axes of Q ", shape_str(q->shape), ", K ", shape_str(k->shape), " and V ",
                                                       shape_str(v->shape), " do not broadcast"));
  }
  const size_t rank = std::max(q->shape.size(), std::max(k->shape.size(), v->shape.size()));
  const int64_t full[4] = {lead[0], lead[1], qd[2], S};
  if (m) {
    if (m->dtype != DType::f32 || m->shape.size() > 4)
      return ctx.error(ErrorKind::ShapeMismatch, msg("mask ", shape_str(m->shape), " must be f32 of rank <= 4"));
    int64_t md[4];
    pad4(m->shape.data(), m->shape.size(), md);
    for (int i = 0; i < 4; ++i)
      if (md[i] != full[i] && md[i] != 1)
        return ctx.error(ErrorKind::ShapeMismatch, msg("mask ", shape_str(m->shape), " must broadcast to the scores [", full[0], ", ", full[1],
                                                       ", ", full[2], ", ", full[3], "]"));
  }
  std::vector<int64_t> out = {lead[0], lead[1], qd[2], vd[3]};
  out.erase(out.begin(), out.begin() + (4 - std::max<size_t>(rank, 2)));
  ctx.set_output(0, DType::f32, std::move(out));
  return Status::ok();
}

size_t gemm_ws(int64_t D, int64_t Dv) {
  const size_t n = size_t(std::max(kCols, Dv)), kk = size_t(std::max(kCols, D));
  return kernels::gemm_workspace_floats(size_t(kRows) + 8, n + 16, kk);
}

size_t attention_scratch(const InferContext& ctx) {
  const int64_t D = ctx.input(0)->shape.back(), Dv = ctx.input(2)->shape.back();
  const size_t floats = size_t(kRows * kCols + kRows * Dv + 2 * kRows) + gemm_ws(D, Dv) + 16;
  return floats * sizeof(float);
}

// Element strides of the two leading axes of a [a0, a1, rows, cols] tensor (0 where broadcast).
void lead_strides(const int64_t d[4], int64_t s[2]) {
  const int64_t mat = d[2] * d[3];
  s[1] = d[1] == 1 ? 0 : mat;
  s[0] = d[0] == 1 ? 0 : d[1] * mat;
}

Status attention_kernel(const KernelContext& k) {
  const TensorArg &Q = k.in(0), &K = k.in(1), &V = k.in(2);
  int64_t qd[4], kd[4], vd[4], md[4] = {1, 1, 1, 1};
  pad4(Q.dims, Q.rank, qd);
  pad4(K.dims, K.rank, kd);
  pad4(V.dims, V.rank, vd);
  const bool tk = transpose_k(*k.node);
  const int64_t L = qd[2], D = qd[3], S = tk ? kd[2] : kd[3], Dv = vd[3];
  const int64_t lead0 = std::max(qd[0], std::max(kd[0], vd[0])), lead1 = std::max(qd[1], std::max(kd[1], vd[1]));
  int64_t qs[2], ks[2], vs[2], ms[4] = {0, 0, 0, 0};
  lead_strides(qd, qs);
  lead_strides(kd, ks);
  lead_strides(vd, vs);
  const float scale = attr_float(*k.node, "scale", 1.0f);
  const float* mp = nullptr;
  if (k.has_input(3)) {
    const TensorArg& M = k.in(3);
    mp = M.as<const float>();
    pad4(M.dims, M.rank, md);
    int64_t st = 1;
    for (int i = 3; i >= 0; --i) {
      ms[i] = md[i] == 1 ? 0 : st;
      st *= md[i];
    }
  }
  float* sblk = static_cast<float*>(k.scratch);
  float* acc = sblk + kRows * kCols;
  float* mrow = acc + kRows * Dv;
  float* lrow = mrow + kRows;
  float* ws = lrow + kRows;
  float* y = k.out(0).as<float>();
  for (int64_t a0 = 0; a0 < lead0; ++a0)
    for (int64_t a1 = 0; a1 < lead1; ++a1) {
      const float* qb = Q.as<const float>() + a0 * qs[0] + a1 * qs[1];
      const float* kb = K.as<const float>() + a0 * ks[0] + a1 * ks[1];
      const float* vb = V.as<const float>() + a0 * vs[0] + a1 * vs[1];
      float* yb = y + (a0 * lead1 + a1) * L * Dv;
      const float* mb = mp ? mp + a0 * ms[0] + a1 * ms[1] : nullptr;
      for (int64_t i0 = 0; i0 < L; i0 += kRows) {
        const int64_t rq = std::min(kRows, L - i0);
        for (int64_t i = 0; i < rq; ++i) {
          mrow[i] = -INFINITY;
          lrow[i] = 0;
        }
        std::fill(acc, acc + rq * Dv, 0.0f);
        for (int64_t j0 = 0; j0 < S; j0 += kCols) {
          const int64_t kc = std::min(kCols, S - j0);
          kernels::GemmArgs g;
          g.M = size_t(rq);
          g.N = size_t(kc);
          g.K = size_t(D);
          g.a = qb + i0 * D;
          g.a_rs = D;
          g.a_cs = 1;
          if (tk) {  // K [S, D]: B[d, j] = K[j0 + j, d]
            g.b = kb + j0 * D;
            g.b_rs = 1;
            g.b_cs = D;
          } else {  // K^T [D, S]
            g.b = kb + j0;
            g.b_rs = S;
            g.b_cs = 1;
          }
          g.c = sblk;
          g.ldc = size_t(kc);
          g.workspace = ws;
          kernels::f32_gemm(g, k.mode);
          for (int64_t i = 0; i < rq; ++i) {
            float* row = sblk + i * kc;
            const float* mrow_in = mb ? mb + (i0 + i) * ms[2] + j0 * ms[3] : nullptr;
            float mx = -INFINITY;
            for (int64_t j = 0; j < kc; ++j) {
              float s = row[j] * scale;
              if (mrow_in) s = s + mrow_in[j * ms[3]];
              row[j] = s;
              mx = s > mx ? s : mx;
            }
            const float m_new = mx > mrow[i] ? mx : mrow[i];
            if (m_new == -INFINITY) {  // every key so far masked out: contributes nothing yet
              std::fill(row, row + kc, 0.0f);
              continue;
            }
            const float factor = kernels::exp_f32(mrow[i] - m_new);  // exp(-inf) = 0 on the first block
            for (int64_t j = 0; j < kc; ++j) row[j] = row[j] - m_new;
            kernels::f32_unary(kernels::UnaryOp::Exp, row, row, size_t(kc));
            lrow[i] = lrow[i] * factor + kernels::f32_sum(row, size_t(kc), k.mode);
            if (factor != 1.0f) {
              float* ar = acc + i * Dv;
              for (int64_t e = 0; e < Dv; ++e) ar[e] *= factor;
            }
            mrow[i] = m_new;
          }
          kernels::GemmArgs pv;
          pv.M = size_t(rq);
          pv.N = size_t(Dv);
          pv.K = size_t(kc);
          pv.a = sblk;
          pv.a_rs = kc;
          pv.a_cs = 1;
          pv.b = vb + j0 * Dv;
          pv.b_rs = Dv;
          pv.b_cs = 1;
          pv.c = acc;
          pv.ldc = size_t(Dv);
          pv.accumulate = true;
          pv.workspace = ws;
          kernels::f32_gemm(pv, k.mode);
        }
        for (int64_t i = 0; i < rq; ++i) {
          const float l = lrow[i];
          float* out = yb + (i0 + i) * Dv;
          for (int64_t e = 0; e < Dv; ++e) out[e] = acc[i * Dv + e] / l;
        }
      }
    }
  return Status::ok();
}

constexpr AttrSpec kAttentionAttrs[] = {{"scale", AttrKind::Float}, {"transpose_k", AttrKind::Int}};

constexpr OpDef kOps[] = {
    op("Attention").in_domain(kOnemodelDomain).inputs(3, 4).attributes(kAttentionAttrs).shapes(infer_attention)
        .fast_only(attention_kernel).with_scratch(attention_scratch)
        .doc("written by the attention fusion pass: softmax(Q K^T * scale + mask) V, row-blocked online softmax (no [L, S] scores); fast only"),
};

}  // namespace

OpTable attention_ops() { return table_of(kOps); }

}  // namespace om::graph::ops
