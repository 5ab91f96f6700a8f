// Checked size arithmetic, the lowest layer's part of core/shape.h's rule (docs/memory.md):
// element counts and products of dims never wrap. Here so that kernels (which size their own
// scratch) and every layer above share one definition.
#pragma once
#include <cstddef>
#include <cstdint>
#include <limits>

namespace om {

// The largest element count a tensor may have (2^48, about 2.8e14).
constexpr int64_t kMaxNumel = int64_t(1) << 48;
// The most axes a tensor read from a file (ONNX, .npy) may have: bounds hostile shapes while
// decoding. Plans run ranks up to graph::kMaxRank (op_registry.h) and refuse higher ones.
constexpr size_t kMaxFileRank = 64;

// a * b when both are in [0, kMaxNumel] and the product is too; false otherwise (no UB).
inline bool checked_mul(int64_t a, int64_t b, int64_t* out) {
  if (a < 0 || b < 0 || a > kMaxNumel || b > kMaxNumel) return false;
  if (a != 0 && b > kMaxNumel / a) return false;
  *out = a * b;
  return true;
}
// The element count of dims[0..rank) when every dim is >= 0 and the count is <= kMaxNumel.
inline bool checked_numel(const int64_t* dims, size_t rank, int64_t* out) {
  int64_t n = 1;
  bool zero = false;
  for (size_t i = 0; i < rank; ++i) {
    if (dims[i] < 0) return false;
    if (dims[i] == 0) zero = true;
  }
  // A zero anywhere makes the count 0, but every other dim must still be in range.
  for (size_t i = 0; i < rank; ++i) {
    if (dims[i] > kMaxNumel) return false;
    if (!zero && !checked_mul(n, dims[i], &n)) return false;
  }
  *out = zero ? 0 : n;
  return true;
}
// Saturating size_t sum (for arena offsets): SIZE_MAX on overflow, which any limit refuses.
inline size_t saturating_add(size_t a, size_t b) { return a + b < a ? std::numeric_limits<size_t>::max() : a + b; }

}  // namespace om
