// AVX2+FMA elementwise, reduction, softmax and f16 kernels. Every loop handles 8 lanes and ends
// with a scalar tail that uses the reference per-element definition (scalar/elementwise.h).
#include <immintrin.h>

#include <cstring>

#include "onemodel/kernels/avx2/lanes_avx2.h"
#include "onemodel/kernels/exact/softmax_row.h"
#include "onemodel/kernels/fast_softmax.h"
#include "onemodel/kernels/kernels_internal.h"
#include "onemodel/kernels/scalar/elementwise.h"

namespace om::kernels::avx2 {
namespace {

inline __m256 load_or_broadcast(const float* p, size_t step, size_t i) {
  return step ? _mm256_loadu_ps(p + i) : _mm256_set1_ps(p[0]);
}

template <class Op>
void binary_loop(const float* a, size_t as, const float* b, size_t bs, float* y, size_t n, Op op) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, op(load_or_broadcast(a, as, i), load_or_broadcast(b, bs, i)));
  for (; i < n; ++i) y[i] = op(a[i * as], b[i * bs]);
}

// Scalar twins of the vector lambdas below, so the tail is the reference definition.
struct AddOp {
  __m256 operator()(__m256 a, __m256 b) const { return _mm256_add_ps(a, b); }
  float operator()(float a, float b) const { return a + b; }
};
struct SubOp {
  __m256 operator()(__m256 a, __m256 b) const { return _mm256_sub_ps(a, b); }
  float operator()(float a, float b) const { return a - b; }
};
struct MulOp {
  __m256 operator()(__m256 a, __m256 b) const { return _mm256_mul_ps(a, b); }
  float operator()(float a, float b) const { return a * b; }
};
struct DivOp {
  __m256 operator()(__m256 a, __m256 b) const { return _mm256_div_ps(a, b); }
  float operator()(float a, float b) const { return a / b; }
};
// max/min: a > b ? a : b, and NaN when a is NaN (elem::max).
struct MaxOp {
  __m256 operator()(__m256 a, __m256 b) const {
    return _mm256_blendv_ps(_mm256_max_ps(a, b), a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
  }
  float operator()(float a, float b) const { return elem::max(a, b); }
};
struct MinOp {
  __m256 operator()(__m256 a, __m256 b) const {
    return _mm256_blendv_ps(_mm256_min_ps(a, b), a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
  }
  float operator()(float a, float b) const { return elem::min(a, b); }
};

void f32_binary__avx2(BinaryOp op, const float* a, size_t as, const float* b, size_t bs, float* y,
                      size_t n) {
  switch (op) {
    case BinaryOp::Add: return binary_loop(a, as, b, bs, y, n, AddOp{});
    case BinaryOp::Sub: return binary_loop(a, as, b, bs, y, n, SubOp{});
    case BinaryOp::Mul: return binary_loop(a, as, b, bs, y, n, MulOp{});
    case BinaryOp::Div: return binary_loop(a, as, b, bs, y, n, DivOp{});
    case BinaryOp::Max: return binary_loop(a, as, b, bs, y, n, MaxOp{});
    case BinaryOp::Min: return binary_loop(a, as, b, bs, y, n, MinOp{});
    case BinaryOp::Pow:  // rare and branchy: the reference per element
      for (size_t i = 0; i < n; ++i) y[i] = elem::pow(a[i * as], b[i * bs]);
      return;
  }
}

template <class VecFn>
void unary_loop(UnaryOp op, const float* x, float* y, size_t n, VecFn fn) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, fn(_mm256_loadu_ps(x + i)));
  for (; i < n; ++i) y[i] = elem::unary(op, x[i]);
}

void f32_unary__avx2(UnaryOp op, const float* x, float* y, size_t n) {
  const __m256 sign = Lanes::sign_mask();
  switch (op) {
    case UnaryOp::Identity:
      if (x != y) std::memmove(y, x, n * sizeof(float));
      return;
    case UnaryOp::Neg: return unary_loop(op, x, y, n, [&](__m256 v) { return _mm256_xor_ps(v, sign); });
    case UnaryOp::Abs: return unary_loop(op, x, y, n, [&](__m256 v) { return _mm256_andnot_ps(sign, v); });
    case UnaryOp::Relu:
      return unary_loop(op, x, y, n, [](__m256 v) {
        return _mm256_andnot_ps(_mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ), v);
      });
    case UnaryOp::Sqrt: return unary_loop(op, x, y, n, [](__m256 v) { return _mm256_sqrt_ps(v); });
    case UnaryOp::Reciprocal:
      return unary_loop(op, x, y, n, [](__m256 v) { return _mm256_div_ps(_mm256_set1_ps(1.0f), v); });
    case UnaryOp::Exp: return unary_loop(op, x, y, n, [](__m256 v) { return Math::exp(v); });
    case UnaryOp::Log: return unary_loop(op, x, y, n, [](__m256 v) { return Math::log(v); });
    case UnaryOp::Tanh: return unary_loop(op, x, y, n, [](__m256 v) { return Math::tanh(v); });
    case UnaryOp::Sigmoid: return unary_loop(op, x, y, n, [](__m256 v) { return Math::sigmoid(v); });
    case UnaryOp::Erf: return unary_loop(op, x, y, n, [](__m256 v) { return Math::erf(v); });
    case UnaryOp::GeluErf: return unary_loop(op, x, y, n, [](__m256 v) { return Math::gelu_erf(v); });
    case UnaryOp::GeluTanh: return unary_loop(op, x, y, n, [](__m256 v) { return Math::gelu_tanh(v); });
  }
}

