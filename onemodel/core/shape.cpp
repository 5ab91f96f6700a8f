#include "onemodel/core/shape.h"

namespace om {

Status check_shape(const std::string& who, const int64_t* dims, size_t rank, int64_t* numel) {
  int64_t n = 0;
  if (checked_numel(dims, rank, &n)) {
    if (numel) *numel = n;
    return Status::ok();
  }
  std::string s = "[";
  bool negative = false;
  for (size_t i = 0; i < rank; ++i) {
    s += (i ? ", " : "") + std::to_string(dims[i]);
    negative = negative || dims[i] < 0;
  }
  s += "]";
  if (negative) return Status::error(ErrorKind::InvalidArgument, who + ": shape " + s + " has a negative size; sizes must be >= 0");
  return Status::error(ErrorKind::InvalidArgument,
                       who + ": shape " + s + " has more than 2^48 elements (the limit of one tensor, docs/memory.md); use smaller sizes");
}

int64_t shape_numel(const Shape& shape) {
  int64_t n = 0;
  return checked_numel(shape, &n) ? n : -1;
}

// A zero-sized axis counts as 1 (PyTorch's rule). A tensor with zero elements may have sizes whose
// product exceeds int64 (e.g. [2^40, 2^40, 0]): its strides are never used to address memory,
// so they saturate instead of overflowing.
void contiguous_strides(const int64_t* dims, size_t rank, int64_t* strides) {
  int64_t acc = 1;
  for (size_t i = rank; i-- > 0;) {
    strides[i] = acc;
    if (i > 0 && __builtin_mul_overflow(acc, dims[i] > 0 ? dims[i] : 1, &acc)) acc = INT64_MAX;
  }
}

Shape contiguous_strides(const Shape& shape) {
  Shape s(shape.size());
  contiguous_strides(shape.data(), shape.size(), s.data());
  return s;
}

std::string shape_str(const int64_t* dims, size_t rank) {
  std::string s = "[";
  for (size_t i = 0; i < rank; ++i) {
    if (i) s += ", ";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

std::string shape_str(const Shape& shape) { return shape_str(shape.data(), shape.size()); }

bool normalize_axis(int64_t axis, int64_t rank, int64_t* out) {
  if (axis < -rank || axis >= rank) return false;
  *out = axis < 0 ? axis + rank : axis;
  return true;
}

}  // namespace om
