// Brace-friendly creation and scalar-first arithmetic (onemodel/ops/creation_extra.h).
#include "onemodel/ops/creation_extra.h"

#include <vector>

#include "onemodel/ops/ops.h"

namespace om {
namespace {

// {-1} (the default) means 1-D of the list's length.
template <typename T>
Tensor from_list(std::vector<T> values, const Shape& shape, const char* form) {
  const int64_t n = int64_t(values.size());
  Shape s = shape.size() == 1 && shape[0] == -1 ? Shape{n} : shape;
  int64_t want = 1;
  for (int64_t d : s) {
    if (d < 0)
      raise(Status::error(ErrorKind::InvalidArgument, msg("om::tensor(", form, "): shape ", shape_str(shape),
                                                           " has a negative size; give every size, or no shape for 1-D")));
    want *= d;
  }
  if (want != n)
    raise(Status::error(ErrorKind::ShapeMismatch, msg("om::tensor(", form, "): ", n, " values do not fill shape ", shape_str(s),
                                                       " (", want, " elements); give as many values as the shape holds")));
  return from_vector<T>(values, s);
}

}  // namespace

Tensor tensor(std::initializer_list<float> values, const Shape& shape) {
  return from_list(std::vector<float>(values), shape, "float values");
}
Tensor tensor(std::initializer_list<double> values, const Shape& shape) {
  return from_list(std::vector<float>(values.begin(), values.end()), shape, "double values");
}
Tensor tensor(std::initializer_list<int> values, const Shape& shape) {
  return from_list(std::vector<int64_t>(values.begin(), values.end()), shape, "int values");
}
Tensor tensor(std::initializer_list<int64_t> values, const Shape& shape) {
  return from_list(std::vector<int64_t>(values), shape, "int64 values");
}
Tensor tensor(std::initializer_list<bool> values, const Shape& shape) {
  // std::vector<bool> is packed: go through bytes, then cast (0/1 stay 0/1).
  return from_list(std::vector<uint8_t>(values.begin(), values.end()), shape, "bool values").to(DType::boolean);
}

Tensor zeros_like(const Tensor& like) { return zeros_like(like, like.dtype()); }
Tensor zeros_like(const Tensor& like, DType dtype) { return zeros(like.shape(), dtype); }
Tensor ones_like(const Tensor& like) { return ones_like(like, like.dtype()); }
Tensor ones_like(const Tensor& like, DType dtype) { return ones(like.shape(), dtype); }
Tensor full_like(const Tensor& like, double value) { return full(like.shape(), value, like.dtype()); }
Tensor empty_like(const Tensor& like) { return empty(like.shape(), like.dtype()); }

Tensor operator+(double a, const Tensor& b) { return add(b, a); }
Tensor operator-(double a, const Tensor& b) { return sub(scalar_tensor(a, b.dtype()), b); }
Tensor operator/(double a, const Tensor& b) { return div(scalar_tensor(a, b.dtype()), b); }

}  // namespace om
