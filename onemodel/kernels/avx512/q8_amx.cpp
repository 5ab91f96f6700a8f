// AMX raw integer product (q8_gemm.h) for CPUs with AMX-INT8: tdpbusd multiplies a tile of 16
// rows x 64 bytes of A' (16 groups of 4 k per row) by a tile of 16 groups x 64 bytes of B', which
// is exactly a B' panel's layout (16 columns x 4 k per group, groups side by side), adding into a
// 16 x 16 tile of i32 that wraps like the i32 accumulator. Two C tiles (two panels) share each A
// tile. Partial tiles (fewer than 16 rows or groups) go through zero-padded copies, which add
// nothing. The tile configuration is loaded per call and released after, so a thread holds no
// tile state between calls. The table takes this kernel only where the CPU reports AMX-TILE and
// AMX-INT8 and the OS grants the tile data state (amx_usable); the results are the other
// kernels' integers.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace om::kernels::avx512 {
namespace {

struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// Tiles (the intrinsics take literal numbers): 0 and 1 the two C tiles, 2 the A tile, 3 and 4
// the two B tiles.

}  // namespace

// Linux hands out the tile data state (XFEATURE 18) only on request, once per process.
bool amx_usable() {
#if defined(__linux__) && defined(SYS_arch_prctl)
  static const bool yes = syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XTILEDATA */) == 0;
  return yes;
#else
  return false;
#endif
}

void q8_dot__amx(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t ps, size_t groups, size_t panels,
                 int32_t* c, size_t ldc) {
  TileConfig cfg;
  for (int t = 0; t <= 4; ++t) {
    cfg.rows[t] = 16;
    cfg.colsb[t] = 64;
  }
  _tile_loadconfig(&cfg);
  alignas(64) uint8_t a_pad[16 * 64];
  alignas(64) int8_t b_pad[2][16 * 64];
  alignas(64) int32_t c_tile[16 * 16];
  const size_t chunks = (groups + 15) / 16;
  for (size_t r0 = 0; r0 < rows; r0 += 16) {
    const size_t nr = rows - r0 < 16 ? rows - r0 : 16;
    for (size_t p = 0; p < panels; p += 2) {
      const bool two = p + 1 < panels;
      _tile_zero(0);
      _tile_zero(1);
      for (size_t ch = 0; ch < chunks; ++ch) {
        const size_t g0 = ch * 16, ng = groups - g0 < 16 ? groups - g0 : 16;
        const uint8_t* at = a + r0 * lda + g0 * 4;
        if (nr == 16 && ng == 16) {
          _tile_loadd(2, at, long(lda));
        } else {
          std::memset(a_pad, 0, sizeof a_pad);
          for (size_t r = 0; r < nr; ++r) std::memcpy(a_pad + r * 64, at + r * lda, ng * 4);
          _tile_loadd(2, a_pad, 64);
        }
        for (int q = 0; q < (two ? 2 : 1); ++q) {
          const int8_t* bt = b + (p + size_t(q)) * ps + g0 * 64;
          if (ng == 16) {
            if (q == 0) _tile_loadd(3, bt, 64);
            else _tile_loadd(4, bt, 64);
          } else {
            std::memset(b_pad[q], 0, sizeof b_pad[q]);
            std::memcpy(b_pad[q], bt, ng * 64);
            if (q == 0) _tile_loadd(3, b_pad[0], 64);
            else _tile_loadd(4, b_pad[1], 64);
          }
        }
        _tile_dpbusd(0, 2, 3);
        if (two) _tile_dpbusd(1, 2, 4);
      }
      for (int q = 0; q < (two ? 2 : 1); ++q) {
        int32_t* out = c + r0 * ldc + (p + size_t(q)) * 16;
        if (nr == 16) {
          if (q == 0) _tile_stored(0, out, long(ldc * sizeof(int32_t)));
          else _tile_stored(1, out, long(ldc * sizeof(int32_t)));
        } else {
          if (q == 0) _tile_stored(0, c_tile, 64);
          else _tile_stored(1, c_tile, 64);
          for (size_t r = 0; r < nr; ++r) std::memcpy(out + r * ldc, c_tile + r * 16, 64);
        }
      }
    }
  }
  _tile_release();
}

}  // namespace om::kernels::avx512
