#include "onemodel/graph/passes/pass.h"

#include <algorithm>

#include "onemodel/graph/op_registry.h"

namespace om::graph::passes {

// The passes that write operators are linked by those operators' records (OpDef::written_by),
// not by this table: it refers to them weakly, so where no registered operator's record pulls
// one in (a program with its own operator list, onemodel/op_list.h) its entry is null.
#define OM_WEAK_PASS(fn) Status fn(Graph& g, ArithmeticMode mode, size_t* changes) __attribute__((weak))
OM_WEAK_PASS(compute_f16_in_f32);
OM_WEAK_PASS(fuse_qdq_conv);
OM_WEAK_PASS(fuse_qdq_matmul);
OM_WEAK_PASS(fuse_integer_epilogue);
OM_WEAK_PASS(fuse_attention);
OM_WEAK_PASS(fuse_matmul_epilogue);
OM_WEAK_PASS(fold_transposes_into_matmul);
OM_WEAK_PASS(fold_matmul_scale);
OM_WEAK_PASS(merge_qkv_projections);
OM_WEAK_PASS(fuse_matmul_residual);
OM_WEAK_PASS(fold_conv_batchnorm);
OM_WEAK_PASS(fuse_conv_epilogue);
OM_WEAK_PASS(fuse_elementwise_chains);
OM_WEAK_PASS(fuse_conv_chain);
OM_WEAK_PASS(fuse_matmul_chain);
OM_WEAK_PASS(sink_transposes);
#undef OM_WEAK_PASS

const std::vector<Pass>& all_passes() {
  constexpr Linked kByOp = Linked::ByOperator;
  static const std::vector<Pass> passes = {
      {"compute_f16_in_f32", BitRule::Exact, compute_f16_in_f32, kByOp},
      {"remove_identities", BitRule::Exact, remove_identities},
      {"fuse_qdq_conv", BitRule::FastOnly, fuse_qdq_conv, kByOp},
      {"fuse_qdq_matmul", BitRule::FastOnly, fuse_qdq_matmul, kByOp},
      {"fold_constants", BitRule::Exact, fold_constants},
      {"fuse_integer_epilogue", BitRule::Exact, fuse_integer_epilogue, kByOp},
      {"fuse_attention", BitRule::FastOnly, fuse_attention, kByOp},
      {"fuse_matmul_epilogue", BitRule::Exact, fuse_matmul_epilogue, kByOp},
      {"fold_transposes_into_matmul", BitRule::Exact, fold_transposes_into_matmul, kByOp},
      {"fold_matmul_scale", BitRule::Exact, fold_matmul_scale, kByOp},
      {"merge_qkv_projections", BitRule::Exact, merge_qkv_projections, kByOp},
      {"fuse_matmul_residual", BitRule::FastOnly, fuse_matmul_residual, kByOp},
      {"sink_transposes", BitRule::Exact, sink_transposes, kByOp},
      {"fold_conv_batchnorm", BitRule::FastOnly, fold_conv_batchnorm, kByOp},
      {"fuse_conv_epilogue", BitRule::Exact, fuse_conv_epilogue, kByOp},
      {"fuse_elementwise_chains", BitRule::Exact, fuse_elementwise_chains, kByOp},
      {"fuse_conv_chain", BitRule::Exact, fuse_conv_chain, kByOp},
      {"fuse_matmul_chain", BitRule::Exact, fuse_matmul_chain, kByOp},
      {"remove_dead_nodes", BitRule::Exact, remove_dead_nodes},
  };
  return passes;
}

const std::vector<int64_t>* transpose_perm(const Node& n) {
  if (!is_default_domain(n.domain) || n.op_type != "Transpose" || n.inputs.size() != 1 || n.outputs.size() != 1) return nullptr;
  const Attribute* a = n.attr("perm");
  if (!a || a->ints.empty() || a->ints.size() > kMaxRank) return nullptr;
  bool seen[kMaxRank] = {};
  for (int64_t k : a->ints) {
    if (k < 0 || k >= int64_t(a->ints.size()) || seen[k]) return nullptr;
    seen[k] = true;
  }
  return &a->ints;
}

std::vector<int64_t> compose_perms(const std::vector<int64_t>& p1, const std::vector<int64_t>& p2) {
  std::vector<int64_t> q(p2.size());
  for (size_t k = 0; k < q.size(); ++k) q[k] = p1[size_t(p2[k])];
  return q;
}

size_t absorb_chain(Graph& g, DefUse& u, size_t i, size_t c, const char* fused_op) {
  const Node& chain = g.nodes[c];
  Node f = g.nodes[i];
  f.op_type = fused_op;
  f.domain = kOnemodelDomain;
  for (const char* name : {"ops", "operands", "consts"}) {
    const Attribute* a = chain.attr(name);
    if (!a) return 0;
    f.attributes.push_back(*a);
  }
  f.outputs = chain.outputs;
  u.drop(c);
  u.replace(i, std::move(f));
  return 1;
}

namespace {
const Node kNoNode;  // what a node reads and writes before it exists and after it is dropped
}  // namespace

DefUse::DefUse(Graph& g) : g_(g), dropped_(g.nodes.size(), 0) {
  for (size_t i = 0; i < g.nodes.size(); ++i) relink(i, kNoNode, g.nodes[i]);
  for (const auto& t : g.initializers) inits_.emplace(t.name, &t);  // the first of a name, as find_initializer
  for (const auto& v : g.inputs) inputs_.insert(v.name);
  for (const auto& v : g.outputs) outputs_.insert(v.name);
  // A value a subgraph reads by name is observable as an output is: never renamed or fused away.
  for (std::string& v : outer_reads(g)) outputs_.insert(std::move(v));
}

size_t DefUse::producer(const std::string& v) const {
  auto it = producer_.find(v);
  return it == producer_.end() ? kNone : it->second;
}

const Node* DefUse::producer_node(const std::string& v) const {
  const size_t p = producer(v);
  return p == kNone ? nullptr : &g_.nodes[p];
}

const std::vector<size_t>& DefUse::readers(const std::string& v) const {
  static const std::vector<size_t> none;
  auto it = readers_.find(v);
  return it == readers_.end() ? none : it->second;
}

const TensorData* DefUse::initializer(const std::string& v) const {
  auto it = inits_.find(v);
  return it == inits_.end() ? nullptr : it->second;
}

const TensorData* DefUse::constant(const std::string& v) const { return is_input(v) ? nullptr : initializer(v); }

void DefUse::replace(size_t i, Node n) {
  relink(i, g_.nodes[i], n);
  g_.nodes[i] = std::move(n);
}

void DefUse::set_input(size_t i, size_t slot, std::string v) {
  reread(i, g_.nodes[i].inputs[slot], v);
  g_.nodes[i].inputs[slot] = std::move(v);
}

void DefUse::set_output(size_t i, size_t slot, std::string v) {
  rewrite(i, g_.nodes[i].outputs[slot], v);
  g_.nodes[i].outputs[slot] = std::move(v);
}

void DefUse::drop(size_t i) {
  if (dropped_[i]) return;  // a pattern may reach one node twice
  relink(i, g_.nodes[i], kNoNode);
  dropped_[i] = 1;
}

void DefUse::insert_after(size_t i, Node n) {
  g_.nodes.push_back(std::move(n));
  dropped_.push_back(0);
  anchor_.push_back(i);
  relink(g_.nodes.size() - 1, kNoNode, g_.nodes.back());
}

void DefUse::add_initializer(TensorData t) {
  added_.push_back(std::move(t));
  inits_.emplace(added_.back().name, &added_.back());
}

std::string DefUse::fresh_name(const std::string& base) {
  std::string n = base;
  for (int k = 2; producer_.count(n) || inits_.count(n) || inputs_.count(n) || spent_.count(n); ++k) n = msg(base, "_", k);
  spent_.insert(n);
  return n;
}

void DefUse::finish() {
  // Inserted nodes (appended from `first`) by the node they follow, in insertion order.
  const size_t first = g_.nodes.size() - anchor_.size();
  std::vector<size_t> inserted(anchor_.size());
  for (size_t k = 0; k < inserted.size(); ++k) inserted[k] = first + k;
  std::stable_sort(inserted.begin(), inserted.end(), [&](size_t a, size_t b) { return anchor_[a - first] < anchor_[b - first]; });
  std::vector<Node> nodes;
  nodes.reserve(g_.nodes.size());
  size_t k = 0;
  for (size_t i = 0; i < first; ++i) {
    if (!dropped_[i]) nodes.push_back(std::move(g_.nodes[i]));
    for (; k < inserted.size() && anchor_[inserted[k] - first] == i; ++k)
      if (!dropped_[inserted[k]]) nodes.push_back(std::move(g_.nodes[inserted[k]]));
  }
  g_.nodes = std::move(nodes);
  for (TensorData& t : added_) g_.initializers.push_back(std::move(t));
  added_.clear();
}

// Slot by slot: a slot that keeps its value keeps its entry, so the reader list of a value many
// nodes read (a shared input) is not searched when one of them is rewritten.
void DefUse::relink(size_t i, const Node& was, const Node& now) {
  static const std::string none;
  auto at = [](const std::vector<std::string>& v, size_t k) -> const std::string& { return k < v.size() ? v[k] : none; };
  for (size_t k = 0; k < std::max(was.inputs.size(), now.inputs.size()); ++k) reread(i, at(was.inputs, k), at(now.inputs, k));
  for (size_t k = 0; k < std::max(was.outputs.size(), now.outputs.size()); ++k) rewrite(i, at(was.outputs, k), at(now.outputs, k));
}

// Node i stops reading `was` and reads `now` ("" is no value).
void DefUse::reread(size_t i, const std::string& was, const std::string& now) {
  if (was == now) return;
  if (!was.empty()) {
    std::vector<size_t>& r = readers_[was];
    auto it = std::find(r.begin(), r.end(), i);
    if (it != r.end()) r.erase(it);
  }
  if (!now.empty()) readers_[now].push_back(i);
}

// Node i stops writing `was` and writes `now`. Another node may already write `was` (a fused
// node takes over the value of the part it absorbs, whichever edit comes first).
void DefUse::rewrite(size_t i, const std::string& was, const std::string& now) {
  if (was == now) return;
  if (!was.empty()) {
    auto it = producer_.find(was);
    if (it != producer_.end() && it->second == i) producer_.erase(it);
    spent_.insert(was);
  }
  if (!now.empty()) producer_[now] = i;
}

bool pass_enabled(const Pass& p) {
  if (!p.run) return false;
  if (p.linked == Linked::Always) return true;
  for (const OpDef* op : all_ops())
    for (const RewriteFn* w = op->written_by; w && *w; ++w)
      if (*w == p.run) return true;
  return false;
}

const Pass* find_pass(const std::string& name) {
  for (const Pass& p : all_passes())
    if (name == p.name) return &p;
  return nullptr;
}

Status run_passes(Graph& g, ArithmeticMode mode, std::vector<PassRun>* runs, size_t max_folded_bytes) {
  size_t total = 0;
  for (const Pass& p : all_passes()) {
    if (p.rule == BitRule::FastOnly && mode == ArithmeticMode::Exact) continue;
    if (!pass_enabled(p)) continue;
    size_t changes = 0;
    // Folding is the one pass with a limit; the table keeps the common signature.
    Status st = p.run == fold_constants ? fold_constants_within(g, mode, max_folded_bytes, &changes) : p.run(g, mode, &changes);
    OM_TRY(st.with_context(msg("graph pass ", p.name)));
    total += changes;
    if (runs) runs->push_back({p.name, p.rule, changes});
  }
  // The passes hand a new graph to the planner: checked once, when they changed it.
  return total ? verify(g).with_context("graph after passes") : Status::ok();
}

}  // namespace om::graph::passes
