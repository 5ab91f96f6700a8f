// Shared helpers of the graph operator families (internal to onemodel/graph).
#pragma once
#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "onemodel/core/shape.h"
#include "onemodel/graph/op_registry.h"
#include "onemodel/kernels/kernels.h"

namespace om::graph::ops {

// Each family's table (defined in its .cpp, listed in families.def); the full registry
// (graph/registry_full.cpp) concatenates them.
struct OpTable {
  const OpDef* const* defs;
  size_t count;
};
#define OM_OP_FAMILY(name) OpTable name##_ops();
#include "onemodel/graph/ops/families.def"
#undef OM_OP_FAMILY

constexpr bool same_name(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}
// The entry of `defs` for op type `name`; past the end (so not a constant expression, and the
// family does not compile) when there is none.
template <size_t N>
constexpr const OpDef& entry_named(const OpDef (&defs)[N], const char* name) {
  size_t i = 0;
  while (i < N && !same_name(defs[i].op_type, name)) ++i;
  return defs[i];
}

}  // namespace om::graph::ops

// A family's operators as symbols (onemodel/op_list.h): after its constexpr table kOps, a family
// names its entries once in an X-list, LIST(X) = X(Relu) X(Sigmoid)..., and
// OM_OP_FAMILY_TABLE(family, LIST) makes each entry the symbol om::graph::op_defs::<op type>
// (a copy; kOps itself is never emitted) and defines ops::family_ops(), the full registry's
// table of them. A list that misses an entry or names one twice does not compile. The table and
// its view are named objects, each in its own data section, so that a program that registers
// only some operators (and so drops family_ops()) drops them too: returned as an unnamed
// constant, the view went into the file's shared .rodata, which other kept constants kept, and
// with it every operator of the family.
#define OM_DEFINE_OP_(name) \
  extern const OpDef name;  \
  constexpr OpDef name = ::om::graph::ops::entry_named(::om::graph::ops::kOps, #name);
#define OM_COUNT_OP_(name) +1
#define OM_OP_FAMILY_TABLE(family, LIST)                                                          \
  namespace om::graph::op_defs {                                                                  \
  LIST(OM_DEFINE_OP_)                                                                             \
  }                                                                                               \
  namespace om::graph::ops {                                                                      \
  static_assert(sizeof(kOps) / sizeof(kOps[0]) == 0 LIST(OM_COUNT_OP_), "every entry of " #family \
                "'s kOps is named once in its list");                                             \
  static const OpDef* const family##_table_[] = {LIST(OM_ADDRESS_OF_OP_)};                        \
  static const OpTable family##_view_ = {family##_table_, sizeof family##_table_ / sizeof family##_table_[0]}; \
  OpTable family##_ops() { return family##_view_; }                                               \
  }

namespace om::graph::ops {

// Input i is present, or an error naming it.
inline Status need_input(const InferContext& ctx, size_t i) {
  if (!ctx.input(i)) return ctx.error(ErrorKind::InvalidArgument, msg("input ", i, " is required"));
  return Status::ok();
}

// Element i of an i64 or i32 index tensor (the dtype checked when planning).
inline int64_t read_int(const void* data, DType dt, int64_t i) {
  return dt == DType::i64 ? static_cast<const int64_t*>(data)[i] : static_cast<const int32_t*>(data)[i];
}

// a * b for element counts of part of a shape: 0 when either is 0, else the product saturated
// just above kMaxNumel. An empty tensor may have huge dims beside its zero (inference checks the
// total, not each partial product), so a partial count must not overflow; a saturated one only
// arises next to a zero, where the work it belongs to is empty.
inline int64_t count_mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  int64_t r = 0;
  return checked_mul(a, b, &r) ? r : kMaxNumel + 1;
}

// Prepared::cost of a product of m x n outputs over k: its multiply-adds, an eighth of an
// element each (kernels::parts_for's unit; at least 1).
inline int64_t product_cost(int64_t m, int64_t n, int64_t k) { return std::max<int64_t>(count_mul(count_mul(m, n), k) / 8, 1); }

// The product of d[from, to): the element count of those axes (count_mul's rule).
inline int64_t dims_product(const int64_t* d, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t i = from; i < to; ++i) n = count_mul(n, d[i]);
  return n;
}

