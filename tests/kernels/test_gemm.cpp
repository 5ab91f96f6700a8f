// GEMM of every ISA this machine runs (scalar, AVX2, AVX-512, NEON) against an independent naive
// reference (the in-order fma chain per element, which is the exact-mode definition): sizes
// below, at and above the register tiles, the small-M path and the cache blocks, strided and
// transposed operands, accumulate, bias and activation, with B as given and pre-packed.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "kernels/kernel_test_util.h"

using namespace om::kernels;
using namespace om::kernels::test;
using om::ArithmeticMode;

namespace {

struct Case {
  size_t M, N, K;
  bool trans_a = false, trans_b = false, accumulate = false, bias = false;
  UnaryOp act = UnaryOp::Identity;
  size_t pad = 0;  // extra leading-dimension padding and pointer misalignment
  bool row_bias = false, addend = false;  // a convolution's channel bias and residual
};

// Naive definition: fma chain over k in order, then + bias, + row bias, + addend, then the
// activation (scalar forms).
void reference(const GemmArgs& g, std::vector<float>& c) {
  for (size_t i = 0; i < g.M; ++i)
    for (size_t j = 0; j < g.N; ++j) {
      float acc = g.accumulate ? c[i * g.ldc + j] : 0.0f;
      for (size_t k = 0; k < g.K; ++k)
        acc = std::fma(g.a[ptrdiff_t(i) * g.a_rs + ptrdiff_t(k) * g.a_cs], g.b[ptrdiff_t(k) * g.b_rs + ptrdiff_t(j) * g.b_cs], acc);
      if (g.bias) acc = acc + g.bias[j];
      if (g.row_bias) acc = acc + g.row_bias[i];
      if (g.addend) acc = acc + g.addend[i * g.ldc + j];
      float y = acc;
      { IsaScope s(Isa::Scalar); f32_unary(g.activation, &acc, &y, 1); }
      c[i * g.ldc + j] = y;
    }
}

void run_case(const Case& t, ArithmeticMode mode, bool own_workspace, bool prepacked = false) {
  const size_t lda = (t.trans_a ? t.M : t.K) + t.pad, ldb = (t.trans_b ? t.K : t.N) + t.pad;
  const size_t ldc = t.N + t.pad;
  const auto a = awkward_values((t.trans_a ? t.K : t.M) * lda + 1, uint32_t(t.M * 131 + t.K), 1.0f, false);
  const auto b = awkward_values((t.trans_b ? t.N : t.K) * ldb + 1, uint32_t(t.N * 71 + t.K), 1.0f, false);
  const auto bias = awkward_values(t.N + 1, uint32_t(t.N), 1.0f, false);
  const auto c0 = awkward_values(t.M * ldc + 1, uint32_t(t.M + t.N), 1.0f, false);
  const auto row_bias = awkward_values(t.M + 1, uint32_t(t.M * 7), 1.0f, false);
  // The addend: exactly M x N at ldc apart, so reading past a partial tile would leave the buffer.
  std::vector<float> addend = awkward_values((t.M - 1) * ldc + t.N, uint32_t(t.N * 3 + t.M), 1.0f, false);
  GemmArgs g;
  g.M = t.M, g.N = t.N, g.K = t.K;
  g.a = a.data() + (t.pad ? 1 : 0);
  g.a_rs = t.trans_a ? 1 : ptrdiff_t(lda), g.a_cs = t.trans_a ? ptrdiff_t(lda) : 1;
  g.b = b.data() + (t.pad ? 1 : 0);
  g.b_rs = t.trans_b ? 1 : ptrdiff_t(ldb), g.b_cs = t.trans_b ? ptrdiff_t(ldb) : 1;
  g.ldc = ldc;
  g.accumulate = t.accumulate;
  g.bias = t.bias ? bias.data() + 1 : nullptr;
  g.row_bias = t.row_bias ? row_bias.data() + 1 : nullptr;
  g.addend = t.addend ? addend.data() : nullptr;
  g.activation = t.act;
  std::vector<float> ws;
  if (own_workspace) {
    ws.assign(gemm_workspace_floats(t.M, t.N, t.K) + 1, 0.0f);
    g.workspace = ws.data() + 1;  // unaligned on purpose
  }
  std::vector<float> want(c0), got(c0);
  g.c = want.data();
  reference(g, want);
  g.c = got.data();
  if (prepacked) {
    AlignedFloats packed(gemm_packed_b_floats(t.K, t.N), 777.0f);
    gemm_pack_b(g.b, g.b_rs, g.b_cs, t.K, t.N, packed.data);
    const float* b_given = g.b;
    g.b = nullptr;  // must not be read
    f32_gemm_prepacked(g, packed.data, mode);
    g.b = b_given;
  } else {
    f32_gemm(g, mode);
  }
  INFO("prepacked " << prepacked);
  INFO("M " << t.M << " N " << t.N << " K " << t.K << " ta " << t.trans_a << " tb " << t.trans_b
            << " acc " << t.accumulate << " bias " << t.bias << " row bias " << t.row_bias << " addend " << t.addend
            << " act " << int(t.act) << " pad " << t.pad
            << " mode " << int(mode) << " isa " << std::string(isa_name(active_isa())));
  const size_t bad = first_mismatch(want.data(), got.data(), want.size());
  INFO("first mismatch at " << bad << (bad < want.size() ? " want " : "") << (bad < want.size() ? want[bad] : 0.0f)
                            << " got " << (bad < got.size() ? got[bad] : 0.0f));
  REQUIRE(bad == want.size());
}

}  // namespace

