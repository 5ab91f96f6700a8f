// lstm_layer / gru_layer: forward against the double reference of the ONNX operators (with the
// gate order converted), and every gradient (backpropagation through time, through the output
// sequence and through the final states) against finite differences.
#include "autograd/gradcheck.h"
#include "runtime/rnn_reference.h"

using gc::gradcheck;
using Ts = std::vector<om::Tensor>;

namespace {

// PyTorch's gate rows in ONNX's order (LSTM i,f,g,o -> i,o,f,c; GRU r,z,n -> z,r,h).
std::vector<float> onnx_rows(const std::vector<float>& w, bool gru, int64_t H, int64_t cols) {
  const std::vector<int64_t> blocks = gru ? std::vector<int64_t>{1, 0, 2} : std::vector<int64_t>{0, 3, 1, 2};
  std::vector<float> out;
  for (int64_t b : blocks) out.insert(out.end(), w.begin() + b * H * cols, w.begin() + (b + 1) * H * cols);
  return out;
}

om::Tensor flat_all(const om::RnnLayerOutput& r) {
  Ts parts = {r.output.reshape({-1}), r.h_n.reshape({-1})};
  if (r.c_n.defined()) parts.push_back(r.c_n.reshape({-1}));
  return om::cat(parts, 0);
}

}  // namespace

TEST_CASE("lstm_layer and gru_layer agree with the ONNX reference (gate order converted)") {
  om::Generator g(5);
  const int64_t T = 4, B = 3, I = 5, H = 6;
  for (bool gru : {false, true})
    for (bool batch_first : {false, true})
      for (bool init : {false, true}) {
        CAPTURE(gru); CAPTURE(batch_first); CAPTURE(init);
        const int64_t G = gru ? 3 : 4;
        om::Tensor x = gc::random(batch_first ? om::Shape{B, T, I} : om::Shape{T, B, I}, g, -1, 1);
        om::Tensor wi = gc::random({G * H, I}, g, -0.5, 0.5), wh = gc::random({G * H, H}, g, -0.5, 0.5);
        om::Tensor bi = gc::random({G * H}, g, -0.5, 0.5), bh = gc::random({G * H}, g, -0.5, 0.5);
        om::Tensor h0 = init ? gc::random({B, H}, g, -1, 1) : om::Tensor(), c0 = init && !gru ? gc::random({B, H}, g, -1, 1) : om::Tensor();
        const om::RnnLayerOutput r = gru ? om::gru_layer(x, wi, wh, bi, bh, h0, batch_first) : om::lstm_layer(x, wi, wh, bi, bh, h0, c0, batch_first);
        rnnref::Case c;
        c.op = gru ? "GRU" : "LSTM";
        c.T = T; c.B = B; c.I = I; c.H = H;
        c.layout = batch_first ? 1 : 0;
        c.lbr = 1;
        c.x = x.to_vector<float>();
        c.W = onnx_rows(wi.to_vector<float>(), gru, H, I);
        c.R = onnx_rows(wh.to_vector<float>(), gru, H, H);
        c.Bias = onnx_rows(bi.to_vector<float>(), gru, H, 1);
        const std::vector<float> rb = onnx_rows(bh.to_vector<float>(), gru, H, 1);
        c.Bias.insert(c.Bias.end(), rb.begin(), rb.end());
        if (init) c.h0 = h0.to_vector<float>();
        if (init && !gru) c.c0 = c0.to_vector<float>();
        const rnnref::Result want = rnnref::run(c);
        // layout 1 puts Y as [B, T, 1, H]: the same order as a batch-first [B, T, H].
        const std::vector<float> y = r.output.to_vector<float>(), hn = r.h_n.to_vector<float>();
        REQUIRE(y.size() == want.Y.size());
        for (size_t i = 0; i < y.size(); ++i) CHECK(std::fabs(y[i] - want.Y[i]) < 1e-5);
        for (size_t i = 0; i < hn.size(); ++i) CHECK(std::fabs(hn[i] - want.Yh[i]) < 1e-5);
        if (!gru) {
          const std::vector<float> cn = r.c_n.to_vector<float>();
          for (size_t i = 0; i < cn.size(); ++i) CHECK(std::fabs(cn[i] - want.Yc[i]) < 1e-5);
        }
      }
}