// A shape around one axis as [outer, size, inner]: the product of the axes before it, its extent
// and the product of the axes after it. The per-axis ops (softmax, gather, concat, split,
// one-hot, scans) run outer * inner lines of `size` elements.
struct AxisSplit {
  int64_t outer = 1, size = 1, inner = 1;
};
inline AxisSplit split_at_axis(const int64_t* dims, size_t rank, size_t axis) {
  return {dims_product(dims, 0, axis), dims[axis], dims_product(dims, axis + 1, rank)};
}
inline AxisSplit split_at_axis(const std::vector<int64_t>& shape, int64_t axis) {
  return split_at_axis(shape.data(), shape.size(), size_t(axis));
}

// The node's axis attribute (default `fallback`) normalized against `rank`, for a prepare
// step: its infer step refused an axis out of range, so no error is possible here.
inline int64_t checked_axis(const InferContext& ctx, int64_t fallback, int64_t rank) {
  int64_t axis = 0;
  normalize_axis(ctx.node.attr_int("axis", fallback), rank, &axis);
  return axis;
}

// numpy broadcasting of two or more shapes.
Status broadcast_shapes(const InferContext& ctx, const std::vector<const std::vector<int64_t>*>& shapes,
                        std::vector<int64_t>* out);

// The integer contents of a constant i64/i32 input, or an error telling that the operand must
// be known at plan time.
Status const_ints(const InferContext& ctx, size_t input, std::vector<int64_t>* out);

// THE rule for reading a float as an integer (attributes and index, depth or size tensors given
// in a float dtype): truncation toward zero, as ONNX's casts to int64 do; NaN, infinities and
// values outside [-2^63, 2^63) have no integer and give false, so the caller refuses them
// naming the node and the value instead of converting (undefined behaviour in C++).
inline bool float_to_index(double v, int64_t* out) {
  if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) return false;
  *out = int64_t(v);
  return true;
}

// Element i of an integer, bool or float tensor as an int64 under float_to_index's rule; false
// for a float element without an integer and a u64 one above INT64_MAX.
bool index_at(const void* data, DType dt, int64_t i, int64_t* out);

// An attribute holding an ONNX TensorProto dtype code (Cast's `to`, EyeLike's `dtype`...): the
// onemodel dtype it names, or an error naming the node, the code and the dtypes supported. A code
// beyond int32 is refused as it is, never truncated into another code.
Status dtype_code_attr(const InferContext& ctx, const char* name, int64_t code, DType* out);

// Iterates an output shape with up to three broadcast operands, collapsing contiguous axes so
// the innermost loop is as long as possible. Offsets index 0 is the output, 1.. the operands;
// inner steps are 0 (broadcast) or 1. Trivially copyable: a prepare step may keep it in its
// record (init from the plan-time shapes) so the kernel does not rebuild it every run.
struct BroadcastIter {
  static constexpr int kMaxOps = 4;
  int nops = 0;
  size_t rank = 0;  // collapsed outer rank (the innermost axis excluded)
  int64_t dims[kMaxRank] = {};
  int64_t strides[kMaxOps][kMaxRank] = {};
  int64_t inner = 1;
  int64_t inner_step[kMaxOps] = {};
  int64_t outer_count = 1;

  // Operand k has shape operands[k] (right-aligned against out).
  void init(const int64_t* out_dims, size_t out_rank, const TensorArg* const* operands, int n);
  // The same from plan-time shapes (a prepare step).
  void init(const std::vector<int64_t>& out, const ValueDesc* const* operands, int n);

  // The output elements iterated: outer_count runs of `inner` (the output's numel).
  int64_t size() const { return outer_count * inner; }

