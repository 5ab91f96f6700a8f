// The remaining ONNX reductions: ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare,
// ReduceLogSum, ReduceLogSumExp. Same axes rules and kernel as reduce.cpp (reduce_util.h);
// sums of transformed elements use the fixed Exact-mode order, log/exp are the library's own.
#include "onemodel/graph/ops/op_util.h"
#include "onemodel/graph/ops/reduce_util.h"

namespace om::graph::ops {
namespace {

constexpr OpDef kOps[] = {
    reduction("ReduceMin", reduce_kernel<ReduceKind::Min>, 18).doc("f32; as ReduceSum; NaN propagates"),
    reduction("ReduceProd", reduce_kernel<ReduceKind::Prod>, 18).doc("f32; as ReduceSum; product in element order"),
    reduction("ReduceL1", reduce_kernel<ReduceKind::L1>, 18).doc("f32; as ReduceSum, of |x|"),
    reduction("ReduceL2", reduce_kernel<ReduceKind::L2>, 18).doc("f32; sqrt of the sum of squares"),
    reduction("ReduceSumSquare", reduce_kernel<ReduceKind::SumSquare>, 18).doc("f32; as ReduceSum, of x*x"),
    reduction("ReduceLogSum", reduce_kernel<ReduceKind::LogSum>, 18).doc("f32; library log of the sum"),
    reduction("ReduceLogSumExp", reduce_kernel<ReduceKind::LogSumExp>, 18)
        .doc("f32; max-shifted, library exp and log"),
};

}  // namespace

OpTable reduce_more_ops() { return table_of(kOps); }

}  // namespace om::graph::ops
