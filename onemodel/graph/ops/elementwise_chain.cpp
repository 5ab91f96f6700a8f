// The chain attributes (elementwise_chain.h) read into the kernel's program: FusedElementwise's
// and FusedConv's (a convolution that absorbed the chain after it) share this one reading.
#include "onemodel/graph/ops/elementwise_chain.h"
#include "onemodel/graph/ops/op_util.h"

namespace om::graph::ops {

// The steps as the attributes give them, checked: every index below its step's own value, a
// constant only where the op takes one, at most kChainMaxSteps.
Status read_chain(const InferContext& ctx, kernels::ChainProgram* p) {
  const std::vector<int64_t> ops = ctx.node.attr_ints("ops"), operands = ctx.node.attr_ints("operands");
  const Attribute* c = ctx.node.attr("consts");
  const size_t n = ops.size();
  if (n == 0 || n > size_t(kChainMaxSteps))
    return ctx.error(ErrorKind::InvalidArgument, msg("attribute ops must list 1 to ", kChainMaxSteps, " steps, got ", n));
  if (operands.size() != 2 * n || !c || c->type != AttrType::Floats || c->floats.size() != 2 * n)
    return ctx.error(ErrorKind::InvalidArgument,
                     msg("attributes operands (ints) and consts (floats) must hold two entries per step (", 2 * n,
                         "), got ", operands.size(), " and ", c && c->type == AttrType::Floats ? c->floats.size() : 0));
  p->steps = int32_t(n);
  for (size_t s = 0; s < n; ++s) {
    if (ops[s] < 0 || ops[s] >= int64_t(ChainOp::Count))
      return ctx.error(ErrorKind::InvalidArgument, msg("step ", s, ": unknown op code ", ops[s]));
    const ChainOp op = ChainOp(ops[s]);
    const int64_t a = operands[2 * s], b = operands[2 * s + 1];
    // A step reads values 0..s; a unary step reads one value, a binary step at most one constant.
    const bool a_ok = a >= 0 ? a <= int64_t(s) : chain_op_binary(op) && a == kChainConstant;
    const bool b_ok = chain_op_binary(op) ? (b >= 0 ? b <= int64_t(s) : b == kChainConstant && a != kChainConstant)
                                          : b == kChainNone;
    if (!a_ok || !b_ok)
      return ctx.error(ErrorKind::InvalidArgument,
                       msg("step ", s, ": operands (", a, ", ", b, ") must be values 0..", s, chain_op_binary(op)
                           ? " or one constant (-1)" : " and none (-2) for a one-operand step"));
    p->step[s] = kernels::ChainStep{op, int8_t(a), int8_t(b), c->floats[2 * s], c->floats[2 * s + 1]};
  }
  return Status::ok();
}

}  // namespace om::graph::ops
