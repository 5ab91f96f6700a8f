#include "onemodel/nn/transformer.h"

#include <cmath>

#include "onemodel/core/grad_mode.h"
#include "onemodel/nn/init.h"
#include "onemodel/core/status.h"
#include "onemodel/core/tensor_internal.h"

namespace om::nn {

namespace {

// A bool mask (true = not allowed) as an additive f32 one; an f32 mask as it is.
Tensor additive(const Tensor& m, const char* what, const Module& owner) {
  if (m.dtype() == DType::f32) return m;
  if (m.dtype() == DType::boolean) return mul(m.to(DType::f32), -1e30);
  raise(Status::error(ErrorKind::DTypeMismatch, msg("om::nn::MultiheadAttention::forward (module ", owner.display_name(), "): ", what,
                                                    " must be f32 (added) or bool (true = not allowed), got ", m.to_string())));
}
}  // namespace

// ---- LayerNorm ----

LayerNorm::LayerNorm(const Shape& normalized_shape, double eps, bool elementwise_affine)
    : Module("LayerNorm"), normalized_shape_(normalized_shape), eps_(eps) {
  if (normalized_shape.empty())
    raise(Status::error(ErrorKind::InvalidArgument, "om::nn::LayerNorm: normalized_shape must name at least one axis"));
  if (elementwise_affine) {
    weight = register_parameter("weight", ones(normalized_shape));
    bias = register_parameter("bias", zeros(normalized_shape));
  }
}

Tensor LayerNorm::forward(const Tensor& x) { return layer_norm(x, normalized_shape_, weight, bias, eps_); }

// ---- Embedding ----

Embedding::Embedding(int64_t num_embeddings, int64_t embedding_dim, int64_t padding_idx, Generator& gen)
    : Module("Embedding"), padding_idx_(padding_idx) {
  if (num_embeddings <= 0 || embedding_dim <= 0)
    raise(Status::error(ErrorKind::InvalidArgument, msg("om::nn::Embedding: num_embeddings ", num_embeddings, " and embedding_dim ",
                                                        embedding_dim, " must be positive")));
  if (padding_idx != kNoPadding && (padding_idx < -num_embeddings || padding_idx >= num_embeddings))
    raise(Status::error(ErrorKind::InvalidArgument, msg("om::nn::Embedding: padding_idx ", padding_idx, " is outside the table of ",
                                                        num_embeddings, " rows")));
  Tensor w = empty({num_embeddings, embedding_dim});
  float* p = detail::raw_as<float>(w);
  for (int64_t i = 0; i < w.numel(); ++i) p[i] = gen.normal();
  if (padding_idx != kNoPadding) {
    const int64_t row = padding_idx < 0 ? padding_idx + num_embeddings : padding_idx;
    for (int64_t j = 0; j < embedding_dim; ++j) p[row * embedding_dim + j] = 0.0f;
  }
  weight = register_parameter("weight", w);
}

Tensor Embedding::forward(const Tensor& indices) { return embedding(indices, weight, padding_idx_); }

// ---- Dropout ----

Dropout::Dropout(double p, uint64_t seed) : Module("Dropout"), p_(p), gen_(seed) {
  if (!(p >= 0 && p < 1)) raise(Status::error(ErrorKind::InvalidArgument, msg("om::nn::Dropout: p ", p, " must be in [0, 1)")));
  register_generator("generator", gen_);
}

Tensor Dropout::forward(const Tensor& x) { return dropout(x, p_, is_training(), gen_); }

// ---- MultiheadAttention ----

MultiheadAttention::MultiheadAttention(int64_t embed_dim, int64_t num_heads, double dropout_p, bool bias, bool batch_first, Generator& gen)
    : Module("MultiheadAttention"), embed_dim_(embed_dim), num_heads_(num_heads), dropout_(dropout_p), batch_first_(batch_first),
      gen_(0x5eed + uint64_t(embed_dim)) {
  if (embed_dim <= 0 || num_heads <= 0 || embed_dim % num_heads != 0)
    raise(Status::error(ErrorKind::InvalidArgument, msg("om::nn::MultiheadAttention: embed_dim ", embed_dim, " must be a positive multiple of num_heads ",
                                                        num_heads)));
  if (!(dropout_p >= 0 && dropout_p < 1))
    raise(Status::error(ErrorKind::InvalidArgument, msg("om::nn::MultiheadAttention: dropout ", dropout_p, " must be in [0, 1)")));
  // xavier_uniform on [3E, E]: bound sqrt(6 / (fan_in + fan_out)).
  register_generator("generator", gen_);  // its attention dropout's mask
  in_proj_weight = register_parameter("in_proj_weight", uniform_init({3 * embed_dim, embed_dim}, std::sqrt(6.0 / double(4 * embed_dim)), gen));
  if (bias) in_proj_bias = register_parameter("in_proj_bias", zeros({3 * embed_dim}));
  out_proj = register_module("out_proj", std::make_shared<Linear>(embed_dim, embed_dim, bias, gen));
  if (bias) {
    NoGradGuard ng;
    out_proj->bias.fill_(0.0);
  }
}

Tensor MultiheadAttention::forward(const Tensor& x) { return forward(x, x, x, {}); }

Tensor MultiheadAttention::forward(const Tensor& query, const Tensor& key, const Tensor& value, const AttentionMasks& masks) {
  for (const Tensor* t : {&query, &key, &value})
    if (!t->defined() || t->dim() != 3 || t->shape()[2] != embed_dim_)
      raise(Status::error(ErrorKind::ShapeMismatch, msg("om::nn::MultiheadAttention::forward (module ", display_name(), "): inputs must be ",
                                                        batch_first_ ? "[batch, length, " : "[length, batch, ", embed_dim_, "], got ",
                                                        t->defined() ? t->to_string() : std::string("an undefined tensor"))));
  const Tensor q = batch_first_ ? query : query.transpose(0, 1);
  const Tensor k = batch_first_ ? key : key.transpose(0, 1);
  const Tensor v = batch_first_ ? value : value.transpose(0, 1);
  const int64_t B = q.shape()[0], L = q.shape()[1], S = k.shape()[1], E = embed_dim_, H = num_heads_, Dh = E / H;
  auto project = [&](const Tensor& x, int64_t part, int64_t len) {
    Tensor w = in_proj_weight.slice(0, part * E, (part + 1) * E);
    Tensor b = in_proj_bias.defined() ? in_proj_bias.slice(0, part * E, (part + 1) * E) : Tensor();
    return linear(x, w, b).reshape({B, len, H, Dh}).permute({0, 2, 1, 3});
  };
  const Tensor qh = project(q, 0, L), kh = project(k, 1, S), vh = project(v, 2, S);
  Tensor mask;
  if (masks.attn_mask.defined()) {
    mask = additive(masks.attn_mask, "attn_mask", *this);
    if (mask.dim() == 3) mask = mask.reshape({B, H, L, S});
  }
  if (masks.key_padding_mask.defined()) {
    Tensor kp = additive(masks.key_padding_mask, "key_padding_mask", *this).reshape({B, 1, 1, S});
    mask = mask.defined() ? add(mask, kp) : kp;
  }
  Tensor out;
  if (is_training() && dropout_ > 0) {
    // The same composition as om::attention with dropout on the attention weights.
    Tensor s = mul(matmul(qh, kh.transpose(-1, -2)), 1.0 / std::sqrt(double(Dh)));
    if (masks.is_causal) {
      Tensor c = mul(relu(sub(arange(S, DType::f32).unsqueeze(0), arange(L, DType::f32).unsqueeze(1))), -1e30);
      mask = mask.defined() ? add(mask, c) : c;
    }
    if (mask.defined()) s = add(s, mask);
    out = matmul(om::dropout(softmax(s, -1), dropout_, true, gen_), vh);
  } else {
    out = attention(qh, kh, vh, mask, 0, masks.is_causal);
  }
  Tensor merged = out.permute({0, 2, 1, 3}).reshape({B, L, E});
  Tensor y;
  {
    ModuleCallGuard g(*out_proj);
    y = out_proj->forward(merged);
  }
  return batch_first_ ? y : y.transpose(0, 1);
}

// ---- TransformerEncoderLayer ----

TransformerEncoderLayer::TransformerEncoderLayer(int64_t d_model, int64_t nhead, const EncoderLayerOptions& o, Generator& gen)
    : Module("TransformerEncoderLayer"), options_(o) {
  self_attn = register_module("self_attn", std::make_shared<MultiheadAttention>(d_model, nhead, o.dropout, true, o.batch_first, gen));
  linear1 = register_module("linear1", std::make_shared<Linear>(d_model, o.dim_feedforward, true, gen));
  dropout = register_module("dropout", std::make_shared<Dropout>(o.dropout, 1));
  linear2 = register_module("linear2", std::make_shared<Linear>(o.dim_feedforward, d_model, true, gen));
  norm1 = register_module("norm1", std::make_shared<LayerNorm>(Shape{d_model}, o.layer_norm_eps));
  norm2 = register_module("norm2", std::make_shared<LayerNorm>(Shape{d_model}, o.layer_norm_eps));
  dropout1 = register_module("dropout1", std::make_shared<Dropout>(o.dropout, 2));
  dropout2 = register_module("dropout2", std::make_shared<Dropout>(o.dropout, 3));
}

Tensor TransformerEncoderLayer::forward(const Tensor& src) { return forward(src, {}); }

Tensor TransformerEncoderLayer::feed_forward(const Tensor& x) {
  Tensor h = (*linear1)(x);
  h = options_.activation == Activation::Gelu ? gelu(h) : relu(h);
  return (*dropout2)((*linear2)((*dropout)(h)));
}

Tensor TransformerEncoderLayer::forward(const Tensor& src, const AttentionMasks& masks) {
  auto sa = [&](const Tensor& x) {
    Tensor a;
    {
      ModuleCallGuard g(*self_attn);
      a = self_attn->forward(x, x, x, masks);
    }
    return (*dropout1)(a);
  };
  Tensor x = src;
  if (options_.norm_first) {
    x = add(x, sa((*norm1)(x)));
    x = add(x, feed_forward((*norm2)(x)));
  } else {
    x = (*norm1)(add(x, sa(x)));
    x = (*norm2)(add(x, feed_forward(x)));
  }
  return x;
}

// ---- ModuleList / TransformerEncoder ----

void ModuleList::push_back(std::shared_ptr<Module> m) {
  register_module(std::to_string(modules_.size()), m);
  modules_.push_back(std::move(m));
}

TransformerEncoder::TransformerEncoder(const std::function<std::shared_ptr<TransformerEncoderLayer>()>& make_layer, int64_t num_layers,
                                       std::shared_ptr<LayerNorm> final_norm)
    : Module("TransformerEncoder") {
  layers = register_module("layers", std::make_shared<ModuleList>());
  for (int64_t i = 0; i < num_layers; ++i) layers->push_back(make_layer());
  if (final_norm) norm = register_module("norm", final_norm);
}

Tensor TransformerEncoder::forward(const Tensor& src) { return forward(src, {}); }

Tensor TransformerEncoder::forward(const Tensor& src, const AttentionMasks& masks) {
  Tensor x = src;
  for (size_t i = 0; i < layers->size(); ++i) {
    auto* layer = static_cast<TransformerEncoderLayer*>((*layers)[i].get());
    ModuleCallGuard g(*layer);
    x = layer->forward(x, masks);
  }
  if (norm) x = (*norm)(x);
  return x;
}

}  // namespace om::nn
