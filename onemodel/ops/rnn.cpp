// lstm_layer and gru_layer (ops/rnn.h). One forward computes the output sequence and the final
// states; it writes three kinds of records so that autograd and the tracer each see one
// operator per tensor (docs/tracing.md, "Recurrent layers"):
//   - LstmLayer / GruLayer: inputs (x, w_ih, w_hh[, b_ih, b_hh][, h0][, c0]) -> the output sequence;
//   - RnnState: the same inputs plus that output sequence -> h_n (state = 1) or c_n (state = 2).
// The saved tensor (shared by the records, untracked) holds every step's gate activations and
// states, so the gradients (autograd/grad_rnn.cpp) run backpropagation through time without
// recomputing. The tracer lowers the layer record to one LSTM / GRU node and each RnnState record
// to a Squeeze of that node's Y_h / Y_c output.
#include "onemodel/ops/rnn.h"

#include <cstring>

#include "onemodel/core/tensor_internal.h"
#include "onemodel/ops/record.h"
#include "onemodel/ops/rnn_internal.h"
#include "onemodel/ops/ops.h"

namespace om {
namespace ops {
namespace rnn {

void gemm(size_t M, size_t N, size_t K, const float* a, ptrdiff_t a_rs, ptrdiff_t a_cs, const float* b, ptrdiff_t b_rs, ptrdiff_t b_cs,
          float* c, size_t ldc, bool accumulate) {
  if (M == 0 || N == 0) return;
  if (K == 0) {
    if (!accumulate)
      for (size_t i = 0; i < M; ++i) std::memset(c + i * ldc, 0, N * sizeof(float));
    return;
  }
  const kernels::GemmArgs g{M, N, K, a, a_rs, a_cs, b, b_rs, b_cs, c, ldc, accumulate};  // bias and activation: none
  kernels::f32_gemm(g, ArithmeticMode::Fast);
}

Result<Tensor> time_major(const Tensor& x, bool batch_first) {
  if (!batch_first) return detail::dense(x);
  const Shape& s = x.shape();
  const Shape& st = x.strides();
  return detail::dense(detail::make_view(x, {s[1], s[0], s[2]}, {st[1], st[0], st[2]}, x.storage_offset()));
}

Status forward(const Layer& L, const float* x, const float* w_ih, const float* w_hh, const float* b_ih, const float* b_hh, const float* h0,
               const float* c0, float* saved) {
  const int64_t T = L.T, B = L.B, I = L.I, H = L.H, G = L.gates(), S = L.saved_width();
  std::vector<float> gates(size_t(B * G * H)), hh(size_t(L.gru ? B * G * H : 0)), h(size_t(B * H), 0.0f), c(size_t(B * H), 0.0f);
  if (h0) std::memcpy(h.data(), h0, h.size() * sizeof(float));
  if (c0 && !L.gru) std::memcpy(c.data(), c0, c.size() * sizeof(float));
  for (int64_t t = 0; t < T; ++t) {
    float* sv = saved + t * B * S;
    // x_t W_ih^T (+ b_ih) and h W_hh^T (+ b_hh); the GRU keeps the hidden part apart for n.
    gemm(size_t(B), size_t(G * H), size_t(I), x + t * B * I, I, 1, w_ih, 1, I, gates.data(), size_t(G * H), false);
    float* hp = L.gru ? hh.data() : gates.data();
    gemm(size_t(B), size_t(G * H), size_t(H), h.data(), H, 1, w_hh, 1, H, hp, size_t(G * H), !L.gru);
    for (int64_t b = 0; b < B; ++b) {
      float* g = gates.data() + b * G * H;
      float* s = sv + b * S;
      float* hb = h.data() + b * H;
      if (!L.gru) {  // i, f, g, o
        for (int64_t j = 0; j < G * H; ++j) g[j] += (b_ih ? b_ih[j] : 0.0f) + (b_hh ? b_hh[j] : 0.0f);
        kernels::f32_unary(kernels::UnaryOp::Sigmoid, g, s, size_t(2 * H));
        kernels::f32_unary(kernels::UnaryOp::Tanh, g + 2 * H, s + 2 * H, size_t(H));
        kernels::f32_unary(kernels::UnaryOp::Sigmoid, g + 3 * H, s + 3 * H, size_t(H));
        float* cb = c.data() + b * H;
        for (int64_t j = 0; j < H; ++j) cb[j] = s[H + j] * cb[j] + s[j] * s[2 * H + j];
        std::memcpy(s + 4 * H, cb, size_t(H) * sizeof(float));
        kernels::f32_unary(kernels::UnaryOp::Tanh, cb, hb, size_t(H));
        for (int64_t j = 0; j < H; ++j) hb[j] *= s[3 * H + j];
        std::memcpy(s + 5 * H, hb, size_t(H) * sizeof(float));
      } else {  // r, z, n; saved r, z, n, (h W_hn + b_hn), h
        const float* q = hh.data() + b * G * H;
        for (int64_t j = 0; j < 2 * H; ++j) g[j] += (b_ih ? b_ih[j] : 0.0f) + q[j] + (b_hh ? b_hh[j] : 0.0f);
        kernels::f32_unary(kernels::UnaryOp::Sigmoid, g, s, size_t(2 * H));
        for (int64_t j = 0; j < H; ++j) {
          const float hn = q[2 * H + j] + (b_hh ? b_hh[2 * H + j] : 0.0f);
          s[3 * H + j] = hn;
          s[2 * H + j] = g[2 * H + j] + (b_ih ? b_ih[2 * H + j] : 0.0f) + s[j] * hn;
        }
        kernels::f32_unary(kernels::UnaryOp::Tanh, s + 2 * H, s + 2 * H, size_t(H));
        for (int64_t j = 0; j < H; ++j) hb[j] = (1.0f - s[H + j]) * s[2 * H + j] + s[H + j] * hb[j];
        std::memcpy(s + 4 * H, hb, size_t(H) * sizeof(float));
      }
    }
  }
  return Status::ok();
}

}  // namespace rnn

namespace {

Status check_f32(const Tensor& t, const char* call, const char* what) {
  OM_TRY(check_input(t, call));
  if (t.dtype() != DType::f32) return Status::error(ErrorKind::DTypeMismatch, msg(call, ": ", what, " must be f32, got ", t.to_string()));
  return Status::ok();
}

Status check_shape_is(const Tensor& t, const Shape& want, const char* call, const char* what) {
  if (t.shape() != want)
    return Status::error(ErrorKind::ShapeMismatch, msg(call, ": ", what, " must be ", shape_str(want), ", got ", shape_str(t.shape())));
  return Status::ok();
}

Result<RnnLayerOutput> layer(bool gru, const Tensor& x, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh,
                             const Tensor& h0, const Tensor& c0, bool batch_first) {
  const char* call = gru ? "om::gru_layer" : "om::lstm_layer";
  OM_TRY(check_f32(x, call, "x"));
  OM_TRY(check_f32(w_ih, call, "weight_ih"));
  OM_TRY(check_f32(w_hh, call, "weight_hh"));
  if (x.dim() != 3)
    return Status::error(ErrorKind::ShapeMismatch, msg(call, ": x must be 3-D ", batch_first ? "[batch, seq, input]" : "[seq, batch, input]",
                                                       ", got ", shape_str(x.shape())));
  rnn::Layer L;
  L.gru = gru;
  L.T = batch_first ? x.shape()[1] : x.shape()[0];
  L.B = batch_first ? x.shape()[0] : x.shape()[1];
  L.I = x.shape()[2];
  const int64_t G = L.gates();
  if (w_hh.dim() != 2 || w_hh.shape()[0] % G != 0 || w_hh.shape()[1] * G != w_hh.shape()[0])
    return Status::error(ErrorKind::ShapeMismatch, msg(call, ": weight_hh must be [", G, "*hidden, hidden], got ", shape_str(w_hh.shape())));
  L.H = w_hh.shape()[1];
  const int64_t H = L.H;
  OM_TRY(check_shape_is(w_ih, {G * H, L.I}, call, "weight_ih"));
  if (b_ih.defined() != b_hh.defined())
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": give both bias_ih and bias_hh, or neither"));
  if (b_ih.defined()) {
    OM_TRY(check_f32(b_ih, call, "bias_ih"));
    OM_TRY(check_f32(b_hh, call, "bias_hh"));
    OM_TRY(check_shape_is(b_ih, {G * H}, call, "bias_ih"));
    OM_TRY(check_shape_is(b_hh, {G * H}, call, "bias_hh"));
  }
  if (h0.defined()) {
    OM_TRY(check_f32(h0, call, "h0"));
    OM_TRY(check_shape_is(h0, {L.B, H}, call, "h0"));
  }
  if (c0.defined()) {
    OM_TRY(check_f32(c0, call, "c0"));
    OM_TRY(check_shape_is(c0, {L.B, H}, call, "c0"));
  }
  int64_t n = 0;
  if (!checked_mul(L.T, L.B, &n) || !checked_mul(n, L.saved_width(), &n))
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": sizes ", shape_str(x.shape()), " with hidden ", H, " are too large"));

  OM_ASSIGN_OR_RETURN(Tensor xt, rnn::time_major(x, batch_first));
  OM_ASSIGN_OR_RETURN(Tensor wi, detail::dense(w_ih));
  OM_ASSIGN_OR_RETURN(Tensor wh, detail::dense(w_hh));
  Tensor bi, bh, hi, ci;
  if (b_ih.defined()) {
    OM_ASSIGN_OR_RETURN(bi, detail::dense(b_ih));
    OM_ASSIGN_OR_RETURN(bh, detail::dense(b_hh));
  }
  if (h0.defined()) {
    OM_ASSIGN_OR_RETURN(hi, detail::dense(h0));
  }
  if (c0.defined()) {
    OM_ASSIGN_OR_RETURN(ci, detail::dense(c0));
  }
  auto ptr = [](const Tensor& t) { return t.defined() ? detail::raw_as<const float>(t) : nullptr; };
  OM_ASSIGN_OR_RETURN(Tensor saved, detail::make_tensor({L.T, L.B, L.saved_width()}, DType::f32, false, call));
  OM_TRY(rnn::forward(L, ptr(xt), ptr(wi), ptr(wh), ptr(bi), ptr(bh), ptr(hi), ptr(ci), detail::raw_as<float>(saved)));

  // Outputs: the h column of the saved steps, in x's layout; the last step's states (or the
  // initial ones for an empty sequence).
  const int64_t S = L.saved_width();
  const float* sv = detail::raw_as<const float>(saved);
  RnnLayerOutput out;
  OM_ASSIGN_OR_RETURN(out.output, detail::make_tensor(batch_first ? Shape{L.B, L.T, H} : Shape{L.T, L.B, H}, DType::f32, false, call));
  float* y = detail::raw_as<float>(out.output);
  for (int64_t t = 0; t < L.T; ++t)
    for (int64_t b = 0; b < L.B; ++b)
      std::memcpy(y + (batch_first ? (b * L.T + t) : (t * L.B + b)) * H, sv + (t * L.B + b) * S + L.h_col(), size_t(H) * sizeof(float));
  OM_ASSIGN_OR_RETURN(out.h_n, detail::make_tensor({L.B, H}, DType::f32, true, call));
  if (!gru) {
    OM_ASSIGN_OR_RETURN(out.c_n, detail::make_tensor({L.B, H}, DType::f32, true, call));
  }
  for (int64_t b = 0; b < L.B; ++b) {
    const float* last = L.T > 0 ? sv + ((L.T - 1) * L.B + b) * S : nullptr;
    float* hn = detail::raw_as<float>(out.h_n) + b * H;
    if (last) std::memcpy(hn, last + L.h_col(), size_t(H) * sizeof(float));
    else if (hi.defined()) std::memcpy(hn, ptr(hi) + b * H, size_t(H) * sizeof(float));
    if (!gru) {
      float* cn = detail::raw_as<float>(out.c_n) + b * H;
      if (last) std::memcpy(cn, last + 4 * H, size_t(H) * sizeof(float));
      else if (ci.defined()) std::memcpy(cn, ptr(ci) + b * H, size_t(H) * sizeof(float));
    }
  }

  RnnLayerAttrs a;
  a.gru = gru;
  a.hidden = H;
  a.batch_first = batch_first;
  a.has_bias = b_ih.defined();
  a.has_h0 = h0.defined();
  a.has_c0 = !gru && c0.defined();
  std::vector<Tensor> ins = {x, w_ih, w_hh};
  if (a.has_bias) {
    ins.push_back(b_ih);
    ins.push_back(b_hh);
  }
  if (a.has_h0) ins.push_back(h0);
  if (a.has_c0) ins.push_back(c0);
  Tensor keep = detail::make_view(saved, saved.shape(), saved.strides(), 0);
  if (gru) OM_TRY(record<OpId::GruLayer>(ins, out.output, a, keep));
  else OM_TRY(record<OpId::LstmLayer>(ins, out.output, a, keep));
  ins.push_back(out.output);
  RnnLayerAttrs ah = a;
  ah.state = 1;
  OM_TRY(record<OpId::RnnState>(ins, out.h_n, ah, keep));
  if (!gru) {
    RnnLayerAttrs ac = a;
    ac.state = 2;
    OM_TRY(record<OpId::RnnState>(ins, out.c_n, ac, keep));
  }
  return out;
}

}  // namespace

