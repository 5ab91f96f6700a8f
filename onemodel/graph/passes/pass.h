// The graph pass framework (docs/graph-passes.md). Each pass declares its bit rule: Exact
// passes change no output bit in any mode and run everywhere; FastOnly passes may change the
// last bits and run only in ArithmeticMode::Fast sessions.
#pragma once
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "onemodel/core/mode.h"
#include "onemodel/core/status.h"
#include "onemodel/graph/ir.h"

namespace om::graph::passes {

enum class BitRule { Exact, FastOnly };

// Whether the pass table links a pass itself, or the records of the operators it writes do
// (OpDef::written_by): then it runs only when one of those operators is registered, and in a
// program that registers only some operators (onemodel/op_list.h) it may not be linked at all.
enum class Linked { Always, ByOperator };

struct Pass {
  const char* name;
  BitRule rule;
  // Returns the number of rewrites made. The mode is the session's: constant folding uses the
  // mode's kernels so folded values equal what the session would compute. Null: a ByOperator
  // pass this program does not link.
  Status (*run)(Graph& g, ArithmeticMode mode, size_t* changes);
  Linked linked = Linked::Always;
};

struct PassRun {
  std::string name;
  BitRule rule;
  size_t changes = 0;
};

// In order: f16 computed in f32 (f16 storage, f32 arithmetic; first, so every later pass sees
// f32 nodes), identity removal, QDQ Conv and MatMul fusion into QLinearConv / QLinearMatMul
// (FastOnly; before folding turns the weights' DequantizeLinear into floats), constant folding, the dynamic form's float
// epilogue fused into MatMulInteger / ConvInteger, attention fusion (FastOnly), MatMul epilogue
// fusion (bias + activation; a Gemm becomes a FusedMatMul there), Transposes folded into MatMul operands/output, scalar Mul folded
// into MatMul, Q/K/V projection merge, MatMul residual fusion (FastOnly), Transposes sunk through
// elementwise nodes until they cancel, Conv + BatchNormalization folding (FastOnly), Conv
// epilogue fusion (bias + activation), chains of elementwise nodes fused into one pass and into
// the convolution or the matrix product before them, dead-node removal.
const std::vector<Pass>& all_passes();

// Whether the pass runs in this program: it is linked and, when Linked::ByOperator, a
// registered operator's record names it (what it writes can run).
bool pass_enabled(const Pass& p);
// The table's pass of that name, or null.
const Pass* find_pass(const std::string& name);

// Runs every pass the mode allows, in order; the graph is verified afterwards. Constant folding
// may add at most max_folded_bytes of new initializer bytes (SessionOptions::max_folded_bytes).
Status run_passes(Graph& g, ArithmeticMode mode, std::vector<PassRun>* runs, size_t max_folded_bytes = SIZE_MAX);

// The def-use view a rewriting pass works through: the node writing each value, the nodes
// reading it, the initializers by name, the graph's inputs and outputs. A pass builds it once
// and makes every node edit through it, so the view stays current: each node of the pass's one
// scan sees the graph as rewritten so far, and no pass rebuilds or patches an index of its own.
// Lookups go through hash maps, so a pass stays linear in the graph. Node indices stay stable
// until finish(): a dropped node is only marked (and leaves the view at once: no lookup returns
// it), an inserted one is appended; finish() orders the node list once.
class DefUse {
 public:
  static constexpr size_t kNone = SIZE_MAX;
  explicit DefUse(Graph& g);

  // The node writing `v`, or kNone (a graph input, an initializer, not defined).
  size_t producer(const std::string& v) const;
  const Node* producer_node(const std::string& v) const;
  // The nodes reading `v`, one entry per input slot (a node reading it twice counts twice).
  const std::vector<size_t>& readers(const std::string& v) const;
  // One reader and not a graph output: the value may vanish into a fused node.
  bool single_internal_use(const std::string& v) const { return !is_output(v) && readers(v).size() == 1; }
  size_t reader(const std::string& v) const { return readers(v)[0]; }  // the first (the only one, above)
  bool is_output(const std::string& v) const { return outputs_.count(v) > 0; }
  bool is_input(const std::string& v) const { return inputs_.count(v) > 0; }
  const TensorData* initializer(const std::string& v) const;
  // An initializer the caller cannot override (not also a graph input), or null: no pass folds,
  // fuses or merges any other.
  const TensorData* constant(const std::string& v) const;
  bool dropped(size_t i) const { return dropped_[i] != 0; }

