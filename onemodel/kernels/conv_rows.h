// Row operations in vectors for the convolution kernels (conv_panels.h, winograd_transforms.h):
// copies into the padded buffers, a row of input columns split by column parity into an even and
// an odd buffer (eight or four pairs at a time), and ReLU (UnaryOp::Relu's rule). The copies
// cannot change a result; every ISA file compiles them with its own flags, where the eight-float
// vectors become 256-bit registers (two 128-bit ones under SSE2 and NEON).
#pragma once
#include <cstdint>
#include <cstring>

// These helpers are inlined into their callers in this library only, so the calling convention
// GCC warns about for 256-bit values without AVX (-Wpsabi) never crosses a boundary. The warning
// is reported at the end of the including file, so it is switched off for the includers (the
// convolution kernels) as a whole.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

namespace om::kernels::rows {

typedef float V16 __attribute__((vector_size(64)));  // for callers compiled for AVX-512
typedef float V8 __attribute__((vector_size(32)));
typedef float V4 __attribute__((vector_size(16)));

template <class V>
__attribute__((always_inline)) inline V load(const float* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class V>
__attribute__((always_inline)) inline void store(float* p, const V& v) {
  std::memcpy(p, &v, sizeof v);
}

// Input columns src[0, n) land at padded columns q = i + pad_l (pad_l >= 0): even q at
// even[q / 2], odd q at odd[q / 2]. Taken in pairs (2m, 2m + 1): with an even pad both halves
// land at index m + pad_l / 2 of the two buffers, with an odd one in the odd buffer and one
// further along in the even buffer.
__attribute__((always_inline)) inline void split_by_parity(const float* src, int64_t n, int64_t pad_l, float* even,
                                                           float* odd) {
  const bool shifted = pad_l & 1;
  float* first = (shifted ? odd : even) + pad_l / 2;       // input column 2m goes to first[m]
  float* second = (shifted ? even + 1 : odd) + pad_l / 2;  // and 2m + 1 to second[m]
  const int64_t pairs = n / 2;
  int64_t m = 0;
  for (; m + 8 <= pairs; m += 8) {
    const V8 a = load<V8>(src + 2 * m), b = load<V8>(src + 2 * m + 8);
    store(first + m, __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14));
    store(second + m, __builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15));
  }
  if (m + 4 <= pairs) {
    const V4 a = load<V4>(src + 2 * m), b = load<V4>(src + 2 * m + 4);
    store(first + m, __builtin_shufflevector(a, b, 0, 2, 4, 6));
    store(second + m, __builtin_shufflevector(a, b, 1, 3, 5, 7));
    m += 4;
  }
  for (; m < pairs; ++m) {
    first[m] = src[2 * m];
    second[m] = src[2 * m + 1];
  }
  if (n & 1) first[pairs] = src[2 * pairs];
}

// x < 0 ? 0 : x per lane, UnaryOp::Relu's rule (NaN and -0 kept).
template <class V>
__attribute__((always_inline)) inline V relu(const V& v) {
  const auto negative = v < V{};
  return (V)((decltype(negative))v & ~negative);
}

// dst[0, n) = src[0, n), eight floats at a time.
__attribute__((always_inline)) inline void copy(const float* src, int64_t n, float* dst) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) store(dst + i, load<V8>(src + i));
  for (; i < n; ++i) dst[i] = src[i];
}

}  // namespace om::kernels::rows
