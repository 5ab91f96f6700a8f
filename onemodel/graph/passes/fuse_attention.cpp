// Transformer passes (docs/graph-passes.md).
//
// fuse_attention (FastOnly): MatMul(Q', K') [-> Mul(., c)] [-> Add(., mask)] -> Softmax(axis -1)
// -> MatMul(., V), where K' is Transpose(K) swapping the last two axes of a rank 2-4 K, Q' and K' may
// each be a Mul by a scalar constant (PyTorch's exporter writes scaled_dot_product_attention
// with sqrt(scale) on both), becomes one com.onemodel::Attention(Q, K, V[, mask], scale,
// transpose_k). Rank-4 Transposes producing Q, K, V (the head split) become perm_q/k/v and a
// Transpose of the result keeping the last axis (the head merge) becomes perm_y. The kernel's
// online softmax sums in another order, hence Fast only. Every intermediate value must have a
// single reader and not be a graph output.
//
// merge_qkv_projections (Exact): two or more MatMul / FusedMatMul / Gemm nodes reading the same
// input with 2-D constant weights of the same K (FusedMatMul: same activation, the same transposed
// or plain weights, no other perm, residual, alpha or chain; Gemm: same transB, alpha = beta = 1)
// become one GEMM on the weights concatenated along N, and a Slice of the last axis per former
// output. Each output column is the same fma chain over the same k, then the same
// bias add and activation, so no bit changes.
#include <cstring>
#include <unordered_map>

#include "onemodel/graph/op_registry.h"
#include "onemodel/graph/passes/pass.h"

