#include "onemodel/graph/ops/op_util.h"

#include <climits>
#include <cstdint>

namespace om::graph::ops {

Status broadcast_shapes(const InferContext& ctx, const std::vector<const std::vector<int64_t>*>& shapes,
                        std::vector<int64_t>* out) {
  size_t rank = 0;
  for (const auto* s : shapes) rank = std::max(rank, s->size());
  out->assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t d = 1;
    for (const auto* s : shapes) {
      if (i + s->size() < rank) continue;
      const int64_t v = (*s)[i + s->size() - rank];
      if (v == 1) continue;
      if (d != 1 && d != v) {
        std::string all;
        for (const auto* t : shapes) all += (all.empty() ? "" : " and ") + shape_str(*t);
        return ctx.error(ErrorKind::ShapeMismatch, msg("shapes ", all, " do not broadcast (axis ", i, " of the result: ", d,
                                                       " vs ", v, "); sizes must be equal or 1"));
      }
      d = v;
    }
    // A zero-sized axis wins over 1.
    for (const auto* s : shapes)
      if (i + s->size() >= rank && (*s)[i + s->size() - rank] == 0) d = 0;
    (*out)[i] = d;
  }
  return Status::ok();
}

bool index_at(const void* data, DType dt, int64_t i, int64_t* out) {
  switch (dt) {
    case DType::i64: *out = static_cast<const int64_t*>(data)[i]; return true;
    case DType::i32: *out = static_cast<const int32_t*>(data)[i]; return true;
    case DType::i16: *out = static_cast<const int16_t*>(data)[i]; return true;
    case DType::i8: *out = static_cast<const int8_t*>(data)[i]; return true;
    case DType::u64: {
      const uint64_t v = static_cast<const uint64_t*>(data)[i];
      if (v > uint64_t(INT64_MAX)) return false;
      *out = int64_t(v);
      return true;
    }
    case DType::u32: *out = static_cast<const uint32_t*>(data)[i]; return true;
    case DType::u16: *out = static_cast<const uint16_t*>(data)[i]; return true;
    case DType::u8:
    case DType::boolean: *out = static_cast<const uint8_t*>(data)[i]; return true;
    case DType::f32: return float_to_index(double(static_cast<const float*>(data)[i]), out);
    case DType::f64: return float_to_index(static_cast<const double*>(data)[i], out);
    case DType::f16: return float_to_index(double(half_to_float(static_cast<const half*>(data)[i])), out);
    case DType::bf16: return float_to_index(double(bf16_to_float(static_cast<const bfloat16*>(data)[i])), out);
  }
  return false;
}

Status dtype_code_attr(const InferContext& ctx, const char* name, int64_t code, DType* out) {
  if (code < INT32_MIN || code > INT32_MAX || !dtype_from_onnx(int32_t(code), out))
    return ctx.error(ErrorKind::Unsupported, msg(name, " = ", code, " is not an ONNX dtype code onemodel supports (1 f32, 11 f64, 10 f16, 16 bf16, ",
                                                 "7 i64, 6 i32, 5 i16, 3 i8, 13 u64, 12 u32, 4 u16, 2 u8, 9 bool)"));
  return Status::ok();
}

Status const_ints(const InferContext& ctx, size_t input, std::vector<int64_t>* out) {
  const ValueDesc* v = ctx.input(input);
  if (!v) return ctx.error(ErrorKind::InvalidArgument, msg("input ", input, " is required"));
  if (v->dtype != DType::i64 && v->dtype != DType::i32)
    return ctx.error(ErrorKind::DTypeMismatch, msg("input ", input, " ('", ctx.node.inputs[input], "') must be i64 or i32, got ",
                                                   dtype_name(v->dtype)));
  if (!v->data)
    return ctx.error(ErrorKind::Unsupported,
                     msg("input ", input, " ('", ctx.node.inputs[input],
                         "') must be known when the session plans (a constant, or computed from constants and Shape); "
                         "values computed from input data are not supported"));
  // Shapes, axes, pads, sizes, repeats: short parameter vectors. A longer one is a malformed
  // model, refused before anything is sized from it.
  constexpr int64_t kMaxValues = 4096;
  const int64_t n = v->numel();
  if (n > kMaxValues)
    return ctx.error(ErrorKind::InvalidArgument,
                     msg("input ", input, " ('", ctx.node.inputs[input], "') holds ", n, " values (shape ",
                         shape_str(v->shape), "); a parameter read when the session plans holds at most ", kMaxValues));
  out->resize(size_t(n));
  for (int64_t i = 0; i < n; ++i)
    (*out)[size_t(i)] = v->dtype == DType::i64 ? static_cast<const int64_t*>(v->data)[i]
                                              : static_cast<const int32_t*>(v->data)[i];
  return Status::ok();
}

