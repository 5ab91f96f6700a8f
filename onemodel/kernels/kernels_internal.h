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

// Small-M kernel (M <= kGemmSmallM, e.g. batch 1): C[m, n] (+)= A[m, kc] * B[kc, n] for any n,
// reading A in place (A[i,k] = a[i*a_rs + k*a_cs]) and B in place with unit column stride inside
// panels of the ISA's NR columns: B[k, j] = b[k*b_rs + (j / NR)*panel_stride + j % NR]. That one
// form covers a plain row-major B (b_rs = ldb, panel_stride = NR) and a packed K block
// (b_rs = NR, panel_stride = kc*NR). No rows are padded; each C element is still the in-order
// fma chain over k, continued from C when `load_c`.
using GemmSmallKernel = void (*)(size_t kc, size_t m, const float* a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                                 const float* b, ptrdiff_t b_rs, size_t panel_stride, float* c,
                                 size_t ldc, size_t n, bool load_c);
constexpr size_t kGemmSmallM = 4;

// Packs one MR-row panel of a row-major A (unit column stride): rows [0, rows) of
// src[i*a_rs + k], k < kc, to dst[k*MR + i], zero rows from `rows` to MR. Optional (null: the
// driver's generic loop); a copy, so it cannot change any result.
using GemmPackA = void (*)(const float* src, ptrdiff_t a_rs, size_t rows, size_t kc, float* dst);

struct GemmTile {
  size_t mr;
  size_t nr;
  GemmMicroKernel kernel;
  GemmSmallKernel small;
  GemmPackA pack_a;
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
  // Fast mode (any summation order, faster exp); the scalar table reuses the exact kernel.
  void (*softmax_rows_fast)(const float*, float*, size_t, size_t, bool);
  GemmTile gemm;
  void (*f16_to_f32)(const uint16_t*, float*, size_t);
  void (*f32_to_f16)(const float*, uint16_t*, size_t);
};

// Every slot of every ISA's table is filled: a kernel of the ISA or, by declaration, the scalar
// one. The one optional slot is GemmTile::pack_a, written kGenericPackA where the driver's
// generic loop is meant. Tables are constexpr and static_assert this where they are defined, so
// a forgotten slot does not compile; the size check makes a new slot come here first.
constexpr GemmPackA kGenericPackA = nullptr;
constexpr bool table_complete(const KernelTable& t) {
  return t.binary && t.unary && t.sum_exact && t.sum_fast && t.reduce_sum_inner && t.max && t.softmax_rows &&
         t.softmax_rows_fast && t.gemm.mr && t.gemm.nr && t.gemm.kernel && t.gemm.small && t.f16_to_f32 && t.f32_to_f16;
}
static_assert(sizeof(KernelTable) == sizeof(void*) * 10 + sizeof(GemmTile) + sizeof(void*),
              "KernelTable gained a slot: add it to table_complete");

// Defined only where the build compiles the ISA (x86-64: AVX2 and AVX-512; AArch64: NEON).
const KernelTable& scalar_table();
const KernelTable& avx2_table();
const KernelTable& avx512_table();
const KernelTable& neon_table();

// Cache blocking (floats). MC is a multiple of every MR, NC of every NR.
constexpr size_t kGemmMC = 144;
constexpr size_t kGemmKC = 256;
constexpr size_t kGemmNC = 1024;
// Every ISA's MR divides kGemmMRMultiple and every NR divides kGemmNRMultiple, so the
// workspace size computed with them covers all tiles.
// Tiles: scalar 4x4, AVX2 6x16, NEON 8x8, AVX-512 12x32.
constexpr size_t kGemmMRMultiple = 24;
constexpr size_t kGemmNRMultiple = 32;
static_assert(kGemmMC % kGemmMRMultiple == 0 && kGemmNC % kGemmNRMultiple == 0, "blocks hold whole tiles");

// Floats of the workspace that hold packed A (packed B follows them).
size_t gemm_workspace_a_floats(size_t M, size_t K);

// The blocked driver every ISA shares: packs A and B into `workspace` and calls tile.kernel.
// With `packed_b` (the data of a gemm_pack_b buffer, packed with panels of `packed_nr` columns)
// B is taken from it: directly when packed_nr == tile.nr, else repacked block by block.
void gemm_blocked(const GemmArgs& args, const GemmTile& tile, float* workspace,
                  const float* packed_b = nullptr, size_t packed_nr = 0);

// The product without the epilogue on table t: the small-M kernel when it applies, else the
// blocked driver. `workspace` holds gemm_workspace_floats(M, N, K).
void gemm_compute(const GemmArgs& args, const KernelTable& t, float* workspace);
// The same from a gemm_pack_b buffer (header included). Any layout mismatch with t (another
// ISA's panels) is handled by repacking block by block into the workspace: same bits, slower.
void gemm_compute_prepacked(const GemmArgs& args, const KernelTable& t, const float* packed,
                            float* workspace);
// Packs B for table t's tile into `packed` (header + panels).
void gemm_pack_b_for(const KernelTable& t, const float* b, ptrdiff_t b_rs, ptrdiff_t b_cs, size_t K,
                     size_t N, float* packed);

// Epilogue applied to a finished row segment of C (bias add, then activation), identical bits on
// every ISA because it goes through the table's unary kernel.
void gemm_epilogue(const GemmArgs& args, const KernelTable& t);

}  // namespace om::kernels
