// com.onemodel FusedElementwise (elementwise_chain.h): the fused chains of elementwise nodes.
// Work: elements. The kernel runs the steps over blocks of kBlock elements held on the stack,
// the last step writing the output, so the chain reads its input and writes its output once
// however many nodes it replaced.
#include <algorithm>
#include <cstring>

#include "onemodel/graph/ops/activation_fns.h"
#include "onemodel/graph/ops/elementwise_chain.h"
#include "onemodel/graph/ops/op_util.h"
#include "onemodel/graph/passes/pass.h"
#include "onemodel/kernels/kernels.h"

namespace om::graph::ops {
namespace {

using kernels::BinaryOp;
using kernels::UnaryOp;

struct ChainStep {
  ChainOp op;
  int32_t a, b;  // value indices, or kChainConstant / kChainNone
  float c0, c1;
};
struct ChainParams {
  int32_t steps = 0;
  ChainStep step[kChainMaxSteps];
};

// The steps as the attributes give them, checked: every index below its step's own value, a
// constant only where the op takes one, at most kChainMaxSteps.
Status read_chain(const InferContext& ctx, ChainParams* p) {
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
    p->step[s] = ChainStep{op, int32_t(a), int32_t(b), c->floats[2 * s], c->floats[2 * s + 1]};
  }
  return Status::ok();
}

Status infer_chain(InferContext& ctx) {
  OM_TRY(require_dtype(ctx, 0, {DType::f32}));
  ChainParams p;
  OM_TRY(read_chain(ctx, &p));
  std::vector<int64_t> shape = ctx.input(0)->shape;
  const int64_t rank = ctx.node.attr_int("rank", 0);
  if (rank < 0 || rank > 1)
    return ctx.error(ErrorKind::InvalidArgument, msg("attribute rank must be 0 or 1, got ", rank));
  if (int64_t(shape.size()) < rank) shape.insert(shape.begin(), size_t(rank) - shape.size(), 1);
  ctx.set_output(0, DType::f32, shape);
  return Status::ok();
}

Status prepare_chain(const InferContext& ctx, Prepared& out) {
  ChainParams& p = out.record<ChainParams>();
  OM_TRY(read_chain(ctx, &p));
  out.work = ctx.outputs[0].numel();
  out.cost = out.work * (p.steps + 1);
  return Status::ok();
}

constexpr int64_t kBlock = 512;  // elements per block: the kChainMaxSteps - 1 blocks are 30 KB of stack

BinaryOp binary_of(ChainOp op) {
  switch (op) {
    case ChainOp::Sub: return BinaryOp::Sub;
    case ChainOp::Mul: return BinaryOp::Mul;
    case ChainOp::Div: return BinaryOp::Div;
    default: return BinaryOp::Add;
  }
}

template <typename F>
void map_block(const float* x, float* y, int64_t n, F f) {
#pragma GCC ivdep
  for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

Status chain_kernel(const KernelContext& k) {
  const ChainParams& p = k.params<ChainParams>();
  const float* x = k.in(0).as<const float>();
  float* y = k.out(0).as<float>();
  alignas(64) float vals[kChainMaxSteps - 1][kBlock];  // values 1..steps-1 of the current block
  for (int64_t s0 = k.begin; s0 < k.end; s0 += kBlock) {
    const int64_t n = std::min(kBlock, k.end - s0);
    auto value = [&](int32_t v) -> const float* { return v == 0 ? x + s0 : vals[v - 1]; };
    for (int32_t s = 0; s < p.steps; ++s) {
      const ChainStep& st = p.step[s];
      float* dst = s + 1 == p.steps ? y + s0 : vals[s];
      if (chain_op_binary(st.op)) {
        // The constant broadcast with step 0, as the node's broadcast kernel reads it.
        const float* a = st.a == kChainConstant ? &st.c0 : value(st.a);
        const float* b = st.b == kChainConstant ? &st.c0 : value(st.b);
        kernels::f32_binary(binary_of(st.op), a, st.a == kChainConstant ? 0 : 1, b, st.b == kChainConstant ? 0 : 1, dst,
                            size_t(n));
        continue;
      }
      const float* a = value(st.a);
      const float c0 = st.c0, c1 = st.c1;
      switch (st.op) {
        case ChainOp::Relu: kernels::f32_unary(UnaryOp::Relu, a, dst, size_t(n)); break;
        case ChainOp::Sigmoid: kernels::f32_unary(UnaryOp::Sigmoid, a, dst, size_t(n)); break;
        case ChainOp::Tanh: kernels::f32_unary(UnaryOp::Tanh, a, dst, size_t(n)); break;
        case ChainOp::Clip: map_block(a, dst, n, [c0, c1](float v) { return act::clip(v, c0, c1); }); break;
        case ChainOp::LeakyRelu: map_block(a, dst, n, [c0](float v) { return act::leaky_relu(v, c0); }); break;
        case ChainOp::HardSigmoid: map_block(a, dst, n, [c0, c1](float v) { return act::hard_sigmoid(v, c0, c1); }); break;
        case ChainOp::HardSwish: map_block(a, dst, n, [](float v) { return act::hard_swish(v); }); break;
        default: return k.error(ErrorKind::Internal, "FusedElementwise: a binary op among the unary steps");
      }
    }
  }
  return Status::ok();
}

constexpr AttrSpec kChainAttrs[] = {
    {"ops", AttrKind::Ints}, {"operands", AttrKind::Ints}, {"consts", AttrKind::Floats}, {"rank", AttrKind::Int}};

constexpr OpDef kOps[] = {
    op("FusedElementwise").in_domain(kOnemodelDomain).written_by_passes(passes::fuse_elementwise_chains).inputs(1)
        .attributes(kChainAttrs).shapes(infer_chain).prepared(prepare_chain).kernel(chain_kernel)
        .doc("written by the elementwise chain fusion pass: up to 16 steps (Add, Sub, Mul, Div with a scalar constant or "
             "another step's value; Relu, Sigmoid, Tanh, Clip, LeakyRelu, HardSigmoid, HardSwish) in one pass, each "
             "step rounded as its node"),
};

}  // namespace
}  // namespace om::graph::ops

#define OM_FUSED_ELEMENTWISE_OPS(X) X(FusedElementwise)
OM_OP_FAMILY_TABLE(fused_elementwise, OM_FUSED_ELEMENTWISE_OPS)
