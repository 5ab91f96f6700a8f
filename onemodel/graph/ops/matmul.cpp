// Matrix products: MatMul (numpy semantics: 1-D operands, broadcast batch axes), Gemm, and the
// fused com.onemodel FusedMatMul (MatMul + bias + activation, read/written through strides)
// that the fusion passes write. All call kernels::f32_gemm, or f32_gemm_prepacked with the
// plan's packed constant B; in Exact mode the kernel's fixed fma chain and its "bias then
// activation after the full chain" rule make each output independent of ISA.
#include <cstring>

#include "onemodel/graph/ops/epilogue.h"
#include "onemodel/graph/ops/epilogue_chain.h"
#include "onemodel/graph/ops/matmul_dims.h"
#include "onemodel/graph/ops/op_util.h"
#include "onemodel/graph/passes/pass.h"
#include "onemodel/kernels/kernels.h"

namespace om::graph::ops {

// Declared in matmul_dims.h: the quantized matrix products (graph/ops/quant.cpp) share it.
Status matmul_dims(const InferContext& ctx, const std::vector<int64_t>& a, const std::vector<int64_t>& b, MatMulDims* d,
                   std::vector<int64_t>* out) {
  if (a.empty() || b.empty())
    return ctx.error(ErrorKind::ShapeMismatch, msg("operands must have rank >= 1, got ", shape_str(a), " and ", shape_str(b)));
  const bool a1 = a.size() == 1, b1 = b.size() == 1;
  d->M = a1 ? 1 : a[a.size() - 2];
  d->K = a.back();
  const int64_t kb = b1 ? b[0] : b[b.size() - 2];
  d->N = b1 ? 1 : b.back();
  if (d->K != kb)
    return ctx.error(ErrorKind::ShapeMismatch, msg("inner sizes differ: A ", shape_str(a), " has K = ", d->K, ", B ", shape_str(b),
                                                   " has K = ", kb));
  d->a_batch.assign(a.begin(), a.end() - (a1 ? 1 : 2));
  d->b_batch.assign(b.begin(), b.end() - (b1 ? 1 : 2));
  OM_TRY(broadcast_shapes(ctx, {&d->a_batch, &d->b_batch}, &d->out_batch));
  *out = d->out_batch;
  if (!a1) out->push_back(d->M);
  if (!b1) out->push_back(d->N);
  return Status::ok();
}

namespace {

using kernels::UnaryOp;

Status infer_matmul(InferContext& ctx) {
  OM_TRY(require_f32_input(ctx, 0));
  OM_TRY(require_f32_input(ctx, 1));
  MatMulDims d;
  std::vector<int64_t> out;
  OM_TRY(matmul_dims(ctx, ctx.input(0)->shape, ctx.input(1)->shape, &d, &out));
  ctx.set_output(0, DType::f32, std::move(out));
  return Status::ok();
}

// GEMM workspace with headroom: kernels::gemm_workspace_floats rounds M to the largest row tile
// (8), but a 6-row tile rounds 7 rows up to 12, so the exact figure can fall short. Asking for
// one extra tile in each direction is always enough.
size_t gemm_scratch_floats(size_t M, size_t N, size_t K) { return kernels::gemm_workspace_floats(M + 8, N + 16, K); }

int64_t product(const int64_t* d, size_t n) {
  int64_t p = 1;
  for (size_t i = 0; i < n; ++i) p = count_mul(p, d[i]);
  return p;
}

// Every GEMM call of the matmul kernels goes through here: with the plan's packed copy of a
// constant B the kernel skips repacking it (same bits, by the kernels' contract).
void run_gemm(const KernelContext& k, const kernels::GemmArgs& g) {
  if (k.packed_b) kernels::f32_gemm_prepacked(g, k.packed_b, k.mode);
  else kernels::f32_gemm(g, k.mode);
}

// ---- Gemm ----

Status infer_gemm(InferContext& ctx) {
  OM_TRY(require_f32_input(ctx, 0));
  OM_TRY(require_f32_input(ctx, 1));
  const auto& a = ctx.input(0)->shape;
  const auto& b = ctx.input(1)->shape;
  if (a.size() != 2 || b.size() != 2)
    return ctx.error(ErrorKind::ShapeMismatch, msg("A and B must be 2-D, got ", shape_str(a), " and ", shape_str(b)));
  const bool ta = ctx.node.attr_int("transA", 0) != 0, tb = ctx.node.attr_int("transB", 0) != 0;
  const int64_t M = ta ? a[1] : a[0], K = ta ? a[0] : a[1];
  const int64_t Kb = tb ? b[1] : b[0], N = tb ? b[0] : b[1];
  if (K != Kb) return ctx.error(ErrorKind::ShapeMismatch, msg("inner sizes differ: ", K, " vs ", Kb, " (A ", shape_str(a), ", B ", shape_str(b), ")"));
  if (const ValueDesc* c = ctx.input(2)) {
    OM_TRY(require_f32_input(ctx, 2));
    std::vector<int64_t> mn{M, N}, out;
    OM_TRY(broadcast_shapes(ctx, {&mn, &c->shape}, &out));
    if (out != mn) return ctx.error(ErrorKind::ShapeMismatch, msg("C ", shape_str(c->shape), " does not broadcast to [", M, ", ", N, "]"));
  }
  ctx.set_output(0, DType::f32, {M, N});
  return Status::ok();
}

size_t gemm_scratch(const InferContext& ctx) {
  const auto& y = ctx.outputs[0].shape;
  const bool ta = ctx.node.attr_int("transA", 0) != 0;
  const auto& a = ctx.input(0)->shape;
  return gemm_scratch_floats(size_t(y[0]), size_t(y[1]), size_t(ta ? a[0] : a[1])) * sizeof(float);
}

// Gemm's record. Work: the M rows of Y (every GEMM path gives an element the same chain
// whatever rows one call covers, kernels/gemm.cpp; alpha and C are applied per element).
struct GemmParams {
  bool trans_a = false, trans_b = false;
  float alpha = 1.0f, beta = 1.0f;
};

Status prepare_gemm(const InferContext& ctx, Prepared& out) {
  GemmParams& p = out.record<GemmParams>();
  p.trans_a = ctx.node.attr_int("transA", 0) != 0;
  p.trans_b = ctx.node.attr_int("transB", 0) != 0;
  p.alpha = ctx.node.attr_float("alpha", 1.0f);
  p.beta = ctx.node.attr_float("beta", 1.0f);
  out.work = ctx.outputs[0].shape[0];
  const ValueDesc& A = *ctx.input(0);
  out.cost = product_cost(out.work, ctx.outputs[0].shape[1], p.trans_a ? A.shape[0] : A.shape[1]);
  return Status::ok();
}

Status gemm_kernel(const KernelContext& k) {
  const GemmParams& p = k.params<GemmParams>();
  const TensorArg& A = k.in(0);
  const TensorArg& B = k.in(1);
  const TensorArg& Y = k.out(0);
  const bool ta = p.trans_a, tb = p.trans_b;
  const float alpha = p.alpha, beta = p.beta;
  const int64_t r0 = k.begin, r1 = k.end, N = Y.dims[1];
  kernels::GemmArgs g;
  g.M = size_t(r1 - r0);
  g.N = size_t(N);
  g.K = size_t(ta ? A.dims[0] : A.dims[1]);
  g.a_rs = ta ? 1 : A.dims[1];
  g.a_cs = ta ? A.dims[1] : 1;
  g.a = A.as<const float>() + r0 * g.a_rs;
  g.b = B.as<const float>();
  g.b_rs = tb ? 1 : B.dims[1];
  g.b_cs = tb ? B.dims[1] : 1;
  float* y = Y.as<float>() + r0 * N;
  g.c = y;
  g.ldc = g.N;
  g.workspace = static_cast<float*>(k.scratch);
  const bool has_c = k.has_input(2) && beta != 0.0f;
  const TensorArg* C = has_c ? &k.in(2) : nullptr;
  const bool c_is_bias = C && C->numel == N && (C->rank == 1 || (C->rank == 2 && C->dims[0] == 1));
  if (C && c_is_bias && alpha == 1.0f && beta == 1.0f) {
    g.bias = C->as<const float>();
    run_gemm(k, g);
    return Status::ok();
  }
  run_gemm(k, g);
  const int64_t n = (r1 - r0) * N;
  if (alpha != 1.0f)
    for (int64_t i = 0; i < n; ++i) y[i] *= alpha;
  if (C) {
    // C broadcasts to [M, N] (rank <= 2, checked by infer): a row stride and a column stride.
    const int64_t c_rs = C->rank == 2 && C->dims[0] != 1 ? C->dims[1] : 0;
    const int64_t c_cs = C->rank >= 1 && C->dims[C->rank - 1] != 1 ? 1 : 0;
    const float* c = C->as<const float>();
    for (int64_t i = r0; i < r1; ++i)
      for (int64_t j = 0; j < N; ++j) y[(i - r0) * N + j] += beta * c[i * c_rs + j * c_cs];
  }
  return Status::ok();
}

// ---- FusedMatMul (com.onemodel) ----
// Y = chain(perm_y(act(perm_a(A) x perm_b(B) + bias) * alpha) (+ R)). The perms are Transposes
// the layout pass folded in: the kernel reads the operands through strides and writes the output
// through its row stride, so no copy is made and every output is still the same fma chain. The
// chain (attributes ops, operands, consts: a FusedElementwise's, through fuse_matmul_chain) runs
// last, on the rows just written.

bool activation_of(const Node& node, UnaryOp* op) {
  const Attribute* a = node.attr("activation");
  if (!a || a->s.empty() || a->s == "Identity") { *op = UnaryOp::Identity; return true; }
  const EpilogueActivation* e = find_epilogue_activation(a->s);
  if (e) *op = e->op;
  return e != nullptr;
}

// The perm attribute `name`, or null when absent (identity).
const std::vector<int64_t>* perm_of(const Node& node, const char* name) {
  const Attribute* a = node.attr(name);
  return a && !a->ints.empty() ? &a->ints : nullptr;
}

Status check_perm(const InferContext& ctx, const char* name, const std::vector<int64_t>& shape) {
  const std::vector<int64_t>* p = perm_of(ctx.node, name);
  if (!p) return Status::ok();
  const size_t rank = shape.size();
  bool ok = p->size() == rank && rank <= kMaxRank;
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; ok && i < p->size(); ++i) {
    ok = (*p)[i] >= 0 && size_t((*p)[i]) < rank && !seen[size_t((*p)[i])];
    if (ok) seen[size_t((*p)[i])] = true;
  }
  if (!ok)
    return ctx.error(ErrorKind::InvalidArgument,
                     msg(name, " ", shape_str(*p), " must be a permutation of the ", rank, " axes of ", shape_str(shape)));
  return Status::ok();
}

std::vector<int64_t> permuted(const std::vector<int64_t>& shape, const std::vector<int64_t>* perm) {
  if (!perm) return shape;
  std::vector<int64_t> out(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) out[i] = shape[size_t((*perm)[i])];
  return out;
}

// The logical operands and product (before perm_y and the residual).
Status fused_shapes(const InferContext& ctx, MatMulDims* d, std::vector<int64_t>* product_shape) {
  OM_TRY(require_f32_input(ctx, 0));
  OM_TRY(require_f32_input(ctx, 1));
  OM_TRY(check_perm(ctx, "perm_a", ctx.input(0)->shape));
  OM_TRY(check_perm(ctx, "perm_b", ctx.input(1)->shape));
  const auto a = permuted(ctx.input(0)->shape, perm_of(ctx.node, "perm_a"));
  const auto b = permuted(ctx.input(1)->shape, perm_of(ctx.node, "perm_b"));
  return matmul_dims(ctx, a, b, d, product_shape);
}

Status infer_fused(InferContext& ctx) {
  MatMulDims d;
  std::vector<int64_t> y;
  OM_TRY(fused_shapes(ctx, &d, &y));
  if (const ValueDesc* bias = ctx.input(2)) {
    OM_TRY(require_f32_input(ctx, 2));
    if (bias->shape.size() != 1 || bias->shape[0] != d.N)
      return ctx.error(ErrorKind::ShapeMismatch, msg("bias must be [", d.N, "], got ", shape_str(bias->shape)));
  }
  if (const std::vector<int64_t>* py = perm_of(ctx.node, "perm_y")) {
    OM_TRY(check_perm(ctx, "perm_y", y));
    if (y.size() < 2 || py->back() != int64_t(y.size() - 1))
      return ctx.error(ErrorKind::InvalidArgument, "perm_y must keep the last axis last (rows are written with a stride)");
    if (ctx.input(3)) return ctx.error(ErrorKind::InvalidArgument, "perm_y and a residual input cannot be combined");
    y = permuted(y, py);
  }
  ctx.set_output(0, DType::f32, y);
  if (const ValueDesc* r = ctx.input(3)) {
    OM_TRY(require_f32_input(ctx, 3));
    std::vector<int64_t> out;
    OM_TRY(broadcast_shapes(ctx, {&ctx.outputs[0].shape, &r->shape}, &out));
    ctx.outputs[0].shape = out;  // the residual may broadcast the product to a larger shape
  }
  UnaryOp op;
  if (!activation_of(ctx.node, &op))
    return ctx.error(ErrorKind::InvalidArgument, msg("unknown activation '", ctx.node.attr("activation")->s,
                                                     "' (", epilogue_activation_names(), ")"));
  return Status::ok();
}

size_t fused_scratch(const InferContext& ctx) {
  MatMulDims d;
  std::vector<int64_t> y;
  if (!fused_shapes(ctx, &d, &y).is_ok()) return 0;
  const int64_t rows = product(d.out_batch.data(), d.out_batch.size()) * d.M;  // the folded case is the largest
  // With a residual the product goes to scratch first (rows x N floats, 64-byte rounded).
  const size_t product_bytes = ctx.input(3) ? (size_t(rows * d.N) * sizeof(float) + 63) / 64 * 64 : 0;
  return product_bytes + gemm_scratch_floats(size_t(rows), size_t(d.N), size_t(d.K)) * sizeof(float);
}

// The matrix products' record: MatMul is FusedMatMul without perms, bias, activation, scale
// or residual, so both run product_kernel. Work: the output rows, batch by batch (batches * M,
// after folding batch axes into M); every GEMM path gives an element the same chain whatever
// rows one call covers (kernels/gemm.cpp), so any row range gives the whole call's bits.
enum class Residual : uint8_t {
  None,
  Accumulate,  // Fast: Y starts as R and the chains continue from it
  Add,         // R has Y's shape: the product goes to scratch, then Y = product + R per row
  Broadcast,   // R broadcasts the product: one work unit
};

struct ProductParams {
  int64_t M = 1, K = 1, N = 1;  // one GEMM's (M after folding)
  int64_t a_rs = 0, a_cs = 1, b_rs = 0, b_cs = 1, ldc = 0;
  UnaryOp act = UnaryOp::Identity;
  float alpha = 1.0f;
  Residual residual = Residual::None;
  size_t obr = 0;  // batch axes left after folding
  int64_t batches = 1;
  int64_t odims[kMaxRank] = {}, astr[kMaxRank] = {}, bstr[kMaxRank] = {}, cstr[kMaxRank] = {};
  size_t product_bytes = 0;  // scratch before the GEMM workspace (a residual's product)
  size_t prank = 0;          // Broadcast: the product's logical shape
  int64_t pdims[kMaxRank] = {};
  bool has_chain = false;  // the chain's program is the prepared table (the record has no room)
};

// A tensor viewed through a perm: logical dims and element strides.
struct View {
  int64_t dims[kMaxRank] = {}, str[kMaxRank] = {};
  size_t rank = 0;
};

View view_of(const std::vector<int64_t>& shape, const std::vector<int64_t>* perm) {
  View v;
  v.rank = shape.size();
  int64_t cs[kMaxRank], s = 1;
  for (size_t i = v.rank; i-- > 0;) {
    cs[i] = s;
    s = count_mul(s, shape[i]);
  }
  for (size_t i = 0; i < v.rank; ++i) {
    const size_t src = perm ? size_t((*perm)[i]) : i;
    v.dims[i] = shape[src];
    v.str[i] = cs[src];
  }
  return v;
}

Status prepare_product(const InferContext& ctx, Prepared& out) {
  ProductParams& p = out.record<ProductParams>();
  const Node& node = ctx.node;
  const View A = view_of(ctx.input(0)->shape, perm_of(node, "perm_a"));
  const View B = view_of(ctx.input(1)->shape, perm_of(node, "perm_b"));
  const bool a1 = A.rank == 1, b1 = B.rank == 1;
  int64_t M = a1 ? 1 : A.dims[A.rank - 2];
  const int64_t K = A.dims[A.rank - 1];
  const int64_t N = b1 ? 1 : B.dims[B.rank - 1];
  p.K = K;
  p.N = N;
  p.a_rs = a1 ? 0 : A.str[A.rank - 2];
  p.a_cs = A.str[A.rank - 1];
  p.b_rs = b1 ? B.str[0] : B.str[B.rank - 2];
  p.b_cs = b1 ? 1 : B.str[B.rank - 1];
  activation_of(node, &p.act);
  p.alpha = node.attr_float("alpha", 1.0f);
  kernels::ChainProgram chain;
  OM_TRY(epilogue_chain(ctx, &chain, &p.has_chain));
  if (p.has_chain) {
    out.table.resize(sizeof chain);
    std::memcpy(out.table.data(), &chain, sizeof chain);
  }
  const bool residual = ctx.input(3) != nullptr;
  const ValueDesc& Y = ctx.outputs[0];

  // Output batch axes: broadcast of both operands' batch axes.
  const size_t abr = A.rank - (a1 ? 1 : 2), bbr = B.rank - (b1 ? 1 : 2);
  size_t obr = std::max(abr, bbr);
  for (size_t i = 0; i < obr; ++i) {
    const size_t la = obr - abr, lb = obr - bbr;
    const int64_t da = i < la ? 1 : A.dims[i - la], db = i < lb ? 1 : B.dims[i - lb];
    p.odims[i] = std::max(da, db);
    if (da == 0 || db == 0) p.odims[i] = 0;
    p.astr[i] = (i < la || da == 1) ? 0 : A.str[i - la];
    p.bstr[i] = (i < lb || db == 1) ? 0 : B.str[i - lb];
  }
  // Strides of the logical product [batch..., M?, N?]: contiguous, or through perm_y.
  const size_t lrank = obr + (a1 ? 0 : 1) + (b1 ? 0 : 1);
  int64_t lstr[kMaxRank] = {}, ldims[kMaxRank] = {};
  for (size_t i = 0; i < obr; ++i) ldims[i] = p.odims[i];
  if (!a1) ldims[obr] = M;
  if (!b1) ldims[lrank - 1] = N;
  {
    const std::vector<int64_t>* py = residual ? nullptr : perm_of(node, "perm_y");
    int64_t s = 1;
    if (py) {
      for (size_t q = lrank; q-- > 0;) {  // output axis q holds logical axis py[q]
        lstr[size_t((*py)[q])] = s;
        s *= ldims[size_t((*py)[q])];
      }
    } else {
      for (size_t i = lrank; i-- > 0;) {
        lstr[i] = s;
        s *= ldims[i];
      }
    }
  }
  for (size_t i = 0; i < obr; ++i) p.cstr[i] = lstr[i];
  p.ldc = a1 ? N : lstr[obr];
  // One weight matrix: fold batch axes into rows while A and C rows continue uniformly.
  while (!a1 && obr > 0 && p.bstr[obr - 1] == 0 && p.astr[obr - 1] == M * p.a_rs && p.cstr[obr - 1] == M * p.ldc) {
    M *= p.odims[obr - 1];
    --obr;
  }
  p.M = M;
  p.obr = obr;
  p.batches = 1;
  for (size_t i = 0; i < obr; ++i) p.batches *= p.odims[i];
  const int64_t rows = p.batches * M;
  out.work = rows;
  out.cost = product_cost(rows, N, p.K);
  if (!residual) return Status::ok();

  // Fast mode starts each chain from R when R has the product's shape (no activation or scale in
  // between); otherwise (and always in Exact mode) the product goes to scratch and R is added
  // after the chain, as the unfused Add would.
  const ValueDesc& R = *ctx.input(3);
  const bool same = R.shape == Y.shape && rows * N == Y.numel();
  if (same && p.batches == 1 && ctx.mode == ArithmeticMode::Fast && p.act == UnaryOp::Identity && p.alpha == 1.0f)
    p.residual = Residual::Accumulate;
  else
    p.residual = same ? Residual::Add : Residual::Broadcast;
  if (p.residual != Residual::Accumulate) p.product_bytes = (size_t(rows * N) * sizeof(float) + 63) / 64 * 64;
  if (p.residual == Residual::Broadcast) {
    // The product's logical shape with the batch axes unfolded (folding merged axes into M).
    const size_t full_obr = std::max(abr, bbr), la = full_obr - abr, lb = full_obr - bbr;
    for (size_t i = 0; i < full_obr; ++i) {
      const int64_t da = i < la ? 1 : A.dims[i - la], db = i < lb ? 1 : B.dims[i - lb];
      p.pdims[i] = (da == 0 || db == 0) ? 0 : std::max(da, db);
    }
    size_t r = full_obr;
    if (!a1) p.pdims[r++] = A.dims[A.rank - 2];
    if (!b1) p.pdims[r++] = N;
    p.prank = lrank;
    out.work = 1;
  }
  return Status::ok();
}

// Rows of C the GEMM writes before the chain runs on them, so they are still in cache: about
// 256 KB of output (64 KB blocks made a 256x256x256 product about 2% slower: more calls), whole
// tiles of rows. Only with B packed by the plan: another call repacks B.
size_t chain_block_rows(const KernelContext& k, size_t N) {
  if (!k.packed_b) return SIZE_MAX;
  return std::max<size_t>(8, (65536 / std::max<size_t>(N, 1)) / 8 * 8);
}

// The GEMM of g's rows, its scale and, when the product is the output, the chain on each block
// of rows just written (every GEMM path gives an element the same chain whatever rows one call
// covers, kernels/gemm.cpp, so the blocks change no bit).
void gemm_rows(const KernelContext& k, const ProductParams& p, const kernels::ChainProgram* chain, kernels::GemmArgs g) {
  const size_t rows = g.M, block = chain ? chain_block_rows(k, g.N) : SIZE_MAX;
  for (size_t i0 = 0; i0 < rows; i0 += block) {
    const size_t n = std::min(block, rows - i0);
    kernels::GemmArgs b = g;
    b.M = n;
    b.a = g.a + ptrdiff_t(i0) * g.a_rs;
    b.c = g.c + i0 * g.ldc;
    run_gemm(k, b);
    if (p.alpha != 1.0f)  // the folded Mul: one rounding after the complete epilogue, as the node did
      for (size_t i = 0; i < n; ++i)
        for (size_t j = 0; j < b.N; ++j) b.c[i * b.ldc + j] *= p.alpha;
    if (chain && b.ldc == b.N)  // rows that continue each other: one call (the chain works in 512-element blocks)
      kernels::f32_chain(*chain, b.c, b.c, n * b.N);
    else if (chain)
      for (size_t i = 0; i < n; ++i) kernels::f32_chain(*chain, b.c + i * b.ldc, b.c + i * b.ldc, b.N);
  }
}

Status product_kernel(const KernelContext& k) {
  const ProductParams& p = k.params<ProductParams>();
  const int64_t M = p.M, N = p.N;
  const kernels::ChainProgram* chain = p.has_chain ? static_cast<const kernels::ChainProgram*>(k.table) : nullptr;
  int64_t r0 = k.begin, r1 = k.end;  // rows
  if (p.residual == Residual::Broadcast) r0 = 0, r1 = p.batches * M;
  kernels::GemmArgs g;
  g.K = size_t(p.K);
  g.N = size_t(N);
  g.a_rs = p.a_rs;
  g.a_cs = p.a_cs;
  g.b_rs = p.b_rs;
  g.b_cs = p.b_cs;
  g.ldc = size_t(p.ldc);
  g.activation = p.act;
  g.bias = k.has_input(2) ? k.in(2).as<const float>() : nullptr;
  const TensorArg& Y = k.out(0);
  float* c = Y.as<float>();
  float* prod = nullptr;
  g.workspace = static_cast<float*>(k.scratch);
  if (p.residual == Residual::Accumulate) {
    std::memcpy(c + r0 * N, k.in(3).as<const float>() + r0 * N, size_t((r1 - r0) * N) * sizeof(float));
    g.accumulate = true;
  } else if (p.residual != Residual::None) {
    prod = static_cast<float*>(k.scratch);
    c = prod;
    g.workspace = reinterpret_cast<float*>(static_cast<uint8_t*>(k.scratch) + p.product_bytes);
  }
  const float* a = k.in(0).as<const float>();
  const float* b = k.in(1).as<const float>();
  for (int64_t o = M > 0 ? r0 / M : 0; M > 0 && o * M < r1; ++o) {
    // Matrix o's operands: its index over the batch axes, row-major.
    int64_t ao = 0, bo = 0, co = 0;
    for (size_t d = p.obr, rest = size_t(o); d-- > 0;) {
      const int64_t i = int64_t(rest % size_t(p.odims[d]));
      rest /= size_t(p.odims[d]);
      ao += i * p.astr[d];
      bo += i * p.bstr[d];
      co += i * p.cstr[d];
    }
    const int64_t i0 = std::max(r0, o * M) - o * M, i1 = std::min(r1, (o + 1) * M) - o * M;
    g.M = size_t(i1 - i0);
    g.a = a + ao + i0 * p.a_rs;
    g.b = b + bo;
    g.c = c + co + i0 * p.ldc;
    // With a residual added after the product, the chain runs after that addition, below.
    gemm_rows(k, p, prod ? nullptr : chain, g);
  }
  float* y = Y.as<float>();
  const float* r = p.residual != Residual::None ? k.in(3).as<const float>() : nullptr;
  if (p.residual == Residual::Add) {
    for (int64_t e = r0 * N; e < r1 * N; ++e) y[e] = prod[e] + r[e];
    if (chain) kernels::f32_chain(*chain, y + r0 * N, y + r0 * N, size_t((r1 - r0) * N));
  }
  if (p.residual != Residual::Broadcast) return Status::ok();

  add_broadcast(prod, p.pdims, p.prank, k.in(3), Y);  // the product (logical shape, contiguous)
  if (chain) kernels::f32_chain(*chain, y, y, size_t(Y.numel));
  return Status::ok();
}

}  // namespace

