// The blocked GEMM driver shared by every ISA: B is packed into KC x NR panels, A into MR x KC
// panels, and the ISA's micro-kernel runs over them. Splitting K is exact: a later K block
// continues each element's fma chain from the float stored in C, which is the same float the
// unsplit chain would hold at that point. The same argument makes every path here (small-M
// kernel, pre-packed B, repacked foreign layout) give the same bits: only the order in which
// independent elements are computed changes, never the chain of one element.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "onemodel/kernels/kernels_internal.h"

namespace om::kernels {
namespace {

size_t round_up(size_t x, size_t m) { return (x + m - 1) / m * m; }

// Header of a gemm_pack_b buffer, 16 floats so the panels after it keep 64-byte alignment.
constexpr uint32_t kPackedMagic = 0x424d4f50u;
constexpr size_t kPackedHeaderFloats = 16;
struct PackedHeader {
  uint32_t magic;
  uint32_t nr;
  uint32_t isa;
  uint32_t reserved;
  uint64_t K;
  uint64_t N;
};
static_assert(sizeof(PackedHeader) <= kPackedHeaderFloats * sizeof(float), "header fits");

// Panels of the (j0, k0) block inside packed data with `nr`-column panels: earlier column
// blocks are whole (NC is a multiple of every NR) and hold K rows each.
size_t packed_block_offset(size_t K, size_t j0, size_t k0, size_t nc, size_t nr) {
  return j0 * K + k0 * round_up(nc, nr);
}

// Pack rows [i0, i0+mc) x cols [k0, k0+kc) of A as MR-row panels, zero-padding the last one.
void pack_a(const GemmArgs& g, size_t i0, size_t mc, size_t k0, size_t kc, const GemmTile& tile, float* dst) {
  const size_t MR = tile.mr;
  for (size_t ip = 0; ip < mc; ip += MR) {
    const size_t rows = std::min(MR, mc - ip);
    const float* src = g.a + ptrdiff_t(i0 + ip) * g.a_rs + ptrdiff_t(k0) * g.a_cs;
    if (g.a_cs == 1 && tile.pack_a != nullptr) {
      tile.pack_a(src, g.a_rs, rows, kc, dst);
    } else if (g.a_cs == 1) {
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

// One full panel row: a copy of a size known here, so it is inlined as vector moves instead of a
// library call per row.
void copy_panel_row(float* d, const float* s, size_t NR) {
  switch (NR) {
    case 8: std::memcpy(d, s, 8 * sizeof(float)); return;
    case 16: std::memcpy(d, s, 16 * sizeof(float)); return;
    case 32: std::memcpy(d, s, 32 * sizeof(float)); return;
    default: std::memcpy(d, s, NR * sizeof(float));
  }
}

// Pack rows [k0, k0+kc) x cols [j0, j0+nc) of B as NR-column panels, zero-padding the last one.
void pack_b(const float* b, ptrdiff_t b_rs, ptrdiff_t b_cs, size_t k0, size_t kc, size_t j0, size_t nc,
            size_t NR, float* dst) {
  if (b_cs == 1 && nc % NR == 0 && kc <= kGemmRowsOuterMaxK) {
    // A short block of contiguous rows, every panel full: row by row, so the source is read as kc
    // streams one after another rather than all at once (a pointwise convolution's rows are a
    // plane apart: more streams than the prefetchers follow, and aliasing in the caches). Longer
    // blocks keep the panel order, whose writes do not alias (measured: 32x512x512 lost 12%).
    for (size_t k = 0; k < kc; ++k) {
      const float* s = b + ptrdiff_t(k0 + k) * b_rs + ptrdiff_t(j0);
      float* d = dst + k * NR;
      for (size_t jp = 0; jp < nc; jp += NR) copy_panel_row(d + jp * kc, s + jp, NR);
    }
    return;
  }
  for (size_t jp = 0; jp < nc; jp += NR) {
    const size_t cols = std::min(NR, nc - jp);
    const float* src = b + ptrdiff_t(k0) * b_rs + ptrdiff_t(j0 + jp) * b_cs;
    if (b_rs == 1 && b_cs != 1) {
      // B's columns contiguous (a transposed operand: weights stored [N, K]): each column is read
      // as one run and written down the panel, instead of NR scattered reads per row k (a gather
      // whose speed swung by a third with the loop's code alignment).
      for (size_t j = 0; j < cols; ++j) {
        const float* s = src + ptrdiff_t(j) * b_cs;
        for (size_t k = 0; k < kc; ++k) dst[k * NR + j] = s[k];
      }
      for (size_t k = 0; k < kc; ++k)
        for (size_t j = cols; j < NR; ++j) dst[k * NR + j] = 0.0f;
      dst += kc * NR;
      continue;
    }
    for (size_t k = 0; k < kc; ++k) {
      const float* s = src + ptrdiff_t(k) * b_rs;
      float* d = dst + k * NR;
      if (b_cs == 1 && cols == NR) {
        copy_panel_row(d, s, NR);
      } else {
        for (size_t j = 0; j < cols; ++j) d[j] = s[ptrdiff_t(j) * b_cs];
        for (size_t j = cols; j < NR; ++j) d[j] = 0.0f;
      }
    }
    dst += kc * NR;
  }
}

// Repack one kc x nc block stored with `src_nr`-column panels into NR-column panels.
void repack_b(const float* src, size_t src_nr, size_t kc, size_t nc, size_t NR, float* dst) {
  for (size_t jp = 0; jp < nc; jp += NR) {
    const size_t cols = std::min(NR, nc - jp);
    for (size_t k = 0; k < kc; ++k) {
      float* d = dst + k * NR;
      for (size_t j = 0; j < cols; ++j) {
        const size_t jj = jp + j;
        d[j] = src[(jj / src_nr) * kc * src_nr + k * src_nr + jj % src_nr];
      }
      for (size_t j = cols; j < NR; ++j) d[j] = 0.0f;
    }
    dst += kc * NR;
  }
}

// A gemm_pack_a buffer: the header (magic kPackedAMagic, nr = the tile's MR, K, N = M), then for
// each K block k0 all of A's MR-row panels, round_up(M, MR) x kc floats starting at
// k0 * round_up(M, MR); the panels of rows from i0 (a multiple of MR) start i0 * kc further.
constexpr uint32_t kPackedAMagic = 0x414d4f50u;

PackedHeader header_of(const float* packed) {
  PackedHeader h;
  std::memcpy(&h, packed, sizeof h);
  return h;
}

}  // namespace

bool gemm_tile_epilogue(const GemmArgs& g) {
  const bool relu = g.activation == UnaryOp::Relu;
  return (g.row_bias != nullptr || g.addend != nullptr || relu) && g.bias == nullptr &&
         (relu || g.activation == UnaryOp::Identity);
}

bool gemm_packed_a_matches(const float* packed, size_t mr, size_t M, size_t K) {
  const PackedHeader h = header_of(packed);
  return h.magic == kPackedAMagic && h.nr == mr && h.K == K && h.N == M;
}

// The blocks both drivers visit, in their order, for the output columns [c0, c1) (c0 a multiple
// of kGemmNRMultiple, so of every NR): f(j0, nc, w0, wn, k0, kc, load_c, last) per column block
// [j0, j0 + nc) meeting the window, whose columns [j0 + w0, j0 + w0 + wn) are the window's, and
// K block [k0, k0 + kc); load_c continues the chains in C, last asks for the tile epilogue (the
// last K block, when there is one). Blocks stay at multiples of kGemmNC, as packed B lays them
// out, whatever the window.
template <class F>
void for_each_block(const GemmArgs& g, GemmColumns cols, F&& f) {
  const bool epilogue = gemm_tile_epilogue(g);
  const size_t c1 = std::min(cols.end, g.N);
  for (size_t j0 = cols.begin / kGemmNC * kGemmNC; j0 < c1; j0 += kGemmNC) {
    const size_t nc = std::min(kGemmNC, g.N - j0);
    const size_t w0 = std::max(cols.begin, j0) - j0, wn = std::min(c1, j0 + nc) - j0 - w0;
    for (size_t k0 = 0; k0 < g.K; k0 += kGemmKC) {
      const size_t kc = std::min(kGemmKC, g.K - k0);
      f(j0, nc, w0, wn, k0, kc, g.accumulate || k0 > 0, epilogue && k0 + kc == g.K);
    }
  }
}

void gemm_blocked(const GemmArgs& g, const GemmTile& tile, float* ws, const float* packed_b,
                  size_t packed_nr, GemmColumns cols) {
  const size_t MR = tile.mr, NR = tile.nr;
  float* bpack = ws + gemm_workspace_a_floats(g.M, g.K);
  const float* apack = nullptr;  // the caller's packed A, when it fits this tile
  if (g.packed_a != nullptr && gemm_packed_a_matches(g.packed_a, MR, g.M, g.K)) apack = g.packed_a + kPackedHeaderFloats;
  TileEpilogue ep{nullptr, g.activation == UnaryOp::Relu};
  for_each_block(g, cols, [&](size_t j0, size_t nc, size_t w0, size_t wn, size_t k0, size_t kc, bool load_c, bool last) {
    const float* bpanels = bpack;  // the window's first panel
    if (g.pack_b != nullptr) {
      g.pack_b(g.pack_b_ctx, k0, kc, j0 + w0, wn, NR, bpack);
    } else if (packed_b == nullptr) {
      pack_b(g.b, g.b_rs, g.b_cs, k0, kc, j0 + w0, wn, NR, bpack);
    } else if (packed_nr == NR) {
      bpanels = packed_b + packed_block_offset(g.K, j0, k0, nc, NR) + w0 * kc;
    } else {  // another ISA's panels: the whole block repacked (the workspace holds one)
      repack_b(packed_b + packed_block_offset(g.K, j0, k0, nc, packed_nr), packed_nr, kc, nc, NR, bpack);
      bpanels = bpack + w0 * kc;
    }
    // A short, thin block of packed B stays in L2 across row panels; sweeping it once per row
    // panel then keeps C (and the addend) at MR rows in flight instead of mc: a pointwise
    // convolution's few input channels leave each tile little work beside its C rows, which are
    // a plane apart. Each tile is the same call, so the order changes no bit.
    const bool rows_outer = kc <= kGemmRowsOuterMaxK && kc * wn <= kGemmRowsOuterFloats;
    for (size_t i0 = 0; i0 < g.M; i0 += kGemmMC) {
      const size_t mc = std::min(kGemmMC, g.M - i0);
      const float* apanels = ws;
      if (apack != nullptr) apanels = apack + k0 * round_up(g.M, MR) + i0 * kc;
      else pack_a(g, i0, mc, k0, kc, tile, ws);
      auto run_tile = [&](size_t jr, size_t ir) {
        const size_t nr = std::min(NR, wn - jr), mr = std::min(MR, mc - ir);
        float* c = g.c + (i0 + ir) * g.ldc + j0 + w0 + jr;
        ep.row_bias = g.row_bias ? g.row_bias + i0 + ir : nullptr;
        ep.addend = g.addend ? g.addend + (c - g.c) : nullptr;
        tile.kernel(kc, apanels + ir * kc, bpanels + jr * kc, c, g.ldc, mr, nr, load_c, last ? &ep : nullptr);
      };
      if (rows_outer) {
        for (size_t ir = 0; ir < mc; ir += MR)
          for (size_t jr = 0; jr < wn; jr += NR) run_tile(jr, ir);
      } else {
        for (size_t jr = 0; jr < wn; jr += NR)
          for (size_t ir = 0; ir < mc; ir += MR) run_tile(jr, ir);
      }
    }
  });
}

void gemm_rows_blocked(const GemmArgs& g, const GemmTile& tile, float* ws, const float* const* rows,
                       GemmPanelOffFn panel_off, const void* ctx, GemmColumns cols) {
  const size_t MR = tile.mr, NR = tile.nr, Mr = round_up(g.M, MR);
  const float* apack = g.packed_a + kPackedHeaderFloats;
  float* bpack = ws + gemm_workspace_a_floats(g.M, g.K);  // one panel, for the columns not read in place
  TileEpilogue ep{nullptr, g.activation == UnaryOp::Relu};
  for_each_block(g, cols, [&](size_t j0, size_t, size_t w0, size_t wn, size_t k0, size_t kc, bool load_c, bool last) {
    for (size_t jr = 0; jr < wn; jr += NR) {
      const size_t nr = std::min(NR, wn - jr), j = j0 + w0 + jr;
      const ptrdiff_t off = nr == NR ? panel_off(ctx, j, NR) : -1;
      if (off < 0) g.pack_b(g.pack_b_ctx, k0, kc, j, nr, NR, bpack);
      for (size_t ir = 0; ir < g.M; ir += MR) {
        const size_t mr = std::min(MR, g.M - ir);
        const float* ap = apack + k0 * Mr + ir * kc;
        float* c = g.c + ir * g.ldc + j;
        ep.row_bias = g.row_bias ? g.row_bias + ir : nullptr;
        ep.addend = g.addend ? g.addend + (c - g.c) : nullptr;
        const TileEpilogue* e = last ? &ep : nullptr;
        if (off >= 0) tile.rows(kc, ap, rows + k0, off, c, g.ldc, mr, load_c, e);
        else tile.kernel(kc, ap, bpack, c, g.ldc, mr, nr, load_c, e);
      }
    }
  });
}

bool gemm_compute(const GemmArgs& g, const KernelTable& t, float* ws, GemmColumns cols) {
  if (g.M <= kGemmSmallM && g.b_cs == 1 && g.pack_b == nullptr && t.gemm.small.fn != nullptr) {
    // B read in place: a plain row-major matrix is the panel form with panel_stride = NR.
    const size_t c1 = std::min(cols.end, g.N);
    t.gemm.small(g.K, g.M, g.a, g.a_rs, g.a_cs, g.b + cols.begin, g.b_rs, t.gemm.nr, g.c + cols.begin, g.ldc,
                 c1 - cols.begin, g.accumulate);
    return false;
  }
  gemm_blocked(g, t.gemm, ws, nullptr, 0, cols);
  return gemm_tile_epilogue(g);
}

bool gemm_compute_prepacked(const GemmArgs& g, const KernelTable& t, const float* packed, float* ws, GemmColumns cols) {
  const PackedHeader h = header_of(packed);
  if (h.magic != kPackedMagic || h.K != g.K || h.N != g.N || h.nr == 0 || kGemmNRMultiple % h.nr != 0) {
    // A caller bug that would otherwise read out of bounds; kernels have no error channel.
    std::fprintf(stderr,
                 "f32_gemm_prepacked: the packed B is not a gemm_pack_b buffer for K=%zu N=%zu "
                 "(header magic %08x K=%llu N=%llu nr=%u); pack it with gemm_pack_b(.., K, N, ..)\n",
                 g.K, g.N, unsigned(h.magic), (unsigned long long)h.K, (unsigned long long)h.N, unsigned(h.nr));
    std::abort();
  }
  const float* data = packed + kPackedHeaderFloats;
  const size_t NR = t.gemm.nr;
  if (h.nr == NR && g.M <= kGemmSmallM && t.gemm.small.fn != nullptr) {
    for_each_block(g, cols, [&](size_t j0, size_t nc, size_t w0, size_t wn, size_t k0, size_t kc, bool load_c, bool) {
      t.gemm.small(kc, g.M, g.a + ptrdiff_t(k0) * g.a_cs, g.a_rs, g.a_cs,
                   data + packed_block_offset(g.K, j0, k0, nc, NR) + w0 * kc, ptrdiff_t(NR), kc * NR, g.c + j0 + w0,
                   g.ldc, wn, load_c);
    });
    return false;
  }
  gemm_blocked(g, t.gemm, ws, data, h.nr, cols);
  return gemm_tile_epilogue(g);
}

void gemm_pack_b_for(const KernelTable& t, const float* b, ptrdiff_t b_rs, ptrdiff_t b_cs, size_t K,
                     size_t N, float* packed) {
  const size_t NR = t.gemm.nr;
  std::memset(packed, 0, kPackedHeaderFloats * sizeof(float));
  PackedHeader h{kPackedMagic, uint32_t(NR), uint32_t(t.isa), 0, uint64_t(K), uint64_t(N)};
  std::memcpy(packed, &h, sizeof h);
  float* data = packed + kPackedHeaderFloats;
  for (size_t j0 = 0; j0 < N; j0 += kGemmNC) {
    const size_t nc = std::min(kGemmNC, N - j0);
    for (size_t k0 = 0; k0 < K; k0 += kGemmKC) {
      const size_t kc = std::min(kGemmKC, K - k0);
      pack_b(b, b_rs, b_cs, k0, kc, j0, nc, NR, data + packed_block_offset(K, j0, k0, nc, NR));
    }
  }
}

void gemm_pack_a_for(const KernelTable& t, const GemmArgs& g, float* packed) {
  const size_t MR = t.gemm.mr;
  std::memset(packed, 0, kPackedHeaderFloats * sizeof(float));
  const PackedHeader h{kPackedAMagic, uint32_t(MR), uint32_t(t.isa), 0, uint64_t(g.K), uint64_t(g.M)};
  std::memcpy(packed, &h, sizeof h);
  float* data = packed + kPackedHeaderFloats;
  for (size_t k0 = 0; k0 < g.K; k0 += kGemmKC) {
    const size_t kc = std::min(kGemmKC, g.K - k0);
    pack_a(g, 0, g.M, k0, kc, t.gemm, data + k0 * round_up(g.M, MR));
  }
}

// Every ISA's panels fit: M rounded up to a multiple of every MR, times K.
size_t gemm_packed_a_floats(size_t M, size_t K) { return kPackedHeaderFloats + round_up(M, kGemmMRMultiple) * K; }

// Every ISA's panels fit: K rows of N columns rounded up to the widest NR.
size_t gemm_packed_b_floats(size_t K, size_t N) {
  return kPackedHeaderFloats + K * round_up(N, kGemmNRMultiple);
}

// Sized for the tiles of every ISA (each MR divides kGemmMRMultiple, each NR divides
// kGemmNRMultiple), so the answer does not depend on the active one.
size_t gemm_workspace_a_floats(size_t M, size_t K) {
  const size_t mc = std::min(kGemmMC, round_up(M, kGemmMRMultiple));
  return mc * std::min(kGemmKC, K);
}

size_t gemm_workspace_floats(size_t M, size_t N, size_t K) {
  const size_t nc = std::min(kGemmNC, round_up(N, kGemmNRMultiple));
  return gemm_workspace_a_floats(M, K) + std::min(kGemmKC, K) * nc;
}

}  // namespace om::kernels
