// Transformer layers with PyTorch's state-dict names and layouts: LayerNorm, Embedding, Dropout,
// MultiheadAttention, TransformerEncoderLayer and TransformerEncoder (docs/api.md). train() /
// eval() switch every Dropout inside.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "onemodel/nn/layers.h"
#include "onemodel/ops/transformer.h"

namespace om::nn {

// weight (ones) and bias (zeros) of shape normalized_shape when elementwise_affine.
class LayerNorm : public Module {
 public:
  explicit LayerNorm(const Shape& normalized_shape, double eps = 1e-5, bool elementwise_affine = true);
  Tensor forward(const Tensor& x) override;
  Tensor weight, bias;

 private:
  Shape normalized_shape_;
  double eps_;
};

// weight [num_embeddings, embedding_dim] ~ N(0, 1); the padding row (if any) starts at zero and
// gets no gradient. forward takes i64 or i32 indices.
class Embedding : public Module {
 public:
  static constexpr int64_t kNoPadding = INT64_MIN;
  Embedding(int64_t num_embeddings, int64_t embedding_dim, int64_t padding_idx = kNoPadding, Generator& gen = default_generator());
  Tensor forward(const Tensor& indices) override;
  Tensor weight;

 private:
  int64_t padding_idx_;
};

// Training: om::dropout with this module's generator; evaluation: the identity (no node when traced).
class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5, uint64_t seed = 0x5eed);
  Tensor forward(const Tensor& x) override;
  double p() const { return p_; }
  Generator& generator() { return gen_; }

 private:
  double p_;
  Generator gen_;
};

// Masks for MultiheadAttention: attn_mask [L, S] or [B*H, L, S], key_padding_mask [B, S]. f32
// masks are added; bool masks (true = not allowed) become -1e30 where true.
struct AttentionMasks {
  Tensor attn_mask;
  Tensor key_padding_mask;
  bool is_causal = false;
};

// PyTorch's nn.MultiheadAttention: in_proj_weight [3E, E] (xavier-uniform), in_proj_bias [3E]
// (zeros), out_proj (Linear, bias zeros). Inputs [L, B, E], or [B, L, E] with batch_first.
// The attention weights are not returned (need_weights = false).
class MultiheadAttention : public Module {
 public:
  MultiheadAttention(int64_t embed_dim, int64_t num_heads, double dropout = 0.0, bool bias = true, bool batch_first = false,
                     Generator& gen = default_generator());
  Tensor forward(const Tensor& x) override;  // self-attention, no masks
  Tensor forward(const Tensor& query, const Tensor& key, const Tensor& value, const AttentionMasks& masks = {});
  int64_t embed_dim() const { return embed_dim_; }
  int64_t num_heads() const { return num_heads_; }
  bool batch_first() const { return batch_first_; }

  Tensor in_proj_weight, in_proj_bias;
  std::shared_ptr<Linear> out_proj;

 private:
  int64_t embed_dim_, num_heads_;
  double dropout_;
  bool batch_first_;
  Generator gen_;
};

enum class Activation { Relu, Gelu };

struct EncoderLayerOptions {
  int64_t dim_feedforward = 2048;
  double dropout = 0.1;
  Activation activation = Activation::Relu;
  double layer_norm_eps = 1e-5;
  bool batch_first = false;
  bool norm_first = false;  // pre-norm
};

// PyTorch's nn.TransformerEncoderLayer: children self_attn, linear1, dropout, linear2, norm1,
// norm2, dropout1, dropout2.
class TransformerEncoderLayer : public Module {
 public:
  TransformerEncoderLayer(int64_t d_model, int64_t nhead, const EncoderLayerOptions& options = {}, Generator& gen = default_generator());
  Tensor forward(const Tensor& src) override;
  Tensor forward(const Tensor& src, const AttentionMasks& masks);

  std::shared_ptr<MultiheadAttention> self_attn;
  std::shared_ptr<Linear> linear1, linear2;
  std::shared_ptr<Dropout> dropout, dropout1, dropout2;
  std::shared_ptr<LayerNorm> norm1, norm2;

 private:
  Tensor feed_forward(const Tensor& x);
  EncoderLayerOptions options_;
};

// Children registered "0", "1", ... (PyTorch's nn.ModuleList).
class ModuleList : public Module {
 public:
  ModuleList() : Module("ModuleList") {}
  void push_back(std::shared_ptr<Module> m);
  size_t size() const { return modules_.size(); }
  const std::shared_ptr<Module>& operator[](size_t i) const { return modules_.at(i); }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};

// num_layers encoder layers ("layers.0", ...) made by `make_layer`, then an optional final
// LayerNorm ("norm").
class TransformerEncoder : public Module {
 public:
  TransformerEncoder(const std::function<std::shared_ptr<TransformerEncoderLayer>()>& make_layer, int64_t num_layers,
                     std::shared_ptr<LayerNorm> norm = nullptr);
  Tensor forward(const Tensor& src) override;
  Tensor forward(const Tensor& src, const AttentionMasks& masks);
  std::shared_ptr<ModuleList> layers;
  std::shared_ptr<LayerNorm> norm;
};

}  // namespace om::nn