bool matmul_packable_b(const Node& node, const std::vector<const ValueDesc*>& inputs, PackableB* out) {
  if (inputs.size() < 2 || !inputs[0] || !inputs[1] || inputs[1]->dtype != DType::f32 || inputs[1]->shape.size() != 2) return false;
  const bool onnx = is_default_domain(node.domain);
  const std::vector<int64_t>& b = inputs[1]->shape;
  out->input = 1;
  if (onnx && node.op_type == "MatMul") {
    out->K = size_t(b[0]);
    out->N = size_t(b[1]);
    out->rs = b[1];
    out->cs = 1;
    return true;
  }
  if (onnx && node.op_type == "Gemm") {
    const bool tb = node.attr_int("transB", 0) != 0;
    out->K = size_t(tb ? b[1] : b[0]);
    out->N = size_t(tb ? b[0] : b[1]);
    out->rs = tb ? 1 : b[1];
    out->cs = tb ? b[1] : 1;
    return true;
  }
  if (node.domain == kOnemodelDomain && node.op_type == "FusedMatMul") {
    const std::vector<int64_t>* p = perm_of(node, "perm_b");
    const bool t = p && p->size() == 2 && (*p)[0] == 1;
    out->K = size_t(t ? b[1] : b[0]);
    out->N = size_t(t ? b[0] : b[1]);
    out->rs = t ? 1 : b[1];
    out->cs = t ? b[1] : 1;
    return true;
  }
  return false;
}