Status prepare_broadcast(const InferContext& ctx, Prepared& out) {
  const int n = int(ctx.num_inputs());
  if (n < 1 || n >= BroadcastIter::kMaxOps)
    return ctx.error(ErrorKind::Internal, msg("a broadcast op takes 1 to ", BroadcastIter::kMaxOps - 1, " inputs, got ", n));
  for (int i = 0; i < n; ++i)
    if (!ctx.input(size_t(i))) return ctx.error(ErrorKind::InvalidArgument, msg("input ", i, " is required"));
  BroadcastIter& it = out.record<BroadcastParams>().it;
  it.init(ctx.outputs[0].shape, ctx.inputs.data(), n);
  out.work = it.size();
  return Status::ok();
}

Status prepare_elements(const InferContext& ctx, Prepared& out) {
  out.work = ctx.outputs[0].numel();
  return Status::ok();
}

Status require_f32_input(const InferContext& ctx, size_t i) {
  const ValueDesc* v = ctx.input(i);
  if (!v) return ctx.error(ErrorKind::InvalidArgument, msg("input ", i, " is required"));
  if (v->dtype != DType::f32)
    return ctx.error(ErrorKind::DTypeMismatch, msg("input ", i, " ('", ctx.node.inputs[i], "') must be f32, got ", dtype_name(v->dtype)));
  return Status::ok();
}

Status require_dtype(const InferContext& ctx, size_t i, std::initializer_list<DType> allowed) {
  const ValueDesc* v = ctx.input(i);
  if (!v) return ctx.error(ErrorKind::InvalidArgument, msg("input ", i, " is required"));
  for (DType d : allowed)
    if (v->dtype == d) return Status::ok();
  std::string names;
  for (DType d : allowed) names += (names.empty() ? "" : ", ") + std::string(dtype_name(d));
  return ctx.error(ErrorKind::DTypeMismatch, msg("input ", i, " ('", ctx.node.inputs[i], "') has dtype ", dtype_name(v->dtype),
                                                 "; supported: ", names));
}

Status infer_same_binary(InferContext& ctx, std::initializer_list<DType> allowed, bool bool_out) {
  OM_TRY(require_dtype(ctx, 0, allowed));
  const ValueDesc* a = ctx.input(0);
  const ValueDesc* b = ctx.input(1);
  if (!b) return ctx.error(ErrorKind::InvalidArgument, "needs two inputs");
  if (a->dtype != b->dtype)
    return ctx.error(ErrorKind::DTypeMismatch, msg("input dtypes differ: ", dtype_name(a->dtype), " and ", dtype_name(b->dtype),
                                                   "; insert a Cast so both operands have one dtype"));
  std::vector<int64_t> shape;
  OM_TRY(broadcast_shapes(ctx, {&a->shape, &b->shape}, &shape));
  ctx.set_output(0, bool_out ? DType::boolean : a->dtype, std::move(shape));
  return Status::ok();
}

Status infer_f32_unary(InferContext& ctx) {
  OM_TRY(require_dtype(ctx, 0, {DType::f32}));
  ctx.set_output(0, DType::f32, ctx.input(0)->shape);
  return Status::ok();
}

void BroadcastIter::init(const int64_t* out_dims, size_t out_rank, const TensorArg* const* operands, int n) {
  Operand shapes[kMaxOps];
  for (int k = 0; k < n; ++k) shapes[k] = {operands[k]->dims, operands[k]->rank};
  init_shapes(out_dims, out_rank, shapes, n);
}

void add_broadcast(const float* p, const int64_t* p_dims, size_t p_rank, const TensorArg& R, const TensorArg& Y) {
  TensorArg P;
  P.present = true;
  P.dims = p_dims;
  P.rank = p_rank;
  P.numel = 1;
  for (size_t i = 0; i < p_rank; ++i) P.numel *= p_dims[i];
  const TensorArg* operands[2] = {&P, &R};
  BroadcastIter it;
  it.init(Y.dims, Y.rank, operands, 2);
  const float* r = R.as<const float>();
  float* y = Y.as<float>();
  const int64_t sp = it.inner_step[1], sr = it.inner_step[2];
  it.for_each([&](const int64_t* off, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[off[0] + i] = p[off[1] + i * sp] + r[off[2] + i * sr];
  });
}

void BroadcastIter::init(const std::vector<int64_t>& out, const ValueDesc* const* operands, int n) {
  Operand shapes[kMaxOps];
  for (int k = 0; k < n; ++k) shapes[k] = {operands[k]->shape.data(), operands[k]->shape.size()};
  init_shapes(out.data(), out.size(), shapes, n);
}

