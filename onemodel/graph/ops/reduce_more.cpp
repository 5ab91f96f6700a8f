// The remaining ONNX reductions: ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare,
// ReduceLogSum, ReduceLogSumExp. Same axes rules and kernel as reduce.cpp (reduce_util.h);
// sums of transformed elements use the fixed Exact-mode order, log/exp are the library's own.
#include "onemodel/graph/ops/op_util.h"
#include "onemodel/graph/ops/reduce_util.h"

namespace om::graph::ops {
namespace {

constexpr OpDef kOps[] = {
    reduction<ReduceKind::Min>("ReduceMin", 18).doc("f32; as ReduceSum; NaN propagates"),
    reduction<ReduceKind::Prod>("ReduceProd", 18).doc("f32; as ReduceSum; product in element order"),
    reduction<ReduceKind::L1>("ReduceL1", 18).doc("f32; as ReduceSum, of |x|"),
    reduction<ReduceKind::L2>("ReduceL2", 18).doc("f32; sqrt of the sum of squares"),
    reduction<ReduceKind::SumSquare>("ReduceSumSquare", 18).doc("f32; as ReduceSum, of x*x"),
    reduction<ReduceKind::LogSum>("ReduceLogSum", 18).doc("f32; library log of the sum"),
    reduction<ReduceKind::LogSumExp>("ReduceLogSumExp", 18)
        .doc("f32; max-shifted, library exp and log"),
};

}  // namespace

OpTable reduce_more_ops() { return table_of(kOps); }

}  // namespace om::graph::ops