Result<RnnLayerOutput> lstm_layer(const Tensor& x, const Tensor& weight_ih, const Tensor& weight_hh, const Tensor& bias_ih,
                                  const Tensor& bias_hh, const Tensor& h0, const Tensor& c0, bool batch_first) {
  return layer(false, x, weight_ih, weight_hh, bias_ih, bias_hh, h0, c0, batch_first);
}
Result<RnnLayerOutput> gru_layer(const Tensor& x, const Tensor& weight_ih, const Tensor& weight_hh, const Tensor& bias_ih,
                                 const Tensor& bias_hh, const Tensor& h0, bool batch_first) {
  return layer(true, x, weight_ih, weight_hh, bias_ih, bias_hh, h0, Tensor(), batch_first);
}

}  // namespace ops

RnnLayerOutput lstm_layer(const Tensor& x, const Tensor& weight_ih, const Tensor& weight_hh, const Tensor& bias_ih, const Tensor& bias_hh,
                          const Tensor& h0, const Tensor& c0, bool batch_first) {
  return unwrap(ops::lstm_layer(x, weight_ih, weight_hh, bias_ih, bias_hh, h0, c0, batch_first));
}
RnnLayerOutput gru_layer(const Tensor& x, const Tensor& weight_ih, const Tensor& weight_hh, const Tensor& bias_ih, const Tensor& bias_hh,
                         const Tensor& h0, bool batch_first) {
  return unwrap(ops::gru_layer(x, weight_ih, weight_hh, bias_ih, bias_hh, h0, batch_first));
}

}  // namespace om
