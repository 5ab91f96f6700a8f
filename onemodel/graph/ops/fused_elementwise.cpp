// com.onemodel FusedElementwise (elementwise_chain.h): the fused chains of elementwise nodes.
// Work: elements. The record is the kernel's program (kernels::ChainProgram); kernels::f32_chain
// reads the input and writes the output once however many nodes the chain replaced.
#include "onemodel/graph/ops/elementwise_chain.h"
#include "onemodel/graph/ops/op_util.h"
#include "onemodel/graph/passes/pass.h"

namespace om::graph::ops {
namespace {

using ChainParams = kernels::ChainProgram;

Status infer_chain(InferContext& ctx) {
  OM_TRY(require_dtype(ctx, 0, {DType::f32}));
  ChainParams p;
  OM_TRY(read_chain(ctx, &p));
  std::vector<int64_t> shape = ctx.input(0)->shape;
  const int64_t rank = ctx.node.attr_int("rank", 0);
  if (rank < 0 || rank > int64_t(kMaxRank))
    return ctx.error(ErrorKind::InvalidArgument, msg("attribute rank must be 0 to ", kMaxRank, ", got ", rank));
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

Status chain_kernel(const KernelContext& k) {
  kernels::f32_chain(k.params<ChainParams>(), k.in(0).as<const float>() + k.begin, k.out(0).as<float>() + k.begin,
                     size_t(k.end - k.begin));
  return Status::ok();
}

constexpr AttrSpec kChainAttrs[] = {
    {"ops", AttrKind::Ints}, {"operands", AttrKind::Ints}, {"consts", AttrKind::Floats}, {"rank", AttrKind::Int}};

constexpr OpDef kOps[] = {
    op("FusedElementwise").in_domain(kOnemodelDomain).per_item(BatchRule::Broadcast).written_by_passes(writers<passes::fuse_elementwise_chains>).inputs(1)
        .attributes(kChainAttrs).shapes(infer_chain).prepared(prepare_chain).kernel(chain_kernel)
        .doc("written by the elementwise chain fusion pass: up to 16 steps (Add, Sub, Mul, Div, Max, Min with a scalar constant or "
             "another step's value; Relu, Sigmoid, Tanh, Clip, LeakyRelu, HardSigmoid, HardSwish) in one pass, each "
             "step rounded as its node"),
};

}  // namespace
}  // namespace om::graph::ops

#define OM_FUSED_ELEMENTWISE_OPS(X) X(FusedElementwise)
OM_OP_FAMILY_TABLE(fused_elementwise, OM_FUSED_ELEMENTWISE_OPS)
