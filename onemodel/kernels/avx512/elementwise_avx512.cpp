// AVX-512 forms of the library's transcendental maps (f32_unary's Exp, Log, Tanh, Sigmoid, Erf
// and the two Gelus) and of the elementwise chains (kernels/elementwise_chain.h): the same
// template as the AVX2 and NEON forms (exact/math_impl.h) on 16 lanes, so the same bits with half
// the instructions per element. Everything else, and the elements past the last whole 16-lane
// vector, goes to the AVX2 kernel, whose 8-lane loop and scalar tail give those same bits.
#include "onemodel/kernels/avx512/lanes_avx512.h"
#include "onemodel/kernels/elementwise_chain.h"
#include "onemodel/kernels/kernels_internal.h"

namespace om::kernels::avx512 {
namespace {

void unary_avx2(UnaryOp op, const float* x, float* y, size_t n) { avx2_table().unary.fn(op, x, y, n); }

template <class VecFn>
void unary_loop(UnaryOp op, const float* x, float* y, size_t n, VecFn fn) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, fn(_mm512_loadu_ps(x + i)));
  if (i < n) unary_avx2(op, x + i, y + i, n - i);
}

}  // namespace

void f32_unary__avx512(UnaryOp op, const float* x, float* y, size_t n) {
  switch (op) {
    case UnaryOp::Exp: return unary_loop(op, x, y, n, [](__m512 v) { return Math::exp(v); });
    case UnaryOp::Log: return unary_loop(op, x, y, n, [](__m512 v) { return Math::log(v); });
    case UnaryOp::Tanh: return unary_loop(op, x, y, n, [](__m512 v) { return Math::tanh(v); });
    case UnaryOp::Sigmoid: return unary_loop(op, x, y, n, [](__m512 v) { return Math::sigmoid(v); });
    case UnaryOp::Erf: return unary_loop(op, x, y, n, [](__m512 v) { return Math::erf(v); });
    case UnaryOp::GeluErf: return unary_loop(op, x, y, n, [](__m512 v) { return Math::gelu_erf(v); });
    case UnaryOp::GeluTanh: return unary_loop(op, x, y, n, [](__m512 v) { return Math::gelu_tanh(v); });
    default: return unary_avx2(op, x, y, n);  // memory-bound maps: 8 lanes keep up
  }
}

void f32_chain__avx512(const ChainProgram& p, const float* x, float* y, size_t n) { chain::run<Lanes, Io>(p, x, y, n); }

}  // namespace om::kernels::avx512
