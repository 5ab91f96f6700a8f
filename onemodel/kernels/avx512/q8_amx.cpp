// AMX raw integer product (q8_gemm.h) for CPUs with AMX-INT8: tdpbusd multiplies a tile of 16
// rows x 64 bytes of A' (16 groups of 4 k per row) by a tile of 16 groups x 64 bytes of B', which
// is exactly a B' panel's layout (16 columns x 4 k per group, groups side by side), adding into a
// 16 x 16 tile of i32 that wraps like the i32 accumulator. Four C tiles (32 rows by two panels)
// are in flight at once: a tdpbusd's result is not ready for many cycles, so one chain of C tiles
// would leave the unit idle, and each A and B tile loaded feeds two products. The K tail (fewer
// than 16 groups) reads zero-padded copies made once per call for B and once per 32 rows for A,
// and a row tile with fewer than 16 rows reads zero-padded copies per chunk; the padding adds
// nothing. The tile configuration is loaded per call and released after, so a thread holds no
// tile state between calls. The table takes this kernel only where the CPU reports AMX-TILE and
// AMX-INT8 and the OS grants the tile data state (amx_usable); the results are the other
// kernels' integers.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "onemodel/kernels/q8_gemm.h"

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

// Tiles (the intrinsics take literal numbers): C[r][p] is tile 2r + p (0 to 3), A of row tile r
// is 4 + r, B of panel p is 6 + p.
constexpr size_t kPanelBlock = 8;  // panels whose B tails are padded at once

// The tile intrinsics take the tile number as a literal (they paste it into the instruction), so
// a tile number given as a template argument picks its literal here.
#define OM_AMX_TILE_SWITCH(T, STMT) \
  switch (T) {                      \
    case 0: STMT(0); break;         \
    case 1: STMT(1); break;         \
    case 2: STMT(2); break;         \
    case 3: STMT(3); break;         \
    case 4: STMT(4); break;         \
    case 5: STMT(5); break;         \
    case 6: STMT(6); break;         \
    default: STMT(7); break;        \
  }
template <int T>
inline void load(const void* p, size_t stride) {
#define OM_AMX_LOAD(N) _tile_loadd(N, p, long(stride))
  OM_AMX_TILE_SWITCH(T, OM_AMX_LOAD)
#undef OM_AMX_LOAD
}
template <int T>
inline void store(void* p, size_t stride) {
#define OM_AMX_STORE(N) _tile_stored(N, p, long(stride))
  OM_AMX_TILE_SWITCH(T, OM_AMX_STORE)
#undef OM_AMX_STORE
}

// Row tile R (rows r0 + 16R ..) of chunk ch into tile 4 + R: in place when it is whole, else from
// a zero-padded copy (the K tail comes from a_tail, rows beyond `rows` are zero).
template <int R>
void load_a(const uint8_t* a, size_t lda, size_t nr, size_t g0, bool tail, const uint8_t* a_tail, uint8_t* pad) {
  if (tail) return load<4 + R>(a_tail + R * 16 * 64, 64);
  if (nr == 16) return load<4 + R>(a + g0 * 4, lda);
  std::memset(pad, 0, 16 * 64);
  for (size_t r = 0; r < nr; ++r) std::memcpy(pad + r * 64, a + r * lda + g0 * 4, 64);
  load<4 + R>(pad, 64);
}

// C[R][P] to c (ldc apart), nr rows of it.
template <int R, int P>
void store_c(int32_t* c, size_t ldc, size_t nr, int32_t* pad) {
  if (nr == 16) return store<2 * R + P>(c, ldc * sizeof(int32_t));
  store<2 * R + P>(pad, 64);
  for (size_t r = 0; r < nr; ++r) std::memcpy(c + r * ldc, pad + r * 16, 64);
}

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

void q8_dot__avx512vnni(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t ps, size_t groups,
                        size_t panels, int32_t* c, size_t ldc);
void q8_dot_taps__avx512vnni(const uint8_t* a, size_t lda, size_t rows, const int8_t* const* panels, size_t npanels,
                             const Q8Walk& w, int32_t* c, size_t ldc, int8_t* scratch);