TEST_CASE("f32_gemm: exact mode is the in-order fma chain, bit for bit, for small shapes") {
  const size_t Ms[] = {1, 2, 3, 5, 6, 7, 8, 9, 12, 13, 17, 24, 31, 40};
  const size_t Ns[] = {1, 2, 4, 7, 8, 9, 15, 16, 17, 23, 31, 32, 33, 40};
  const size_t Ks[] = {1, 2, 3, 8, 13, 40};
  for (Isa isa : available_isas()) {
    IsaScope s(isa);
    for (size_t M : Ms)
      for (size_t N : Ns)
        for (size_t K : Ks) {
          run_case({M, N, K}, ArithmeticMode::Exact, false);
          run_case({M, N, K}, ArithmeticMode::Exact, K % 2 == 0, true);
        }
  }
}

TEST_CASE("f32_gemm: sizes around every tile (4x4, 6x16, 8x8, 12x32) and the small-M path") {
  const size_t Ms[] = {1, 2, 3, 4, 5, 11, 12, 13, 23, 24, 25, 36, 37};
  const size_t Ns[] = {1, 3, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 127, 128, 129, 200};
  for (Isa isa : available_isas()) {
    IsaScope s(isa);
    for (size_t M : Ms)
      for (size_t N : Ns)
        for (size_t K : {size_t(5), size_t(70)}) {
          run_case({M, N, K, false, false, M % 2 == 1, N % 2 == 1, UnaryOp::Relu, N % 3}, ArithmeticMode::Exact, false);
          run_case({M, N, K, M % 3 == 1, N % 3 == 2, M % 2 == 0, false, UnaryOp::Identity, 1}, ArithmeticMode::Fast,
                   true, true);
        }
  }
}

TEST_CASE("f32_gemm: a row bias and an addend (a convolution's bias and residual) in every tile's epilogue") {
  // Relu and Identity run in the micro-kernels' registers (partial tiles included: the addend is
  // read only inside [mr, nr]); Sigmoid and a column bias take the passes over C.
  const UnaryOp acts[] = {UnaryOp::Relu, UnaryOp::Identity, UnaryOp::Sigmoid};
  for (Isa isa : available_isas()) {
    IsaScope s(isa);
    size_t i = 0;
    for (size_t M : {1, 3, 5, 6, 7, 11, 12, 13, 25})
      for (size_t N : {1, 7, 15, 16, 17, 31, 32, 33, 65})
        for (size_t K : {3, 70}) {
          Case t{M, N, K};
          t.act = acts[i % 3];
          t.row_bias = i % 4 != 1;
          t.addend = true;
          t.bias = i % 5 == 4;
          t.pad = i % 2;
          ++i;
          run_case(t, ArithmeticMode::Exact, i % 2 == 0, i % 3 == 0);
          run_case(t, ArithmeticMode::Fast, true, i % 3 != 0);
        }
  }
}

