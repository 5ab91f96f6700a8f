// Backpropagation through time for lstm_layer / gru_layer (ops/rnn.cpp). Every record of a
// layer (the output sequence, h_n, c_n) carries the same saved steps; each runs the backward
// pass from its own output's gradient, and autograd sums the input gradients of the records.
#include <cstring>
#include <vector>

#include "onemodel/autograd/grad.h"
#include "onemodel/core/tensor_internal.h"
#include "onemodel/ops/ops.h"
#include "onemodel/ops/rnn_internal.h"

namespace om::autograd {
namespace {

using ops::rnn::gemm;

// gy: gradient of the output sequence (x's layout) or undefined; gh / gc: of h_n / c_n or undefined.
Status bptt(const BackwardRecord& r, const Tensor& gy, const Tensor& gh, const Tensor& gc, std::vector<Tensor>* gin) {
  const RnnLayerAttrs& a = r.attrs_as<RnnLayerAttrs>();
  const Tensor& x = r.inputs[0];
  ops::rnn::Layer L;
  L.gru = a.gru;
  L.T = a.batch_first ? x.shape()[1] : x.shape()[0];
  L.B = a.batch_first ? x.shape()[0] : x.shape()[1];
  L.I = x.shape()[2];
  L.H = a.hidden;
  const int64_t T = L.T, B = L.B, I = L.I, H = L.H, GH = L.gates() * H, S = L.saved_width();
  size_t next = 3;
  const size_t i_bih = a.has_bias ? next : 0;
  if (a.has_bias) next += 2;
  const size_t i_h0 = a.has_h0 ? next++ : 0;
  const size_t i_c0 = a.has_c0 ? next++ : 0;

  OM_ASSIGN_OR_RETURN(Tensor xt, ops::rnn::time_major(x, a.batch_first));
  OM_ASSIGN_OR_RETURN(Tensor wi, detail::dense(r.inputs[1]));
  OM_ASSIGN_OR_RETURN(Tensor wh, detail::dense(r.inputs[2]));
  Tensor h0, c0, gyt;
  if (a.has_h0) {
    OM_ASSIGN_OR_RETURN(h0, detail::dense(r.inputs[i_h0]));
  }
  if (a.has_c0) {
    OM_ASSIGN_OR_RETURN(c0, detail::dense(r.inputs[i_c0]));
  }
  if (gy.defined()) {
    OM_ASSIGN_OR_RETURN(gyt, ops::rnn::time_major(gy, a.batch_first));
  }
  const float* sv = detail::raw_as<const float>(r.saved);
  const float* xv = detail::raw_as<const float>(xt);
  const std::vector<float> zeros(size_t(B * H), 0.0f);

  std::vector<float> dh(size_t(B * H), 0.0f), dc(size_t(B * H), 0.0f), dhn(size_t(B * H));
  if (gh.defined()) {
    OM_ASSIGN_OR_RETURN(Tensor d, detail::dense(gh));
    std::memcpy(dh.data(), detail::raw_as<const float>(d), dh.size() * sizeof(float));
  }
  if (gc.defined()) {
    OM_ASSIGN_OR_RETURN(Tensor d, detail::dense(gc));
    std::memcpy(dc.data(), detail::raw_as<const float>(d), dc.size() * sizeof(float));
  }
  OM_ASSIGN_OR_RETURN(Tensor dx, detail::make_tensor({T, B, I}, DType::f32, true, "om::lstm_layer backward"));
  OM_ASSIGN_OR_RETURN(Tensor dwi, detail::make_tensor({GH, I}, DType::f32, true));
  OM_ASSIGN_OR_RETURN(Tensor dwh, detail::make_tensor({GH, H}, DType::f32, true));
  std::vector<float> dbi(size_t(GH), 0.0f), dbh(size_t(GH), 0.0f), da_ih(size_t(B * GH)), da_hh(size_t(B * GH));

  for (int64_t t = T; t-- > 0;) {
    const float* st = sv + t * B * S;
    if (gyt.defined()) {
      const float* g = detail::raw_as<const float>(gyt) + t * B * H;
      for (int64_t k = 0; k < B * H; ++k) dh[size_t(k)] += g[k];
    }
    const float* hprev_all = t > 0 ? nullptr : (h0.defined() ? detail::raw_as<const float>(h0) : zeros.data());
    for (int64_t b = 0; b < B; ++b) {
      const float* s = st + b * S;
      const float* hp = hprev_all ? hprev_all + b * H : sv + ((t - 1) * B + b) * S + L.h_col();
      float* ai = da_ih.data() + b * GH;
      float* ah = da_hh.data() + b * GH;
      float* dhb = dh.data() + b * H;
      float* dcb = dc.data() + b * H;
      if (!L.gru) {
        const float* cp = t > 0 ? sv + ((t - 1) * B + b) * S + 4 * H : (c0.defined() ? detail::raw_as<const float>(c0) + b * H : zeros.data());
        for (int64_t j = 0; j < H; ++j) {
          const float ig = s[j], fg = s[H + j], gg = s[2 * H + j], og = s[3 * H + j], c = s[4 * H + j];
          const float tc = kernels::tanh_f32(c);
          const float dov = dhb[j] * tc;
          const float dcc = dcb[j] + dhb[j] * og * (1.0f - tc * tc);
          ai[j] = dcc * gg * ig * (1.0f - ig);
          ai[H + j] = dcc * cp[j] * fg * (1.0f - fg);
          ai[2 * H + j] = dcc * ig * (1.0f - gg * gg);
          ai[3 * H + j] = dov * og * (1.0f - og);
          dcb[j] = dcc * fg;
        }
        std::memcpy(ah, ai, size_t(GH) * sizeof(float));
        std::memset(dhn.data() + b * H, 0, size_t(H) * sizeof(float));
      } else {
        for (int64_t j = 0; j < H; ++j) {
          const float rg = s[j], z = s[H + j], n = s[2 * H + j], hn = s[3 * H + j];
          const float dn = dhb[j] * (1.0f - z), dz = dhb[j] * (hp[j] - n);
          dhn[size_t(b * H + j)] = dhb[j] * z;
          const float dan = dn * (1.0f - n * n);
          const float dr = dan * hn;
          ai[j] = ah[j] = dr * rg * (1.0f - rg);
          ai[H + j] = ah[H + j] = dz * z * (1.0f - z);
          ai[2 * H + j] = dan;
          ah[2 * H + j] = dan * rg;
        }
      }
    }
    // Weight and bias gradients of this step, then the gradients flowing to x_t and h_{t-1}.
    gemm(size_t(GH), size_t(I), size_t(B), da_ih.data(), 1, GH, xv + t * B * I, I, 1, detail::raw_as<float>(dwi), size_t(I), true);
    if (t > 0)
      gemm(size_t(GH), size_t(H), size_t(B), da_hh.data(), 1, GH, sv + (t - 1) * B * S + L.h_col(), S, 1, detail::raw_as<float>(dwh),
           size_t(H), true);
    else
      gemm(size_t(GH), size_t(H), size_t(B), da_hh.data(), 1, GH, hprev_all, H, 1, detail::raw_as<float>(dwh), size_t(H), true);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t j = 0; j < GH; ++j) {
        dbi[size_t(j)] += da_ih[size_t(b * GH + j)];
        dbh[size_t(j)] += da_hh[size_t(b * GH + j)];
      }
    gemm(size_t(B), size_t(I), size_t(GH), da_ih.data(), GH, 1, detail::raw_as<const float>(wi), I, 1, detail::raw_as<float>(dx) + t * B * I,
         size_t(I), false);
    gemm(size_t(B), size_t(H), size_t(GH), da_hh.data(), GH, 1, detail::raw_as<const float>(wh), H, 1, dh.data(), size_t(H), false);
    for (int64_t k = 0; k < B * H; ++k) dh[size_t(k)] += dhn[size_t(k)];
  }

