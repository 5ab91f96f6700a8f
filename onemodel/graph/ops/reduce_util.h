// The reduction machinery of reductions.cpp and the softmax of softmax.cpp (internal to onemodel/graph):
// axes from the input (or the attribute of older forms), keepdims, noop_with_empty_axes, and
// one kernel per reduction kind. Sums (Sum, Mean, L1, L2, SumSquare, LogSum, LogSumExp) use the
// fixed summation order of kernels::f32_reduce_sum in Exact mode; Max, Min and Prod run in
// element order, exact by nature (docs/exactness.md).
#pragma once
#include "onemodel/graph/op_registry.h"

namespace om::graph::ops {

enum class ReduceKind { Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp };

Status infer_reduce(InferContext& ctx);
// Fills the ReduceParams record (reductions.cpp). Work: the kept outputs.
Status prepare_reduce(const InferContext& ctx, Prepared& out);
template <ReduceKind Kind>
Status reduce_kernel(const KernelContext& k);  // instantiated in reductions.cpp for every kind
// The transposed copy of the input (or the summed values), and for ReduceLogSumExp one sum per
// output.
template <ReduceKind Kind>
size_t reduce_scratch(const InferContext& ctx) {
  return ctx.input(0)->nbytes() + (Kind == ReduceKind::LogSumExp ? ctx.outputs[0].nbytes() : 0);
}

// y = softmax (or log-softmax) of x along `axis`, in the kernel library's fixed order in Exact
// mode (docs/exactness.md). x and y must not overlap. When axis is not the last non-trivial
// one the axis is moved last through `scratch`, which then needs
// softmax_along_axis_scratch(x) bytes. Softmax, LogSoftmax and SoftmaxCrossEntropyLoss.
void softmax_along_axis(const float* x, const int64_t* dims, size_t rank, int64_t axis, bool log, float* y, void* scratch,
                        ArithmeticMode mode);
inline size_t softmax_along_axis_scratch(const ValueDesc& x) { return 2 * x.nbytes(); }
// Only rows [row_begin, row_end) of the numel / dims[axis] rows: row r is the line along `axis`
// through the r-th coordinate (row-major) of the other axes. Calls over any partition of the
// rows write what one softmax_along_axis writes, each in its own rows of scratch.
void softmax_along_axis_rows(const float* x, const int64_t* dims, size_t rank, int64_t axis, bool log, float* y, void* scratch,
                             ArithmeticMode mode, int64_t row_begin, int64_t row_end);

// The upgrade hook of Softmax, LogSoftmax and Hardmax (docs/onnx.md, "Opsets").
Status softmax_upgrade(UpgradeContext& ctx);

inline constexpr AttrSpec kReduceAttrs[] = {
    {"keepdims", AttrKind::Int}, {"noop_with_empty_axes", AttrKind::Int}, {"axes", AttrKind::Ints}};

// `axes` is an input from opset 18 (ReduceSum: 13); the reader moves the older attribute there.
template <ReduceKind Kind>
constexpr OpDef reduction(const char* type, int axes_input_since) {
  return op(type).upgrades_from(1).plan_time_inputs_mask(1u << 1).attr_became_input("axes", 1, axes_input_since).inputs(1, 2).attributes(kReduceAttrs)
      .shapes(infer_reduce).prepared(prepare_reduce).kernel(reduce_kernel<Kind>).with_scratch(reduce_scratch<Kind>)
      .per_item(BatchRule::AxesInput, 1);
}

}  // namespace om::graph::ops
