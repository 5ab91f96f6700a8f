// Shapes and strides are plain vectors of int64_t (element units, not bytes).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace om {

using Shape = std::vector<int64_t>;

int64_t shape_numel(const Shape& shape);
Shape contiguous_strides(const Shape& shape);
std::string shape_str(const Shape& shape);  // "[2, 3]"
std::string shape_str(const int64_t* dims, size_t rank);
// Normalises a possibly negative axis against rank; false when out of range.
bool normalize_axis(int64_t axis, int64_t rank, int64_t* out);

}  // namespace om