// A K of fewer than 16 groups (64 bytes: a tile row) would run on zero-padded copies only: the
// VNNI product is faster there (bench_int8's MobileNet-style stem, K 36: 35 -> 29 us; a 32-channel
// pointwise layer 33 -> 22 us), and from 16 groups on the tiles are (64 channels even, 128 ahead).
void q8_dot__amx(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t ps, size_t groups, size_t panels,
                 int32_t* c, size_t ldc) {
  if (groups < 16) return q8_dot__avx512vnni(a, lda, rows, b, ps, groups, panels, c, ldc);
  TileConfig cfg;
  for (int t = 0; t < 8; ++t) {
    cfg.rows[t] = 16;
    cfg.colsb[t] = 64;
  }
  _tile_loadconfig(&cfg);
  const size_t full = groups / 16, tail = groups % 16, chunks = full + (tail ? 1 : 0);
  alignas(64) int8_t b_tail[kPanelBlock][16 * 64];
  alignas(64) uint8_t a_tail[2 * 16 * 64];
  alignas(64) uint8_t a_pad[16 * 64];
  alignas(64) int32_t c_pad[16 * 16];
  for (size_t pb = 0; pb < panels; pb += kPanelBlock) {
    const size_t npb = panels - pb < kPanelBlock ? panels - pb : kPanelBlock;
    if (tail)
      for (size_t q = 0; q < npb; ++q) {
        std::memset(b_tail[q], 0, sizeof b_tail[q]);
        std::memcpy(b_tail[q], b + (pb + q) * ps + full * 16 * 64, tail * 64);
      }
    for (size_t r0 = 0; r0 < rows; r0 += 32) {
      const size_t nr0 = rows - r0 < 16 ? rows - r0 : 16;
      const size_t nr1 = rows - r0 <= 16 ? 0 : (rows - r0 - 16 < 16 ? rows - r0 - 16 : 16);
      if (tail) {
        std::memset(a_tail, 0, sizeof a_tail);
        for (size_t r = 0; r < nr0 + nr1; ++r) std::memcpy(a_tail + r * 64, a + (r0 + r) * lda + full * 64, tail * 4);
      }
      const uint8_t* a0 = a + r0 * lda;
      const uint8_t* a1 = a0 + 16 * lda;
      for (size_t p = 0; p < npb; p += 2) {
        const bool two = p + 1 < npb;
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
        for (size_t ch = 0; ch < chunks; ++ch) {
          const bool is_tail = ch == full;
          const size_t g0 = ch * 16;
          if (is_tail) load<6>(b_tail[p], 64);
          else load<6>(b + (pb + p) * ps + g0 * 64, 64);
          if (two) {
            if (is_tail) load<7>(b_tail[p + 1], 64);
            else load<7>(b + (pb + p + 1) * ps + g0 * 64, 64);
          }
          load_a<0>(a0, lda, nr0, g0, is_tail, a_tail, a_pad);
          _tile_dpbusd(0, 4, 6);
          if (two) _tile_dpbusd(1, 4, 7);
          if (nr1) {
            load_a<1>(a1, lda, nr1, g0, is_tail, a_tail, a_pad);
            _tile_dpbusd(2, 5, 6);
            if (two) _tile_dpbusd(3, 5, 7);
          }
        }
        int32_t* out = c + r0 * ldc + (pb + p) * 16;
        store_c<0, 0>(out, ldc, nr0, c_pad);
        if (two) store_c<0, 1>(out + 16, ldc, nr0, c_pad);
        if (nr1) {
          store_c<1, 0>(out + 16 * ldc, ldc, nr1, c_pad);
          if (two) store_c<1, 1>(out + 16 * ldc + 16, ldc, nr1, c_pad);
        }
      }
    }
  }
  _tile_release();
}

// B' where it lies (q8_dot_taps): a tile row is 16 groups 64 bytes apart, which the strip's
// groups are not, so the panels are packed into `scratch` first (the copies the other ISAs'
// products save); under 16 groups the VNNI product reads them in place, as q8_dot__amx would.
void q8_dot_taps__amx(const uint8_t* a, size_t lda, size_t rows, const int8_t* const* panels, size_t npanels,
                      const Q8Walk& w, int32_t* c, size_t ldc, int8_t* scratch) {
  const size_t groups = w.runs * w.run, ps = groups * 64;
  if (groups < 16) return q8_dot_taps__avx512vnni(a, lda, rows, panels, npanels, w, c, ldc, scratch);
  for (size_t i = 0; i < npanels; ++i)
    for (size_t t = 0; t < w.runs; ++t)
      for (size_t q = 0; q < w.run; ++q)
        std::memcpy(scratch + i * ps + (t * w.run + q) * 64, panels[i] + w.offsets[t] + ptrdiff_t(q) * w.stride, 64);
  q8_dot__amx(a, lda, rows, scratch, ps, groups, npanels, c, ldc);
}

}  // namespace om::kernels::avx512