  // Calls f(offsets, n) for the pieces of inner runs that cover output elements [begin, end) in
  // order (0 <= begin <= end <= size()): offsets (in elements) of the piece's first element, n
  // its length. A run cut by begin or end gives a shorter piece; the pieces of any partition
  // of [0, size()) visit every element exactly once, as one call over the whole range does.
  template <typename F>
  void for_each(int64_t begin, int64_t end, F&& f) const {
    if (begin >= end) return;
    int64_t idx[kMaxRank] = {};
    int64_t off[kMaxOps] = {};
    const int64_t run = begin / inner;  // inner >= 1 whenever size() > 0
    int64_t i0 = begin - run * inner;
    for (int64_t d = int64_t(rank), rest = run; d-- > 0;) {
      idx[d] = rest % dims[d];
      rest /= dims[d];
      for (int k = 0; k < nops; ++k) off[k] += idx[d] * strides[k][d];
    }
    for (int k = 0; k < nops; ++k) off[k] += i0 * inner_step[k];
    for (int64_t at = begin;;) {
      const int64_t n = inner - i0 < end - at ? inner - i0 : end - at;
      f(static_cast<const int64_t*>(off), n);
      at += n;
      if (at >= end) return;
      for (int k = 0; k < nops; ++k) off[k] -= i0 * inner_step[k];
      i0 = 0;
      for (size_t d = rank; d-- > 0;) {
        if (++idx[d] < dims[d]) {
          for (int k = 0; k < nops; ++k) off[k] += strides[k][d];
          break;
        }
        for (int k = 0; k < nops; ++k) off[k] -= strides[k][d] * (dims[d] - 1);
        idx[d] = 0;
      }
    }
  }

  // Every inner run, whole.
  template <typename F>
  void for_each(F&& f) const { for_each(0, size(), f); }

 private:
  struct Operand {
    const int64_t* dims;
    size_t rank;
  };
  void init_shapes(const int64_t* out_dims, size_t out_rank, const Operand* operands, int n);
};

// y = f(a, b) over output elements [begin, end) of the broadcast of two operands (T in, R out;
// `it` initialised with k.in(0), k.in(1) against k.out(0)): the one loop of the elementwise
// families' integer, comparison and selection kernels.
template <typename T, typename R, typename F>
void binary_loop(const KernelContext& k, const BroadcastIter& it, int64_t begin, int64_t end, F f) {
  const T* a = k.in(0).as<const T>();
  const T* b = k.in(1).as<const T>();
  R* y = k.out(0).as<R>();
  const int64_t sa = it.inner_step[1], sb = it.inner_step[2];
  it.for_each(begin, end, [&](const int64_t* off, int64_t n) {
    const T* pa = a + off[1];
    const T* pb = b + off[2];
    R* py = y + off[0];
    for (int64_t i = 0; i < n; ++i) py[i] = f(pa[i * sa], pb[i * sb]);
  });
}

// The whole output.
template <typename T, typename R, typename F>
void binary_loop(const KernelContext& k, F f) {
  const TensorArg* operands[2] = {&k.in(0), &k.in(1)};
  BroadcastIter it;
  it.init(k.out(0).dims, k.out(0).rank, operands, 2);
  binary_loop<T, R>(k, it, 0, it.size(), f);
}

// Y = P + R over Y's elements, Y the broadcast of both: P a contiguous f32 tensor of shape
// p_dims[p_rank] (a product or a convolution computed into scratch), R an f32 input. The
// residual Add of FusedMatMul and FusedConv when R broadcasts: one rounding per element, as the
// Add node.
void add_broadcast(const float* p, const int64_t* p_dims, size_t p_rank, const TensorArg& R, const TensorArg& Y);

// The broadcasting elementwise ops' record (Add, Where, Equal, And, Mod...): the output's
// iterator over every input. Work: output elements.
struct BroadcastParams {
  BroadcastIter it;
};
Status prepare_broadcast(const InferContext& ctx, Prepared& out);

// The record P of a two-operand broadcasting op with parameters (Mod's fmod, BitShift's
// direction): its first member `it` is set to the output's iterator over inputs 0 and 1, and the
// work to the output elements; the caller fills the rest.
template <typename P>
P& broadcast_record(const InferContext& ctx, Prepared& out) {
  P& p = out.record<P>();
  const ValueDesc* operands[2] = {ctx.input(0), ctx.input(1)};
  p.it.init(ctx.outputs[0].shape, operands, 2);
  out.work = p.it.size();
  return p;
}

// binary_loop over the kernel's range [k.begin, k.end) with its BroadcastParams record.
template <typename T, typename R, typename F>
void binary_range(const KernelContext& k, F f) {
  binary_loop<T, R>(k, k.params<BroadcastParams>().it, k.begin, k.end, f);
}

