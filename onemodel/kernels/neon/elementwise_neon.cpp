// NEON (AArch64) elementwise, reduction, softmax and f16 kernels. Every loop handles 4 or 8
// lanes and ends with a scalar tail that uses the reference per-element definition.
#include <arm_neon.h>

#include <cstring>

#include "onemodel/kernels/exact/softmax_row.h"
#include "onemodel/kernels/fast_softmax.h"
#include "onemodel/kernels/kernels_internal.h"
#include "onemodel/kernels/neon/lanes_neon.h"
#include "onemodel/kernels/scalar/elementwise.h"

namespace om::kernels::neon {
namespace {

inline float32x4_t load_or_broadcast(const float* p, size_t step, size_t i) {
  return step ? vld1q_f32(p + i) : vdupq_n_f32(p[0]);
}

template <class VecOp>
void binary_loop(BinaryOp op, const float* a, size_t as, const float* b, size_t bs, float* y, size_t n,
                 VecOp vop) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vop(load_or_broadcast(a, as, i), load_or_broadcast(b, bs, i)));
  for (; i < n; ++i) y[i] = elem::binary(op, a[i * as], b[i * bs]);
}

void f32_binary__neon(BinaryOp op, const float* a, size_t as, const float* b, size_t bs, float* y, size_t n) {
  switch (op) {
    case BinaryOp::Add: return binary_loop(op, a, as, b, bs, y, n, [](float32x4_t x, float32x4_t z) { return vaddq_f32(x, z); });
    case BinaryOp::Sub: return binary_loop(op, a, as, b, bs, y, n, [](float32x4_t x, float32x4_t z) { return vsubq_f32(x, z); });
    case BinaryOp::Mul: return binary_loop(op, a, as, b, bs, y, n, [](float32x4_t x, float32x4_t z) { return vmulq_f32(x, z); });
    case BinaryOp::Div: return binary_loop(op, a, as, b, bs, y, n, [](float32x4_t x, float32x4_t z) { return vdivq_f32(x, z); });
    case BinaryOp::Max:  // a > b ? a : b, NaN when a is NaN (elem::max)
      return binary_loop(op, a, as, b, bs, y, n, [](float32x4_t x, float32x4_t z) {
        return Lanes::select(Lanes::isnan(x), x, Lanes::maxgt(x, z));
      });
    case BinaryOp::Min:
      return binary_loop(op, a, as, b, bs, y, n, [](float32x4_t x, float32x4_t z) {
        return Lanes::select(Lanes::isnan(x), x, Lanes::mingt(x, z));
      });
    case BinaryOp::Pow:
      for (size_t i = 0; i < n; ++i) y[i] = elem::pow(a[i * as], b[i * bs]);
      return;
  }
}

template <class VecFn>
void unary_loop(UnaryOp op, const float* x, float* y, size_t n, VecFn fn) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, fn(vld1q_f32(x + i)));
  for (; i < n; ++i) y[i] = elem::unary(op, x[i]);
}

void f32_unary__neon(UnaryOp op, const float* x, float* y, size_t n) {
  using V = float32x4_t;
  switch (op) {
    case UnaryOp::Identity:
      if (x != y) std::memmove(y, x, n * sizeof(float));
      return;
    case UnaryOp::Neg: return unary_loop(op, x, y, n, [](V v) { return vnegq_f32(v); });
    case UnaryOp::Abs: return unary_loop(op, x, y, n, [](V v) { return vabsq_f32(v); });
    case UnaryOp::Relu:
      return unary_loop(op, x, y, n, [](V v) { return vbslq_f32(vcltq_f32(v, vdupq_n_f32(0.0f)), vdupq_n_f32(0.0f), v); });
    case UnaryOp::Sqrt: return unary_loop(op, x, y, n, [](V v) { return vsqrtq_f32(v); });
    case UnaryOp::Reciprocal: return unary_loop(op, x, y, n, [](V v) { return vdivq_f32(vdupq_n_f32(1.0f), v); });
    case UnaryOp::Exp: return unary_loop(op, x, y, n, [](V v) { return Math::exp(v); });
    case UnaryOp::Log: return unary_loop(op, x, y, n, [](V v) { return Math::log(v); });
    case UnaryOp::Tanh: return unary_loop(op, x, y, n, [](V v) { return Math::tanh(v); });
    case UnaryOp::Sigmoid: return unary_loop(op, x, y, n, [](V v) { return Math::sigmoid(v); });
    case UnaryOp::Erf: return unary_loop(op, x, y, n, [](V v) { return Math::erf(v); });
    case UnaryOp::GeluErf: return unary_loop(op, x, y, n, [](V v) { return Math::gelu_erf(v); });
    case UnaryOp::GeluTanh: return unary_loop(op, x, y, n, [](V v) { return Math::gelu_tanh(v); });
  }
}

