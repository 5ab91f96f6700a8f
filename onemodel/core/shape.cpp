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
    s += (i ? "," : "") + std::to_string(dims[i]);
    negative = negative || dims[i] < 0;
  }
  s += "]";
  if (negative) return Status::error(ErrorKind::InvalidArgument, who + ": shape " + s + " has a negative size; sizes must be >= 0");
  return Status::error(ErrorKind::InvalidArgument,
                       who + ": shape " + s + " has more than 2^48 elements (the limit of one tensor, docs/memory.md); use smaller sizes");
}

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Shape contiguous_strides(const Shape& shape) {
  Shape s(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = acc;
    acc *= shape[i] > 0 ? shape[i] : 1;
  }
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
