#include "onemodel/graph/passes/pass.h"

namespace om::graph::passes {

const std::vector<Pass>& all_passes() {
  static const std::vector<Pass> passes = {
      {"remove_identities", BitRule::Exact, remove_identities},
      {"fold_constants", BitRule::Exact, fold_constants},
      {"fuse_attention", BitRule::FastOnly, fuse_attention},
      {"fuse_matmul_epilogue", BitRule::Exact, fuse_matmul_epilogue},
      {"fold_transposes_into_matmul", BitRule::Exact, fold_transposes_into_matmul},
      {"fold_matmul_scale", BitRule::Exact, fold_matmul_scale},
      {"merge_qkv_projections", BitRule::Exact, merge_qkv_projections},
      {"fuse_matmul_residual", BitRule::FastOnly, fuse_matmul_residual},
      {"fold_conv_batchnorm", BitRule::FastOnly, fold_conv_batchnorm},
      {"fuse_conv_epilogue", BitRule::Exact, fuse_conv_epilogue},
      {"remove_dead_nodes", BitRule::Exact, remove_dead_nodes},
  };
  return passes;
}

void remove_dropped(Graph& g, const std::vector<char>& dropped) {
  size_t w = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!dropped[i]) {
      if (w != i) g.nodes[w] = std::move(g.nodes[i]);
      ++w;
    }
  g.nodes.resize(w);
}

Status run_passes(Graph& g, ArithmeticMode mode, std::vector<PassRun>* runs, size_t max_folded_bytes) {
  size_t total = 0;
  for (const Pass& p : all_passes()) {
    if (p.rule == BitRule::FastOnly && mode == ArithmeticMode::Exact) continue;
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