inline float combine8(float32x4_t lo, float32x4_t hi) {
  float l[8];
  vst1q_f32(l, lo);
  vst1q_f32(l + 4, hi);
  return elem::combine8(l);
}

// Exact: lanes 0-3 in one register, 4-7 in the other, each accumulated in order.
float f32_sum_exact__neon(const float* x, size_t n) {
  float32x4_t lo = vdupq_n_f32(0.0f), hi = lo;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    lo = vaddq_f32(lo, vld1q_f32(x + i));
    hi = vaddq_f32(hi, vld1q_f32(x + i + 4));
  }
  float s = combine8(lo, hi);
  for (; i < n; ++i) s += x[i];
  return s;
}

float f32_sum_fast__neon(const float* x, size_t n) {
  float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    a0 = vaddq_f32(a0, vld1q_f32(x + i));
    a1 = vaddq_f32(a1, vld1q_f32(x + i + 4));
    a2 = vaddq_f32(a2, vld1q_f32(x + i + 8));
    a3 = vaddq_f32(a3, vld1q_f32(x + i + 12));
  }
  float s = vaddvq_f32(vaddq_f32(vaddq_f32(a0, a1), vaddq_f32(a2, a3)));
  for (; i < n; ++i) s += x[i];
  return s;
}

void f32_reduce_sum_inner__neon(const float* x, size_t n, size_t inner, float* y) {
  const size_t body = n / 8 * 8;
  size_t i = 0;
  for (; i + 4 <= inner; i += 4) {
    float32x4_t l[8];
    for (auto& v : l) v = vdupq_n_f32(0.0f);
    for (size_t k = 0; k < body; k += 8)
      for (size_t j = 0; j < 8; ++j) l[j] = vaddq_f32(l[j], vld1q_f32(x + (k + j) * inner + i));
    float32x4_t s = vaddq_f32(vaddq_f32(vaddq_f32(l[0], l[4]), vaddq_f32(l[2], l[6])),
                              vaddq_f32(vaddq_f32(l[1], l[5]), vaddq_f32(l[3], l[7])));
    for (size_t k = body; k < n; ++k) s = vaddq_f32(s, vld1q_f32(x + k * inner + i));
    vst1q_f32(y + i, s);
  }
  for (; i < inner; ++i) y[i] = elem::sum_strided(x + i, n, inner);
}

float f32_max__neon(const float* x, size_t n) {
  // FMAX is commutative (+0 above -0) and propagates NaN; NaN is made canonical at the end.
  float32x4_t m0 = vdupq_n_f32(-__builtin_inff()), m1 = m0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    m0 = vmaxq_f32(m0, vld1q_f32(x + i));
    m1 = vmaxq_f32(m1, vld1q_f32(x + i + 4));
  }
  float r = vmaxvq_f32(vmaxq_f32(m0, m1));
  bool any_nan = r != r;
  for (; i < n; ++i) {
    any_nan |= elem::is_nan(x[i]);
    r = elem::max_commutative(r, x[i]);
  }
  return any_nan ? elem::from_bits(elem::kCanonicalNan) : r;
}

void f32_softmax_rows__neon(const float* x, float* y, size_t rows, size_t n, bool log) {
  exact::softmax_rows<Lanes, Io, Math>(x, y, rows, n, log, f32_max__neon, f32_sum_exact__neon);
}
void f32_softmax_rows_fast__neon(const float* x, float* y, size_t rows, size_t n, bool log) {
  fast::softmax_rows<Lanes, Io>(x, y, rows, n, log, f32_max__neon, f32_softmax_rows__neon);
}

