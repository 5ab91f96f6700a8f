// Pre-packed B: f32_gemm_prepacked must give exactly f32_gemm's bits (for every ISA, both modes,
// accumulate, bias, activation), also when the buffer was packed under another ISA's layout; it
// must stay inside gemm_packed_b_floats / gemm_workspace_floats and, given a workspace, must not
// allocate.
#include <doctest/doctest.h>

#include <vector>

#include "allocation_count.h"
#include "kernels/kernel_test_util.h"

using namespace om::kernels;
using namespace om::kernels::test;
using om::ArithmeticMode;

namespace {

struct Operands {
  size_t M, N, K, lda, ldb, ldc;
  bool trans_a, trans_b;
  std::vector<float> a, b, bias, c0;
  Operands(size_t M_, size_t N_, size_t K_, bool ta, bool tb, uint32_t seed)
      : M(M_), N(N_), K(K_), ldc(N_ + 1), trans_a(ta), trans_b(tb) {
    lda = (ta ? M : K) + 1;
    ldb = (tb ? K : N) + 2;
    a = awkward_values((ta ? K : M) * lda, seed, 1.0f, false);
    b = awkward_values((tb ? N : K) * ldb, seed + 1, 1.0f, false);
    bias = awkward_values(N, seed + 2, 1.0f, false);
    c0 = awkward_values(M * ldc, seed + 3, 1.0f, false);
  }
  GemmArgs args(float* c, bool accumulate, bool bias_on, UnaryOp act) const {
    GemmArgs g;
    g.M = M, g.N = N, g.K = K;
    g.a = a.data(), g.a_rs = trans_a ? 1 : ptrdiff_t(lda), g.a_cs = trans_a ? ptrdiff_t(lda) : 1;
    g.b = b.data(), g.b_rs = trans_b ? 1 : ptrdiff_t(ldb), g.b_cs = trans_b ? ptrdiff_t(ldb) : 1;
    g.c = c, g.ldc = ldc, g.accumulate = accumulate;
    g.bias = bias_on ? bias.data() : nullptr;
    g.activation = act;
    return g;
  }
};

// f32_gemm on the current ISA vs f32_gemm_prepacked with B packed under `pack_isa`.
void compare(const Operands& o, Isa pack_isa, ArithmeticMode mode, bool accumulate, bool bias, UnaryOp act) {
  const size_t packed_floats = gemm_packed_b_floats(o.K, o.N);
  AlignedFloats packed(packed_floats + 8, -3.0f);
  const Isa run_isa = active_isa();
  {
    IsaScope s(pack_isa);
    gemm_pack_b(o.b.data(), o.trans_b ? 1 : ptrdiff_t(o.ldb), o.trans_b ? ptrdiff_t(o.ldb) : 1, o.K, o.N, packed.data);
  }
  force_isa(run_isa);
  bool tail_intact = true;
  for (size_t i = packed_floats; i < packed_floats + 8; ++i) tail_intact = tail_intact && packed.data[i] == -3.0f;
  std::vector<float> want(o.c0), got(o.c0);
  std::vector<float> ws(gemm_workspace_floats(o.M, o.N, o.K) + 8, 4.5f);
  GemmArgs g = o.args(want.data(), accumulate, bias, act);
  f32_gemm(g, mode);
  g = o.args(got.data(), accumulate, bias, act);
  g.b = nullptr;
  g.workspace = ws.data();
  const size_t before = g_allocations.load();
  f32_gemm_prepacked(g, packed.data, mode);
  const size_t allocations = g_allocations.load() - before;
  bool ws_intact = true;
  for (size_t i = ws.size() - 8; i < ws.size(); ++i) ws_intact = ws_intact && ws[i] == 4.5f;
  INFO("M " << o.M << " N " << o.N << " K " << o.K << " ta " << o.trans_a << " tb " << o.trans_b << " packed on "
            << std::string(isa_name(pack_isa)) << " run on " << std::string(isa_name(run_isa)) << " mode "
            << int(mode) << " acc " << accumulate << " bias " << bias << " act " << int(act));
  CHECK(tail_intact);
  CHECK(ws_intact);
  CHECK(allocations == 0);
  const size_t bad = first_mismatch(want.data(), got.data(), want.size());
  INFO("first mismatch at " << bad);
  REQUIRE(bad == want.size());
}

}  // namespace

TEST_CASE("f32_gemm_prepacked == f32_gemm bit for bit: many shapes, both modes, every ISA") {
  const UnaryOp acts[] = {UnaryOp::Identity, UnaryOp::Relu, UnaryOp::GeluTanh, UnaryOp::Tanh};
  uint32_t seed = 1;
  for (Isa isa : available_isas()) {
    IsaScope s(isa);
    for (size_t M : {1, 2, 4, 5, 12, 13, 32, 150})
      for (size_t N : {1, 10, 16, 33, 64, 100, 512, 1030})
        for (size_t K : {1, 7, 256, 300}) {
          if (M * N * K > 4000000) continue;
          const Operands o(M, N, K, seed % 3 == 0, seed % 4 == 1, seed);
          compare(o, isa, seed % 2 ? ArithmeticMode::Exact : ArithmeticMode::Fast, seed % 5 < 2, seed % 3 != 1,
                  acts[seed % 4]);
          ++seed;
        }
  }
}

TEST_CASE("f32_gemm_prepacked: a buffer packed under another ISA still gives the same bits") {
  const auto isas = available_isas();
  for (Isa pack_isa : isas)
    for (Isa run_isa : isas) {
      IsaScope s(run_isa);
      for (size_t M : {1, 3, 7, 40})
        for (size_t N : {5, 33, 1100})
          for (size_t K : {9, 260}) {
            const Operands o(M, N, K, false, N % 2 == 0, uint32_t(M + N + K));
            compare(o, pack_isa, ArithmeticMode::Exact, M % 2 == 1, true, UnaryOp::Relu);
          }
    }
}

TEST_CASE("gemm_packed_b_floats does not depend on the ISA and K = 0 works") {
  std::vector<float> c(6, 5.0f), bias = {1, 2, 3};
  AlignedFloats packed(gemm_packed_b_floats(0, 3));
  gemm_pack_b(nullptr, 3, 1, 0, 3, packed.data);
  GemmArgs g;
  g.M = 2, g.N = 3, g.K = 0, g.c = c.data(), g.ldc = 3, g.bias = bias.data();
  f32_gemm_prepacked(g, packed.data, ArithmeticMode::Exact);
  CHECK(c == std::vector<float>{1, 2, 3, 1, 2, 3});
  CHECK(gemm_packed_b_floats(512, 512) >= 512 * 512);
  CHECK(gemm_packed_b_floats(512, 10) >= 512 * 32);
}
