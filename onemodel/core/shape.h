// Shapes and strides are plain vectors of int64_t (element units, not bytes).
//
// Checked shape arithmetic: every element count, product of dims, broadcast result, byte count
// and arena size in the library is computed with checked_mul / checked_numel below, never with
// a plain multiply. A shape is valid when every dim is >= 0 and its element count is at most
// kMaxNumel (2^48): then numel * 8 (the widest dtype) fits easily in ptrdiff_t and in size_t
// on 64-bit targets, and sums of a few such sizes cannot wrap. Larger shapes are refused with
// an error naming the call and the dims (see docs/memory.md).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "onemodel/core/status.h"
#include "onemodel/kernels/checked.h"  // kMaxNumel, checked_mul, checked_numel, saturating_add

namespace om {

using Shape = std::vector<int64_t>;

inline bool checked_numel(const Shape& shape, int64_t* out) { return checked_numel(shape.data(), shape.size(), out); }

// The Status form: InvalidArgument "<who>: shape [..] has a negative size / more than 2^48
// elements ...". `who` names the call or node.
Status check_shape(const std::string& who, const int64_t* dims, size_t rank, int64_t* numel = nullptr);
inline Status check_shape(const std::string& who, const Shape& shape, int64_t* numel = nullptr) {
  return check_shape(who, shape.data(), shape.size(), numel);
}

// The element count of a shape already checked; for one that is not (a negative size, or more
// than kMaxNumel elements) -1, never an overflow, so a comparison with a real count fails.
int64_t shape_numel(const Shape& shape);
// Row-major strides (elements); a zero-sized axis counts as 1, and strides of a zero-element
// tensor saturate rather than overflow (they never address memory).
Shape contiguous_strides(const Shape& shape);
void contiguous_strides(const int64_t* dims, size_t rank, int64_t* strides);
std::string shape_str(const Shape& shape);  // "[2, 3]"
std::string shape_str(const int64_t* dims, size_t rank);
// Normalises a possibly negative axis against rank; false when out of range.
bool normalize_axis(int64_t axis, int64_t rank, int64_t* out);

}  // namespace om
