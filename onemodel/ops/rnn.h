// Recurrent layers, one direction (docs/tracing.md, "Recurrent layers"): lstm_layer and
// gru_layer with PyTorch's gate order and weight layout.
//
//   lstm_layer: weight_ih [4H, I], weight_hh [4H, H], bias_ih / bias_hh [4H] (gates i, f, g, o)
//   gru_layer:  weight_ih [3H, I], weight_hh [3H, H], bias_ih / bias_hh [3H] (gates r, z, n;
//               n = tanh(x W_in + b_in + r * (h W_hn + b_hn)), i.e. ONNX linear_before_reset = 1)
//
// x is [T, B, I] ([B, T, I] with batch_first); initial states h0 / c0 are [B, H] (undefined
// tensors: zeros); biases may be undefined (none). The result holds the output sequence
// ([T, B, H] or [B, T, H]) and the final states [B, H] (c_n undefined for the GRU).
#pragma once
#include "onemodel/core/tensor.h"

namespace om {

struct RnnLayerOutput {
  Tensor output;  // every step's hidden state
  Tensor h_n;     // the final hidden state [B, H]
  Tensor c_n;     // LSTM only: the final cell state [B, H]
};

namespace ops {
Result<RnnLayerOutput> lstm_layer(const Tensor& x, const Tensor& weight_ih, const Tensor& weight_hh, const Tensor& bias_ih,
                                  const Tensor& bias_hh, const Tensor& h0, const Tensor& c0, bool batch_first);
Result<RnnLayerOutput> gru_layer(const Tensor& x, const Tensor& weight_ih, const Tensor& weight_hh, const Tensor& bias_ih,
                                 const Tensor& bias_hh, const Tensor& h0, bool batch_first);
}  // namespace ops

// The throwing forms (om::Error naming the call, the shapes and the fix).
RnnLayerOutput lstm_layer(const Tensor& x, const Tensor& weight_ih, const Tensor& weight_hh, const Tensor& bias_ih = {},
                          const Tensor& bias_hh = {}, const Tensor& h0 = {}, const Tensor& c0 = {}, bool batch_first = false);
RnnLayerOutput gru_layer(const Tensor& x, const Tensor& weight_ih, const Tensor& weight_hh, const Tensor& bias_ih = {},
                         const Tensor& bias_hh = {}, const Tensor& h0 = {}, bool batch_first = false);

}  // namespace om
