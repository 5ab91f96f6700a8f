// The loop every ISA's raw integer product (q8_gemm.h's q8_dot and q8_dot_taps) runs over its
// register tiles: rows in steps of Tile::kRows, panels in steps of Tile::kPanels, the last partial
// step with a smaller tile instantiated for its size. Tile::run<R, P>(a, lda, b, w, c, ldc)
// computes R rows by P panels, panel i's group g = t * w.run + q at b[i] + w.offsets[t] +
// q * w.stride (Q8Walk); packed B' is one run with stride 64, so both entries share every
// instantiation. Included by each ISA's file under its own flags: templates only, so each
// instantiation belongs to one ISA.
#pragma once
#include <cstddef>
#include <cstdint>

#include "onemodel/kernels/q8_gemm.h"

namespace om::kernels::q8 {

template <class Tile, int R, int P>
inline void tile_rows(const uint8_t* a, size_t lda, size_t rows, const int8_t* const* b, const Q8Walk& w, int32_t* c,
                      size_t ldc) {
  if constexpr (R > 1) {
    if (rows < size_t(R)) return tile_rows<Tile, R - 1, P>(a, lda, rows, b, w, c, ldc);
  }
  Tile::template run<R, P>(a, lda, b, w, c, ldc);
}

template <class Tile, int P>
inline void tile_panels(const uint8_t* a, size_t lda, size_t rows, const int8_t* const* b, const Q8Walk& w,
                        size_t panels, int32_t* c, size_t ldc) {
  if constexpr (P > 1) {
    if (panels < size_t(P)) return tile_panels<Tile, P - 1>(a, lda, rows, b, w, panels, c, ldc);
  }
  tile_rows<Tile, Tile::kRows, P>(a, lda, rows, b, w, c, ldc);
}

// Panel i at panels[i], or (panels null) at b + i * ps.
template <class Tile>
void blocks(const uint8_t* a, size_t lda, size_t rows, const int8_t* const* panels, const int8_t* b, size_t ps,
            size_t npanels, const Q8Walk& w, int32_t* c, size_t ldc) {
  for (size_t p = 0; p < npanels; p += Tile::kPanels) {
    const size_t np = npanels - p < size_t(Tile::kPanels) ? npanels - p : size_t(Tile::kPanels);
    const int8_t* at[Tile::kPanels];
    for (size_t i = 0; i < np; ++i) at[i] = panels ? panels[p + i] : b + (p + i) * ps;
    for (size_t r = 0, nr = 0; r < rows; r += nr) {
      // Rows left for one tile and less than half another share two tiles (6 + 2 -> 4 + 4 on
      // AVX-512's 32-channel layers), which feeds each load of B' to more rows.
      const size_t left = rows - r, k = size_t(Tile::kRows);
      nr = left <= k ? left : (left < k + k / 2 ? (left + 1) / 2 : k);
      tile_panels<Tile, Tile::kPanels>(a + r * lda, lda, nr, at, w, np, c + r * ldc + p * 16, ldc);
    }
  }
}

// q8_dot and q8_dot_taps of one ISA on its tile.
template <class Tile>
void dot(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t ps, size_t groups, size_t panels,
         int32_t* c, size_t ldc) {
  blocks<Tile>(a, lda, rows, nullptr, b, ps, panels, q8_packed_walk(groups), c, ldc);
}
template <class Tile>
void dot_taps(const uint8_t* a, size_t lda, size_t rows, const int8_t* const* panels, size_t npanels, const Q8Walk& w,
              int32_t* c, size_t ldc) {
  blocks<Tile>(a, lda, rows, panels, nullptr, 0, npanels, w, c, ldc);
}

// Four bytes of A' (one group of one row) as a 32-bit value, for a broadcast.
inline uint32_t load_group(const uint8_t* p) {
  uint32_t v;
  __builtin_memcpy(&v, p, 4);
  return v;
}

}  // namespace om::kernels::q8
