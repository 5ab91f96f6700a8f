// Transformer modules: PyTorch state-dict names and layouts, train()/eval() switching Dropout,
// MultiheadAttention against the attention written out, encoder layers that train.
#include <doctest/doctest.h>

#include <cmath>

#include "onemodel/onemodel.h"

namespace {
double max_diff(const om::Tensor& a, const om::Tensor& b) {
  const auto x = a.to_vector<float>(), y = b.to_vector<float>();
  REQUIRE(x.size() == y.size());
  double m = 0;
  for (size_t i = 0; i < x.size(); ++i) m = std::max(m, double(std::fabs(x[i] - y[i])));
  return m;
}
}  // namespace

TEST_CASE("TransformerEncoder has PyTorch's state-dict names and layouts") {
  om::Generator gen(1);
  om::nn::EncoderLayerOptions o;
  o.dim_feedforward = 32;
  auto enc = std::make_shared<om::nn::TransformerEncoder>(
      [&] { return std::make_shared<om::nn::TransformerEncoderLayer>(16, 4, o, gen); }, 2);
  const om::nn::StateDict sd = enc->state_dict();
  const std::vector<std::string> want = {
      "layers.0.self_attn.in_proj_weight", "layers.0.self_attn.in_proj_bias", "layers.0.self_attn.out_proj.weight",
      "layers.0.self_attn.out_proj.bias", "layers.0.linear1.weight", "layers.0.linear1.bias", "layers.0.linear2.weight",
      "layers.0.linear2.bias", "layers.0.norm1.weight", "layers.0.norm1.bias", "layers.0.norm2.weight", "layers.0.norm2.bias"};
  const std::vector<std::string> names = sd.names();
  REQUIRE(names.size() == 24);
  for (size_t i = 0; i < want.size(); ++i) CHECK(names[i] == want[i]);
  CHECK(names[12] == "layers.1.self_attn.in_proj_weight");
  CHECK(sd.at("layers.0.self_attn.in_proj_weight").shape() == om::Shape{48, 16});
  CHECK(sd.at("layers.0.self_attn.in_proj_bias").shape() == om::Shape{48});
  CHECK(sd.at("layers.0.linear1.weight").shape() == om::Shape{32, 16});
  CHECK(sd.at("layers.1.norm2.bias").shape() == om::Shape{16});
  om::nn::Embedding emb(10, 4, 0, gen);
  CHECK(emb.state_dict().names() == std::vector<std::string>{"weight"});
  CHECK(emb.weight.to_vector<float>()[0] == 0.0f);
}

TEST_CASE("train() and eval() switch Dropout inside an encoder layer") {
  om::Generator gen(2);
  om::nn::EncoderLayerOptions o;
  o.dim_feedforward = 32;
  o.dropout = 0.3;
  o.batch_first = true;
  auto layer = std::make_shared<om::nn::TransformerEncoderLayer>(8, 2, o, gen);
  om::Tensor x = om::randn({2, 5, 8}, gen);
  layer->eval();
  om::Tensor a = layer->forward(x), b = layer->forward(x);
  CHECK(max_diff(a, b) == 0.0);
  layer->train();
  om::Tensor c = layer->forward(x);
  CHECK(max_diff(a, c) > 1e-3);
}

TEST_CASE("MultiheadAttention equals the attention written out, with both masks, batch_first or not") {
  om::Generator gen(3);
  const int64_t B = 2, L = 4, E = 8, H = 2;
  for (bool batch_first : {false, true}) {
    om::nn::MultiheadAttention mha(E, H, 0.0, true, batch_first, gen);
    {
      om::NoGradGuard ng;
      mha.in_proj_bias.copy_from(om::randn({3 * E}, gen));
    }
    om::Tensor x = om::randn({B, L, E}, gen);
    om::Tensor am = om::randn({L, L}, gen);
    om::Tensor kpm = om::from_vector<uint8_t>({0, 0, 0, 1, 0, 1, 0, 0}, {B, L}).to(om::DType::boolean);
    om::nn::AttentionMasks masks{am, kpm, false};
    om::Tensor in = batch_first ? x : x.transpose(0, 1);
    om::Tensor got = mha.forward(in, in, in, masks);
    if (!batch_first) got = got.transpose(0, 1);
    // Written out.
    const om::Tensor& W = mha.in_proj_weight;
    const om::Tensor& bias = mha.in_proj_bias;
    auto proj = [&](int p) {
      return om::linear(x, W.slice(0, p * E, (p + 1) * E), bias.slice(0, p * E, (p + 1) * E)).reshape({B, L, H, E / H}).permute({0, 2, 1, 3});
    };
    om::Tensor s = om::mul(om::matmul(proj(0), proj(1).transpose(-1, -2)), 1.0 / std::sqrt(double(E / H)));
    s = om::add(s, am);
    s = om::add(s, om::mul(kpm.to(om::DType::f32), -1e30).reshape({B, 1, 1, L}));
    om::Tensor o = om::matmul(om::softmax(s, -1), proj(2)).permute({0, 2, 1, 3}).reshape({B, L, E});
    om::Tensor want = om::linear(o, mha.out_proj->weight, mha.out_proj->bias);
    CHECK(max_diff(got, want) < 1e-5);
  }
}

TEST_CASE("a pre-norm gelu encoder trains: the loss falls") {
  om::Generator gen(4);
  om::nn::EncoderLayerOptions o;
  o.dim_feedforward = 16;
  o.dropout = 0.0;
  o.batch_first = true;
  o.norm_first = true;
  o.activation = om::nn::Activation::Gelu;
  auto layer = std::make_shared<om::nn::TransformerEncoderLayer>(8, 2, o, gen);
  om::optim::AdamOptions ao;
  ao.lr(1e-2);
  om::optim::Adam opt(layer->parameters(), ao);
  om::Tensor x = om::randn({4, 6, 8}, gen), target = om::randn({4, 6, 8}, gen);
  float first = 0, last = 0;
  for (int step = 0; step < 30; ++step) {
    om::StoreScope scope;
    opt.zero_grad();
    om::Tensor loss = om::mse_loss(layer->forward(x, {om::Tensor(), om::Tensor(), true}), target);
    loss.backward();
    opt.step();
    (step == 0 ? first : last) = loss.item<float>();
  }
  CHECK(last < 0.8f * first);
}
