// The strided view copy that is the whole kernel of Slice, Transpose, DepthToSpace and
// SpaceToDepth (internal to onemodel/graph/ops): their prepare steps differ only in the view of
// the input they describe.
#pragma once
#include <cstdint>
#include <cstring>

#include "onemodel/core/shape.h"
#include "onemodel/graph/op_registry.h"

namespace om::graph::ops {

// y (contiguous, `size`) = the view of x whose element i_0..i_{r-1} is x[base + sum i_d *
// stride[d]] (strides in elements of `elem` bytes). Work: the output rows (runs of the last
// axis; a rank-0 view is one row).
struct StridedView {
  int64_t size[kMaxRank] = {};
  int64_t stride[kMaxRank] = {};
  int64_t base = 0;
  uint32_t rank = 0;
  uint32_t elem = 1;
};

// The number of output rows of v (0 when the output is empty).
inline int64_t view_rows(const StridedView& v) {
  int64_t rows = 1;
  for (uint32_t d = 0; d < v.rank; ++d) {
    if (v.size[d] == 0) return 0;
    if (d + 1 < v.rank) rows *= v.size[d];
  }
  return rows;
}

// Rows [begin, end) of the view: the outer index of row `begin` is unravelled once, then the
// walk is the whole-range one (the innermost axis is a strided gather from x).
template <typename T>
void strided_copy_rows(const T* x, const StridedView& v, int64_t begin, int64_t end, T* y) {
  if (v.rank == 0) {
    y[0] = x[v.base];
    return;
  }
  const size_t r = v.rank;
  const int64_t inner = v.size[r - 1], is = v.stride[r - 1];
  int64_t idx[kMaxRank] = {};
  int64_t off = v.base;
  int64_t rest = begin;
  for (size_t d = r - 1; d-- > 0;) {
    idx[d] = rest % v.size[d];
    rest /= v.size[d];
    off += idx[d] * v.stride[d];
  }
  for (int64_t row = begin; row < end; ++row) {
    T* py = y + row * inner;
    for (int64_t i = 0; i < inner; ++i) py[i] = x[off + i * is];
    for (size_t d = r - 1; d-- > 0;) {
      if (++idx[d] < v.size[d]) { off += v.stride[d]; break; }
      off -= v.stride[d] * (v.size[d] - 1);
      idx[d] = 0;
    }
  }
}

// The kernel of the view copies: reads its StridedView record, input 0 and output 0.
inline Status strided_copy_kernel(const KernelContext& k) {
  const StridedView& v = k.params<StridedView>();
  const void* x = k.in(0).data;
  void* y = k.out(0).data;
  switch (v.elem) {
    case 1: strided_copy_rows(static_cast<const uint8_t*>(x), v, k.begin, k.end, static_cast<uint8_t*>(y)); break;
    case 2: strided_copy_rows(static_cast<const uint16_t*>(x), v, k.begin, k.end, static_cast<uint16_t*>(y)); break;
    case 4: strided_copy_rows(static_cast<const uint32_t*>(x), v, k.begin, k.end, static_cast<uint32_t*>(y)); break;
    default: strided_copy_rows(static_cast<const uint64_t*>(x), v, k.begin, k.end, static_cast<uint64_t*>(y)); break;
  }
  return Status::ok();
}

// The view of contiguous x of `dims` permuted: y's axis i is x's axis perm[i].
inline StridedView permuted_view(const int64_t* dims, size_t rank, const int64_t* perm, size_t elem) {
  int64_t xs[kMaxRank];
  contiguous_strides(dims, rank, xs);
  StridedView v;
  v.rank = uint32_t(rank);
  v.elem = uint32_t(elem);
  for (size_t i = 0; i < rank; ++i) {
    v.size[i] = dims[perm[i]];
    v.stride[i] = xs[perm[i]];
  }
  return v;
}

// Fills `out` with view v and its rows as the work.
inline void prepare_view(const StridedView& v, Prepared& out) {
  out.record<StridedView>() = v;
  out.work = view_rows(v);
}

}  // namespace om::graph::ops
