// Exact-mode results hashed: a fixed set of GEMMs, sums, reductions, softmaxes and every unary
// op at awkward sizes. Prints "EXACT_HASH kernels <isa> <hex>" for the native ISA and for the
// forced scalar path and checks they agree; tools/exactness.sh compares the lines across
// machines (x86-64 native and scalar, AArch64 under qemu).
#include <doctest/doctest.h>

#include <cinttypes>
#include <cstdio>
#include <vector>

#include "kernels/kernel_test_util.h"

using namespace om::kernels;
using namespace om::kernels::test;
using om::ArithmeticMode;

namespace {

// Inputs from an integer generator so that every platform sees the same values (no <random>
// distributions, whose algorithms are implementation-defined).
std::vector<float> inputs(size_t n, uint32_t seed, float scale) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 12345u;
  for (size_t i = 0; i < n; ++i) {
    s ^= s << 13, s ^= s >> 17, s ^= s << 5;
    v[i] = float(int32_t(s % 2000001u) - 1000000) * (scale / 1000000.0f);
  }
  return v;
}

uint64_t exact_hash() {
  uint64_t h = kFnvOffset;
  const size_t sizes[] = {1, 7, 8, 9, 33, 257, 1000};
  const UnaryOp unary[] = {UnaryOp::Identity, UnaryOp::Neg,     UnaryOp::Relu, UnaryOp::Sigmoid,
                           UnaryOp::Tanh,     UnaryOp::GeluErf, UnaryOp::GeluTanh, UnaryOp::Exp,
                           UnaryOp::Log,      UnaryOp::Erf,     UnaryOp::Sqrt, UnaryOp::Abs,
                           UnaryOp::Reciprocal};
  for (size_t n : sizes) {
    const auto x = inputs(n, uint32_t(n), 12.0f);
    std::vector<float> y(n);
    for (UnaryOp op : unary) {
      f32_unary(op, x.data(), y.data(), n);
      h = fnv1a(h, y.data(), n);
    }
    for (BinaryOp op : {BinaryOp::Add, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Max, BinaryOp::Pow}) {
      const auto b = inputs(n, uint32_t(n + 1), 3.0f);
      f32_binary(op, x.data(), 1, b.data(), 1, y.data(), n);
      h = fnv1a(h, y.data(), n);
    }
    const float s = f32_sum(x.data(), n, ArithmeticMode::Exact);
    h = fnv1a(h, &s, 1);
    for (bool log : {false, true}) {
      f32_softmax_rows(x.data(), y.data(), 1, n, log, ArithmeticMode::Exact);
      h = fnv1a(h, y.data(), n);
    }
  }
  {
    const auto x = inputs(3 * 37 * 19, 7, 5.0f);
    std::vector<float> y(3 * 19);
    f32_reduce_sum(x.data(), 3, 37, 19, y.data(), ArithmeticMode::Exact);
    h = fnv1a(h, y.data(), y.size());
  }
  struct Shape { size_t M, N, K; UnaryOp act; };
  for (Shape s : {Shape{1, 1, 1, UnaryOp::Identity}, Shape{7, 9, 33, UnaryOp::Relu},
                  Shape{33, 257, 300, UnaryOp::GeluErf}, Shape{130, 70, 600, UnaryOp::Tanh}}) {
    const auto a = inputs(s.M * s.K, uint32_t(s.K), 1.0f), b = inputs(s.K * s.N, uint32_t(s.N), 1.0f);
    const auto bias = inputs(s.N, 3, 1.0f);
    std::vector<float> c(s.M * s.N);
    GemmArgs g;
    g.M = s.M, g.N = s.N, g.K = s.K, g.a = a.data(), g.a_rs = ptrdiff_t(s.K), g.b = b.data(), g.b_rs = ptrdiff_t(s.N);
    g.c = c.data(), g.ldc = s.N, g.bias = bias.data(), g.activation = s.act;
    f32_gemm(g, ArithmeticMode::Exact);
    h = fnv1a(h, c.data(), c.size());
    g.accumulate = true, g.bias = nullptr;  // and once more accumulating into the result
    f32_gemm(g, ArithmeticMode::Exact);
    h = fnv1a(h, c.data(), c.size());
  }
  return h;
}

}  // namespace

TEST_CASE("exactness: native and scalar exact-mode results hash the same") {
  const uint64_t native = exact_hash();
  std::printf("EXACT_HASH kernels %s %016" PRIx64 "\n", isa_name(active_isa()), native);
  uint64_t scalar;
  {
    IsaScope s(Isa::Scalar);
    scalar = exact_hash();
    std::printf("EXACT_HASH kernels %s %016" PRIx64 "\n", isa_name(active_isa()), scalar);
  }
  std::fflush(stdout);
  CHECK(native == scalar);
}
