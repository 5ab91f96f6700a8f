// Unique: its output shapes depend on the input's values, so the input must be known when
// planning (a constant or a value input, docs/memory.md) and the node is always evaluated then —
// never while running, which is why this kernel may use the heap.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <type_traits>

#include "onemodel/graph/ops/op_util.h"

namespace om::graph::ops {
namespace {

// The slices of `x` along `axis` (or its elements when there is no axis), deduplicated.
struct UniqueResult {
  std::vector<int64_t> first;    // per unique slice: the index of its first occurrence
  std::vector<int64_t> inverse;  // per input slice: its unique slice
  std::vector<int64_t> counts;
};

// The order Unique sorts and groups by: numbers as numbers (so -0 equals 0, and the first
// occurrence's bits are kept), every NaN equal to every other NaN and after every number, as
// numpy's unique (equal_nan, which the ONNX reference calls) does. A strict weak order, so the
// groups do not depend on where the NaNs are (NaN compared equal to everything would).
template <typename T>
bool unique_less(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a != a) return false;
    if (b != b) return true;
  }
  return a < b;
}

// Slices compared by value, element by element.
template <typename T>
int compare_slices(const T* x, int64_t a, int64_t b, int64_t outer, int64_t n, int64_t inner) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const T va = x[(o * n + a) * inner + i], vb = x[(o * n + b) * inner + i];
      if (unique_less(va, vb)) return -1;
      if (unique_less(vb, va)) return 1;
    }
  return 0;
}

template <typename T>
UniqueResult unique_typed(const T* x, int64_t outer, int64_t n, int64_t inner, bool sorted) {
  UniqueResult r;
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return compare_slices(x, a, b, outer, n, inner) < 0; });
  std::vector<int64_t> group(static_cast<size_t>(n));
  std::vector<int64_t> group_first;
  for (size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || compare_slices(x, order[i - 1], order[i], outer, n, inner) != 0) group_first.push_back(order[i]);
    group[size_t(order[i])] = int64_t(group_first.size()) - 1;
  }
  // Unique slices in sorted order, or in order of first occurrence.
  std::vector<int64_t> rank(group_first.size());
  std::iota(rank.begin(), rank.end(), 0);
  if (!sorted) std::sort(rank.begin(), rank.end(), [&](int64_t a, int64_t b) { return group_first[size_t(a)] < group_first[size_t(b)]; });
  std::vector<int64_t> pos(rank.size());
  for (size_t i = 0; i < rank.size(); ++i) pos[size_t(rank[i])] = int64_t(i);
  r.first.resize(rank.size());
  r.counts.assign(rank.size(), 0);
  for (size_t i = 0; i < rank.size(); ++i) r.first[i] = group_first[size_t(rank[i])];
  r.inverse.resize(size_t(n));
  for (int64_t s = 0; s < n; ++s) {
    r.inverse[size_t(s)] = pos[size_t(group[size_t(s)])];
    ++r.counts[size_t(r.inverse[size_t(s)])];
  }
  return r;
}

struct Layout {
  bool has_axis = false;
  int64_t axis = 0, outer = 1, n = 0, inner = 1;
};

bool layout_of(const Node& node, const int64_t* dims, size_t rank, Layout* l) {
  const Attribute* a = node.attr("axis");
  l->has_axis = a != nullptr;
  if (!a) {
    l->n = 1;
    for (size_t i = 0; i < rank; ++i) l->n = count_mul(l->n, dims[i]);
    return true;
  }
  if (!normalize_axis(a->i, int64_t(rank), &l->axis)) return false;
  for (int64_t i = 0; i < l->axis; ++i) l->outer = count_mul(l->outer, dims[i]);
  l->n = dims[l->axis];
  for (size_t i = size_t(l->axis) + 1; i < rank; ++i) l->inner = count_mul(l->inner, dims[i]);
  return true;
}

UniqueResult compute(const void* data, DType dt, const Layout& l, bool sorted) {
  switch (dt) {
    case DType::f32: return unique_typed(static_cast<const float*>(data), l.outer, l.n, l.inner, sorted);
    case DType::i64: return unique_typed(static_cast<const int64_t*>(data), l.outer, l.n, l.inner, sorted);
    case DType::i32: return unique_typed(static_cast<const int32_t*>(data), l.outer, l.n, l.inner, sorted);
    case DType::i8: return unique_typed(static_cast<const int8_t*>(data), l.outer, l.n, l.inner, sorted);
    default: return unique_typed(static_cast<const uint8_t*>(data), l.outer, l.n, l.inner, sorted);
  }
}