TEST_CASE("f32_gemm: transposed/strided operands, accumulate, bias, activation, own workspace") {
  const UnaryOp acts[] = {UnaryOp::Identity, UnaryOp::Relu, UnaryOp::GeluErf, UnaryOp::Sigmoid};
  for (Isa isa : available_isas()) {
    IsaScope s(isa);
    size_t i = 0;
    for (size_t M : {1, 3, 6, 7, 19})
      for (size_t N : {1, 16, 17, 35})
        for (size_t K : {1, 9, 37})
          for (int flags = 0; flags < 16; ++flags) {
            Case t{M, N, K, bool(flags & 1), bool(flags & 2), bool(flags & 4), bool(flags & 8), acts[i % 4], i % 3};
            ++i;
            run_case(t, ArithmeticMode::Exact, i % 2 == 0, i % 3 == 0);
            run_case(t, ArithmeticMode::Fast, i % 2 == 1, i % 3 != 0);
          }
  }
}

TEST_CASE("f32_gemm: shapes crossing the cache blocks (K split keeps the chain exact)") {
  for (Isa isa : available_isas()) {
    IsaScope s(isa);
    for (bool prepacked : {false, true}) {
      run_case({150, 1030, 300}, ArithmeticMode::Exact, false, prepacked);
      run_case({147, 35, 520, true, false, true, true, UnaryOp::Tanh, 1}, ArithmeticMode::Exact, true, prepacked);
      run_case({301, 17, 257, false, true, false, false, UnaryOp::Identity, 2}, ArithmeticMode::Exact, false, prepacked);
      run_case({1, 2100, 530, false, false, true, true, UnaryOp::Relu, 1}, ArithmeticMode::Exact, true, prepacked);
      run_case({3, 1100, 260, true, true, false, true, UnaryOp::Identity, 0}, ArithmeticMode::Fast, false, prepacked);
    }
  }
}

TEST_CASE("f32_gemm: K = 0 gives zeros (or keeps C when accumulating) plus the epilogue") {
  std::vector<float> c(6, 5.0f), bias = {1, 2, 3};
  GemmArgs g;
  g.M = 2, g.N = 3, g.K = 0, g.c = c.data(), g.ldc = 3, g.bias = bias.data();
  f32_gemm(g, ArithmeticMode::Exact);
  CHECK(c == std::vector<float>{1, 2, 3, 1, 2, 3});
  g.accumulate = true;
  f32_gemm(g, ArithmeticMode::Exact);
  CHECK(c == std::vector<float>{2, 4, 6, 2, 4, 6});
}

TEST_CASE("f32_gemm: native exact == forced scalar exact on a large product") {
  Case t{97, 203, 611};
  const auto a = awkward_values(t.M * t.K, 1, 1.0f, false), b = awkward_values(t.K * t.N, 2, 1.0f, false);
  std::vector<float> c1(t.M * t.N), c2(t.M * t.N);
  GemmArgs g;
  g.M = t.M, g.N = t.N, g.K = t.K, g.a = a.data(), g.a_rs = ptrdiff_t(t.K), g.b = b.data(), g.b_rs = ptrdiff_t(t.N);
  g.ldc = t.N;
  g.c = c1.data();
  f32_gemm(g, ArithmeticMode::Exact);
  {
    IsaScope s(Isa::Scalar);
    g.c = c2.data();
    f32_gemm(g, ArithmeticMode::Exact);
  }
  CHECK(first_mismatch(c1.data(), c2.data(), c1.size()) == c1.size());
}

TEST_CASE("f32_gemm: never writes past gemm_workspace_floats() of a caller's workspace") {
  for (Isa isa : available_isas()) {
    IsaScope s(isa);
    for (size_t M : {1, 5, 7, 8, 12, 13, 16, 25, 49, 145, 300})
      for (size_t N : {1, 9, 17, 33, 1025})
        for (size_t K : {1, 7, 300}) {
          const auto a = awkward_values(M * K, 1, 1.0f, false), b = awkward_values(K * N, 2, 1.0f, false);
          std::vector<float> c(M * N);
          const size_t need = gemm_workspace_floats(M, N, K);
          std::vector<float> ws(need + 64, 12345.0f);
          GemmArgs g;
          g.M = M, g.N = N, g.K = K, g.a = a.data(), g.a_rs = ptrdiff_t(K), g.b = b.data(), g.b_rs = ptrdiff_t(N);
          g.c = c.data(), g.ldc = N, g.workspace = ws.data();
          f32_gemm(g, ArithmeticMode::Exact);
          bool intact = true;
          for (size_t i = need; i < ws.size(); ++i) intact = intact && ws[i] == 12345.0f;
          INFO("M " << M << " N " << N << " K " << K << " isa " << std::string(isa_name(isa)));
          CHECK(intact);
        }
  }
}
