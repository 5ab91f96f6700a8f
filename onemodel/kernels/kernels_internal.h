// Internal to the kernel library: the per-ISA kernel table the dispatcher selects from, and the
// GEMM blocking shared by every ISA (so workspace sizes do not depend on the ISA).
#pragma once
#include <cstddef>
#include <cstdint>

#include "onemodel/kernels/kernels.h"

namespace om::kernels {

// Packed-panel GEMM micro-kernel: C[mr, nr] (+)= Apanel[mr, kc] * Bpanel[kc, nr] where Apanel
// holds kc columns of MR floats (rows i of column k at a[k*MR + i]) and Bpanel kc rows of NR
// floats. `load_c` continues the fma chain from the values already in C; otherwise the chain
// starts from 0. mr <= MR and nr <= NR; partial tiles must not touch C outside [mr, nr].
using GemmMicroKernel = void (*)(size_t kc, const float* a, const float* b, float* c, size_t ldc,
                                 size_t mr, size_t nr, bool load_c);

struct GemmTile {
  size_t mr;
  size_t nr;
  GemmMicroKernel kernel;
};

struct KernelTable {
  Isa isa;
  void (*binary)(BinaryOp, const float*, size_t, const float*, size_t, float*, size_t);
  void (*unary)(UnaryOp, const float*, float*, size_t);
  float (*sum_exact)(const float*, size_t);
  float (*sum_fast)(const float*, size_t);
  // Adds x[0..n) columnwise: y[i] = sum over r of x[r*inner + i] (exact order), for i < inner.
  void (*reduce_sum_inner)(const float*, size_t n, size_t inner, float*);
  float (*max)(const float*, size_t);
  void (*softmax_rows)(const float*, float*, size_t, size_t, bool);
  GemmTile gemm;
  void (*f16_to_f32)(const uint16_t*, float*, size_t);
  void (*f32_to_f16)(const float*, uint16_t*, size_t);
};

const KernelTable& scalar_table();
#if defined(ONEMODEL_HAVE_AVX2)
const KernelTable& avx2_table();
#endif
#if defined(ONEMODEL_HAVE_NEON)
const KernelTable& neon_table();
#endif

// Cache blocking (floats). MC is a multiple of every MR, NC of every NR.
constexpr size_t kGemmMC = 144;
constexpr size_t kGemmKC = 256;
constexpr size_t kGemmNC = 1024;
// Every ISA's MR divides kGemmMRMultiple and every NR divides kGemmNRMultiple, so the
// workspace size computed with them covers all tiles.
constexpr size_t kGemmMRMultiple = 24;
constexpr size_t kGemmNRMultiple = 16;
static_assert(kGemmMC % kGemmMRMultiple == 0 && kGemmNC % kGemmNRMultiple == 0, "blocks hold whole tiles");

// Floats of the workspace that hold packed A (packed B follows them).
size_t gemm_workspace_a_floats(size_t M, size_t K);

// The blocked driver every ISA shares: packs A and B into `workspace` and calls tile.kernel.
void gemm_blocked(const GemmArgs& args, const GemmTile& tile, float* workspace);

// Epilogue applied to a finished row segment of C (bias add, then activation), identical bits on
// every ISA because it goes through the table's unary kernel.
void gemm_epilogue(const GemmArgs& args, const KernelTable& t);

}  // namespace om::kernels
