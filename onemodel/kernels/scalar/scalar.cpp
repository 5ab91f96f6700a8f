// Scalar reference kernels: the definition every SIMD kernel must match (bit for bit in exact
// mode, and for all elementwise ops in both modes).
#include <cmath>
#include <cstring>

#include "onemodel/kernels/kernels_internal.h"
#include "onemodel/kernels/conv_entries.h"
#include "onemodel/kernels/depthwise_plane.h"
#include "onemodel/kernels/pool_window.h"
#include "onemodel/kernels/small_gemm.h"
#include "onemodel/kernels/scalar/elementwise.h"

namespace om::kernels {
namespace elem {

float pow(float a, float b) {
  // Exact small cases first: squares and roots are the common uses and deserve exact bits.
  if (b == 2.0f) return a * a;
  if (b == 1.0f) return a;
  if (b == 0.0f) return 1.0f;
  if (b == 0.5f && !(a == 0.0f)) return std::sqrt(a);
  if (b == 3.0f) return (a * a) * a;
  if (b == -1.0f) return 1.0f / a;
  if (is_nan(a) || is_nan(b)) return from_bits(kCanonicalNan);
  const float abs_a = from_bits(bits(a) & 0x7fffffffu);
  const bool b_is_int = std::fabs(b) < 16777216.0f ? (float(int32_t(b)) == b) : true;
  const bool b_is_odd = std::fabs(b) < 16777216.0f && b_is_int && (int32_t(b) & 1);
  if (a < 0.0f && !b_is_int) return from_bits(kCanonicalNan);
  float r;
  if (abs_a == 0.0f) {
    r = b < 0.0f ? INFINITY : 0.0f;
  } else if (std::isinf(b)) {
    r = (abs_a == 1.0f) ? 1.0f : ((abs_a > 1.0f) == (b > 0.0f) ? INFINITY : 0.0f);
  } else {
    // exp(b * log|a|) with the rounding error of the product carried into the exponent.
    const float l = exact::log(abs_a);
    const float p = b * l;
    const float e = std::fma(b, l, -p);
    const float ep = exact::exp(p);
    r = std::isinf(ep) || ep == 0.0f ? ep : std::fma(ep, e, ep);
  }
  if (a < 0.0f && b_is_odd) r = -r;
  if (bits(a) == 0x80000000u && b_is_odd) r = -r;
  return r;
}

uint16_t f32_to_f16(float f) {
  const uint32_t x = bits(f);
  const uint16_t sign = uint16_t((x >> 16) & 0x8000u);
  const uint32_t absx = x & 0x7fffffffu;
  if (absx > 0x7f800000u) return uint16_t(sign | 0x7e00u | ((absx >> 13) & 0x3ffu));
  if (absx >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds to >= 65520: inf
  if (absx < 0x38800000u) {  // below the smallest normal half
    if (absx < 0x33000001u) return sign;  // <= 2^-25 rounds (to even) to zero
    const uint32_t e = absx >> 23;
    const uint32_t m = (absx & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // maps 2^(e-127) onto the 2^-24 subnormal grid
    uint32_t q = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (q & 1))) ++q;
    return uint16_t(sign | q);
  }
  // Normal: rebias, then round the 13 dropped bits to nearest even (a carry may reach inf,
  // which is the right answer).
  const uint32_t m = absx - ((127u - 15u) << 23);
  const uint32_t q = m >> 13;
  const uint32_t rem = m & 0x1fffu;
  uint32_t r = q + ((rem > 0x1000u || (rem == 0x1000u && (q & 1))) ? 1u : 0u);
  return uint16_t(sign | r);
}

float f16_to_f32(uint16_t h) {
  const uint32_t sign = (uint32_t(h) & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    if (mant == 0) return from_bits(sign);
    exp = 127 - 15 + 1;
    while ((mant & 0x400u) == 0) { mant <<= 1; --exp; }
    mant &= 0x3ffu;
    return from_bits(sign | (exp << 23) | (mant << 13));
  }
  if (exp == 31) return from_bits(sign | 0x7f800000u | (mant << 13) | (mant ? 0x400000u : 0u));
  return from_bits(sign | ((exp + 127 - 15) << 23) | (mant << 13));
}

}  // namespace elem

namespace {

void f32_binary__scalar(BinaryOp op, const float* a, size_t as, const float* b, size_t bs,
                        float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = elem::binary(op, a[i * as], b[i * bs]);
}

void f32_unary__scalar(UnaryOp op, const float* x, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = elem::unary(op, x[i]);
}

float f32_sum_exact__scalar(const float* x, size_t n) { return elem::sum_strided(x, n, 1); }

void f32_reduce_sum_inner__scalar(const float* x, size_t n, size_t inner, float* y) {
  for (size_t i = 0; i < inner; ++i) y[i] = elem::sum_strided(x + i, n, inner);
}

float f32_max__scalar(const float* x, size_t n) {
  float m = -INFINITY;
  bool nan = false;
  for (size_t i = 0; i < n; ++i) {
    nan |= elem::is_nan(x[i]);
    m = elem::max_commutative(m, x[i]);
  }
  return nan ? elem::from_bits(elem::kCanonicalNan) : m;
}

void f32_softmax_rows__scalar(const float* x, float* y, size_t rows, size_t n, bool log) {
  for (size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    const float m = f32_max__scalar(xr, n);
    for (size_t i = 0; i < n; ++i) yr[i] = exact::exp(xr[i] - m);
    const float s = f32_sum_exact__scalar(yr, n);
    if (log) {
      const float ls = exact::log(s);
      for (size_t i = 0; i < n; ++i) yr[i] = (xr[i] - m) - ls;
    } else {
      for (size_t i = 0; i < n; ++i) yr[i] = yr[i] / s;
    }
  }
}

// UnaryOp::Relu's rule: NaN and -0 kept.
inline float relu(float x) { return x < 0.0f ? 0.0f : x; }

// 4x4 register tile: the fma chain over k per C element, in order.
constexpr size_t kMR = 4, kNR = 4;
template <class B>
void tile_4x4(size_t kc, const float* a, B b, float* c, size_t ldc, size_t mr, size_t nr, bool load_c,
              const TileEpilogue* ep) {
  float acc[kMR][kNR];
  for (size_t i = 0; i < kMR; ++i)
    for (size_t j = 0; j < kNR; ++j) acc[i][j] = (load_c && i < mr && j < nr) ? c[i * ldc + j] : 0.0f;
  for (size_t k = 0; k < kc; ++k) {
    const float* ak = a + k * kMR;
    const float* bk = b.row(k);
    for (size_t i = 0; i < kMR; ++i)
      for (size_t j = 0; j < kNR; ++j) acc[i][j] = std::fma(ak[i], bk[j], acc[i][j]);
  }
  for (size_t i = 0; i < mr; ++i)
    for (size_t j = 0; j < nr; ++j) {
      float v = acc[i][j];
      if (ep && ep->row_bias) v = v + ep->row_bias[i];
      if (ep && ep->addend) v = v + ep->addend[i * ldc + j];
      if (ep && ep->relu) v = relu(v);
      c[i * ldc + j] = v;
    }
}
OM_GEMM_TILE_ENTRIES(4x4, scalar, tile_4x4, kNR)

struct ScalarOps {
  using V = float;
  static constexpr size_t L = 1;
  static float zero() { return 0.0f; }
  static float bcast(const float* p) { return *p; }
  static float load(const float* p) { return *p; }
  static float load_n(const float* p, size_t) { return *p; }
  using Range = bool;  // depthwise_plane.h's edge loads: the one lane is inside the row
  static Range range(ptrdiff_t lo, ptrdiff_t hi) { return lo <= 0 && hi > 0; }
  static float load_range(const float* p, Range in) { return in ? *p : 0.0f; }
  static void store(float* p, float v) { *p = v; }
  static void store_n(float* p, float v, size_t) { *p = v; }
  static float fma(float a, float b, float acc) { return std::fma(a, b, acc); }
  static float add(float a, float b) { return a + b; }
  static float relu(float a) { return kernels::relu(a); }
  static float div(float a, float b) { return a / b; }
  static float pick(float v, float m) { return pool::pick(v, m); }
  static float max(float v, float m) { return v > m ? v : m; }
  static bool any_nan(float v) { return v != v; }
  static float load_even(const float* p) { return *p; }
  static float load_even_n(const float* p, size_t) { return *p; }
};
void f32_gemm_small__scalar(size_t kc, size_t m, const float* a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                            const float* b, ptrdiff_t b_rs, size_t ps, float* c, size_t ldc, size_t n,
                            bool load_c) {
  small::gemm<ScalarOps, kNR, 4, 4, 4>(kc, m, a, a_rs, a_cs, b, b_rs, ps, c, ldc, n, load_c);
}

// The reference every ISA's depthwise plane kernel matches bit for bit.
void f32_depthwise_plane__scalar(const DepthwisePlane& p) { dw::plane<ScalarOps>(p); }
// One lane: no channels to put side by side, so the plane kernel runs (conv.cpp).
size_t f32_depthwise_channels__scalar(const DepthwiseChannels&) { return 0; }
// The pools' reference table entry: one lane, the element loop's steps.
void f32_pool_window__scalar(const ConvGeom& g, const PoolWindow& w, const float* x, float* y) {
  pool::window<ScalarOps>(g, w, x, y);
}

// The convolution's copies and Winograd transforms (conv_panels.h, winograd_transforms.h) with the
// baseline flags and the transforms' eight-tile form: the bits every ISA's entries give.
OM_CONV_ENTRIES(scalar, false)

void f16_to_f32__scalar(const uint16_t* x, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = elem::f16_to_f32(x[i]);
}
void f32_to_f16__scalar(const float* x, uint16_t* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = elem::f32_to_f16(x[i]);
}

}  // namespace

constexpr KernelTable kScalarTable = {
    Isa::Scalar,
    f32_binary__scalar,
    f32_unary__scalar,
    f32_sum_exact__scalar,
    f32_sum_exact__scalar,
    f32_reduce_sum_inner__scalar,
    f32_max__scalar,
    f32_softmax_rows__scalar,
    f32_softmax_rows__scalar,
    GemmTile{kMR, kNR, f32_gemm_4x4__scalar, f32_gemm_small__scalar, f32_gemm_rows_4x4__scalar, kGenericPackA},
    f16_to_f32__scalar,
    f32_to_f16__scalar,
};

constexpr ConvKernelTable kScalarConvTable = {
    f32_depthwise_plane__scalar,
    f32_depthwise_channels__scalar,
    f32_conv_pack_panels__scalar,
    f32_conv_fill_padded__scalar,
    f32_pool_window__scalar,
    f32_winograd_input__scalar,
    f32_winograd_output__scalar,
};

constexpr Q8KernelTable kScalarQ8Table = {
#if defined(__ARM_FEATURE_SIMD32)
    q8_dot__dsp,  // a Cortex-M with the DSP extension: the same integers, dual multiply-adds
    q8_dot_taps__dsp,
#else
    q8_dot__scalar,
    q8_dot_taps__scalar,
#endif
    q8_requantize__scalar,
    q8_interleave4__scalar,
    q8_quantize__scalar,
    q8_range__scalar,
    q8_pair_rows__scalar,
    q8_pair_dot__scalar,
};

const KernelTable& scalar_table() {
  return kScalarTable;
}
const ConvKernelTable& scalar_conv_table() { return kScalarConvTable; }
const Q8KernelTable& scalar_q8_table() { return kScalarQ8Table; }

}  // namespace om::kernels
