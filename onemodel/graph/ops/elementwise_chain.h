// com.onemodel FusedElementwise: a chain of f32 elementwise nodes run as one pass over memory
// (written by the pass fuse_elementwise_chains, docs/graph-passes.md). Its steps, in order, each
// write one value of the input's element count; value 0 is the node's input X, value k the
// result of step k - 1, and the last step's value is the output. Attributes, one entry per step:
//   ops      ints: the step's ChainOp;
//   operands ints, two per step: value indices (each below the step's own value), or
//            kChainConstant (the step's constant) or kChainNone (a unary step's second operand);
//   consts   floats, two per step: a binary step's constant operand (first), Clip's min and
//            max, LeakyRelu's alpha, HardSigmoid's alpha and beta;
//   rank     int (optional): the output's least rank (a rank-1 constant operand of a rank-0 X).
// Each step computes exactly what the node it replaces computes (the same kernels and
// activation_fns.h formulas), so the chain's output has the separate nodes' bits in either mode.
#pragma once
#include <cstdint>

namespace om::graph::ops {

enum class ChainOp : int64_t { Add, Sub, Mul, Div, Relu, Sigmoid, Tanh, Clip, LeakyRelu, HardSigmoid, HardSwish, Count };
constexpr int kChainMaxSteps = 16;
constexpr int64_t kChainConstant = -1, kChainNone = -2;

// Whether the op takes two operands (the arithmetic ones) or one.
constexpr bool chain_op_binary(ChainOp op) { return op <= ChainOp::Div; }

}  // namespace om::graph::ops
