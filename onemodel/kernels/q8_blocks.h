// The loop every ISA's raw integer product (q8_gemm.h's q8_dot) runs over its register tiles:
// rows in steps of Tile::kRows, panels in steps of Tile::kPanels, the last partial step with a
// smaller tile instantiated for its size. Tile::run<R, P>(a, lda, b, panel_stride, groups, c,
// ldc) computes R rows by P panels. Included by each ISA's file under its own flags: templates
// only, so each instantiation belongs to one ISA.
#pragma once
#include <cstddef>
#include <cstdint>

namespace om::kernels::q8 {

template <class Tile, int R, int P>
inline void tile_rows(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t ps, size_t groups,
                      int32_t* c, size_t ldc) {
  if constexpr (R > 1) {
    if (rows < size_t(R)) return tile_rows<Tile, R - 1, P>(a, lda, rows, b, ps, groups, c, ldc);
  }
  Tile::template run<R, P>(a, lda, b, ps, groups, c, ldc);
}

template <class Tile, int P>
inline void tile_panels(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t ps, size_t groups,
                        size_t panels, int32_t* c, size_t ldc) {
  if constexpr (P > 1) {
    if (panels < size_t(P)) return tile_panels<Tile, P - 1>(a, lda, rows, b, ps, groups, panels, c, ldc);
  }
  tile_rows<Tile, Tile::kRows, P>(a, lda, rows, b, ps, groups, c, ldc);
}

template <class Tile>
void blocks(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t ps, size_t groups, size_t panels,
            int32_t* c, size_t ldc) {
  for (size_t p = 0; p < panels; p += Tile::kPanels)
    for (size_t r = 0; r < rows; r += Tile::kRows) {
      const size_t np = panels - p < size_t(Tile::kPanels) ? panels - p : size_t(Tile::kPanels);
      const size_t nr = rows - r < size_t(Tile::kRows) ? rows - r : size_t(Tile::kRows);
      tile_panels<Tile, Tile::kPanels>(a + r * lda, lda, nr, b + p * ps, ps, groups, np, c + r * ldc + p * 16, ldc);
    }
}

// Four bytes of A' (one group of one row) as a 32-bit value, for a broadcast.
inline uint32_t load_group(const uint8_t* p) {
  uint32_t v;
  __builtin_memcpy(&v, p, 4);
  return v;
}

}  // namespace om::kernels::q8
