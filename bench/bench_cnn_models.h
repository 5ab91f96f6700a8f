// The convolutional models of bench_session (docs/performance.md): a ResNet-style classifier
// (3x64x64 input, strided stem, two stages of two residual blocks, global average pooling,
// Linear) and a MobileNet-style depthwise-separable stack, both with BatchNorm2d in eval mode.
#pragma once
#include <onemodel/onemodel.h>

#include <memory>
#include <vector>

namespace bench_cnn {

using namespace om::nn;

// conv-bn-relu-conv-bn + identity, relu.
class Residual : public Module {
 public:
  Residual(int64_t c, om::Generator& g) : Module("Residual") {
    conv1 = register_module("conv1", std::make_shared<Conv2d>(c, c, 3, 1, 1, 1, 1, false, g));
    bn1 = register_module("bn1", std::make_shared<BatchNorm2d>(c));
    conv2 = register_module("conv2", std::make_shared<Conv2d>(c, c, 3, 1, 1, 1, 1, false, g));
    bn2 = register_module("bn2", std::make_shared<BatchNorm2d>(c));
  }
  om::Tensor forward(const om::Tensor& x) override {
    return om::relu(om::add((*bn2)((*conv2)(om::relu((*bn1)((*conv1)(x))))), x));
  }
  std::shared_ptr<Conv2d> conv1, conv2;
  std::shared_ptr<BatchNorm2d> bn1, bn2;
};

inline std::shared_ptr<Module> conv_bn_relu(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t groups, om::Generator& g) {
  return std::make_shared<Sequential>(std::vector<std::shared_ptr<Module>>{
      std::make_shared<Conv2d>(in, out, k, stride, k / 2, 1, groups, false, g), std::make_shared<BatchNorm2d>(out),
      std::make_shared<ReLU>()});
}

inline std::shared_ptr<Sequential> resnet(om::Generator& g) {
  auto m = std::make_shared<Sequential>(std::vector<std::shared_ptr<Module>>{
      conv_bn_relu(3, 32, 3, 2, 1, g), std::make_shared<Residual>(32, g), std::make_shared<Residual>(32, g),
      conv_bn_relu(32, 64, 3, 2, 1, g), std::make_shared<Residual>(64, g), std::make_shared<Residual>(64, g),
      std::make_shared<GlobalAvgPool2d>(), std::make_shared<Flatten>(), std::make_shared<Linear>(64, 10, true, g)});
  m->eval();
  return m;
}

inline std::shared_ptr<Sequential> mobilenet(om::Generator& g) {
  std::vector<std::shared_ptr<Module>> layers{conv_bn_relu(3, 32, 3, 2, 1, g)};
  const int64_t plan[][3] = {{32, 64, 1}, {64, 128, 2}, {128, 128, 1}, {128, 256, 2}, {256, 256, 1}};
  for (const auto& p : plan) {
    layers.push_back(conv_bn_relu(p[0], p[0], 3, p[2], p[0], g));  // depthwise
    layers.push_back(conv_bn_relu(p[0], p[1], 1, 1, 1, g));        // pointwise
  }
  layers.push_back(std::make_shared<GlobalAvgPool2d>());
  layers.push_back(std::make_shared<Flatten>());
  layers.push_back(std::make_shared<Linear>(256, 10, true, g));
  auto m = std::make_shared<Sequential>(layers);
  m->eval();
  return m;
}

}  // namespace bench_cnn
