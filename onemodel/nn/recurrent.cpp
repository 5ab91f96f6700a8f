#include "onemodel/nn/recurrent.h"

#include <cmath>
#include <string>

#include "onemodel/nn/init.h"
#include "onemodel/core/status.h"
#include "onemodel/core/tensor_internal.h"
#include "onemodel/ops/ops.h"

namespace om::nn {


RecurrentBase::RecurrentBase(const char* type, bool gru, int64_t input_size, int64_t hidden_size, RnnOptions options, Generator& gen)
    : Module(type), gru_(gru), input_(input_size), hidden_(hidden_size), opt_(options), gen_(&gen) {
  if (input_size <= 0 || hidden_size <= 0 || options.num_layers <= 0 || options.dropout < 0 || options.dropout >= 1)
    raise(Status::error(ErrorKind::InvalidArgument,
                        msg("om::nn::", type, ": input_size ", input_size, ", hidden_size ", hidden_size, " and num_layers ",
                            options.num_layers, " must be positive and dropout (", options.dropout, ") in [0, 1)")));
  // PyTorch's initialisation: every parameter U(-1/sqrt(H), 1/sqrt(H)).
  const double bound = 1.0 / std::sqrt(double(hidden_size));
  const int64_t G = gru ? 3 : 4, D = options.bidirectional ? 2 : 1;
  for (int64_t l = 0; l < options.num_layers; ++l)
    for (int64_t d = 0; d < D; ++d) {
      const std::string sfx = "_l" + std::to_string(l) + (d ? "_reverse" : "");
      const int64_t in = l == 0 ? input_size : D * hidden_size;
      params_.push_back(register_parameter("weight_ih" + sfx, uniform_init({G * hidden_size, in}, bound, gen)));
      params_.push_back(register_parameter("weight_hh" + sfx, uniform_init({G * hidden_size, hidden_size}, bound, gen)));
      if (options.bias) {
        params_.push_back(register_parameter("bias_ih" + sfx, uniform_init({G * hidden_size}, bound, gen)));
        params_.push_back(register_parameter("bias_hh" + sfx, uniform_init({G * hidden_size}, bound, gen)));
      } else {
        params_.push_back(Tensor());
        params_.push_back(Tensor());
      }
    }
}

RnnOutput RecurrentBase::run(const Tensor& x, const Tensor& h0, const Tensor& c0) {
  const int64_t D = opt_.bidirectional ? 2 : 1, L = opt_.num_layers;
  const std::string call = msg("om::nn::", gru_ ? "Gru" : "Lstm", "::forward (module ", display_name(), ")");
  if (!x.defined() || x.dim() != 3 || x.shape()[2] != input_)
    raise(Status::error(ErrorKind::ShapeMismatch, msg(call, ": input ", x.defined() ? x.to_string() : std::string("undefined"), " must be 3-D ",
                                                      opt_.batch_first ? "[batch, seq, " : "[seq, batch, ", input_, "]")));
  const int64_t B = opt_.batch_first ? x.shape()[0] : x.shape()[1];
  for (const Tensor* s : {&h0, &c0})
    if (s->defined() && s->shape() != Shape{L * D, B, hidden_})
      raise(Status::error(ErrorKind::ShapeMismatch, msg(call, ": initial state ", s->to_string(), " must be [", L * D, ", ", B, ", ", hidden_, "]")));
  const int64_t time_axis = opt_.batch_first ? 1 : 0;
  Tensor y = x;
  std::vector<Tensor> hs, cs;
  for (int64_t l = 0; l < L; ++l) {
    if (l > 0 && opt_.dropout > 0 && is_training()) {
      Tensor mask = rand(y.shape(), *gen_);
      float* m = detail::raw_as<float>(mask);
      const float keep = float(1.0 - opt_.dropout);
      for (int64_t i = 0; i < mask.numel(); ++i) m[i] = m[i] < keep ? 1.0f / keep : 0.0f;
      y = mul(y, mask);
    }
    std::vector<Tensor> outs;
    for (int64_t d = 0; d < D; ++d) {
      const size_t p = size_t((l * D + d) * 4);
      const Tensor hi = h0.defined() ? h0.select(0, l * D + d) : Tensor();
      const Tensor ci = c0.defined() ? c0.select(0, l * D + d) : Tensor();
      const Tensor in = d ? y.flip(time_axis) : y;
      RnnLayerOutput r = gru_ ? gru_layer(in, params_[p], params_[p + 1], params_[p + 2], params_[p + 3], hi, opt_.batch_first)
                              : lstm_layer(in, params_[p], params_[p + 1], params_[p + 2], params_[p + 3], hi, ci, opt_.batch_first);
      outs.push_back(d ? r.output.flip(time_axis) : r.output);
      hs.push_back(r.h_n.unsqueeze(0));
      if (!gru_) cs.push_back(r.c_n.unsqueeze(0));
    }
    y = D == 1 ? outs[0] : cat(outs, 2);
  }
  RnnOutput out;
  out.output = y;
  out.h_n = hs.size() == 1 ? hs[0] : cat(hs, 0);
  if (!gru_) out.c_n = cs.size() == 1 ? cs[0] : cat(cs, 0);
  return out;
}

}  // namespace om::nn