inline float combine8(__m256 v) {
  alignas(32) float l[8];
  _mm256_store_ps(l, v);
  return elem::combine8(l);
}

// Exact: lane l accumulates x[k], k = l mod 8, in order (one accumulator: the order is fixed).
float f32_sum_exact__avx2(const float* x, size_t n) {
  __m256 acc = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) acc = _mm256_add_ps(acc, _mm256_loadu_ps(x + i));
  float s = combine8(acc);
  for (; i < n; ++i) s += x[i];
  return s;
}

float f32_sum_fast__avx2(const float* x, size_t n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + i));
    a1 = _mm256_add_ps(a1, _mm256_loadu_ps(x + i + 8));
    a2 = _mm256_add_ps(a2, _mm256_loadu_ps(x + i + 16));
    a3 = _mm256_add_ps(a3, _mm256_loadu_ps(x + i + 24));
  }
  for (; i + 8 <= n; i += 8) a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + i));
  float s = combine8(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
  for (; i < n; ++i) s += x[i];
  return s;
}

// Columns i..i+7 at once; each output keeps its own 8 lane partial sums (8 registers).
void f32_reduce_sum_inner__avx2(const float* x, size_t n, size_t inner, float* y) {
  const size_t body = n / 8 * 8;
  size_t i = 0;
  for (; i + 8 <= inner; i += 8) {
    __m256 l[8];
    for (auto& v : l) v = _mm256_setzero_ps();
    for (size_t k = 0; k < body; k += 8)
      for (size_t j = 0; j < 8; ++j) l[j] = _mm256_add_ps(l[j], _mm256_loadu_ps(x + (k + j) * inner + i));
    __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(l[0], l[4]), _mm256_add_ps(l[2], l[6])),
                             _mm256_add_ps(_mm256_add_ps(l[1], l[5]), _mm256_add_ps(l[3], l[7])));
    for (size_t k = body; k < n; ++k) s = _mm256_add_ps(s, _mm256_loadu_ps(x + k * inner + i));
    _mm256_storeu_ps(y + i, s);
  }
  for (; i < inner; ++i) y[i] = elem::sum_strided(x + i, n, inner);
}

inline __m256 max_comm(__m256 a, __m256 b) {
  return _mm256_and_ps(_mm256_max_ps(a, b), _mm256_max_ps(b, a));
}

float f32_max__avx2(const float* x, size_t n) {
  __m256 m0 = _mm256_set1_ps(-__builtin_inff()), m1 = m0, m2 = m0, m3 = m0;
  __m256 nan = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
    const __m256 v2 = _mm256_loadu_ps(x + i + 16), v3 = _mm256_loadu_ps(x + i + 24);
    m0 = max_comm(m0, v0);
    m1 = max_comm(m1, v1);
    m2 = max_comm(m2, v2);
    m3 = max_comm(m3, v3);
    nan = _mm256_or_ps(nan, _mm256_or_ps(_mm256_cmp_ps(v0, v1, _CMP_UNORD_Q), _mm256_cmp_ps(v2, v3, _CMP_UNORD_Q)));
  }
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    m0 = max_comm(m0, v);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  }
  const __m256 m = max_comm(max_comm(m0, m1), max_comm(m2, m3));
  alignas(32) float l[8];
  _mm256_store_ps(l, m);
  float r = -__builtin_inff();
  for (float v : l) r = elem::max_commutative(r, v);
  bool any_nan = _mm256_movemask_ps(nan) != 0;
  for (; i < n; ++i) {
    any_nan |= elem::is_nan(x[i]);
    r = elem::max_commutative(r, x[i]);
  }
  return any_nan ? elem::from_bits(elem::kCanonicalNan) : r;
}

