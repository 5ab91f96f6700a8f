// Packing for the integer products (q8_gemm.h) and the scalar reference of the raw product
// (dispatch.cpp runs the active table's).
#include "onemodel/kernels/q8_gemm.h"

#include "onemodel/kernels/kernels_internal.h"
#include "onemodel/kernels/q8_depthwise.h"
#include "onemodel/kernels/q8_requantize.h"

namespace om::kernels {

namespace {
// The element at a[i] as A' (u8) or B' (s8): the top bit flips for an s8 A and a u8 B.
inline uint8_t a_prime(const void* a, bool a_signed, ptrdiff_t i) {
  const uint8_t v = static_cast<const uint8_t*>(a)[i];
  return a_signed ? uint8_t(v ^ 0x80u) : v;
}
inline int8_t b_prime(const void* b, bool b_signed, ptrdiff_t i) {
  const uint8_t v = static_cast<const uint8_t*>(b)[i];
  return int8_t(b_signed ? v : uint8_t(v ^ 0x80u));
}
}  // namespace

void q8_pack_a(const void* a, bool a_signed, ptrdiff_t rs, ptrdiff_t cs, size_t M, size_t K, uint8_t* dst, size_t lda,
               int32_t* row_sums) {
  const uint8_t flip = a_signed ? 0x80 : 0;
  for (size_t i = 0; i < M; ++i) {
    uint8_t* row = dst + i * lda;
    uint32_t sum = 0;
    if (cs == 1) {  // rows in place (the usual case): a loop that vectorises
      const uint8_t* src = static_cast<const uint8_t*>(a) + ptrdiff_t(i) * rs;
      for (size_t k = 0; k < K; ++k) {
        const uint8_t v = uint8_t(src[k] ^ flip);
        row[k] = v;
        sum += v;
      }
    } else {
      for (size_t k = 0; k < K; ++k) {
        row[k] = a_prime(a, a_signed, ptrdiff_t(i) * rs + ptrdiff_t(k) * cs);
        sum += row[k];
      }
    }
    for (size_t k = K; k < lda; ++k) row[k] = 0;
    if (row_sums) row_sums[i] = int32_t(sum);
  }
}

void q8_pack_b(const void* b, bool b_signed, ptrdiff_t rs, ptrdiff_t cs, size_t K, size_t N, int8_t* dst,
               int32_t* col_sums) {
  const size_t groups = q8_groups(K), ps = q8_panel_stride(K);
  for (size_t p = 0; p < q8_panels(N); ++p)
    for (size_t j = 0; j < kQ8Panel; ++j) {
      const size_t n = p * kQ8Panel + j;
      uint32_t sum = 0;
      for (size_t k = 0; k < groups * kQ8Group; ++k) {
        const int8_t v = (n < N && k < K) ? b_prime(b, b_signed, ptrdiff_t(k) * rs + ptrdiff_t(n) * cs) : int8_t(0);
        dst[p * ps + (k / kQ8Group) * kQ8Group * kQ8Panel + j * kQ8Group + k % kQ8Group] = v;
        sum += uint32_t(int32_t(v));
      }
      if (col_sums) col_sums[n] = int32_t(sum);
    }
}

// The reference: every element's sum in k order (any order gives the same integer).
void q8_dot_taps__scalar(const uint8_t* a, size_t lda, size_t rows, const int8_t* const* panels, size_t npanels,
                         const Q8Walk& w, int32_t* c, size_t ldc, int8_t*) {
  for (size_t r = 0; r < rows; ++r)
    for (size_t p = 0; p < npanels; ++p)
      for (size_t j = 0; j < kQ8Panel; ++j) {
        uint32_t acc = 0;
        for (size_t t = 0; t < w.runs; ++t)
          for (size_t q = 0; q < w.run; ++q) {
            const int8_t* bg = panels[p] + w.offsets[t] + ptrdiff_t(q) * w.stride + j * kQ8Group;
            const uint8_t* ag = a + r * lda + (t * w.run + q) * kQ8Group;
            for (size_t k = 0; k < kQ8Group; ++k) acc += uint32_t(int32_t(ag[k]) * int32_t(bg[k]));
          }
        c[r * ldc + p * kQ8Panel + j] = int32_t(acc);
      }
}

void q8_dot__scalar(const uint8_t* a, size_t lda, size_t rows, const int8_t* b, size_t ps, size_t groups,
                    size_t panels, int32_t* c, size_t ldc) {
  const Q8Walk w = q8_packed_walk(groups);
  for (size_t p = 0; p < panels; ++p) {
    const int8_t* panel = b + p * ps;
    q8_dot_taps__scalar(a, lda, rows, &panel, 1, w, c + p * kQ8Panel, ldc, nullptr);
  }
}

void q8_requantize__scalar(const Q8Requant& q) { q8::requantize(q); }

void q8_quantize__scalar(const float* x, size_t n, float scale, int32_t zp, int32_t lo, int32_t hi, void* out,
                         bool out_signed) {
  q8::quantize(x, n, scale, zp, lo, hi, out, out_signed);
}

void q8_range__scalar(const float* x, size_t n, float* lo, float* hi) { q8::range(x, n, lo, hi); }

void q8_interleave4__scalar(const uint8_t* const rows[4], uint8_t flip, size_t n, uint32_t* out, size_t panel_words,
                            int32_t* sums) {
  for (size_t c = 0; c < n; ++c) {
    uint32_t word = 0;
    int32_t s = 0;
    for (size_t t = 0; t < 4; ++t) {
      const uint8_t v = uint8_t(rows[t][c] ^ flip);
      word |= uint32_t(v) << (8 * t);
      s += int32_t(int8_t(v));
    }
    out[c / 16 * panel_words + c % 16] = word;
    sums[c] += s;
  }
}

void q8_pair_rows__scalar(const uint8_t* a, const uint8_t* b, size_t rows, size_t in_stride, size_t step, int32_t zero,
                          bool is_signed, size_t n, uint32_t* out, size_t out_stride) {
  q8::pair_rows(a, b, rows, in_stride, step, zero, is_signed, n, out, out_stride);
}

// The reference: each output's taps in order.
void q8_pair_dot__scalar(const uint32_t* const* src, const uint32_t* w, size_t taps, size_t n, size_t rows,
                         size_t src_stride, int32_t* acc) {
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < n; ++j) {
      uint32_t s = 0;
      for (size_t t = 0; t < taps; ++t) s += q8::pair_product(src[t][i * src_stride + j], w[t]);
      acc[i * n + j] = int32_t(s);
    }
}

}  // namespace om::kernels
