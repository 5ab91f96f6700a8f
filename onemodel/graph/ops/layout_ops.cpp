// Layout operators that copy elements without arithmetic: Transpose, Size, Trilu, Split, Tile,
// DepthToSpace, SpaceToDepth, ReverseSequence and Dropout (inference: the identity). Any dtype;
// exact by nature. Transpose is here rather than with the shape operators because its record
// links the transpose-sinking pass: a program registering Flatten or Reshape does not need it.
#include <cstdint>
#include <cstring>

#include "onemodel/core/shape.h"
#include "onemodel/graph/ops/op_util.h"
#include "onemodel/graph/ops/strided_view.h"
#include "onemodel/graph/passes/pass.h"

namespace om::graph::ops {
namespace {

Status need_input(const InferContext& ctx, size_t i) {
  if (!ctx.input(i)) return ctx.error(ErrorKind::InvalidArgument, msg("input ", i, " is required"));
  return Status::ok();
}

// ---- Transpose ----

bool read_perm(const Node& node, size_t rank, int64_t perm[kMaxRank]) {
  const Attribute* a = node.attr("perm");
  if (!a || a->ints.empty()) {
    for (size_t i = 0; i < rank; ++i) perm[i] = int64_t(rank - 1 - i);
    return true;
  }
  if (a->ints.size() != rank) return false;
  bool seen[kMaxRank] = {};
  for (size_t i = 0; i < rank; ++i) {
    int64_t p = a->ints[i];
    if (!normalize_axis(p, int64_t(rank), &p) || seen[p]) return false;
    seen[p] = true;
    perm[i] = p;
  }
  return true;
}

Status infer_transpose(InferContext& ctx) {
  OM_TRY(need_input(ctx, 0));
  const auto& in = ctx.input(0)->shape;
  if (in.size() > kMaxRank) return ctx.error(ErrorKind::Unsupported, msg("rank ", in.size(), " exceeds ", kMaxRank));
  int64_t perm[kMaxRank];
  if (!read_perm(ctx.node, in.size(), perm))
    return ctx.error(ErrorKind::InvalidArgument, msg("perm is not a permutation of the ", in.size(), " axes of ", shape_str(in)));
  std::vector<int64_t> out(in.size());
  for (size_t i = 0; i < in.size(); ++i) out[i] = in[size_t(perm[i])];
  ctx.set_output(0, ctx.input(0)->dtype, std::move(out));
  return Status::ok();
}

// Transpose's record is the view of X it copies (strided_view.h). Work: the output rows.
Status prepare_transpose(const InferContext& ctx, Prepared& out) {
  const ValueDesc& x = *ctx.input(0);
  const size_t rank = x.shape.size();
  int64_t perm[kMaxRank];
  read_perm(ctx.node, rank, perm);  // checked by infer
  prepare_view(permuted_view(x.shape.data(), rank, perm, dtype_size(x.dtype)), out);
  return Status::ok();
}

// ---- Size ----

Status infer_size(InferContext& ctx) {
  OM_TRY(need_input(ctx, 0));
  ctx.set_output(0, DType::i64, {});
  return Status::ok();
}
// One work unit (no prepare step): a scalar.
Status size_kernel(const KernelContext& k) {
  *k.out(0).as<int64_t>() = k.in(0).numel;
  return Status::ok();
}

// ---- Trilu: keeps the upper (or lower) triangle of the last two axes, from diagonal k ----

Status infer_trilu(InferContext& ctx) {
  OM_TRY(need_input(ctx, 0));
  const ValueDesc* x = ctx.input(0);
  if (x->shape.size() < 2) return ctx.error(ErrorKind::InvalidArgument, msg("input must have rank >= 2, got ", shape_str(x->shape)));
  const ValueDesc* kv = ctx.input(1);
  if (kv && ((kv->dtype != DType::i64) || kv->numel() != 1))
    return ctx.error(ErrorKind::InvalidArgument, msg("k must be an i64 scalar, got ", dtype_name(kv->dtype), " ", shape_str(kv->shape)));
  ctx.set_output(0, x->dtype, x->shape);
  return Status::ok();
}

// Trilu's record. Work: the rows of all the matrices (the last axis is a row).
struct TriluParams {
  int64_t rows = 0, cols = 0;  // of one matrix
  bool upper = true;
};

Status prepare_trilu(const InferContext& ctx, Prepared& out) {
  const std::vector<int64_t>& x = ctx.input(0)->shape;
  TriluParams& p = out.record<TriluParams>();
  p.rows = x[x.size() - 2];
  p.cols = x[x.size() - 1];
  p.upper = ctx.node.attr_int("upper", 1) != 0;
  out.work = p.cols == 0 ? 0 : ctx.input(0)->numel() / p.cols;
  return Status::ok();
}

Status trilu_kernel(const KernelContext& k) {
  const TriluParams& p = k.params<TriluParams>();
  const TensorArg& X = k.in(0);
  const int64_t diag = k.has_input(1) ? *k.in(1).as<const int64_t>() : 0;
  const bool upper = p.upper;
  const int64_t rows = p.rows, cols = p.cols;
  const size_t es = dtype_size(X.dtype);
  const uint8_t* x = static_cast<const uint8_t*>(X.data);
  uint8_t* y = static_cast<uint8_t*>(k.out(0).data);
  for (int64_t r = k.begin; r < k.end; ++r) {
    const int64_t i = r % rows;
    for (int64_t j = 0; j < cols; ++j) {
      const size_t at = size_t(r * cols + j) * es;
      const bool keep = upper ? j - i >= diag : j - i <= diag;
      if (keep) std::memcpy(y + at, x + at, es);
      else std::memset(y + at, 0, es);
    }
  }
  return Status::ok();
}

// ---- Split: `split` input (opset 13; the reader moves the older attribute) or equal parts ----

Status split_sizes(const InferContext& ctx, int64_t* axis, std::vector<int64_t>* sizes) {
  const ValueDesc* x = ctx.input(0);
  const int64_t rank = int64_t(x->shape.size());
  if (!normalize_axis(ctx.node.attr_int("axis", 0), rank, axis))
    return ctx.error(ErrorKind::InvalidArgument, msg("axis ", ctx.node.attr_int("axis", 0), " is out of range for ", shape_str(x->shape)));
  const int64_t d = x->shape[size_t(*axis)];
  const size_t n = ctx.node.outputs.size();
  if (ctx.input(1)) {
    OM_TRY(const_ints(ctx, 1, sizes));
    int64_t total = 0;
    for (int64_t s : *sizes) {
      if (s < 0 || s > INT64_MAX - total) return ctx.error(ErrorKind::InvalidArgument, msg("split sizes ", shape_str(*sizes), " must be >= 0"));
      total += s;
    }
    if (sizes->size() != n || total != d)
      return ctx.error(ErrorKind::ShapeMismatch, msg("split ", shape_str(*sizes), " must have one size per output (", n,
                                                     ") summing to axis ", *axis, "'s size ", d));
    return Status::ok();
  }
  // Equal parts; the last one smaller when the size does not divide (opset 18 num_outputs).
  const int64_t part = (d + int64_t(n) - 1) / int64_t(n);
  sizes->clear();
  for (size_t i = 0; i < n; ++i) sizes->push_back(std::max<int64_t>(0, std::min(part, d - part * int64_t(i))));
  if (d % int64_t(n) != 0 && !ctx.node.attr("num_outputs"))
    return ctx.error(ErrorKind::ShapeMismatch, msg("axis ", *axis, "'s size ", d, " does not split into ", n, " equal parts"));
  return Status::ok();
}

Status infer_split(InferContext& ctx) {
  OM_TRY(need_input(ctx, 0));
  int64_t axis = 0;
  std::vector<int64_t> sizes;
  OM_TRY(split_sizes(ctx, &axis, &sizes));
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::vector<int64_t> shape = ctx.input(0)->shape;
    shape[size_t(axis)] = sizes[i];
    ctx.set_output(i, ctx.input(0)->dtype, std::move(shape));
  }
  return Status::ok();
}

// Split's record. Work: X's outer rows (one per index of the axes before `axis`), each cut
// into the outputs' rows.
struct SplitParams {
  int64_t axis = 0;
  int64_t inner = 0;  // bytes per step of the axis
};

Status prepare_split(const InferContext& ctx, Prepared& out) {
  const ValueDesc& x = *ctx.input(0);
  SplitParams& p = out.record<SplitParams>();
  p.axis = checked_axis(ctx, 0, int64_t(x.shape.size()));
  const AxisSplit s = split_at_axis(x.shape, p.axis);
  p.inner = int64_t(dtype_size(x.dtype)) * s.inner;
  out.work = x.numel() == 0 ? 0 : s.outer;
  return Status::ok();
}

Status split_kernel(const KernelContext& k) {
  const SplitParams& p = k.params<SplitParams>();
  const TensorArg& X = k.in(0);
  const int64_t axis = p.axis, inner = p.inner;
  const uint8_t* x = static_cast<const uint8_t*>(X.data);
  const int64_t row = X.dims[axis] * inner;
  for (int64_t o = k.begin; o < k.end; ++o) {
    int64_t at = 0;
    for (size_t j = 0; j < k.num_outputs; ++j) {
      const TensorArg& Y = k.out(j);
      const int64_t bytes = Y.dims[axis] * inner;
      if (Y.present && bytes > 0) std::memcpy(static_cast<uint8_t*>(Y.data) + o * bytes, x + o * row + at, size_t(bytes));
      at += bytes;
    }
  }
  return Status::ok();
}

// ---- Tile ----

Status infer_tile(InferContext& ctx) {
  OM_TRY(need_input(ctx, 0));
  std::vector<int64_t> reps;
  OM_TRY(const_ints(ctx, 1, &reps));
  const ValueDesc* x = ctx.input(0);
  if (reps.size() != x->shape.size())
    return ctx.error(ErrorKind::ShapeMismatch, msg("repeats ", shape_str(reps), " must have one entry per axis of ", shape_str(x->shape)));
  std::vector<int64_t> shape(x->shape.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    if (reps[i] < 0) return ctx.error(ErrorKind::InvalidArgument, msg("repeats must be >= 0, got ", shape_str(reps)));
    if (!checked_mul(x->shape[i], reps[i], &shape[i]))
      return ctx.error(ErrorKind::InvalidArgument, msg("the output of ", shape_str(x->shape), " tiled ", shape_str(reps), " overflows"));
  }
  int64_t n = 0;
  OM_TRY(check_shape(msg(ctx.node.op_type, " output"), shape, &n));
  ctx.set_output(0, x->dtype, std::move(shape));
  return Status::ok();
}

// Work: the output elements (prepare_elements); the index of element k.begin is
// unravelled once.
Status tile_kernel(const KernelContext& k) {
  const TensorArg& X = k.in(0);
  const TensorArg& Y = k.out(0);
  const size_t es = dtype_size(X.dtype);
  int64_t xs[kMaxRank];
  contiguous_strides(X.dims, X.rank, xs);
  int64_t idx[kMaxRank] = {};
  for (int64_t d = int64_t(Y.rank) - 1, rest = k.begin; d >= 0 && rest > 0; --d) {
    idx[d] = rest % Y.dims[d];
    rest /= Y.dims[d];
  }
  const uint8_t* x = static_cast<const uint8_t*>(X.data);
  uint8_t* y = static_cast<uint8_t*>(Y.data);
  for (int64_t o = k.begin; o < k.end; ++o) {
    int64_t src = 0;
    for (size_t d = 0; d < Y.rank; ++d) src += (idx[d] % X.dims[d]) * xs[d];
    std::memcpy(y + size_t(o) * es, x + size_t(src) * es, es);
    for (size_t d = Y.rank; d-- > 0;) {
      if (++idx[d] < Y.dims[d]) break;
      idx[d] = 0;
    }
  }
  return Status::ok();
}

// ---- DepthToSpace / SpaceToDepth: a 6-D transpose ----

template <bool ToSpace>
Status infer_block(InferContext& ctx) {
  OM_TRY(need_input(ctx, 0));
  const ValueDesc* x = ctx.input(0);
  const int64_t b = ctx.node.attr_int("blocksize", 0);
  if (x->shape.size() != 4) return ctx.error(ErrorKind::InvalidArgument, msg("input must be 4-D (N, C, H, W), got ", shape_str(x->shape)));
  if (b < 1) return ctx.error(ErrorKind::InvalidArgument, "blocksize must be >= 1");
  if (ToSpace && !ctx.node.attr_is("mode", "DCR") && !ctx.node.attr_is("mode", "CRD") && ctx.node.attr("mode"))
    return ctx.error(ErrorKind::InvalidArgument, "mode must be DCR or CRD");
  const auto& s = x->shape;
  int64_t bb = 0;
  if (!checked_mul(b, b, &bb)) return ctx.error(ErrorKind::InvalidArgument, "blocksize overflows");
  if (ToSpace) {
    if (s[1] % bb != 0) return ctx.error(ErrorKind::ShapeMismatch, msg("channels ", s[1], " are not a multiple of blocksize^2 ", bb));
    int64_t h = 0, w = 0;
    if (!checked_mul(s[2], b, &h) || !checked_mul(s[3], b, &w)) return ctx.error(ErrorKind::InvalidArgument, "output size overflows");
    ctx.set_output(0, x->dtype, {s[0], s[1] / bb, h, w});
  } else {
    if (s[2] % b != 0 || s[3] % b != 0)
      return ctx.error(ErrorKind::ShapeMismatch, msg("height and width of ", shape_str(s), " must be multiples of blocksize ", b));
    int64_t c = 0;
    if (!checked_mul(s[1], bb, &c)) return ctx.error(ErrorKind::InvalidArgument, "output size overflows");
    ctx.set_output(0, x->dtype, {s[0], c, s[2] / b, s[3] / b});
  }
  return Status::ok();
}

// The record is the view of X as a 6-D transpose (strided_view.h). Work: the output rows.
template <bool ToSpace>
Status prepare_block(const InferContext& ctx, Prepared& out) {
  const ValueDesc& X = *ctx.input(0);
  const int64_t b = ctx.node.attr_int("blocksize", 1);
  const int64_t N = X.shape[0], C = X.shape[1], H = X.shape[2], W = X.shape[3];
  int64_t dims[6];
  int64_t perm[6];
  if (ToSpace && ctx.node.attr_is("mode", "CRD")) {
    const int64_t d[6] = {N, C / (b * b), b, b, H, W}, p[6] = {0, 1, 4, 2, 5, 3};
    std::memcpy(dims, d, sizeof d), std::memcpy(perm, p, sizeof p);
  } else if (ToSpace) {
    const int64_t d[6] = {N, b, b, C / (b * b), H, W}, p[6] = {0, 3, 4, 1, 5, 2};
    std::memcpy(dims, d, sizeof d), std::memcpy(perm, p, sizeof p);
  } else {
    const int64_t d[6] = {N, C, H / b, b, W / b, b}, p[6] = {0, 3, 5, 1, 2, 4};
    std::memcpy(dims, d, sizeof d), std::memcpy(perm, p, sizeof p);
  }
  prepare_view(permuted_view(dims, 6, perm, dtype_size(X.dtype)), out);
  return Status::ok();
}

// ---- Dropout (inference): output = input, mask all true ----

Status infer_dropout(InferContext& ctx) {
  OM_TRY(need_input(ctx, 0));
  const ValueDesc* ratio = ctx.input(1);
  if (ratio && ratio->numel() != 1) return ctx.error(ErrorKind::InvalidArgument, "ratio must be a scalar");
  if (const ValueDesc* t = ctx.input(2)) {
    if (t->dtype != DType::boolean || t->numel() != 1) return ctx.error(ErrorKind::InvalidArgument, "training_mode must be a bool scalar");
    // Training mode draws a random mask unless the ratio is 0, where it is the identity too.
    const bool zero_ratio = ratio && ratio->data && ratio->dtype == DType::f32 && *static_cast<const float*>(ratio->data) == 0.0f;
    if (!t->data || (*static_cast<const bool*>(t->data) && !zero_ratio))
      return ctx.error(ErrorKind::Unsupported, "training_mode must be a constant false (or the ratio a constant 0): onemodel runs "
                                               "Dropout for inference only (remove the training_mode input or make it false)");
  }
  ctx.set_output(0, ctx.input(0)->dtype, ctx.input(0)->shape);
  if (ctx.node.outputs.size() > 1) ctx.set_output(1, DType::boolean, ctx.input(0)->shape);
  return Status::ok();
}
// Work: the elements (prepare_elements; the mask has as many).
Status dropout_kernel(const KernelContext& k) {
  const size_t es = dtype_size(k.in(0).dtype), b = size_t(k.begin), n = size_t(k.end - k.begin);
  std::memcpy(static_cast<uint8_t*>(k.out(0).data) + b * es, static_cast<const uint8_t*>(k.in(0).data) + b * es, n * es);
  if (k.num_outputs > 1 && k.out(1).present) std::memset(static_cast<uint8_t*>(k.out(1).data) + b, 1, n);
  return Status::ok();
}

// ---- ReverseSequence: each batch item's first sequence_lens[b] time steps in reverse order ----

Status infer_reverse_sequence(InferContext& ctx) {
  OM_TRY(need_input(ctx, 0));
  OM_TRY(need_input(ctx, 1));
  const ValueDesc* x = ctx.input(0);
  const ValueDesc* lens = ctx.input(1);
  const int64_t t_axis = ctx.node.attr_int("time_axis", 0), b_axis = ctx.node.attr_int("batch_axis", 1);
  if (x->shape.size() < 2 || !((t_axis == 0 && b_axis == 1) || (t_axis == 1 && b_axis == 0)))
    return ctx.error(ErrorKind::InvalidArgument, msg("input ", shape_str(x->shape), " with time_axis ", t_axis, " and batch_axis ", b_axis,
                                                     ": the input needs rank >= 2, and the axes are 0 and 1 in either order"));
  if (lens->dtype != DType::i64 || lens->shape.size() != 1 || lens->shape[0] != x->shape[size_t(b_axis)])
    return ctx.error(ErrorKind::InvalidArgument, msg("sequence_lens must be i64 [", x->shape[size_t(b_axis)], "] (one per batch item), got ",
                                                     dtype_name(lens->dtype), " ", shape_str(lens->shape)));
  ctx.set_output(0, x->dtype, x->shape);
  return Status::ok();
}

// Work: the (time, batch) rows, each `inner` elements.
struct ReverseSequenceParams {
  int64_t time = 0, batch = 0, inner = 1;
  bool time_first = true;
};

Status prepare_reverse_sequence(const InferContext& ctx, Prepared& out) {
  const std::vector<int64_t>& x = ctx.input(0)->shape;
  ReverseSequenceParams& p = out.record<ReverseSequenceParams>();
  p.time_first = ctx.node.attr_int("time_axis", 0) == 0;
  p.time = x[p.time_first ? 0 : 1];
  p.batch = x[p.time_first ? 1 : 0];
  for (size_t d = 2; d < x.size(); ++d) p.inner *= x[d];
  out.work = p.time * p.batch;
  return Status::ok();
}

Status reverse_sequence_kernel(const KernelContext& k) {
  const ReverseSequenceParams& p = k.params<ReverseSequenceParams>();
  const int64_t* lens = k.in(1).as<const int64_t>();
  const size_t row = size_t(p.inner) * dtype_size(k.in(0).dtype);
  const uint8_t* x = static_cast<const uint8_t*>(k.in(0).data);
  uint8_t* y = static_cast<uint8_t*>(k.out(0).data);
  auto at = [&](int64_t t, int64_t b) { return size_t(p.time_first ? t * p.batch + b : b * p.time + t) * row; };
  for (int64_t r = k.begin; r < k.end; ++r) {
    const int64_t t = p.time_first ? r / p.batch : r % p.time, b = p.time_first ? r % p.batch : r / p.time;
    const int64_t len = lens[b];
    if (len < 0 || len > p.time)
      return k.error(ErrorKind::InvalidArgument, msg("sequence_lens[", b, "] = ", len, " is outside [0, ", p.time, "] (the time axis)"));
    std::memcpy(y + at(t, b), x + at(t < len ? len - 1 - t : t, b), row);
  }
  return Status::ok();
}

constexpr AttrSpec kTriluAttrs[] = {{"upper", AttrKind::Int}};
constexpr AttrSpec kReverseSequenceAttrs[] = {{"time_axis", AttrKind::Int}, {"batch_axis", AttrKind::Int}};
constexpr AttrSpec kSplitAttrs[] = {{"axis", AttrKind::Int}, {"split", AttrKind::Ints}, {"num_outputs", AttrKind::PositiveInt}};
constexpr AttrSpec kTransposeAttrs[] = {{"perm", AttrKind::Ints}};
constexpr AttrSpec kBlockAttrs[] = {{"blocksize", AttrKind::PositiveInt}, {"mode", AttrKind::String}};
constexpr AttrSpec kDropoutAttrs[] = {{"ratio", AttrKind::Float}, {"seed", AttrKind::Int}};

constexpr OpDef kOps[] = {
    op("Transpose").upgrades_from(1).per_item(BatchRule::Transpose).written_by_passes(writers<passes::sink_transposes>).inputs(1).attributes(kTransposeAttrs).shapes(infer_transpose)
        .prepared(prepare_transpose).kernel(strided_copy_kernel)
        .doc("any dtype, perm (default reversed)").with_flags(kOpF16InF32),
    op("Size").upgrades_from(1).inputs(1).shapes(infer_size).kernel(size_kernel).with_flags(kOpShapeOnly)
        .doc("any dtype -> i64 scalar; always folded when planning"),
    op("Trilu").since_opset(14).inputs(1, 2).attributes(kTriluAttrs).shapes(infer_trilu).prepared(prepare_trilu).kernel(trilu_kernel)
        .doc("any dtype, upper, k input (i64 scalar)"),
    op("Split").upgrades_from(2).per_item(BatchRule::Axis).plan_time_inputs_mask(1u << 1).attr_became_input("split", 1, 13).inputs(1, 2).attributes(kSplitAttrs).shapes(infer_split)
        .prepared(prepare_split).kernel(split_kernel).doc("any dtype, axis; split input known at plan time, or equal parts (num_outputs)").with_flags(kOpF16InF32),
    op("Tile").upgrades_from(6).plan_time_inputs_mask(1u << 1).inputs(2).shapes(infer_tile).prepared(prepare_elements)
        .kernel(tile_kernel).doc("any dtype; repeats known at plan time").with_flags(kOpF16InF32),
    op("DepthToSpace").upgrades_from(1).per_item(BatchRule::Items).inputs(1).attributes(kBlockAttrs).shapes(infer_block<true>)
        .prepared(prepare_block<true>).kernel(strided_copy_kernel)
        .doc("any dtype, 4-D, blocksize, mode DCR|CRD").with_flags(kOpF16InF32),
    op("SpaceToDepth").upgrades_from(1).per_item(BatchRule::Items).inputs(1).attributes(kBlockAttrs).shapes(infer_block<false>)
        .prepared(prepare_block<false>).kernel(strided_copy_kernel)
        .doc("any dtype, 4-D, blocksize").with_flags(kOpF16InF32),
    op("ReverseSequence").since_opset(10).inputs(2).attributes(kReverseSequenceAttrs).shapes(infer_reverse_sequence)
        .prepared(prepare_reverse_sequence).kernel(reverse_sequence_kernel)
        .doc("any dtype; time_axis and batch_axis 0 and 1; sequence_lens (i64, one per batch item) read at run time").with_flags(kOpF16InF32),
    op("Dropout").upgrades_from(7).per_item(BatchRule::Items).plan_time_inputs_mask((1u << 1) | (1u << 2)).attr_became_input("ratio", 1, 12).inputs(1, 3).attributes(kDropoutAttrs)
        .shapes(infer_dropout).prepared(prepare_elements).kernel(dropout_kernel).doc("inference only: the identity, mask all true; training_mode must be false, or true with ratio 0").with_flags(kOpF16InF32),
};

}  // namespace

}  // namespace om::graph::ops

// The family's operators, one symbol each (onemodel/op_list.h).
#define OM_LAYOUT_OPS(X) X(Transpose) X(Size) X(Trilu) X(Split) X(Tile) X(DepthToSpace) X(SpaceToDepth) X(ReverseSequence) X(Dropout)
OM_OP_FAMILY_TABLE(layout, OM_LAYOUT_OPS)
