// The one check every inferred shape passes before anything is allocated or computed from it
// (the session's planner, plan-time folding and the constant-folding pass): every dim >= 0, at
// most kMaxNumel elements (core/shape.h), rank at most kMaxRank. After it, ValueDesc::numel()
// and nbytes() cannot wrap. Errors name the node and the dims.
#pragma once
#include "onemodel/core/shape.h"
#include "onemodel/graph/op_registry.h"

namespace om::graph {

inline Status check_inferred(const InferContext& ctx) {
  for (size_t o = 0; o < ctx.outputs.size(); ++o) {
    const std::vector<int64_t>& s = ctx.outputs[o].shape;
    if (s.size() > kMaxRank)
      return ctx.error(ErrorKind::Unsupported, msg("output ", o, " has rank ", s.size(), ", above the supported ", kMaxRank));
    OM_TRY(check_shape(msg(ctx.node.op_type, " node '", ctx.node.name, "': output ", o), s));
  }
  return Status::ok();
}

// Runs the op's shape inference and check_inferred; `outputs` receives the output descs.
inline Status infer_checked(const Node& node, const OpDef& op, const std::vector<const ValueDesc*>& inputs,
                            std::vector<ValueDesc>* outputs) {
  InferContext ctx{node, inputs, std::vector<ValueDesc>(node.outputs.size())};
  OM_TRY(op.infer(ctx));
  OM_TRY(check_inferred(ctx));
  *outputs = std::move(ctx.outputs);
  return Status::ok();
}

}  // namespace om::graph