  // Edits; each keeps the view current.
  void replace(size_t i, Node n);  // node i becomes n, in place
  void set_input(size_t i, size_t slot, std::string v);
  void set_output(size_t i, size_t slot, std::string v);
  void drop(size_t i);                  // its fields stay readable until finish()
  void insert_after(size_t i, Node n);  // after node i (an original one) and what was inserted there before
  // Appended to the graph by finish(): pointers initializer() returned stay valid until then.
  void add_initializer(TensorData t);
  // `base`, else `base_2`, `base_3`...: no value of this run had it, so no value_info entry of a
  // removed value describes it.
  std::string fresh_name(const std::string& base);
  // Removes the dropped nodes, places the inserted ones, appends the new initializers.
  void finish();

 private:
  void relink(size_t i, const Node& was, const Node& now);
  void reread(size_t i, const std::string& was, const std::string& now);
  void rewrite(size_t i, const std::string& was, const std::string& now);

  Graph& g_;
  std::unordered_map<std::string, std::vector<size_t>> readers_;
  std::unordered_map<std::string, size_t> producer_;
  std::unordered_map<std::string, const TensorData*> inits_;
  std::unordered_set<std::string> inputs_, outputs_;
  std::unordered_set<std::string> spent_;  // names no longer written or handed out by fresh_name
  std::deque<TensorData> added_;           // a deque: initializer() pointers into it stay valid
  std::vector<char> dropped_;              // per node, inserted ones included
  std::vector<size_t> anchor_;             // per inserted node, the node it follows
};

// The one scan of a rewriting pass: a DefUse view of g, then rewrite(u, i) for each node not
// dropped, in node order (nodes inserted on the way included), each call returning how many
// rewrites it made at node i (added to *changes); then finish(). The fusion passes' rewrites
// touch node i and later nodes only, so no earlier match changes and one scan suffices.
template <typename Rewrite>
Status rewrite_scan(Graph& g, size_t* changes, Rewrite rewrite) {
  DefUse u(g);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!u.dropped(i)) *changes += rewrite(u, i);
  u.finish();
  return Status::ok();
}

// A Transpose with an explicit perm (the default, reversed axes, needs the rank) that permutes 1
// to kMaxRank axes: its perm, else null.
const std::vector<int64_t>* transpose_perm(const Node& n);
// The perm of Transpose(p2) applied after Transpose(p1), one Transpose: q[k] = p1[p2[k]].
std::vector<int64_t> compose_perms(const std::vector<int64_t>& p1, const std::vector<int64_t>& p2);
// Node i (a product or a convolution) absorbs the FusedElementwise chain at node c, its output's
// only reader: node i becomes `fused_op` (onemodel's domain) with the chain's steps and the
// chain's output. Returns the rewrites made (0 when the chain lacks a step table).
size_t absorb_chain(Graph& g, DefUse& u, size_t i, size_t c, const char* fused_op);

// The individual passes (for tests).
Status remove_identities(Graph& g, ArithmeticMode mode, size_t* changes);
Status compute_f16_in_f32(Graph& g, ArithmeticMode mode, size_t* changes);    // f16_compute.cpp
Status fold_constants(Graph& g, ArithmeticMode mode, size_t* changes);  // no byte limit
Status fold_constants_within(Graph& g, ArithmeticMode mode, size_t max_folded_bytes, size_t* changes);
Status fuse_matmul_epilogue(Graph& g, ArithmeticMode mode, size_t* changes);
Status fold_transposes_into_matmul(Graph& g, ArithmeticMode mode, size_t* changes);
Status fold_matmul_scale(Graph& g, ArithmeticMode mode, size_t* changes);
Status fuse_matmul_residual(Graph& g, ArithmeticMode mode, size_t* changes);
Status fold_conv_batchnorm(Graph& g, ArithmeticMode mode, size_t* changes);
Status fuse_conv_epilogue(Graph& g, ArithmeticMode mode, size_t* changes);
Status fuse_elementwise_chains(Graph& g, ArithmeticMode mode, size_t* changes);  // fuse_elementwise.cpp
Status fuse_conv_chain(Graph& g, ArithmeticMode mode, size_t* changes);          // fuse_conv.cpp
Status fuse_matmul_chain(Graph& g, ArithmeticMode mode, size_t* changes);        // fuse_matmul.cpp
Status sink_transposes(Graph& g, ArithmeticMode mode, size_t* changes);          // sink_transposes.cpp
Status remove_dead_nodes(Graph& g, ArithmeticMode mode, size_t* changes);
Status fuse_attention(Graph& g, ArithmeticMode mode, size_t* changes);         // fuse_attention.cpp
Status fuse_qdq_conv(Graph& g, ArithmeticMode mode, size_t* changes);         // fuse_qdq.cpp
Status fuse_integer_epilogue(Graph& g, ArithmeticMode mode, size_t* changes);  // fuse_integer_epilogue.cpp
Status fuse_qdq_matmul(Graph& g, ArithmeticMode mode, size_t* changes);       // fuse_qdq.cpp
Status merge_qkv_projections(Graph& g, ArithmeticMode mode, size_t* changes);  // fuse_attention.cpp

}  // namespace om::graph::passes
