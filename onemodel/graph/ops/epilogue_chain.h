// The chain of elementwise steps a product or a convolution runs on its output rows just written
// (attributes ops, operands and consts: the FusedElementwise node the passes fuse_conv_chain and
// fuse_matmul_chain took in; docs/graph-passes.md). The chain kernel and its attribute reader are
// referenced weakly: FusedElementwise's family links them (the chains come from its nodes), so a
// program that registers no chains carries neither, and a chain is then refused when prepared.
#pragma once
#include "onemodel/graph/op_registry.h"
#include "onemodel/graph/ops/elementwise_chain.h"

namespace om::kernels {
void f32_chain(const ChainProgram& p, const float* x, float* y, size_t n) __attribute__((weak));
}

namespace om::graph::ops {

Status read_chain(const InferContext& ctx, kernels::ChainProgram* p) __attribute__((weak));

// The node's chain read and checked into `p` when it has one (`*has`), else nothing.
inline Status epilogue_chain(const InferContext& ctx, kernels::ChainProgram* p, bool* has) {
  *has = ctx.node.attr("ops") != nullptr;
  if (!*has) return Status::ok();
  if (!read_chain || !kernels::f32_chain)
    return ctx.error(ErrorKind::Unsupported, "a chain (attribute ops) needs the FusedElementwise operator, which this "
                                             "program does not register (docs/deploying.md, \"Selective operator registration\")");
  return read_chain(ctx, p);
}

}  // namespace om::graph::ops