void f16_to_f32__neon(const uint16_t* x, float* y, size_t n) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(x + i))));
  for (; i < n; ++i) y[i] = elem::f16_to_f32(x[i]);
}

void f32_to_f16__neon(const float* x, uint16_t* y, size_t n) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) vst1_u16(y + i, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(x + i))));
  for (; i < n; ++i) y[i] = elem::f32_to_f16(x[i]);
}

}  // namespace

OM_GEMM_ENTRY_DECLS(8x8, neon);
void f32_depthwise_plane__neon(const DepthwisePlane& p);
size_t f32_depthwise_channels__neon(const DepthwiseChannels& d);
OM_CONV_ENTRY_DECLS(neon);
void q8_requantize__neon(const Q8Requant& q);
void q8_quantize__neon(const float* x, size_t n, float scale, int32_t zp, int32_t lo, int32_t hi, void* out,
                       bool out_signed);
void q8_range__neon(const float* x, size_t n, float* lo, float* hi);
void q8_interleave4__neon(const uint8_t* const rows[4], uint8_t flip, size_t n, uint32_t* out, size_t panel_words,
                          int32_t* sums);
void q8_dot__neondot(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t ps, size_t groups, size_t panels,
                     int32_t* c, size_t ldc);
void q8_dot__neon(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t ps, size_t groups, size_t panels,
                  int32_t* c, size_t ldc);
void q8_dot_taps__neondot(const uint8_t* a, size_t lda, size_t rows, const int8_t* const* panels, size_t npanels,
                          const Q8Walk& w, int32_t* c, size_t ldc, int8_t* scratch);
void q8_dot_taps__neon(const uint8_t* a, size_t lda, size_t rows, const int8_t* const* panels, size_t npanels,
                       const Q8Walk& w, int32_t* c, size_t ldc, int8_t* scratch);

}  // namespace om::kernels::neon

namespace om::kernels {

constexpr KernelTable kNeonTable = {
    Isa::Neon,
    neon::f32_binary__neon,
    neon::f32_unary__neon,
    neon::f32_sum_exact__neon,
    neon::f32_sum_fast__neon,
    neon::f32_reduce_sum_inner__neon,
    neon::f32_max__neon,
    neon::f32_softmax_rows__neon,
    neon::f32_softmax_rows_fast__neon,
    GemmTile{8, 8, neon::f32_gemm_8x8__neon, neon::f32_gemm_small__neon, neon::f32_gemm_rows_8x8__neon, kGenericPackA},
    neon::f16_to_f32__neon,
    neon::f32_to_f16__neon,
};

constexpr ConvKernelTable kNeonConvTable = {
    neon::f32_depthwise_plane__neon,
    neon::f32_depthwise_channels__neon,
    neon::f32_conv_pack_panels__neon,
    neon::f32_conv_fill_padded__neon,
    neon::f32_pool_window__neon,
    neon::f32_winograd_input__neon,
    neon::f32_winograd_output__neon,
};

constexpr Q8KernelTable kNeonQ8Table = {
    neon::q8_dot__neon,
    neon::q8_dot_taps__neon,
    neon::q8_requantize__neon,
    neon::q8_interleave4__neon,
    neon::q8_quantize__neon,
    neon::q8_range__neon,
    neon::q8_pair_rows__neon,
    neon::q8_pair_dot__neon,
};

const KernelTable& neon_table() { return kNeonTable; }
const ConvKernelTable& neon_conv_table() { return kNeonConvTable; }
// The constant table, with the dot-product integer products where the CPU has them (the same integers).
const Q8KernelTable& neon_q8_table() {
  static const Q8KernelTable t = [] {
    Q8KernelTable k = kNeonQ8Table;
    if (cpu_has_neon_dotprod()) {
      k.q8_dot = neon::q8_dot__neondot;
      k.q8_dot_taps = neon::q8_dot_taps__neondot;
    }
    return k;
  }();
  return t;
}

}  // namespace om::kernels