TEST_CASE("gradients of lstm_layer and gru_layer (BPTT) against finite differences") {
  om::Generator g(6);
  const int64_t T = 3, B = 2, I = 3, H = 4;
  gc::Options opt;
  opt.eps = 5e-3;
  for (bool gru : {false, true})
    for (bool batch_first : {false, true}) {
      CAPTURE(gru); CAPTURE(batch_first);
      const int64_t G = gru ? 3 : 4;
      om::Tensor x = gc::random(batch_first ? om::Shape{B, T, I} : om::Shape{T, B, I}, g, -1, 1);
      om::Tensor wi = gc::random({G * H, I}, g, -0.6, 0.6), wh = gc::random({G * H, H}, g, -0.6, 0.6);
      om::Tensor bi = gc::random({G * H}, g, -0.5, 0.5), bh = gc::random({G * H}, g, -0.5, 0.5);
      om::Tensor h0 = gc::random({B, H}, g, -1, 1), c0 = gc::random({B, H}, g, -1, 1);
      if (gru) {
        CHECK(gradcheck([&](const Ts& t) { return flat_all(om::gru_layer(t[0], t[1], t[2], t[3], t[4], t[5], batch_first)); },
                        {x, wi, wh, bi, bh, h0}, opt) == 0);
        // Only the output sequence, and only the final state; no bias, no initial state.
        CHECK(gradcheck([&](const Ts& t) { return om::gru_layer(t[0], t[1], t[2], {}, {}, {}, batch_first).output; }, {x, wi, wh}, opt) == 0);
        CHECK(gradcheck([&](const Ts& t) { return om::gru_layer(t[0], t[1], t[2], t[3], t[4], {}, batch_first).h_n; }, {x, wi, wh, bi, bh},
                        opt) == 0);
      } else {
        CHECK(gradcheck([&](const Ts& t) { return flat_all(om::lstm_layer(t[0], t[1], t[2], t[3], t[4], t[5], t[6], batch_first)); },
                        {x, wi, wh, bi, bh, h0, c0}, opt) == 0);
        CHECK(gradcheck([&](const Ts& t) { return om::lstm_layer(t[0], t[1], t[2], {}, {}, {}, {}, batch_first).output; }, {x, wi, wh}, opt) == 0);
        CHECK(gradcheck([&](const Ts& t) { return om::lstm_layer(t[0], t[1], t[2], t[3], t[4], t[5], t[6], batch_first).c_n; },
                        {x, wi, wh, bi, bh, h0, c0}, opt) == 0);
      }
    }
}

TEST_CASE("Lstm and Gru modules: PyTorch names, stacks, bidirectional, gradients reach every parameter") {
  om::nn::RnnOptions o;
  o.num_layers = 2;
  o.bidirectional = true;
  o.dropout = 0.5;
  om::nn::Lstm lstm(3, 4, o);
  std::vector<std::string> names;
  for (const auto& p : lstm.named_parameters()) names.push_back(p.first);
  const std::vector<std::string> want = {"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_ih_l0_reverse", "weight_hh_l0_reverse",
                                         "bias_ih_l0_reverse", "bias_hh_l0_reverse", "weight_ih_l1", "weight_hh_l1", "bias_ih_l1", "bias_hh_l1",
                                         "weight_ih_l1_reverse", "weight_hh_l1_reverse", "bias_ih_l1_reverse", "bias_hh_l1_reverse"};
  CHECK(names == want);
  CHECK(lstm.named_parameters()[8].second.shape() == om::Shape{16, 8});
  om::Generator g(7);
  om::Tensor x = gc::random({5, 2, 3}, g, -1, 1);
  om::nn::RnnOutput r = lstm.run(x);
  CHECK(r.output.shape() == om::Shape{5, 2, 8});
  CHECK(r.h_n.shape() == om::Shape{4, 2, 4});
  CHECK(r.c_n.shape() == om::Shape{4, 2, 4});
  om::add(om::sum(r.output), om::sum(r.c_n)).backward();
  for (const auto& p : lstm.named_parameters()) CHECK_MESSAGE(p.second.grad().defined(), p.first);
  // Evaluation mode: no dropout, the reverse direction's last output step equals its final state.
  lstm.eval();
  r = lstm.run(x);
  const std::vector<float> first = r.output.select(0, 0).slice(1, 4, 8).contiguous().to_vector<float>();
  const std::vector<float> hrev = r.h_n.select(0, 3).to_vector<float>();
  REQUIRE(first.size() == hrev.size());
  for (size_t i = 0; i < first.size(); ++i) CHECK(first[i] == hrev[i]);

  om::nn::RnnOptions og;
  og.batch_first = true;
  om::nn::Gru gru(3, 5, og);
  CHECK(gru.named_parameters().size() == 4);
  om::Tensor y = gru(gc::random({2, 6, 3}, g, -1, 1));
  CHECK(y.shape() == om::Shape{2, 6, 5});
}
