// com.onemodel Attention: softmax(Q K^T * scale + mask) V in one kernel, written by the
// attention fusion pass (docs/graph-passes.md) in Fast sessions only.
//
// Inputs: Q [..., L, D]; K [..., S, D] (transpose_k = 1, the default) or K^T [..., D, S]
// (transpose_k = 0); V [..., S, Dv]; optional additive mask broadcastable to [..., L, S]. Ranks 2
// to 4; the leading (batch, head) axes broadcast as MatMul's do. Output [..., L, Dv]. The pass
// also absorbs the Transposes around the pattern: perm_q / perm_k / perm_v (rank 4) read an
// input through its stored layout (logical axis i is stored axis perm[i]) and perm_y writes the
// output transposed (stored axis k holds logical axis perm_y[k]; the last axis stays last), so
// the head split and merge of multi-head attention cost no copies.
//
// The [L, S] score matrix is never materialised: when S <= kCols each block of kRows query rows
// takes its scores, the softmax rows kernel and the product in one go; longer key sequences are
// walked in blocks of kCols with a row-wise online softmax (running max m, running sum l, the output
// accumulator rescaled by exp(m_old - m_new) when the max grows), so the scratch is
// kRows x kCols scores plus kRows x Dv accumulators whatever L is. Both products go through
// kernels::f32_gemm with the plan's scratch as workspace (nothing allocated while running).
// Summation order differs from the separate operators (hence Fast only).
#include <algorithm>
#include <cmath>

#include "onemodel/graph/ops/op_util.h"
#include "onemodel/graph/passes/pass.h"
#include "onemodel/kernels/kernels.h"

