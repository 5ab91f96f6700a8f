// The blocked GEMM driver shared by every ISA: B is packed into KC x NR panels, A into MR x KC
// panels, and the ISA's micro-kernel runs over them. Splitting K is exact: a later K block
// continues each element's fma chain from the float stored in C, which is the same float the
// unsplit chain would hold at that point.
#include <algorithm>
#include <cstring>
#include <vector>

#include "onemodel/kernels/kernels_internal.h"

namespace om::kernels {
namespace {

// Pack rows [i0, i0+mc) x cols [k0, k0+kc) of A as MR-row panels, zero-padding the last one.
void pack_a(const GemmArgs& g, size_t i0, size_t mc, size_t k0, size_t kc, size_t MR, float* dst) {
  for (size_t ip = 0; ip < mc; ip += MR) {
    const size_t rows = std::min(MR, mc - ip);
    const float* src = g.a + ptrdiff_t(i0 + ip) * g.a_rs + ptrdiff_t(k0) * g.a_cs;
    if (g.a_cs == 1) {
      for (size_t k = 0; k < kc; ++k) {
        for (size_t i = 0; i < rows; ++i) dst[k * MR + i] = src[ptrdiff_t(i) * g.a_rs + ptrdiff_t(k)];
        for (size_t i = rows; i < MR; ++i) dst[k * MR + i] = 0.0f;
      }
    } else {
      for (size_t k = 0; k < kc; ++k) {
        const float* s = src + ptrdiff_t(k) * g.a_cs;
        for (size_t i = 0; i < rows; ++i) dst[k * MR + i] = s[ptrdiff_t(i) * g.a_rs];
        for (size_t i = rows; i < MR; ++i) dst[k * MR + i] = 0.0f;
      }
    }
    dst += kc * MR;
  }
}

// Pack rows [k0, k0+kc) x cols [j0, j0+nc) of B as NR-column panels, zero-padding the last one.
void pack_b(const GemmArgs& g, size_t k0, size_t kc, size_t j0, size_t nc, size_t NR, float* dst) {
  for (size_t jp = 0; jp < nc; jp += NR) {
    const size_t cols = std::min(NR, nc - jp);
    const float* src = g.b + ptrdiff_t(k0) * g.b_rs + ptrdiff_t(j0 + jp) * g.b_cs;
    for (size_t k = 0; k < kc; ++k) {
      const float* s = src + ptrdiff_t(k) * g.b_rs;
      float* d = dst + k * NR;
      if (g.b_cs == 1 && cols == NR) {
        std::memcpy(d, s, NR * sizeof(float));
      } else {
        for (size_t j = 0; j < cols; ++j) d[j] = s[ptrdiff_t(j) * g.b_cs];
        for (size_t j = cols; j < NR; ++j) d[j] = 0.0f;
      }
    }
    dst += kc * NR;
  }
}

}  // namespace

void gemm_blocked(const GemmArgs& g, const GemmTile& tile, float* ws) {
  const size_t MR = tile.mr, NR = tile.nr;
  float* bpack = ws + gemm_workspace_a_floats(g.M, g.K);
  for (size_t j0 = 0; j0 < g.N; j0 += kGemmNC) {
    const size_t nc = std::min(kGemmNC, g.N - j0);
    for (size_t k0 = 0; k0 < g.K; k0 += kGemmKC) {
      const size_t kc = std::min(kGemmKC, g.K - k0);
      const bool load_c = g.accumulate || k0 > 0;
      pack_b(g, k0, kc, j0, nc, NR, bpack);
      for (size_t i0 = 0; i0 < g.M; i0 += kGemmMC) {
        const size_t mc = std::min(kGemmMC, g.M - i0);
        pack_a(g, i0, mc, k0, kc, MR, ws);
        for (size_t jr = 0; jr < nc; jr += NR) {
          const size_t nr = std::min(NR, nc - jr);
          const float* bp = bpack + jr * kc;
          for (size_t ir = 0; ir < mc; ir += MR) {
            const size_t mr = std::min(MR, mc - ir);
            float* c = g.c + (i0 + ir) * g.ldc + j0 + jr;
            tile.kernel(kc, ws + ir * kc, bp, c, g.ldc, mr, nr, load_c);
          }
        }
      }
    }
  }
}

// Sized for the tiles of every ISA (each MR divides kGemmMRMultiple, each NR divides
// kGemmNRMultiple), so the answer does not depend on the active one.
size_t gemm_workspace_a_floats(size_t M, size_t K) {
  const size_t mc = std::min(kGemmMC, (M + kGemmMRMultiple - 1) / kGemmMRMultiple * kGemmMRMultiple);
  return mc * std::min(kGemmKC, K);
}

size_t gemm_workspace_floats(size_t M, size_t N, size_t K) {
  const size_t nc = std::min(kGemmNC, (N + kGemmNRMultiple - 1) / kGemmNRMultiple * kGemmNRMultiple);
  return gemm_workspace_a_floats(M, K) + std::min(kGemmKC, K) * nc;
}

}  // namespace om::kernels
