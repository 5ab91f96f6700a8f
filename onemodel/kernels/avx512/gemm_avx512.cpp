// AVX-512F GEMM kernels and the AVX-512 kernel table. The 12x32 micro-kernel holds a tile of C in
// 24 ZMM registers (of 32); each step k broadcasts twelve A values into two 16-wide B vectors
// with fused multiply-adds, so every C element is exactly the in-order fma chain over k of the
// scalar reference. Partial tiles use lane masks instead of a staging copy. Elementwise kernels
// and reductions are the AVX2 ones: their exact-mode order (8 lane partial sums) is part of the
// contract and must not change with the ISA.
#include <immintrin.h>

#include <cstddef>

#include "onemodel/kernels/kernels_internal.h"
#include "onemodel/kernels/small_gemm.h"

namespace om::kernels::avx512 {
namespace {

constexpr size_t kMR = 12, kNR = 32;

__mmask16 lanes(size_t n) { return n >= 16 ? __mmask16(0xffff) : __mmask16((1u << n) - 1u); }

void f32_gemm_12x32__avx512(size_t kc, const float* a, const float* b, float* c, size_t ldc, size_t mr,
                            size_t nr, bool load_c) {
  const __mmask16 m0 = lanes(nr), m1 = nr > 16 ? lanes(nr - 16) : __mmask16(0);
  __m512 acc[kMR][2];
#pragma GCC unroll 12
  for (size_t i = 0; i < kMR; ++i) {
    if (load_c && i < mr) {
      acc[i][0] = _mm512_maskz_loadu_ps(m0, c + i * ldc);
      acc[i][1] = _mm512_maskz_loadu_ps(m1, c + i * ldc + 16);
    } else {
      acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    }
  }
  for (size_t k = 0; k < kc; ++k) {
    const __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
#pragma GCC unroll 12
    for (size_t i = 0; i < kMR; ++i) {
      const __m512 av = _mm512_set1_ps(a[i]);
      acc[i][0] = _mm512_fmadd_ps(av, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(av, b1, acc[i][1]);
    }
    a += kMR;
    b += kNR;
  }
#pragma GCC unroll 12
  for (size_t i = 0; i < kMR; ++i) {
    if (i < mr) {
      _mm512_mask_storeu_ps(c + i * ldc, m0, acc[i][0]);
      _mm512_mask_storeu_ps(c + i * ldc + 16, m1, acc[i][1]);
    }
  }
}

struct Avx512Ops {
  using V = __m512;
  static constexpr size_t L = 16;
  static V zero() { return _mm512_setzero_ps(); }
  static V bcast(const float* p) { return _mm512_set1_ps(*p); }
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static V load_n(const float* p, size_t n) { return _mm512_maskz_loadu_ps(lanes(n), p); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static void store_n(float* p, V v, size_t n) { _mm512_mask_storeu_ps(p, lanes(n), v); }
  static V fma(V a, V b, V acc) { return _mm512_fmadd_ps(a, b, acc); }
};

// 32 ZMM registers: one row takes 8 vectors (128 columns), two to four rows 4 vectors each.
void f32_gemm_small__avx512(size_t kc, size_t m, const float* a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                            const float* b, ptrdiff_t b_rs, size_t ps, float* c, size_t ldc, size_t n,
                            bool load_c) {
  small::gemm<Avx512Ops, kNR, 8, 4, 4>(kc, m, a, a_rs, a_cs, b, b_rs, ps, c, ldc, n, load_c);
}

}  // namespace

}  // namespace om::kernels::avx512

namespace om::kernels::avx2 {
void pack_a_12__avx2(const float* src, ptrdiff_t a_rs, size_t rows, size_t kc, float* dst);
}

namespace om::kernels {

static_assert(kGemmMRMultiple % avx512::kMR == 0 && kGemmNRMultiple % avx512::kNR == 0,
              "workspace bounds cover the AVX-512 tile");
static_assert(kGemmMC % avx512::kMR == 0 && kGemmNC % avx512::kNR == 0, "blocks hold whole tiles");

const KernelTable& avx512_table() {
  static const KernelTable t = [] {
    KernelTable k = avx2_table();
    k.isa = Isa::Avx512;
    k.gemm = GemmTile{avx512::kMR, avx512::kNR, avx512::f32_gemm_12x32__avx512, avx512::f32_gemm_small__avx512,
                      avx2::pack_a_12__avx2};
    return k;
  }();
  return t;
}

}  // namespace om::kernels