namespace om::graph::passes {
namespace {

bool is(const Node& n, const char* op, size_t inputs) {
  return n.op_type == op && is_default_domain(n.domain) && n.inputs.size() == inputs && n.outputs.size() == 1;
}

// A Mul of `v`'s producer by a scalar f32 constant, read only here: the other operand and the factor.
bool scalar_mul(const Graph& g, const DefUse& u, const std::string& v, std::string* other, float* c, size_t* node) {
  const size_t p = u.producer(v);
  if (p == DefUse::kNone || !u.single_internal_use(v)) return false;
  const Node& n = g.nodes[p];
  if (!is(n, "Mul", 2)) return false;
  for (int side = 0; side < 2; ++side) {
    const TensorData* t = u.constant(n.inputs[size_t(side)]);
    if (t && t->dtype == DType::f32 && t->numel() == 1 && t->dims.size() <= 1 && n.inputs[0] != n.inputs[1]) {
      *c = *t->data<float>();
      *other = n.inputs[size_t(1 - side)];
      *node = p;
      return true;
    }
  }
  return false;
}

}  // namespace

Status fuse_attention(Graph& g, ArithmeticMode, size_t* changes) {
  return rewrite_scan(g, changes, [&g](DefUse& u, size_t si) -> size_t {
    const Node& sm = g.nodes[si];
    if (!is(sm, "Softmax", 1) || sm.attr_int("axis", -1) != -1) return 0;
    if (!u.single_internal_use(sm.outputs[0])) return 0;
    const size_t pi = u.reader(sm.outputs[0]);
    const Node& pv = g.nodes[pi];
    if (!is(pv, "MatMul", 2) || pv.inputs[0] != sm.outputs[0] || pv.inputs[1] == sm.outputs[0]) return 0;
    std::vector<size_t> absorbed = {si};
    // Softmax input: [Add(., mask)] over [Mul(., c)] over MatMul.
    std::string x = sm.inputs[0], mask;
    auto step_back = [&](const std::string& v) -> const Node* {
      if (!u.single_internal_use(v)) return nullptr;
      return u.producer_node(v);
    };
    const Node* n = step_back(x);
    if (!n) return 0;
    float scale = 1.0f;
    auto matmul_below = [&](const std::string& v) {
      const Node* p = step_back(v);
      if (p && is(*p, "MatMul", 2)) return true;
      std::string o;
      float c;
      size_t ni;
      if (scalar_mul(g, u, v, &o, &c, &ni)) {
        const Node* q = step_back(o);
        return q && is(*q, "MatMul", 2);
      }
      return false;
    };
    if (is(*n, "Add", 2) && n->inputs[0] != n->inputs[1]) {
      const size_t ai = u.producer(x);
      const int side = matmul_below(n->inputs[0]) ? 0 : matmul_below(n->inputs[1]) ? 1 : -1;
      if (side < 0) return 0;
      mask = n->inputs[size_t(1 - side)];
      x = n->inputs[size_t(side)];
      absorbed.push_back(ai);
    }
    {
      std::string o;
      float c;
      size_t ni;
      if (scalar_mul(g, u, x, &o, &c, &ni)) {
        scale *= c;
        x = o;
        absorbed.push_back(ni);
      }
    }
    const Node* qk = step_back(x);
    if (!qk || !is(*qk, "MatMul", 2) || qk->inputs[0] == qk->inputs[1]) return 0;
    absorbed.push_back(u.producer(x));
    std::string q = qk->inputs[0], kt = qk->inputs[1];
    {
      std::string o;
      float c;
      size_t ni;
      if (scalar_mul(g, u, q, &o, &c, &ni)) { scale *= c; q = o; absorbed.push_back(ni); }
      if (scalar_mul(g, u, kt, &o, &c, &ni)) { scale *= c; kt = o; absorbed.push_back(ni); }
    }
    std::string k = kt;
    int64_t transpose_k = 0;
    if (const Node* t = step_back(kt); t && is(*t, "Transpose", 1)) {
      const Attribute* perm = t->attr("perm");
      bool swap_last = perm && perm->ints.size() >= 2;
      if (swap_last) {
        const size_t r = perm->ints.size();
        for (size_t i = 0; i + 2 < r; ++i) swap_last = swap_last && perm->ints[i] == int64_t(i);
        swap_last = swap_last && perm->ints[r - 2] == int64_t(r - 1) && perm->ints[r - 1] == int64_t(r - 2) && r <= 4;
      }
      if (swap_last) {
        k = t->inputs[0];
        transpose_k = 1;
        absorbed.push_back(u.producer(kt));
      }
    }
    // Without the Transpose the ranks are unknown here (a 1-D operand would not fit the kernel).
    if (!transpose_k) return 0;
    bool clash = false;
    for (size_t a : absorbed) clash = clash || a > pi;
    if (clash) return 0;
    Node fused;
    fused.op_type = "Attention";
    fused.domain = kOnemodelDomain;
    fused.name = pv.name.empty() ? sm.name : pv.name;
    std::string v = pv.inputs[1];
    fused.attributes = {Attribute::of_float("scale", scale), Attribute::of_int("transpose_k", transpose_k)};
    // Rank-4 Transposes feeding Q, K, V (the head split) are read through strides.
    for (auto [name, attr] : {std::pair<std::string*, const char*>{&q, "perm_q"}, {&k, "perm_k"}, {&v, "perm_v"}}) {
      const Node* t = step_back(*name);
      const Attribute* perm = t && is(*t, "Transpose", 1) ? t->attr("perm") : nullptr;
      if (!perm || perm->ints.size() != 4) continue;
      fused.attributes.push_back(Attribute::of_ints(attr, perm->ints));
      absorbed.push_back(u.producer(*name));
      *name = t->inputs[0];
    }
    fused.inputs = {q, k, v};
    if (!mask.empty()) fused.inputs.push_back(mask);
    fused.outputs = {pv.outputs[0]};
    // A Transpose of the result keeping the last axis last (the head merge) is written directly.
    if (u.single_internal_use(pv.outputs[0])) {
      const size_t ti = u.reader(pv.outputs[0]);
      const Node& t = g.nodes[ti];
      const Attribute* perm = is(t, "Transpose", 1) ? t.attr("perm") : nullptr;
      if (perm && perm->ints.size() == 4 && perm->ints[3] == 3) {
        fused.attributes.push_back(Attribute::of_ints("perm_y", perm->ints));
        fused.outputs = {t.outputs[0]};
        absorbed.push_back(ti);
      }
    }
    for (size_t a : absorbed) u.drop(a);
    u.replace(pi, std::move(fused));
    return 1;
  });
}

namespace {
// A projection the QKV merge may join: MatMul(X, W), FusedMatMul(X, W, bias) (activation only)
// or Gemm(X, W[, bias]) (transA 0, alpha 1, beta 1, transB either), W a 2-D f32 constant and the
// bias a 1-D f32 constant. `key` groups the joinable ones: input, K, kind, activation, transB,
// bias or not.
struct Projection {
  std::string key;
  const TensorData* w = nullptr;
  const TensorData* b = nullptr;
  int64_t K = 0, N = 0;
  bool trans_b = false;  // W stored [N, K]
};

bool projection(const DefUse& u, const Node& n, Projection* p) {
  const bool plain = is(n, "MatMul", 2);
  const bool fused = n.op_type == "FusedMatMul" && n.domain == kOnemodelDomain && n.outputs.size() == 1 &&
                     (n.inputs.size() == 2 || n.inputs.size() == 3);
  const bool gemm = n.op_type == "Gemm" && is_default_domain(n.domain) && n.outputs.size() == 1 &&
                    (n.inputs.size() == 2 || n.inputs.size() == 3);
  if (!plain && !fused && !gemm) return false;
  p->w = u.constant(n.inputs[1]);
  if (!p->w || p->w->dtype != DType::f32 || p->w->dims.size() != 2) return false;
  p->b = nullptr;
  p->trans_b = false;
  std::string kind = "MatMul";
  if (fused) {  // a Gemm that fuse_matmul_epilogue rewrote has perm_a {0, 1}, and {1, 0} as perm_b with transB
    for (const auto& a : n.attributes) {
      if (a.name == "activation") kind = a.s;
      else if (a.name == "perm_a" && a.ints == std::vector<int64_t>{0, 1}) continue;
      else if (a.name == "perm_b" && a.ints == std::vector<int64_t>{1, 0}) p->trans_b = true;
      else return false;  // other perms, alpha, a chain: not joined
    }
  }
  if (gemm) {
    kind = "Gemm";
    for (const auto& a : n.attributes) {
      if (a.name == "transB") p->trans_b = a.i != 0;
      else if (a.name == "transA" && a.i == 0) continue;
      else if ((a.name == "alpha" || a.name == "beta") && a.f == 1.0f) continue;
      else return false;
    }
  }
  p->K = p->trans_b ? p->w->dims[1] : p->w->dims[0];
  p->N = p->trans_b ? p->w->dims[0] : p->w->dims[1];
  if (n.inputs.size() == 3 && !n.inputs[2].empty()) {
    p->b = u.constant(n.inputs[2]);
    if (!p->b || p->b->dtype != DType::f32 || p->b->dims.size() != 1 || p->b->dims[0] != p->N) return false;
  }
  p->key = msg(n.inputs[0], "|", p->K, "|", kind, "|", p->trans_b ? 1 : 0, "|", p->b ? 1 : 0);
  return true;
}
}  // namespace

Status merge_qkv_projections(Graph& g, ArithmeticMode, size_t* changes) {
  DefUse u(g);
  std::unordered_map<std::string, std::vector<size_t>> groups;
  std::vector<Projection> proj(g.nodes.size());
  std::vector<std::string> order;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!projection(u, g.nodes[i], &proj[i])) continue;
    if (!groups.count(proj[i].key)) order.push_back(proj[i].key);
    groups[proj[i].key].push_back(i);
  }
  size_t made = 0;
  for (const std::string& key : order) {
    const std::vector<size_t>& idx = groups[key];
    if (idx.size() < 2) continue;
    const Node& first = g.nodes[idx[0]];
    const bool trans_b = proj[idx[0]].trans_b, with_bias = proj[idx[0]].b != nullptr;
    const int64_t K = proj[idx[0]].K;
    int64_t N = 0;
    for (size_t i : idx) N += proj[i].N;
    // Concatenated weight ([K, N], or [N, K] with transB) and bias [N].
    std::vector<float> wcat(size_t(K * N)), bcat;
    int64_t col = 0;
    for (size_t i : idx) {
      const Projection& p = proj[i];
      if (trans_b) std::memcpy(&wcat[size_t(col * K)], p.w->data<float>(), size_t(p.N * K) * sizeof(float));
      else
        for (int64_t r = 0; r < K; ++r) std::memcpy(&wcat[size_t(r * N + col)], p.w->data<float>() + r * p.N, size_t(p.N) * sizeof(float));
      if (with_bias) bcat.insert(bcat.end(), p.b->data<float>(), p.b->data<float>() + p.N);
      col += p.N;
    }
    const std::string base = msg(first.outputs[0], "_qkv", made);
    u.add_initializer(TensorData::from_vector(base + "_w", trans_b ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N}, wcat));
    Node merged = first;
    merged.name = base;
    merged.inputs[1] = base + "_w";
    if (with_bias) {
      u.add_initializer(TensorData::from_vector(base + "_b", {N}, bcat));
      merged.inputs[2] = base + "_b";
    }
    merged.outputs = {base};
    std::vector<Node> slices;
    col = 0;
    for (size_t i : idx) {
      const int64_t n = proj[i].N;
      const std::string s0 = msg(base, "_s", col), e0 = msg(base, "_e", col), ax = base + "_axis";
      u.add_initializer(TensorData::from_vector<int64_t>(s0, {1}, {col}));
      u.add_initializer(TensorData::from_vector<int64_t>(e0, {1}, {col + n}));
      if (col == 0) u.add_initializer(TensorData::from_vector<int64_t>(ax, {1}, {-1}));
      Node slice;
      slice.op_type = "Slice";
      slice.name = g.nodes[i].name + "_slice";
      slice.inputs = {base, s0, e0, ax};
      slice.outputs = g.nodes[i].outputs;
      slices.push_back(std::move(slice));
      col += n;
    }
    // The merged GEMM stands where the first projection stood (its input is defined there); each
    // former output becomes a Slice of the last axis right after it.
    for (size_t k = 1; k < idx.size(); ++k) u.drop(idx[k]);
    u.replace(idx[0], std::move(merged));
    for (Node& slice : slices) u.insert_after(idx[0], std::move(slice));
    ++made;
    *changes += idx.size();
  }
  u.finish();
  return Status::ok();
}

}  // namespace om::graph::passes