  auto from = [](const std::vector<float>& v, const Shape& shape) -> Result<Tensor> {
    OM_ASSIGN_OR_RETURN(Tensor t, detail::make_tensor(shape, DType::f32));
    if (!v.empty()) std::memcpy(detail::raw_as<float>(t), v.data(), v.size() * sizeof(float));
    return t;
  };
  if (r.inputs[0].requires_grad()) {
    if (a.batch_first) {
      OM_ASSIGN_OR_RETURN(Tensor p, ops::rnn::time_major(dx, true));  // the same axis swap back
      (*gin)[0] = p;
    } else {
      (*gin)[0] = dx;
    }
  }
  if (r.inputs[1].requires_grad()) (*gin)[1] = dwi;
  if (r.inputs[2].requires_grad()) (*gin)[2] = dwh;
  if (a.has_bias) {
    if (r.inputs[i_bih].requires_grad()) {
    OM_ASSIGN_OR_RETURN((*gin)[i_bih], from(dbi, {GH}));
  }
    if (r.inputs[i_bih + 1].requires_grad()) {
    OM_ASSIGN_OR_RETURN((*gin)[i_bih + 1], from(dbh, {GH}));
  }
  }
  if (a.has_h0 && r.inputs[i_h0].requires_grad()) {
    OM_ASSIGN_OR_RETURN((*gin)[i_h0], from(dh, {B, H}));
  }
  if (a.has_c0 && r.inputs[i_c0].requires_grad()) {
    OM_ASSIGN_OR_RETURN((*gin)[i_c0], from(dc, {B, H}));
  }
  return Status::ok();
}

}  // namespace

Status grad_LstmLayer(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) { return bptt(r, g, {}, {}, gin); }
Status grad_GruLayer(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) { return bptt(r, g, {}, {}, gin); }
// h_n or c_n: no gradient flows to the output-sequence input (it is there for the tracer).
Status grad_RnnState(const BackwardRecord& r, const Tensor& g, std::vector<Tensor>* gin) {
  const int64_t state = r.attrs_as<RnnLayerAttrs>().state;
  return bptt(r, {}, state == 1 ? g : Tensor(), state == 2 ? g : Tensor(), gin);
}

}  // namespace om::autograd