// The prepare step of ops with no parameters whose work unit is one element of output 0
// (same-shape maps, the variadic folds): no record, work = output 0's numel.
Status prepare_elements(const InferContext& ctx, Prepared& out);

// ---- the elementwise families' shared checks and maps (arithmetic, activations, comparison,
// bitwise): one wording of each refusal, one loop per kind of map ----

// Input i is present and has one of the `allowed` dtypes, or an error naming the input, its
// dtype and the dtypes supported.
Status require_dtype(const InferContext& ctx, size_t i, std::initializer_list<DType> allowed);
// Input i is present and f32 (the matrix and convolution families), or an error naming it.
Status require_f32_input(const InferContext& ctx, size_t i);
// Two operands of one dtype among `allowed`, broadcast; the output has that dtype, or bool.
Status infer_same_binary(InferContext& ctx, std::initializer_list<DType> allowed, bool bool_out);
// One f32 operand; the output is f32 of its shape.
Status infer_f32_unary(InferContext& ctx);

// kernels::f32_unary over elements [k.begin, k.end).
inline void unary_range(const KernelContext& k, kernels::UnaryOp op) {
  kernels::f32_unary(op, k.in(0).as<const float>() + k.begin, k.out(0).as<float>() + k.begin, size_t(k.end - k.begin));
}
template <kernels::UnaryOp Op>
Status unary_kernel(const KernelContext& k) {
  unary_range(k, Op);
  return Status::ok();
}

// y = f(x) over elements [k.begin, k.end) of a same-shape map (T in, R out).
// y may be x (the planner runs maps in place): element i is read before it is written and no
// other element is touched, so the loop has no carried dependence (ivdep) and vectorises when f
// is branch-free (write maps as selects, not as if/else).
template <typename T, typename R, typename F>
Status map_range(const KernelContext& k, F f) {
  const T* x = k.in(0).as<const T>();
  R* y = k.out(0).as<R>();
  const int64_t b = k.begin, e = k.end;
#pragma GCC ivdep
  for (int64_t i = b; i < e; ++i) y[i] = f(x[i]);
  return Status::ok();
}
template <typename F>
Status map_f32(const KernelContext& k, F f) { return map_range<float, float>(k, f); }

// The table entry of an f32 -> f32 map with no attributes (Relu, Exp, Floor, Softsign...).
constexpr OpDef f32_unary_op(const char* type, KernelFn k, const char* notes) {
  return op(type).upgrades_from(6).inputs(1).shapes(infer_f32_unary).prepared(prepare_elements).kernel(k).doc(notes)
      .per_item(BatchRule::Broadcast);
}

// The table entry of a two-operand broadcasting op with no attributes (Add, Equal, And...):
// its dtype rule in `infer`, the output's iterator as its record.
constexpr OpDef broadcast_op(const char* type, int since, InferFn infer, KernelFn k, const char* notes) {
  return op(type).upgrades_from(since).inputs(2).shapes(infer).prepared(prepare_broadcast).kernel(k).doc(notes)
      .per_item(BatchRule::Broadcast);
}

