// Internal to the recurrent layers (ops/rnn.cpp, autograd/grad_rnn.cpp): sizes, the forward
// pass that fills the saved steps, and a GEMM shorthand.
#pragma once
#include <cstddef>
#include <cstdint>

#include "onemodel/core/tensor.h"
#include "onemodel/kernels/kernels.h"

namespace om::ops::rnn {

// Saved per step and batch row: LSTM i, f, g, o, c, h (6H); GRU r, z, n, h W_hn + b_hn, h (5H).
struct Layer {
  bool gru = false;
  int64_t T = 0, B = 0, I = 0, H = 0;
  int64_t gates() const { return gru ? 3 : 4; }
  int64_t saved_width() const { return (gru ? 5 : 6) * H; }
  int64_t h_col() const { return (gru ? 4 : 5) * H; }
};

// C[M, N] (+)= A[M, K] B[K, N] with element strides (Fast mode; eager training).
void gemm(size_t M, size_t N, size_t K, const float* a, ptrdiff_t a_rs, ptrdiff_t a_cs, const float* b, ptrdiff_t b_rs, ptrdiff_t b_cs,
          float* c, size_t ldc, bool accumulate);
// x as a dense [T, B, I] tensor.
Result<Tensor> time_major(const Tensor& x, bool batch_first);
// x [T, B, I] dense; weights dense; optional pointers may be null. saved: [T, B, saved_width].
Status forward(const Layer& L, const float* x, const float* w_ih, const float* w_hh, const float* b_ih, const float* b_hh, const float* h0,
               const float* c0, float* saved);

}  // namespace om::ops::rnn
