// com.onemodel FusedElementwise: a chain of f32 elementwise nodes run as one pass over memory
// (written by the pass fuse_elementwise_chains, docs/graph-passes.md). Its steps, in order, each
// write one value of the input's element count; value 0 is the node's input X, value k the
// result of step k - 1, and the last step's value is the output. Attributes, one entry per step:
//   ops      ints: the step's ChainOp;
//   operands ints, two per step: value indices (each below the step's own value), or
//            kChainConstant (the step's constant) or kChainNone (a unary step's second operand);
//   consts   floats, two per step: a binary step's constant operand (first), Clip's min and
//            max, LeakyRelu's alpha, HardSigmoid's alpha and beta;
//   rank     int (optional): the output's least rank (a one-element constant operand of higher
//            rank than X broadcasts X to it: ones prepended).
// Each step computes exactly what the node it replaces computes (kernels.h's f32_chain states the
// rule of each), so the chain's output has the separate nodes' bits in either mode. The op codes
// and the program are the kernel's (kernels::ChainOp, kernels::ChainProgram).
#pragma once
#include "onemodel/core/status.h"
#include "onemodel/kernels/kernels.h"

namespace om::graph {
struct InferContext;
}

namespace om::graph::ops {

using kernels::chain_op_binary;
using kernels::ChainOp;
using kernels::kChainConstant;
using kernels::kChainMaxSteps;
using kernels::kChainNone;

// The node's ops, operands and consts as a program, checked (elementwise_chain.cpp): every
// operand index below its step's own value, a constant only where the op takes one, 1 to
// kChainMaxSteps steps; else an error naming the attribute and the step.
Status read_chain(const InferContext& ctx, kernels::ChainProgram* p);

}  // namespace om::graph::ops