// y = f(...f(f(x0, x1), x2)..., xn) over output elements [begin, end) of the broadcast of every
// input, combined in input order (the variadic Sum, Mean, Max, Min): input 0 is broadcast into
// y, then each further input is folded into it element by element. One input gives a copy. For
// f32 the first two inputs are combined in one pass instead (tf2onnx's Max(x, constant) then
// reads x once and writes y once); the other dtypes keep the one loop, which keeps their code
// small. Each input's iterator is built here from its shape (up to 64 inputs: too many for a
// record).
template <typename T, typename F>
void fold_inputs(const KernelContext& k, int64_t begin, int64_t end, F f) {
  const TensorArg& Y = k.out(0);
  T* y = Y.as<T>();
  constexpr bool pair_first = std::is_same<T, float>::value;
  if (pair_first && k.num_inputs >= 2) {
    const TensorArg* operands[2] = {&k.in(0), &k.in(1)};
    BroadcastIter it;
    it.init(Y.dims, Y.rank, operands, 2);
    const T* a = k.in(0).as<const T>();
    const T* b = k.in(1).as<const T>();
    const int64_t sa = it.inner_step[1], sb = it.inner_step[2];
    it.for_each(begin, end, [&](const int64_t* off, int64_t n) {
      T* py = y + off[0];
      const T* pa = a + off[1];
      const T* pb = b + off[2];
      if (sa == 1 && sb == 1) {  // unit strides (y may be a's or b's buffer only at the same offset)
        for (int64_t i = 0; i < n; ++i) py[i] = f(pa[i], pb[i]);
      } else if (sa == 1 && sb == 0) {  // a run against one value: a scalar or per-channel constant
        const T c = pb[0];
        for (int64_t i = 0; i < n; ++i) py[i] = f(pa[i], c);
      } else {
        for (int64_t i = 0; i < n; ++i) py[i] = f(pa[i * sa], pb[i * sb]);
      }
    });
  }
  for (size_t in = pair_first && k.num_inputs >= 2 ? 2 : 0; in < k.num_inputs; ++in) {
    const TensorArg* operands[1] = {&k.in(in)};
    BroadcastIter it;
    it.init(Y.dims, Y.rank, operands, 1);
    const T* x = k.in(in).as<const T>();
    const int64_t sx = it.inner_step[1];
    it.for_each(begin, end, [&](const int64_t* off, int64_t n) {
      T* py = y + off[0];
      const T* px = x + off[1];
      if (in == 0) {
        for (int64_t i = 0; i < n; ++i) py[i] = px[i * sx];
      } else if (sx == 1) {  // same-shape runs: unit strides, so the loop vectorises
#pragma GCC ivdep
        for (int64_t i = 0; i < n; ++i) py[i] = f(py[i], px[i]);
      } else if (sx == 0) {  // one value against a run (a scalar or per-channel operand)
        const T c = px[0];
        for (int64_t i = 0; i < n; ++i) py[i] = f(py[i], c);
      } else {
        for (int64_t i = 0; i < n; ++i) py[i] = f(py[i], px[i * sx]);
      }
    });
  }
}

// The whole output.
template <typename T, typename F>
void fold_inputs(const KernelContext& k, F f) { fold_inputs<T>(k, 0, k.out(0).numel, f); }

// A strided f32 GEMM operand: element (i, j) at p[i * rs + j * cs].
struct MatRef {
  const float* p = nullptr;
  ptrdiff_t rs = 0, cs = 0;
  MatRef() = default;
  // Strides come as the plan's int64_t; a planned tensor lies in memory, so they fit ptrdiff_t
  // (also where it is 32 bits wide, as on Cortex-M).
  constexpr MatRef(const float* data, int64_t row_stride, int64_t col_stride)
      : p(data), rs(ptrdiff_t(row_stride)), cs(ptrdiff_t(col_stride)) {}
};
// The arguments of C[M, N] = A[M, K] B[K, N] (C's rows ldc apart) with f32_gemm's workspace: the
// setup the attention and recurrent kernels share. Accumulation, bias and activation stay at
// their defaults for the caller to set.
inline kernels::GemmArgs gemm_args(size_t M, size_t N, size_t K, MatRef a, MatRef b, float* c, size_t ldc, float* workspace) {
  kernels::GemmArgs g;
  g.M = M;
  g.N = N;
  g.K = K;
  g.a = a.p;
  g.a_rs = a.rs;
  g.a_cs = a.cs;
  g.b = b.p;
  g.b_rs = b.rs;
  g.b_cs = b.cs;
  g.c = c;
  g.ldc = ldc;
  g.workspace = workspace;
  return g;
}

using om::contiguous_strides;  // core/shape.h

// y = x permuted: y's axis i is x's axis perm[i]. Elements of elem_size bytes.
void transpose_copy(const void* x, const int64_t* dims, size_t rank, const int64_t* perm, size_t elem_size, void* y);
// Only y's elements [begin, end) (row-major over y's shape): calls over any partition of
// [0, numel) write what one transpose_copy writes.
void transpose_copy_range(const void* x, const int64_t* dims, size_t rank, const int64_t* perm, size_t elem_size, void* y,
                          int64_t begin, int64_t end);

}  // namespace om::graph::ops