void f32_softmax_rows__avx2(const float* x, float* y, size_t rows, size_t n, bool log) {
  exact::softmax_rows<Lanes, Io, Math>(x, y, rows, n, log, f32_max__avx2, f32_sum_exact__avx2);
}
void f32_softmax_rows_fast__avx2(const float* x, float* y, size_t rows, size_t n, bool log) {
  fast::softmax_rows<Lanes, Io>(x, y, rows, n, log, f32_max__avx2, f32_softmax_rows__avx2);
}

void f16_to_f32__avx2(const uint16_t* x, float* y, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))));
  for (; i < n; ++i) y[i] = elem::f16_to_f32(x[i]);
}

void f32_to_f16__avx2(const float* x, uint16_t* y, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  for (; i < n; ++i) y[i] = elem::f32_to_f16(x[i]);
}

}  // namespace

OM_GEMM_ENTRY_DECLS(6x16, avx2);
void pack_a_6__avx2(const float* src, ptrdiff_t a_rs, size_t rows, size_t kc, float* dst);
void f32_depthwise_plane__avx2(const DepthwisePlane& p);
size_t f32_depthwise_channels__avx2(const DepthwiseChannels& d);
OM_CONV_ENTRY_DECLS(avx2);
void q8_requantize__avx2(const Q8Requant& q);
void q8_quantize__avx2(const float* x, size_t n, float scale, int32_t zp, int32_t lo, int32_t hi, void* out,
                       bool out_signed);
void q8_range__avx2(const float* x, size_t n, float* lo, float* hi);
void q8_interleave4__avx2(const uint8_t* const rows[4], uint8_t flip, size_t n, uint32_t* out, size_t panel_words,
                          int32_t* sums);
void q8_dot__avx2(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t ps, size_t groups, size_t panels,
                  int32_t* c, size_t ldc);
void q8_dot__avxvnni(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t ps, size_t groups, size_t panels,
                     int32_t* c, size_t ldc);
void q8_dot_taps__avx2(const uint8_t* a, size_t lda, size_t rows, const int8_t* const* panels, size_t npanels,
                       const Q8Walk& w, int32_t* c, size_t ldc, int8_t* scratch);
void q8_dot_taps__avxvnni(const uint8_t* a, size_t lda, size_t rows, const int8_t* const* panels, size_t npanels,
                          const Q8Walk& w, int32_t* c, size_t ldc, int8_t* scratch);
void q8_pair_dot__avxvnni(const uint32_t* const* src, const uint32_t* w, size_t taps, size_t n, size_t rows,
                          size_t src_stride, int32_t* acc);

}  // namespace om::kernels::avx2

namespace om::kernels {

constexpr KernelTable kAvx2Table = {
    Isa::Avx2,
    avx2::f32_binary__avx2,
    avx2::f32_unary__avx2,
    avx2::f32_sum_exact__avx2,
    avx2::f32_sum_fast__avx2,
    avx2::f32_reduce_sum_inner__avx2,
    avx2::f32_max__avx2,
    avx2::f32_softmax_rows__avx2,
    avx2::f32_softmax_rows_fast__avx2,
    GemmTile{6, 16, avx2::f32_gemm_6x16__avx2, avx2::f32_gemm_small__avx2, avx2::f32_gemm_rows_6x16__avx2,
             avx2::pack_a_6__avx2},
    avx2::f16_to_f32__avx2,
    avx2::f32_to_f16__avx2,
};

constexpr ConvKernelTable kAvx2ConvTable = {
    avx2::f32_depthwise_plane__avx2,
    avx2::f32_depthwise_channels__avx2,
    avx2::f32_conv_pack_panels__avx2,
    avx2::f32_conv_fill_padded__avx2,
    avx2::f32_pool_window__avx2,
    avx2::f32_winograd_input__avx2,
    avx2::f32_winograd_output__avx2,
};

constexpr Q8KernelTable kAvx2Q8Table = {
    avx2::q8_dot__avx2,
    avx2::q8_dot_taps__avx2,
    avx2::q8_requantize__avx2,
    avx2::q8_interleave4__avx2,
    avx2::q8_quantize__avx2,
    avx2::q8_range__avx2,
    avx2::q8_pair_rows__avx2,
    avx2::q8_pair_dot__avx2,
};

const KernelTable& avx2_table() { return kAvx2Table; }
const ConvKernelTable& avx2_conv_table() { return kAvx2ConvTable; }
// The constant table, with the AVX-VNNI integer products where the CPU has it (the same integers).
const Q8KernelTable& avx2_q8_table() {
  static const Q8KernelTable t = [] {
    Q8KernelTable k = kAvx2Q8Table;
    if (cpu_has_avx_vnni()) {
      k.q8_dot = avx2::q8_dot__avxvnni;
      k.q8_pair_dot = avx2::q8_pair_dot__avxvnni;
      k.q8_dot_taps = avx2::q8_dot_taps__avxvnni;
    }
    return k;
  }();
  return t;
}

}  // namespace om::kernels