void BroadcastIter::init_shapes(const int64_t* out_dims, size_t out_rank, const Operand* operands, int n) {
  nops = n + 1;  // operand 0 is the output itself
  int64_t full_dims[kMaxRank];
  int64_t full_strides[kMaxOps][kMaxRank];
  size_t r = out_rank;
  for (size_t i = 0; i < r; ++i) full_dims[i] = out_dims[i];
  contiguous_strides(out_dims, r, full_strides[0]);
  for (int k = 0; k < n; ++k) {
    const Operand& t = operands[k];
    int64_t own[kMaxRank];
    contiguous_strides(t.dims, t.rank, own);
    for (size_t i = 0; i < r; ++i) {
      const size_t lead = r - t.rank;
      if (i < lead || t.dims[i - lead] == 1) full_strides[k + 1][i] = 0;
      else full_strides[k + 1][i] = own[i - lead];
    }
  }
  // Collapse axis i into axis i-1 when every operand continues contiguously.
  size_t cr = 0;
  int64_t cdims[kMaxRank];
  int64_t cstr[kMaxOps][kMaxRank];
  for (size_t i = 0; i < r; ++i) {
    if (full_dims[i] == 1) continue;  // size-1 axes carry no iteration
    bool merge = cr > 0;
    for (int k = 0; merge && k < nops; ++k)
      merge = cstr[k][cr - 1] == full_strides[k][i] * full_dims[i];
    if (merge) {
      cdims[cr - 1] *= full_dims[i];
      for (int k = 0; k < nops; ++k) cstr[k][cr - 1] = full_strides[k][i];
    } else {
      cdims[cr] = full_dims[i];
      for (int k = 0; k < nops; ++k) cstr[k][cr] = full_strides[k][i];
      ++cr;
    }
  }
  if (cr == 0) {  // a scalar or all-ones shape
    inner = 1;
    for (int k = 0; k < nops; ++k) inner_step[k] = 0;
    rank = 0;
    outer_count = 1;
    return;
  }
  inner = cdims[cr - 1];
  for (int k = 0; k < nops; ++k) inner_step[k] = cstr[k][cr - 1];
  rank = cr - 1;
  outer_count = 1;
  for (size_t i = 0; i < rank; ++i) {
    dims[i] = cdims[i];
    outer_count *= cdims[i];
    for (int k = 0; k < nops; ++k) strides[k][i] = cstr[k][i];
  }
  for (size_t i = 0; i < r; ++i)
    if (full_dims[i] == 0) outer_count = 0, inner = 0;
}

// y's elements [begin, end) of the permuted copy.
template <typename T>
static void transpose_typed(const T* x, const int64_t* dims, size_t rank, const int64_t* perm, T* y, int64_t begin,
                            int64_t end) {
  int64_t xs[kMaxRank], ys_dims[kMaxRank], src_str[kMaxRank];
  contiguous_strides(dims, rank, xs);
  int64_t total = 1;
  for (size_t i = 0; i < rank; ++i) {
    ys_dims[i] = dims[perm[i]];
    src_str[i] = xs[perm[i]];
    total *= ys_dims[i];
  }
  if (end > total) end = total;
  if (begin >= end) return;
  if (rank == 0) { y[0] = x[0]; return; }
  // Walk y in order from `begin`; the innermost axis is a strided gather from x.
  const int64_t inner = ys_dims[rank - 1], inner_str = src_str[rank - 1];
  int64_t idx[kMaxRank] = {};
  int64_t off = 0;
  int64_t i0 = begin % inner;
  for (int64_t d = int64_t(rank) - 1, rest = begin / inner; d-- > 0;) {
    idx[d] = rest % ys_dims[d];
    rest /= ys_dims[d];
    off += idx[d] * src_str[d];
  }
  for (int64_t o = begin - i0; o < end; o += inner, i0 = 0) {
    const T* src = x + off;
    const int64_t stop = end - o < inner ? end - o : inner;
    for (int64_t i = i0; i < stop; ++i) y[o + i] = src[i * inner_str];
    for (size_t d = rank - 1; d-- > 0;) {
      if (++idx[d] < ys_dims[d]) { off += src_str[d]; break; }
      off -= src_str[d] * (ys_dims[d] - 1);
      idx[d] = 0;
    }
  }
}

void transpose_copy_range(const void* x, const int64_t* dims, size_t rank, const int64_t* perm, size_t elem_size, void* y,
                          int64_t begin, int64_t end) {
  switch (elem_size) {
    case 1: transpose_typed(static_cast<const uint8_t*>(x), dims, rank, perm, static_cast<uint8_t*>(y), begin, end); break;
    case 2: transpose_typed(static_cast<const uint16_t*>(x), dims, rank, perm, static_cast<uint16_t*>(y), begin, end); break;
    case 4: transpose_typed(static_cast<const uint32_t*>(x), dims, rank, perm, static_cast<uint32_t*>(y), begin, end); break;
    default: transpose_typed(static_cast<const uint64_t*>(x), dims, rank, perm, static_cast<uint64_t*>(y), begin, end); break;
  }
}

void transpose_copy(const void* x, const int64_t* dims, size_t rank, const int64_t* perm, size_t elem_size, void* y) {
  transpose_copy_range(x, dims, rank, perm, elem_size, y, 0, INT64_MAX);
}

}  // namespace om::graph::ops
