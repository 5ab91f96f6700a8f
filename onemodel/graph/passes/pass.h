// The graph pass framework (docs/graph-passes.md). Each pass declares its bit rule: Exact
// passes change no output bit in any mode and run everywhere; FastOnly passes may change the
// last bits and run only in ArithmeticMode::Fast sessions.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "onemodel/core/mode.h"
#include "onemodel/core/status.h"
#include "onemodel/graph/ir.h"

namespace om::graph::passes {

enum class BitRule { Exact, FastOnly };

struct Pass {
  const char* name;
  BitRule rule;
  // Returns the number of rewrites made. The mode is the session's: constant folding uses the
  // mode's kernels so folded values equal what the session would compute.
  Status (*run)(Graph& g, ArithmeticMode mode, size_t* changes);
};

struct PassRun {
  std::string name;
  BitRule rule;
  size_t changes = 0;
};

// In order: identity removal, constant folding, attention fusion (FastOnly), MatMul epilogue
// fusion (bias + activation), Transposes folded into MatMul operands/output, scalar Mul folded
// into MatMul, Q/K/V projection merge, MatMul residual fusion (FastOnly), Conv +
// BatchNormalization folding (FastOnly), Conv epilogue fusion (bias + activation), dead-node
// removal.
const std::vector<Pass>& all_passes();

// Runs every pass the mode allows, in order; the graph is verified afterwards. Constant folding
// may add at most max_folded_bytes of new initializer bytes (SessionOptions::max_folded_bytes).
Status run_passes(Graph& g, ArithmeticMode mode, std::vector<PassRun>* runs, size_t max_folded_bytes = SIZE_MAX);

// Removes the nodes marked in `dropped` (one per node), keeping the order of the rest: the
// single-scan passes mark while they rewrite and compact once at the end (linear time).
void remove_dropped(Graph& g, const std::vector<char>& dropped);

// The individual passes (for tests).
Status remove_identities(Graph& g, ArithmeticMode mode, size_t* changes);
Status fold_constants(Graph& g, ArithmeticMode mode, size_t* changes);  // no byte limit
Status fold_constants_within(Graph& g, ArithmeticMode mode, size_t max_folded_bytes, size_t* changes);
Status fuse_matmul_epilogue(Graph& g, ArithmeticMode mode, size_t* changes);
Status fold_transposes_into_matmul(Graph& g, ArithmeticMode mode, size_t* changes);
Status fold_matmul_scale(Graph& g, ArithmeticMode mode, size_t* changes);
Status fuse_matmul_residual(Graph& g, ArithmeticMode mode, size_t* changes);
Status fold_conv_batchnorm(Graph& g, ArithmeticMode mode, size_t* changes);
Status fuse_conv_epilogue(Graph& g, ArithmeticMode mode, size_t* changes);
Status remove_dead_nodes(Graph& g, ArithmeticMode mode, size_t* changes);
Status fuse_attention(Graph& g, ArithmeticMode mode, size_t* changes);         // fuse_attention.cpp
Status merge_qkv_projections(Graph& g, ArithmeticMode mode, size_t* changes);  // fuse_attention.cpp

}  // namespace om::graph::passes