namespace om::graph::ops {
namespace {

constexpr int64_t kRows = 128;
constexpr int64_t kCols = 256;

bool transpose_k(const Node& n) { return n.attr_int("transpose_k", 1) != 0; }

// A tensor as the kernel reads it: 4 logical axes [lead0, lead1, rows, cols] with element
// strides. Ranks below 4 get leading 1s; a `perm` attribute (rank 4 only) says that logical axis
// i is the stored tensor's axis perm[i] (a Transpose the fusion pass absorbed).
struct View4 {
  int64_t dims[4] = {1, 1, 1, 1};
  int64_t strides[4] = {0, 0, 0, 0};
};

bool view_of(const int64_t* dims, size_t rank, const Attribute* perm, View4* v) {
  if (rank < 2 || rank > 4) return false;
  int64_t pd[4], ps[4];
  for (size_t i = 0; i < 4; ++i) pd[i] = i < 4 - rank ? 1 : dims[i - (4 - rank)];
  int64_t st = 1;
  for (int i = 3; i >= 0; --i) {
    ps[i] = st;
    st *= pd[i];
  }
  if (perm) {
    if (rank != 4 || perm->ints.size() != 4) return false;
    bool seen[4] = {};
    for (int i = 0; i < 4; ++i) {
      const int64_t p = perm->ints[size_t(i)];
      if (p < 0 || p > 3 || seen[p]) return false;
      seen[p] = true;
      v->dims[i] = pd[p];
      v->strides[i] = ps[p];
    }
  } else {
    for (int i = 0; i < 4; ++i) {
      v->dims[i] = pd[i];
      v->strides[i] = ps[i];
    }
  }
  for (int i = 0; i < 2; ++i)
    if (v->dims[i] == 1) v->strides[i] = 0;  // broadcast over the leading axes
  return true;
}

// The output's logical [lead0, lead1, L, Dv] strides when it is stored permuted by perm_y
// (stored axis k holds logical axis perm_y[k]); the last axis must stay last.
bool output_layout(const int64_t logical[4], const Attribute* perm_y, int64_t stored[4], int64_t strides[4]) {
  int64_t perm[4] = {0, 1, 2, 3};
  if (perm_y) {
    if (perm_y->ints.size() != 4 || perm_y->ints[3] != 3) return false;
    bool seen[4] = {};
    for (int k = 0; k < 4; ++k) {
      const int64_t p = perm_y->ints[size_t(k)];
      if (p < 0 || p > 3 || seen[p]) return false;
      seen[p] = true;
      perm[k] = p;
    }
  }
  for (int k = 0; k < 4; ++k) stored[k] = logical[perm[k]];
  int64_t st = 1;
  for (int k = 3; k >= 0; --k) {
    strides[perm[k]] = st;
    st *= stored[k];
  }
  return true;
}

struct Plan {
  View4 q, k, v;
  int64_t lead[2] = {1, 1};
  int64_t L = 0, D = 0, S = 0, Dv = 0;
  bool tk = true;
  size_t out_rank = 4;
};

// Shapes and strides of a node's operands; an error message when they do not fit.
bool make_plan(const Node& node, const int64_t* const dims[3], const size_t ranks[3], Plan* p, std::string* why) {
  p->tk = transpose_k(node);
  if (!view_of(dims[0], ranks[0], node.attr("perm_q"), &p->q) || !view_of(dims[1], ranks[1], node.attr("perm_k"), &p->k) ||
      !view_of(dims[2], ranks[2], node.attr("perm_v"), &p->v)) {
    *why = "Q, K and V must be f32 of rank 2 to 4 (rank 4 with a perm)";
    return false;
  }
  p->L = p->q.dims[2];
  p->D = p->q.dims[3];
  p->S = p->tk ? p->k.dims[2] : p->k.dims[3];
  const int64_t kd = p->tk ? p->k.dims[3] : p->k.dims[2];
  p->Dv = p->v.dims[3];
  if (kd != p->D || p->v.dims[2] != p->S) {
    *why = msg("Q (L ", p->L, ", D ", p->D, "), K (transpose_k ", p->tk ? 1 : 0, ") and V do not agree in D and S");
    return false;
  }
  for (int a = 0; a < 2; ++a) {
    p->lead[a] = std::max(p->q.dims[a], std::max(p->k.dims[a], p->v.dims[a]));
    for (int64_t x : {p->q.dims[a], p->k.dims[a], p->v.dims[a]})
      if (x != p->lead[a] && x != 1) {
        *why = "the leading axes of Q, K and V do not broadcast";
        return false;
      }
  }
  p->out_rank = std::max(ranks[0], std::max(ranks[1], ranks[2]));
  return true;
}

Status infer_attention(InferContext& ctx) {
  const ValueDesc *q = ctx.input(0), *k = ctx.input(1), *v = ctx.input(2), *m = ctx.input(3);
  for (const ValueDesc* t : {q, k, v})
    if (!t || t->dtype != DType::f32) return ctx.error(ErrorKind::DTypeMismatch, "Q, K and V must be f32");
  const int64_t* dims[3] = {q->shape.data(), k->shape.data(), v->shape.data()};
  const size_t ranks[3] = {q->shape.size(), k->shape.size(), v->shape.size()};
  Plan p;
  std::string why;
  if (!make_plan(ctx.node, dims, ranks, &p, &why))
    return ctx.error(ErrorKind::ShapeMismatch, msg(why, ": Q ", shape_str(q->shape), ", K ", shape_str(k->shape), ", V ", shape_str(v->shape)));
  const int64_t full[4] = {p.lead[0], p.lead[1], p.L, p.S};
  if (m) {
    if (m->dtype != DType::f32 || m->shape.size() > 4)
      return ctx.error(ErrorKind::ShapeMismatch, msg("mask ", shape_str(m->shape), " must be f32 of rank <= 4"));
    for (size_t i = 0; i < m->shape.size(); ++i) {
      const int64_t want = full[4 - m->shape.size() + i];
      if (m->shape[i] != want && m->shape[i] != 1)
        return ctx.error(ErrorKind::ShapeMismatch, msg("mask ", shape_str(m->shape), " must broadcast to the scores [", full[0], ", ",
                                                       full[1], ", ", full[2], ", ", full[3], "]"));
    }
  }
  const int64_t logical[4] = {p.lead[0], p.lead[1], p.L, p.Dv};
  int64_t stored[4], strides[4];
  const Attribute* perm_y = ctx.node.attr("perm_y");
  if (!output_layout(logical, perm_y, stored, strides))
    return ctx.error(ErrorKind::InvalidArgument, "perm_y must be a permutation of 4 axes keeping the last axis last");
  std::vector<int64_t> out(stored, stored + 4);
  if (!perm_y) out.erase(out.begin(), out.begin() + (4 - std::max<size_t>(p.out_rank, 2)));
  ctx.set_output(0, DType::f32, std::move(out));
  return Status::ok();
}

size_t gemm_ws(int64_t D, int64_t Dv) {
  const size_t n = size_t(std::max(kCols, Dv)), kk = size_t(std::max(kCols, D));
  return kernels::gemm_workspace_floats(size_t(kRows) + 8, n + 16, kk);
}

size_t attention_scratch(const InferContext& ctx) {
  const int64_t* dims[3] = {ctx.input(0)->shape.data(), ctx.input(1)->shape.data(), ctx.input(2)->shape.data()};
  const size_t ranks[3] = {ctx.input(0)->shape.size(), ctx.input(1)->shape.size(), ctx.input(2)->shape.size()};
  Plan p;
  std::string why;
  make_plan(ctx.node, dims, ranks, &p, &why);
  const size_t floats = size_t(2 * kRows * kCols + kRows * p.Dv + 2 * kRows) + gemm_ws(p.D, p.Dv) + 16;
  return floats * sizeof(float);
}

// Attention's record: the operands' views, the output's strides, the mask's and the scale.
// Work: (lead0, lead1) heads x blocks of kRows query rows; each block's rows are computed from
// that head's K and V only.
struct AttentionParams {
  Plan p;
  int64_t ys[4] = {};  // the output's logical strides
  int64_t ms[4] = {};  // the mask's, 0 on broadcast axes
  int64_t blocks = 0;  // query blocks per head
  float scale = 1.0f;
};

Status prepare_attention(const InferContext& ctx, Prepared& out) {
  AttentionParams& a = out.record<AttentionParams>();
  const int64_t* dims[3] = {ctx.input(0)->shape.data(), ctx.input(1)->shape.data(), ctx.input(2)->shape.data()};
  const size_t ranks[3] = {ctx.input(0)->shape.size(), ctx.input(1)->shape.size(), ctx.input(2)->shape.size()};
  std::string why;  // infer refused what does not fit
  make_plan(ctx.node, dims, ranks, &a.p, &why);
  const int64_t logical[4] = {a.p.lead[0], a.p.lead[1], a.p.L, a.p.Dv};
  int64_t stored[4];
  output_layout(logical, ctx.node.attr("perm_y"), stored, a.ys);
  a.scale = ctx.node.attr_float("scale", 1.0f);
  if (const ValueDesc* m = ctx.input(3)) {
    const size_t rank = m->shape.size();
    int64_t md[4];
    for (size_t i = 0; i < 4; ++i) md[i] = i < 4 - rank ? 1 : m->shape[i - (4 - rank)];
    int64_t st = 1;
    for (int i = 3; i >= 0; --i) {
      a.ms[i] = md[i] == 1 ? 0 : st;
      st *= md[i];
    }
  }
  a.blocks = (a.p.L + kRows - 1) / kRows;
  out.work = a.p.lead[0] * a.p.lead[1] * a.blocks;
  // Q K^T and P V: L x S x (D + Dv) multiply-adds per (batch, head).
  out.cost = product_cost(count_mul(a.p.lead[0], a.p.lead[1]), count_mul(a.p.L, a.p.S), a.p.D + a.p.Dv);
  return Status::ok();
}

Status attention_kernel(const KernelContext& k) {
  const AttentionParams& ap = k.params<AttentionParams>();
  const Plan& p = ap.p;
  const TensorArg &Q = k.in(0), &K = k.in(1), &V = k.in(2);
  const int64_t L = p.L, D = p.D, S = p.S, Dv = p.Dv;
  const int64_t* ys = ap.ys;
  const int64_t* ms = ap.ms;
  const float scale = ap.scale;
  const float* mp = k.has_input(3) ? k.in(3).as<const float>() : nullptr;
  float* sblk = static_cast<float*>(k.scratch);
  float* acc = sblk + kRows * kCols;
  float* mrow = acc + kRows * Dv;
  float* lrow = mrow + kRows;
  float* pblk = lrow + kRows;  // probabilities of the single-block path
  float* ws = pblk + kRows * kCols;
  float* y = k.out(0).as<float>();
  const View4 &qv = p.q, &kv = p.k, &vv = p.v;
  for (int64_t u = k.begin; u < k.end; ++u) {
    const int64_t head = u / ap.blocks, a0 = head / p.lead[1], a1 = head % p.lead[1];
    {
      const float* qb = Q.as<const float>() + a0 * qv.strides[0] + a1 * qv.strides[1];
      const float* kb = K.as<const float>() + a0 * kv.strides[0] + a1 * kv.strides[1];
      const float* vb = V.as<const float>() + a0 * vv.strides[0] + a1 * vv.strides[1];
      float* yb = y + a0 * ys[0] + a1 * ys[1];
      const float* mb = mp ? mp + a0 * ms[0] + a1 * ms[1] : nullptr;
      {
        const int64_t i0 = (u % ap.blocks) * kRows;
        const int64_t rq = std::min(kRows, L - i0);
        // The scores of these rows against keys [j0, j0 + kc): Q K^T into sblk (rows kc apart).
        // K is stored [S, D] (transpose_k) or [D, S]; either way B is its logical K^T block.
        const MatRef q_rows{qb + i0 * qv.strides[2], qv.strides[2], qv.strides[3]};
        auto scores = [&](int64_t j0, int64_t kc) {
          const MatRef kt = p.tk ? MatRef{kb + j0 * kv.strides[2], kv.strides[3], kv.strides[2]}
                                 : MatRef{kb + j0 * kv.strides[3], kv.strides[2], kv.strides[3]};
          kernels::f32_gemm(gemm_args(size_t(rq), size_t(kc), size_t(D), q_rows, kt, sblk, size_t(kc), ws), k.mode);
        };
        // probs[rq, kc] (rows kc apart) times V's rows [j0, j0 + kc) into c, or added to it.
        auto times_v = [&](const float* probs, int64_t j0, int64_t kc, float* c, size_t ldc, bool accumulate) {
          kernels::GemmArgs pv = gemm_args(size_t(rq), size_t(Dv), size_t(kc), MatRef{probs, kc, 1},
                                           MatRef{vb + j0 * vv.strides[2], vv.strides[2], vv.strides[3]}, c, ldc, ws);
          pv.accumulate = accumulate;
          kernels::f32_gemm(pv, k.mode);
        };
        if (S <= kCols) {
          // All keys fit one block: the scores of these rows are small, so the plain softmax
          // rows kernel runs on them and the product is written straight into the output.
          scores(0, S);
          kernels::f32_binary(kernels::BinaryOp::Mul, sblk, 1, &scale, 0, sblk, size_t(rq * S));
          if (mb) {
            if (ms[3] == 1 && ms[2] == S) {
              kernels::f32_binary(kernels::BinaryOp::Add, sblk, 1, mb + i0 * ms[2], 1, sblk, size_t(rq * S));
            } else {
              for (int64_t i = 0; i < rq; ++i)
                kernels::f32_binary(kernels::BinaryOp::Add, sblk + i * S, 1, mb + (i0 + i) * ms[2], ms[3] == 0 ? 0 : 1, sblk + i * S,
                                    size_t(S));
            }
          }
          kernels::f32_softmax_rows(sblk, pblk, size_t(rq), size_t(S), false, k.mode);
          times_v(pblk, 0, S, yb + i0 * ys[2], size_t(ys[2]), false);
          continue;  // the next work unit
        }
        for (int64_t i = 0; i < rq; ++i) {
          mrow[i] = -INFINITY;
          lrow[i] = 0;
        }
        std::fill(acc, acc + rq * Dv, 0.0f);
        for (int64_t j0 = 0; j0 < S; j0 += kCols) {
          const int64_t kc = std::min(kCols, S - j0);
          scores(j0, kc);
          for (int64_t i = 0; i < rq; ++i) {
            float* row = sblk + i * kc;
            kernels::f32_binary(kernels::BinaryOp::Mul, row, 1, &scale, 0, row, size_t(kc));
            if (mb) {
              const float* mrow_in = mb + (i0 + i) * ms[2] + j0 * ms[3];
              kernels::f32_binary(kernels::BinaryOp::Add, row, 1, mrow_in, ms[3] == 0 ? 0 : 1, row, size_t(kc));
            }
            const float mx = kernels::f32_max(row, size_t(kc));
            const float m_new = mx > mrow[i] ? mx : mrow[i];
            if (m_new == -INFINITY) {  // every key so far masked out: contributes nothing yet
              std::fill(row, row + kc, 0.0f);
              continue;
            }
            const float factor = kernels::exp_f32(mrow[i] - m_new);  // exp(-inf) = 0 on the first block
            kernels::f32_binary(kernels::BinaryOp::Sub, row, 1, &m_new, 0, row, size_t(kc));
            kernels::f32_unary(kernels::UnaryOp::Exp, row, row, size_t(kc));
            lrow[i] = lrow[i] * factor + kernels::f32_sum(row, size_t(kc), k.mode);
            if (factor != 1.0f) kernels::f32_binary(kernels::BinaryOp::Mul, acc + i * Dv, 1, &factor, 0, acc + i * Dv, size_t(Dv));
            mrow[i] = m_new;
          }
          times_v(sblk, j0, kc, acc, size_t(Dv), true);
        }
        for (int64_t i = 0; i < rq; ++i) {
          const float inv = 1.0f / lrow[i];
          kernels::f32_binary(kernels::BinaryOp::Mul, acc + i * Dv, 1, &inv, 0, yb + (i0 + i) * ys[2], size_t(Dv));
        }
      }
    }
  }
  return Status::ok();
}

constexpr AttrSpec kAttentionAttrs[] = {{"scale", AttrKind::Float}, {"transpose_k", AttrKind::Int}, {"perm_q", AttrKind::Ints},
                                        {"perm_k", AttrKind::Ints}, {"perm_v", AttrKind::Ints}, {"perm_y", AttrKind::Ints}};

constexpr OpDef kOps[] = {
    op("Attention").in_domain(kOnemodelDomain).per_item(BatchRule::Items).written_by_passes(writers<passes::fuse_attention>).inputs(3, 4).attributes(kAttentionAttrs).shapes(infer_attention)
        .prepared(prepare_attention).fast_only(attention_kernel).with_scratch(attention_scratch)
        .doc("written by the attention fusion pass: softmax(Q K^T * scale + mask) V, row-blocked online softmax (no [L, S] scores); fast only"),
};

}  // namespace

}  // namespace om::graph::ops

// The family's operators, one symbol each (onemodel/op_list.h).
#define OM_ATTENTION_OPS(X) X(Attention)
OM_OP_FAMILY_TABLE(attention, OM_ATTENTION_OPS)
