// Small trained classifiers and their data for the quantization tests: an MLP on Gaussian blobs
// and a tiny CNN on noisy bar images, both trained here with the eager API.
#pragma once
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "onemodel/onemodel.h"

namespace quanttest {

struct Dataset {
  om::Tensor x;                 // f32 [n, ...]
  om::Tensor y;                 // i64 [n]
  std::vector<int64_t> labels;  // y's values
};

// Three overlapping Gaussian blobs in 8-D (unit noise, centres about 1.3 apart): a float MLP
// reaches about 95%, so the held-out accuracy has room to drop.
inline Dataset blobs(int64_t n, uint64_t seed) {
  om::Generator centres_gen(7);  // the same classes for every split
  const std::vector<float> centres = om::randn({3, 8}, centres_gen).to_vector<float>();
  om::Generator gen(seed);
  std::vector<float> noise = om::randn({n, 8}, gen).to_vector<float>();
  std::vector<float> x(size_t(n * 8));
  Dataset d;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = i % 3;
    d.labels.push_back(c);
    for (int64_t j = 0; j < 8; ++j) x[size_t(i * 8 + j)] = 0.9f * centres[size_t(c * 8 + j)] + noise[size_t(i * 8 + j)];
  }
  d.x = om::from_vector<float>(x, {n, 8});
  d.y = om::from_vector<int64_t>(d.labels, {n});
  return d;
}

// 1x8x8 images: class 0 a horizontal bar, class 1 a vertical bar, class 2 a diagonal, at a
// random place, under Gaussian noise.
inline Dataset bars(int64_t n, uint64_t seed) {
  om::Generator gen(seed);
  const std::vector<float> noise = om::randn({n, 64}, gen).to_vector<float>();
  const std::vector<float> where = om::rand({n}, gen).to_vector<float>();
  std::vector<float> x(size_t(n * 64));
  Dataset d;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = i % 3, k = std::min<int64_t>(7, int64_t(where[size_t(i)] * 8));
    d.labels.push_back(c);
    for (int64_t r = 0; r < 8; ++r)
      for (int64_t q = 0; q < 8; ++q) {
        const bool on = c == 0 ? r == k : c == 1 ? q == k : (r + q) % 8 == k;
        x[size_t(i * 64 + r * 8 + q)] = (on ? 1.0f : 0.0f) + 0.5f * noise[size_t(i * 64 + r * 8 + q)];
      }
  }
  d.x = om::from_vector<float>(x, {n, 1, 8, 8});
  d.y = om::from_vector<int64_t>(d.labels, {n});
  return d;
}

inline std::shared_ptr<om::nn::Sequential> mlp(uint64_t seed) {
  om::Generator gen(seed);
  return std::make_shared<om::nn::Sequential>(std::vector<std::shared_ptr<om::nn::Module>>{
      std::make_shared<om::nn::Linear>(8, 32, true, gen), std::make_shared<om::nn::ReLU>(),
      std::make_shared<om::nn::Linear>(32, 32, true, gen), std::make_shared<om::nn::ReLU>(),
      std::make_shared<om::nn::Linear>(32, 3, true, gen)});
}

inline std::shared_ptr<om::nn::Sequential> cnn(uint64_t seed) {
  om::Generator gen(seed);
  return std::make_shared<om::nn::Sequential>(std::vector<std::shared_ptr<om::nn::Module>>{
      std::make_shared<om::nn::Conv2d>(1, 8, 3, 1, 1, 1, 1, true, gen), std::make_shared<om::nn::ReLU>(),
      std::make_shared<om::nn::Conv2d>(8, 8, 3, 1, 1, 1, 1, true, gen), std::make_shared<om::nn::ReLU>(),
      std::make_shared<om::nn::Flatten>(), std::make_shared<om::nn::Linear>(8 * 64, 3, true, gen)});
}

// Full-batch SGD with momentum on the cross-entropy.
inline void train(om::nn::Module& model, const Dataset& d, int steps, double lr) {
  om::optim::SGD sgd(model.parameters(), om::optim::SGDOptions(lr).momentum(0.9));
  for (int s = 0; s < steps; ++s) {
    om::StoreScope scope;
    om::Tensor loss = om::cross_entropy(model(d.x), d.y);
    sgd.zero_grad();
    loss.backward();
    sgd.step();
  }
}

// Calibration batches: `count` slices of `size` rows of x.
inline om::quant::CalibrationSet batches_of(const om::Tensor& x, const std::string& input, int64_t count, int64_t size) {
  om::quant::CalibrationSet set;
  for (int64_t b = 0; b < count; ++b) set.push_back({{input, x.slice(0, b * size, (b + 1) * size).contiguous()}});
  return set;
}

// The fraction of rows whose largest logit is the label.
inline double accuracy(const om::Tensor& logits, const std::vector<int64_t>& labels) {
  const std::vector<float> v = logits.to_vector<float>();
  const size_t classes = v.size() / labels.size();
  size_t right = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    size_t best = 0;
    for (size_t c = 1; c < classes; ++c)
      if (v[i * classes + c] > v[i * classes + best]) best = c;
    right += int64_t(best) == labels[i];
  }
  return double(right) / double(labels.size());
}

inline size_t count_op(const om::graph::Graph& g, const std::string& op) {
  size_t n = 0;
  for (const auto& node : g.nodes) n += node.op_type == op;
  return n;
}

}  // namespace quanttest
