// The normalised exponentials and their hard form along one axis: Softmax, LogSoftmax and
// Hardmax (opset 13 semantics; older forms are rewritten by softmax_upgrade), and
// softmax_along_axis, which SoftmaxCrossEntropyLoss shares (reduce_util.h). Sums and exp go
// through kernels::f32_softmax_rows, whose Exact-mode order is fixed (docs/exactness.md);
// Hardmax compares in element order.
#include <cmath>

#include "onemodel/graph/ops/op_util.h"
#include "onemodel/graph/ops/reduce_util.h"
#include "onemodel/kernels/kernels.h"

namespace om::graph::ops {

// Before opset 13 Softmax, LogSoftmax and Hardmax flattened the input to 2-D at `axis` (default
// 1) and normalised each row of that matrix. axis = -1 is the opset-13 form already; any other
// axis becomes that composition of registry operators:
//   s = Shape(x); f = Flatten(x, axis); t = Op(f, axis = -1); y = Reshape(t, s)
// (Flatten and Reshape alias, the Shape folds when planning: no copy is added).
Status softmax_upgrade(UpgradeContext& ctx) {
  Node& node = ctx.node;
  const int64_t axis = node.attr_int("axis", 1);
  if (axis == -1) return Status::ok();
  if (node.inputs.empty() || node.outputs.empty()) return Status::ok();  // the Session reports it
  const std::string x = node.inputs[0], y = node.outputs[0];
  const std::string base = y.empty() ? node.name : y;
  const std::string s = ctx.fresh(base + ".shape"), f = ctx.fresh(base + ".rows"), t = ctx.fresh(base + ".normalised");
  Node shape;
  shape.op_type = "Shape";
  shape.name = node.name.empty() ? "" : node.name + ".shape";
  shape.inputs = {x};
  shape.outputs = {s};
  Node flat;
  flat.op_type = "Flatten";
  flat.name = node.name.empty() ? "" : node.name + ".flatten";
  flat.inputs = {x};
  flat.outputs = {f};
  flat.attributes.push_back(Attribute::of_int("axis", axis));
  Node back;
  back.op_type = "Reshape";
  back.name = node.name.empty() ? "" : node.name + ".reshape";
  back.inputs = {t, s};
  back.outputs = {y};
  node.inputs[0] = f;
  node.outputs[0] = t;
  bool set = false;
  for (Attribute& a : node.attributes)
    if (a.name == "axis") a = Attribute::of_int("axis", -1), set = true;
  if (!set) node.attributes.push_back(Attribute::of_int("axis", -1));
  ctx.before.push_back(std::move(shape));
  ctx.before.push_back(std::move(flat));
  ctx.after.push_back(std::move(back));
  return Status::ok();
}

void softmax_along_axis_rows(const float* x, const int64_t* dims, size_t rank, int64_t axis, bool log, float* y, void* scratch,
                             ArithmeticMode mode, int64_t row_begin, int64_t row_end) {
  int64_t numel = 1, after = 1;
  for (size_t i = 0; i < rank; ++i) numel = count_mul(numel, dims[i]);
  for (size_t i = size_t(axis) + 1; i < rank; ++i) after = count_mul(after, dims[i]);
  const int64_t n = dims[axis];
  if (numel == 0 || row_begin >= row_end) return;
  if (after == 1) {
    kernels::f32_softmax_rows(x + row_begin * n, y + row_begin * n, size_t(row_end - row_begin), size_t(n), log, mode);
    return;
  }
  // Row r = (o, a) is strided by `after`: gather the rows into t0 (row r at t0 + r * n, the
  // layout of x with the axis moved last), run them, scatter them back.
  float* t0 = static_cast<float*>(scratch);
  float* t1 = t0 + numel;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const float* xr = x + (r / after) * n * after + r % after;
    for (int64_t j = 0; j < n; ++j) t0[r * n + j] = xr[j * after];
  }
  kernels::f32_softmax_rows(t0 + row_begin * n, t1 + row_begin * n, size_t(row_end - row_begin), size_t(n), log, mode);
  for (int64_t r = row_begin; r < row_end; ++r) {
    float* yr = y + (r / after) * n * after + r % after;
    for (int64_t j = 0; j < n; ++j) yr[j * after] = t1[r * n + j];
  }
}

void softmax_along_axis(const float* x, const int64_t* dims, size_t rank, int64_t axis, bool log, float* y, void* scratch,
                        ArithmeticMode mode) {
  int64_t numel = 1;
  for (size_t i = 0; i < rank; ++i) numel = count_mul(numel, dims[i]);
  if (numel == 0) return;
  softmax_along_axis_rows(x, dims, rank, axis, log, y, scratch, mode, 0, numel / dims[axis]);
}

