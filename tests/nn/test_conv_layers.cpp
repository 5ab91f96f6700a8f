// Convolutional layers: PyTorch's state-dict names, shapes and initialisation bounds;
// train()/eval() switching BatchNorm2d; Flatten, pools and Upsample as modules.
#include <doctest/doctest.h>

#include <cmath>

#include "onemodel/onemodel.h"

using namespace om::nn;

namespace {
float max_abs(const om::Tensor& t) {
  float m = 0;
  for (float v : t.to_vector<float>()) m = std::max(m, std::fabs(v));
  return m;
}
}  // namespace

TEST_CASE("Conv2d, ConvTranspose2d and BatchNorm2d state dicts as PyTorch names them, Kaiming-uniform bounds") {
  om::Generator g(5);
  auto net = std::make_shared<Sequential>(std::vector<std::shared_ptr<Module>>{
      std::make_shared<Conv2d>(4, 6, om::Size2d(3, 2), 1, 0, 1, 2, true, g), std::make_shared<BatchNorm2d>(6),
      std::make_shared<ConvTranspose2d>(6, 4, 3, 2, 1, 1, 2, true, 1, g)});
  const StateDict sd = net->state_dict();
  const std::vector<std::string> want = {"0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean", "1.running_var",
                                         "1.num_batches_tracked", "2.weight", "2.bias"};
  CHECK(sd.names() == want);
  auto conv = std::static_pointer_cast<Conv2d>((*net)[0]);
  CHECK(conv->weight.shape() == om::Shape{6, 2, 3, 2});
  const double bound = 1.0 / std::sqrt(2.0 * 3 * 2);
  CHECK(max_abs(conv->weight) <= bound);
  CHECK(max_abs(conv->weight) > 0.8 * bound);
  CHECK(max_abs(conv->bias) <= bound);
  auto tr = std::static_pointer_cast<ConvTranspose2d>((*net)[2]);
  CHECK(tr->weight.shape() == om::Shape{6, 2, 3, 3});
  CHECK(max_abs(tr->weight) <= 1.0 / std::sqrt(2.0 * 9));
  auto bn = std::static_pointer_cast<BatchNorm2d>((*net)[1]);
  CHECK(bn->weight.to_vector<float>() == std::vector<float>(6, 1.0f));
  CHECK(bn->running_var.to_vector<float>() == std::vector<float>(6, 1.0f));
  CHECK(bn->num_batches_tracked.dtype() == om::DType::i64);
  CHECK(net->parameters().size() == 6);
  CHECK(net->buffers().size() == 3);
}

TEST_CASE("BatchNorm2d: train() updates the running statistics and the batch counter, eval() uses them") {
  om::Generator g(6);
  BatchNorm2d bn(3);
  const om::Tensor x = om::add(om::mul(om::randn({4, 3, 5, 5}, g), 2.0), 1.0);
  bn.train();
  const om::Tensor y = bn(x);
  CHECK(bn.num_batches_tracked.item<int64_t>() == 1);
  // Training output is normalised per channel: mean ~0.
  CHECK(std::fabs(om::mean(y).item<float>()) < 1e-5);
  const std::vector<float> rm = bn.running_mean.to_vector<float>();
  for (float v : rm) CHECK(std::fabs(v - 0.1f) < 0.05f);  // 0.9 * 0 + 0.1 * ~1
  bn.eval();
  const om::Tensor e = bn(x);
  CHECK(bn.num_batches_tracked.item<int64_t>() == 1);
  CHECK(bn.running_mean.to_vector<float>() == rm);
  const om::Tensor want = om::batch_norm2d(x, bn.running_mean, bn.running_var, bn.weight, bn.bias, false);
  CHECK(e.to_vector<float>() == want.to_vector<float>());
}

TEST_CASE("pools, global average pool, Upsample and Flatten as modules") {
  om::Generator g(7);
  const om::Tensor x = om::randn({2, 3, 8, 6}, g);
  CHECK(MaxPool2d(2)(x).shape() == om::Shape{2, 3, 4, 3});
  CHECK(AvgPool2d(3, 2, 1)(x).shape() == om::Shape{2, 3, 4, 3});
  CHECK(AdaptiveAvgPool2d(1)(x).shape() == om::Shape{2, 3, 1, 1});
  CHECK(GlobalAvgPool2d()(x).shape() == om::Shape{2, 3, 1, 1});
  CHECK(Upsample(om::Size2d(5, 7), om::Interpolation::Bilinear)(x).shape() == om::Shape{2, 3, 5, 7});
  CHECK((*Upsample::with_scale(2, 1.5))(x).shape() == om::Shape{2, 3, 16, 9});
  CHECK(Flatten()(x).shape() == om::Shape{2, 144});
  CHECK(Flatten(2)(x).shape() == om::Shape{2, 3, 48});
  CHECK_THROWS_AS(AdaptiveAvgPool2d(om::Size2d(2, 2)), om::Error);
  CHECK_THROWS_AS(Conv2d(3, 4, 3)(om::randn({1, 2, 5, 5}, g)), om::Error);
}
