// The small-M GEMM kernel (GemmSmallKernel in kernels_internal.h) written once over a tiny vector
// interface, instantiated by each ISA file with its own Ops and compiled with that file's flags.
// Everything here is a template on Ops, so instantiations for different ISAs never merge.
//
// Ops provides: V (vector type), L (lanes), zero(), bcast(const float*), load(const float*),
// load_n(const float*, n) / store_n(float*, V, n) (first n lanes, the rest untouched and never
// read out of bounds), store(float*, V) and fma(a, b, acc) = a*b+acc rounded once.
// The loops over rows and vectors are unrolled by pragma: only then does the compiler keep the
// accumulator arrays in registers instead of on the stack (it did not on its own).
#pragma once
#include <cstddef>

namespace om::kernels::small {

// R rows x W vectors of C starting at column j; the last vector holds `tail` lanes when Partial.
// Per element: acc = C (or 0), then acc = fma(A[i,k], B[k,j], acc) for k = 0..kc-1 in order.
template <class Ops, size_t NR, size_t R, size_t W, bool Partial>
void block(size_t kc, const float* a, ptrdiff_t a_rs, ptrdiff_t a_cs, const float* b, ptrdiff_t b_rs,
           size_t panel_stride, float* c, size_t ldc, size_t j, size_t tail, bool load_c) {
  using V = typename Ops::V;
  constexpr size_t L = Ops::L;
  const float* bv[W];
  _Pragma("GCC unroll 16") for (size_t v = 0; v < W; ++v) {
    const size_t col = j + v * L;  // a multiple of L, so its L columns lie in one panel
    bv[v] = b + (col / NR) * panel_stride + col % NR;
  }
  V acc[R][W];
  _Pragma("GCC unroll 16") for (size_t r = 0; r < R; ++r)
    _Pragma("GCC unroll 16") for (size_t v = 0; v < W; ++v) {
      const float* p = c + r * ldc + j + v * L;
      if (!load_c) acc[r][v] = Ops::zero();
      else acc[r][v] = (Partial && v == W - 1) ? Ops::load_n(p, tail) : Ops::load(p);
    }
  for (size_t k = 0; k < kc; ++k) {
    V bk[W];
    _Pragma("GCC unroll 16") for (size_t v = 0; v < W; ++v) {
      bk[v] = (Partial && v == W - 1) ? Ops::load_n(bv[v], tail) : Ops::load(bv[v]);
      bv[v] += b_rs;
    }
    _Pragma("GCC unroll 16") for (size_t r = 0; r < R; ++r) {
      const V av = Ops::bcast(a + ptrdiff_t(r) * a_rs + ptrdiff_t(k) * a_cs);
      _Pragma("GCC unroll 16") for (size_t v = 0; v < W; ++v) acc[r][v] = Ops::fma(av, bk[v], acc[r][v]);
    }
  }
  _Pragma("GCC unroll 16") for (size_t r = 0; r < R; ++r)
    _Pragma("GCC unroll 16") for (size_t v = 0; v < W; ++v) {
      float* p = c + r * ldc + j + v * L;
      if (Partial && v == W - 1) Ops::store_n(p, acc[r][v], tail);
      else Ops::store(p, acc[r][v]);
    }
}

template <class Ops, size_t NR, size_t R, size_t W>
void rows(size_t kc, const float* a, ptrdiff_t a_rs, ptrdiff_t a_cs, const float* b, ptrdiff_t b_rs,
          size_t ps, float* c, size_t ldc, size_t n, bool load_c) {
  constexpr size_t L = Ops::L;
  size_t j = 0;
  for (; j + W * L <= n; j += W * L) block<Ops, NR, R, W, false>(kc, a, a_rs, a_cs, b, b_rs, ps, c, ldc, j, L, load_c);
  for (; j + L <= n; j += L) block<Ops, NR, R, 1, false>(kc, a, a_rs, a_cs, b, b_rs, ps, c, ldc, j, L, load_c);
  if (j < n) block<Ops, NR, R, 1, true>(kc, a, a_rs, a_cs, b, b_rs, ps, c, ldc, j, n - j, load_c);
}

// Rows in groups of at most 4 (kGemmSmallM), W1/W2/W34 vectors wide for groups of 1, 2 and 3-4
// rows, chosen per ISA so accumulators and B vectors fit the register file.
template <class Ops, size_t NR, size_t W1, size_t W2, size_t W34>
void gemm(size_t kc, size_t m, const float* a, ptrdiff_t a_rs, ptrdiff_t a_cs, const float* b,
          ptrdiff_t b_rs, size_t ps, float* c, size_t ldc, size_t n, bool load_c) {
  while (m > 0) {
    const size_t r = m >= 4 ? 4 : m;
    switch (r) {
      case 4: rows<Ops, NR, 4, W34>(kc, a, a_rs, a_cs, b, b_rs, ps, c, ldc, n, load_c); break;
      case 3: rows<Ops, NR, 3, W34>(kc, a, a_rs, a_cs, b, b_rs, ps, c, ldc, n, load_c); break;
      case 2: rows<Ops, NR, 2, W2>(kc, a, a_rs, a_cs, b, b_rs, ps, c, ldc, n, load_c); break;
      default: rows<Ops, NR, 1, W1>(kc, a, a_rs, a_cs, b, b_rs, ps, c, ldc, n, load_c); break;
    }
    a += ptrdiff_t(r) * a_rs;
    c += r * ldc;
    m -= r;
  }
}

}  // namespace om::kernels::small