Status infer_unique(InferContext& ctx) {
  const ValueDesc* x = ctx.input(0);
  if (!x) return ctx.error(ErrorKind::InvalidArgument, "input is required");
  if (x->dtype == DType::f16) return ctx.error(ErrorKind::DTypeMismatch, "f16 input: Cast it to f32 first");
  if (!x->data) return ctx.error(ErrorKind::Unsupported, "the input must be known when the session plans (it decides the output shapes)");
  Layout l;
  if (!layout_of(ctx.node, x->shape.data(), x->shape.size(), &l))
    return ctx.error(ErrorKind::InvalidArgument, msg("axis is out of range for ", shape_str(x->shape)));
  const UniqueResult r = compute(x->data, x->dtype, l, ctx.node.attr_int("sorted", 1) != 0);
  const int64_t u = int64_t(r.first.size());
  std::vector<int64_t> yshape = l.has_axis ? x->shape : std::vector<int64_t>{u};
  if (l.has_axis) yshape[size_t(l.axis)] = u;
  ctx.set_output(0, x->dtype, std::move(yshape));
  ctx.set_output(1, DType::i64, {u});
  ctx.set_output(2, DType::i64, {l.n});
  ctx.set_output(3, DType::i64, {u});
  return Status::ok();
}

// Unique's record. Work: one unit (a sort of the whole input decides every output).
struct UniqueParams {
  Layout layout;
  bool sorted = true;
};

Status prepare_unique(const InferContext& ctx, Prepared& out) {
  const ValueDesc& x = *ctx.input(0);
  UniqueParams& p = out.record<UniqueParams>();
  layout_of(ctx.node, x.shape.data(), x.shape.size(), &p.layout);  // checked by infer
  p.sorted = ctx.node.attr_int("sorted", 1) != 0;
  return Status::ok();
}

Status unique_kernel(const KernelContext& k) {
  const UniqueParams& p = k.params<UniqueParams>();
  const TensorArg& X = k.in(0);
  const Layout& l = p.layout;
  const UniqueResult r = compute(X.data, X.dtype, l, p.sorted);
  const size_t es = dtype_size(X.dtype);
  const int64_t u = int64_t(r.first.size());
  if (k.out(0).present) {
    uint8_t* y = static_cast<uint8_t*>(k.out(0).data);
    const uint8_t* x = static_cast<const uint8_t*>(X.data);
    for (int64_t o = 0; o < l.outer; ++o)
      for (int64_t j = 0; j < u; ++j)
        std::memcpy(y + size_t((o * u + j) * l.inner) * es, x + size_t((o * l.n + r.first[size_t(j)]) * l.inner) * es, size_t(l.inner) * es);
  }
  const std::vector<int64_t>* parts[3] = {&r.first, &r.inverse, &r.counts};
  for (size_t i = 1; i < 4 && i < k.num_outputs; ++i)
    if (k.out(i).present && !parts[i - 1]->empty())
      std::memcpy(k.out(i).data, parts[i - 1]->data(), parts[i - 1]->size() * sizeof(int64_t));
  return Status::ok();
}

constexpr AttrSpec kUniqueAttrs[] = {{"axis", AttrKind::Int}, {"sorted", AttrKind::Int}};

constexpr OpDef kOps[] = {
    op("Unique").upgrades_from(11).plan_time_inputs_mask(1u << 0).inputs(1).attributes(kUniqueAttrs).shapes(infer_unique)
        .prepared(prepare_unique).kernel(unique_kernel).doc("f32 i64 i32 i8 u8 bool; its input known at plan time (evaluated when planning); axis, sorted; -0 equals 0, all NaNs are one value sorted last"),
};

}  // namespace

}  // namespace om::graph::ops

// The family's operators, one symbol each (onemodel/op_list.h).
#define OM_UNIQUE_OPS(X) X(Unique)
OM_OP_FAMILY_TABLE(unique, OM_UNIQUE_OPS)
