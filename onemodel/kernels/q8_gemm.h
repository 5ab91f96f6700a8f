// Integer products for the quantized operators (graph/ops/quant.cpp): u8 or s8 operands, i32
// accumulation wrapping modulo 2^32 as the ONNX i32 type does. Results are integers, so every
// ISA's kernel gives the scalar reference's bits by construction (tests/kernels/test_q8_gemm.cpp).
//
// Every product runs as A'[M, K] (u8) times B'[K, N] (s8), which is what AVX-512 VNNI's vpdpbusd
// multiplies. The other dtype pairs are moved there by flipping the top bit: an s8 A is stored as
// A + 128 (u8) and a u8 B as B - 128 (s8), and the zero points move by the same 128
// (q8_zero_a, q8_zero_b), which leaves every (A - za)(B - zb) unchanged. The zero points are
// applied after the raw product from the row sums of A' and the column sums of B' (q8_correct):
//   sum (A' - ZA)(B' - ZB) = sum A'B' - ZB sum A' - ZA sum B' + K ZA ZB   (modulo 2^32).
#pragma once
#include <cstddef>
#include <cstdint>

namespace om::kernels {

constexpr size_t kQ8Group = 4;   // k values side by side in one 32-bit lane
constexpr size_t kQ8Panel = 16;  // columns of B' per panel
inline size_t q8_groups(size_t K) { return (K + kQ8Group - 1) / kQ8Group; }
inline size_t q8_panels(size_t N) { return (N + kQ8Panel - 1) / kQ8Panel; }

// A': M rows of q8_groups(K) * 4 bytes (lda), zero past K.
inline size_t q8_lda(size_t K) { return q8_groups(K) * kQ8Group; }
// B': panels of 16 columns, zero past K and past N. Byte t of column j of group g of panel p is
// at p * q8_panel_stride(K) + g * 64 + j * 4 + t, and holds B'[4g + t, 16p + j].
inline size_t q8_panel_stride(size_t K) { return q8_groups(K) * kQ8Group * kQ8Panel; }
inline size_t q8_packed_b_bytes(size_t K, size_t N) { return q8_panels(N) * q8_panel_stride(K); }

// Packs A[i, k] = a[i*rs + k*cs] (u8, or s8 when a_signed) as A' rows of lda bytes; row_sums
// (nullable) gets each row's sum of A'.
void q8_pack_a(const void* a, bool a_signed, ptrdiff_t rs, ptrdiff_t cs, size_t M, size_t K, uint8_t* dst, size_t lda,
               int32_t* row_sums);
// Packs B[k, n] = b[k*rs + n*cs] (s8, or u8 when !b_signed) as B' panels; col_sums (nullable,
// q8_panels(N) * 16 entries) gets each column's sum of B'.
void q8_pack_b(const void* b, bool b_signed, ptrdiff_t rs, ptrdiff_t cs, size_t K, size_t N, int8_t* dst,
               int32_t* col_sums);

// The raw product on the active ISA: c[r*ldc + 16p + j] = sum over k of A'[r, k] B'[k, 16p + j]
// for rows r < rows of a (lda apart) and every column of panels p < panels of b (panel_stride
// apart, `groups` groups each). ldc >= 16 * panels.
void q8_dot(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t panel_stride, size_t groups,
            size_t panels, int32_t* c, size_t ldc);

// The raw product with B' read where it lies rather than packed: group g = t * w.run + q of panel
// i (64 bytes: 16 columns x 4 k) at panels[i] + w.offsets[t] + q * w.stride, for t < w.runs and
// q < w.run. The integer convolutions pass their strip so (a run of channel groups per tap,
// graph/ops/quant.cpp), which saves copying each tap's panels; packed B' is the walk of one run
// of every group 64 bytes apart. c[r*ldc + 16i + j] as q8_dot's. `scratch` has room for
// `npanels` packed panels (npanels * runs * run * 64 bytes), for an ISA whose product needs them
// packed (AMX): the others leave it alone.
struct Q8Walk {
  const ptrdiff_t* offsets;
  size_t runs, run;
  ptrdiff_t stride;
};
void q8_dot_taps(const uint8_t* a, size_t lda, size_t rows, const int8_t* const* panels, size_t npanels,
                 const Q8Walk& w, int32_t* c, size_t ldc, int8_t* scratch);
// The walk of packed B': one run of `groups` groups, 64 bytes apart.
inline Q8Walk q8_packed_walk(size_t groups) {
  static constexpr ptrdiff_t kAtStart = 0;
  return Q8Walk{&kAtStart, 1, groups, ptrdiff_t(kQ8Group * kQ8Panel)};
}

// Four rows of bytes as 32-bit words of one byte from each, the top bit flipped where flip is
// 0x80: word c = x0 | x1 << 8 | x2 << 16 | x3 << 24 with xt = rows[t][c] ^ flip, stored at
// out[(c / 16) * panel_words + c % 16] (16 for a plain row; a panel stride of B' for one panel
// group of each 16 columns), and sums[c] += x0 + x1 + x2 + x3 taken as int8, for c < n. The
// integer convolutions lay four channels of an input row out so (a 32-bit lane of B' is four
// channels of one position, graph/ops/quant.cpp).
void q8_interleave4(const uint8_t* const rows[4], uint8_t flip, size_t n, uint32_t* out, size_t panel_words,
                    int32_t* sums);

// The zero points of A' and B' for the zero points of A and B.
inline int32_t q8_zero_a(int32_t za, bool a_signed) { return a_signed ? za + 128 : za; }
inline int32_t q8_zero_b(int32_t zb, bool b_signed) { return b_signed ? zb : zb - 128; }
// sum over k < K of (A[m, k] - za)(B[k, n] - zb), modulo 2^32, from the raw product and the sums:
// the terms of the row (- ZB sum A' + K ZA ZB), computed once per row where ZB is per-tensor,
// then - ZA sum B' per element.
inline uint32_t q8_row_term(int32_t row_sum, int32_t ZA, int32_t ZB, size_t K) {
  return uint32_t(K) * uint32_t(ZA) * uint32_t(ZB) - uint32_t(ZB) * uint32_t(row_sum);
}
inline int32_t q8_apply(int32_t raw, uint32_t row_term, int32_t ZA, int32_t col_sum) {
  return int32_t(uint32_t(raw) + row_term - uint32_t(ZA) * uint32_t(col_sum));
}
inline int32_t q8_correct(int32_t raw, int32_t row_sum, int32_t col_sum, int32_t ZA, int32_t ZB, size_t K) {
  return q8_apply(raw, q8_row_term(row_sum, ZA, ZB, K), ZA, col_sum);
}

// saturate(round_half_even(v) + zp) into [lo, hi], QuantizeLinear's rounding, the one
// requantization of every quantized kernel. v is clamped to [lo - zp, hi - zp] before the
// rounding, which saturates exactly the values a rounding first would (the bounds are integers
// and rounding is monotonic), so large |v| cannot overflow; NaN (a 0/0 scale) gives the zero
// point, the quantized zero. What is left has |v| < 2^9: adding and subtracting 1.5 x 2^23 rounds
// it to an integer half to even in the default rounding mode. Selects, not branches (after a
// Relu half the values saturate, which a branch would mispredict), so loops of it vectorise;
// no library call (nearbyint is one where the baseline ISA has no rounding instruction).
// always_inline: the ISA files compile it with their own flags.
__attribute__((always_inline)) inline int32_t q8_saturate_round(float v, int32_t zp, int32_t lo, int32_t hi) {
  const float flo = float(lo - zp), fhi = float(hi - zp);
  const int32_t zq = zp < lo ? lo : (zp > hi ? hi : zp);  // what NaN gives
  float c = v < flo ? flo : v;  // NaN compares false and stays
  c = c > fhi ? fhi : c;
  c = c == c ? c : float(zq - zp);
  constexpr float kRound = 12582912.0f;  // 1.5 x 2^23
  return int32_t((c + kRound) - kRound) + zp;
}

// One row of a quantized product's output: out[j] = saturate(round(float(acc_j) x mult) + zp)
// (mult_j = mults[j] where mults is given)
// with acc_j = raw[j] + row_add - za x col_sums[j] (modulo 2^32: q8_apply with the row's terms
// and any bias in row_add), for j < n, as u8 or (out_signed) i8. The same integers and IEEE
// operations on every ISA.
struct Q8Requant {
  const int32_t* raw;
  const int32_t* col_sums;
  int32_t za;
  uint32_t row_add;
  float mult;
  const float* mults;  // per-j multipliers instead of mult, or null
  int32_t zp, lo, hi;
  void* out;
  bool out_signed;
  size_t n;
};
void q8_requantize(const Q8Requant& q);

// QuantizeLinear per tensor: out[i] = q8_saturate_round(x[i] / scale, zp, lo, hi) as u8 or
// (out_signed) i8, for i < n, on the active ISA's vectors (the same division and steps on each).
void q8_quantize(const float* x, size_t n, float scale, int32_t zp, int32_t lo, int32_t hi, void* out, bool out_signed);

// DynamicQuantizeLinear's range: *lo = min(0, the finite elements), *hi = max(0, them), -0 as +0.
void q8_range(const float* x, size_t n, float* lo, float* hi);

}  // namespace om::kernels