namespace {

constexpr AttrSpec kGemmAttrs[] = {
    {"alpha", AttrKind::Float}, {"beta", AttrKind::Float}, {"transA", AttrKind::Int}, {"transB", AttrKind::Int}};

constexpr OpDef kOps[] = {
    op("MatMul").upgrades_from(1).per_item(BatchRule::Rows).inputs(2).shapes(infer_matmul).prepared(prepare_product).kernel(product_kernel)
        .with_scratch(fused_scratch).with_prepack(matmul_packable_b)
        .doc("f32, numpy semantics (1-D operands, broadcast batch axes); exact: fixed fma chain").with_flags(kOpF16InF32),
    op("Gemm").upgrades_from(7).per_item(BatchRule::Rows).inputs(2, 3).attributes(kGemmAttrs).shapes(infer_gemm).prepared(prepare_gemm).kernel(gemm_kernel).with_scratch(gemm_scratch)
        .with_prepack(matmul_packable_b).doc("f32, transA/transB, alpha, beta, broadcast C").with_flags(kOpF16InF32),
    op("FusedMatMul").in_domain(kOnemodelDomain).per_item(BatchRule::Rows)
        .written_by_passes(writers<passes::fuse_matmul_epilogue, passes::fold_transposes_into_matmul, passes::fold_matmul_scale,
                           passes::fuse_matmul_residual, passes::fuse_matmul_chain>).inputs(2, 4).shapes(infer_fused).prepared(prepare_product).kernel(product_kernel).with_scratch(fused_scratch)
        .with_prepack(matmul_packable_b)
        .doc("written by the fusion passes: chain(perm_y(act(perm_a(A) x perm_b(B) + bias) * alpha) (+ residual)); transposes read and written through strides; the optional chain of elementwise steps (ops, operands, consts: FusedElementwise's) on each block of output rows just written, each step rounded as the separate nodes"),
};

}  // namespace

}  // namespace om::graph::ops

// The family's operators, one symbol each (onemodel/op_list.h).
#define OM_MATMUL_OPS(X) X(MatMul) X(Gemm) X(FusedMatMul)
OM_OP_FAMILY_TABLE(matmul, OM_MATMUL_OPS)
