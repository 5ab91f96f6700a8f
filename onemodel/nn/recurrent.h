// Recurrent modules: Lstm and Gru, multi-layer stacks with PyTorch's parameter names and layout
// (weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}; `_reverse` for the backward
// direction), dropout between layers in training mode, and bidirectional = true as the
// composition of a forward layer and a layer run on the time-reversed sequence. Each layer is one
// om::lstm_layer / om::gru_layer call, so a trace holds one LSTM / GRU node per layer and
// direction (docs/tracing.md, "Recurrent layers").
#pragma once
#include "onemodel/nn/module.h"
#include "onemodel/ops/rnn.h"

namespace om::nn {

struct RnnOptions {
  int64_t num_layers = 1;
  bool bias = true;
  bool batch_first = false;
  double dropout = 0.0;  // between layers, training mode only
  bool bidirectional = false;
};

struct RnnOutput {
  Tensor output;  // [T, B, D*H] ([B, T, D*H] with batch_first)
  Tensor h_n;     // [num_layers*D, B, H]
  Tensor c_n;     // Lstm only: [num_layers*D, B, H]
};

class RecurrentBase : public Module {
 public:
  // forward() returns the output sequence; run() also the final states. h0 / c0:
  // [num_layers*D, B, H] or undefined (zeros).
  Tensor forward(const Tensor& x) override { return run(x).output; }
  RnnOutput run(const Tensor& x, const Tensor& h0 = {}, const Tensor& c0 = {});
  int64_t hidden_size() const { return hidden_; }

 protected:
  RecurrentBase(const char* type, bool gru, int64_t input_size, int64_t hidden_size, RnnOptions options, Generator& gen);

 private:
  bool gru_;
  int64_t input_, hidden_;
  RnnOptions opt_;
  Generator* gen_;
  std::vector<Tensor> params_;  // per layer and direction: w_ih, w_hh, b_ih, b_hh
};

class Lstm : public RecurrentBase {
 public:
  Lstm(int64_t input_size, int64_t hidden_size, RnnOptions options = {}, Generator& gen = default_generator())
      : RecurrentBase("Lstm", false, input_size, hidden_size, options, gen) {}
};

class Gru : public RecurrentBase {
 public:
  Gru(int64_t input_size, int64_t hidden_size, RnnOptions options = {}, Generator& gen = default_generator())
      : RecurrentBase("Gru", true, input_size, hidden_size, options, gen) {}
};

}  // namespace om::nn