namespace {

// ---- Softmax / LogSoftmax (opset 13 semantics: one axis) ----

Status infer_softmax(InferContext& ctx) {
  const ValueDesc* x = ctx.input(0);
  if (!x || x->dtype != DType::f32)
    return ctx.error(ErrorKind::DTypeMismatch, msg("input must be f32, got ", x ? dtype_name(x->dtype) : "nothing"));
  int64_t axis;
  if (!normalize_axis(ctx.node.attr_int("axis", -1), int64_t(x->shape.size()), &axis))
    return ctx.error(ErrorKind::InvalidArgument, msg("axis ", ctx.node.attr_int("axis", -1), " is out of range for ", shape_str(x->shape)));
  ctx.set_output(0, DType::f32, x->shape);
  return Status::ok();
}

size_t softmax_scratch(const InferContext& ctx) { return softmax_along_axis_scratch(*ctx.input(0)); }

// Softmax's and LogSoftmax's record: the axis. Work: the rows (lines along the axis).
struct SoftmaxParams {
  int64_t axis = 0;
};

Status prepare_softmax(const InferContext& ctx, Prepared& out) {
  const ValueDesc& x = *ctx.input(0);
  const int64_t axis = out.record<SoftmaxParams>().axis = checked_axis(ctx, -1, int64_t(x.shape.size()));
  const int64_t n = x.shape[size_t(axis)];
  out.work = n == 0 ? 0 : x.numel() / n;
  return Status::ok();
}

template <bool Log>
Status softmax_kernel(const KernelContext& k) {
  const TensorArg& X = k.in(0);
  softmax_along_axis_rows(X.as<const float>(), X.dims, X.rank, k.params<SoftmaxParams>().axis, Log, k.out(0).as<float>(), k.scratch,
                          k.mode, k.begin, k.end);
  return Status::ok();
}

// ---- Hardmax (opset 13: one axis) ----

Status infer_hardmax(InferContext& ctx) {
  OM_TRY(need_input(ctx, 0));
  const ValueDesc* x = ctx.input(0);
  if (x->dtype != DType::f32) return ctx.error(ErrorKind::DTypeMismatch, msg("input must be f32, got ", dtype_name(x->dtype)));
  int64_t axis = 0;
  if (!normalize_axis(ctx.node.attr_int("axis", -1), int64_t(x->shape.size()), &axis))
    return ctx.error(ErrorKind::InvalidArgument, msg("axis ", ctx.node.attr_int("axis", -1), " is out of range for ", shape_str(x->shape)));
  ctx.set_output(0, DType::f32, x->shape);
  return Status::ok();
}

// Hardmax's record: X as [outer, n, inner] around the axis. Work: the outer * inner lines
// along the axis.
struct HardmaxParams {
  int64_t n = 0, inner = 1;
};

Status prepare_hardmax(const InferContext& ctx, Prepared& out) {
  const std::vector<int64_t>& x = ctx.input(0)->shape;
  const AxisSplit s = split_at_axis(x, checked_axis(ctx, -1, int64_t(x.size())));
  HardmaxParams& p = out.record<HardmaxParams>();
  p.n = s.size;
  p.inner = s.inner;
  out.work = s.outer * p.inner;
  return Status::ok();
}

Status hardmax_kernel(const KernelContext& k) {
  const HardmaxParams& p = k.params<HardmaxParams>();
  const int64_t n = p.n, inner = p.inner;
  const float* x = k.in(0).as<const float>();
  float* y = k.out(0).as<float>();
  for (int64_t line = k.begin; line < k.end; ++line) {
    const int64_t o = line / inner, i = line % inner;
    const float* px = x + o * n * inner + i;
    float* py = y + o * n * inner + i;
    int64_t best = 0;
    for (int64_t j = 0; j < n; ++j) {
      py[j * inner] = 0.0f;
      if (px[j * inner] > px[best * inner]) best = j;  // the first maximum wins
    }
    if (n > 0) py[best * inner] = 1.0f;
  }
  return Status::ok();
}

constexpr AttrSpec kSoftmaxAttrs[] = {{"axis", AttrKind::Int}};

constexpr OpDef kOps[] = {
    op("Softmax").upgrades_from(1).per_item(BatchRule::Axis, -1).upgrade_hook(softmax_upgrade).inputs(1).attributes(kSoftmaxAttrs).shapes(infer_softmax)
        .prepared(prepare_softmax).kernel(softmax_kernel<false>)
        .with_scratch(softmax_scratch).doc("f32, axis (opset 13 semantics); exact: fixed-order sum, library exp").with_flags(kOpF16InF32),
    op("LogSoftmax").upgrades_from(1).per_item(BatchRule::Axis, -1).upgrade_hook(softmax_upgrade).inputs(1).attributes(kSoftmaxAttrs).shapes(infer_softmax)
        .prepared(prepare_softmax).kernel(softmax_kernel<true>)
        .with_scratch(softmax_scratch).doc("f32, axis (opset 13 semantics)").with_flags(kOpF16InF32),
    op("Hardmax").upgrades_from(1).upgrade_hook(softmax_upgrade).inputs(1).attributes(kSoftmaxAttrs).shapes(infer_hardmax)
        .prepared(prepare_hardmax).kernel(hardmax_kernel).doc("f32, axis (opset 13 semantics); the first maximum"),
};

}  // namespace

}  // namespace om::graph::ops

// The family's operators, one symbol each (onemodel/op_list.h).
#define OM_SOFTMAX_OPS(X) X(Softmax) X(LogSoftmax) X(Hardmax)
OM_OP_FAMILY_TABLE(softmax, OM_SOFTMAX_OPS)
