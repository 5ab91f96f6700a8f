// The small layers of issue-style models traced: the composed activations as modules and
// Tensor::flatten, run at other sizes in the Session and in ONNX Runtime against eager.
#include <doctest/doctest.h>

#include "arch_helpers.h"
#include "onemodel/onemodel.h"

TEST_CASE("ReLU6, Hardtanh, Hardswish, SiLU and Mish modules and flatten(1, 2) trace and follow the batch") {
  om::Generator gen(286);
  auto net = std::make_shared<om::nn::Sequential>(
      std::make_shared<om::nn::Conv2d>(2, 4, 3, 1, 1, 1, 1, true, gen), std::make_shared<om::nn::ReLU6>(),
      std::make_shared<om::nn::Conv2d>(4, 4, 3, 1, 1, 1, 1, true, gen), std::make_shared<om::nn::Hardswish>(),
      std::make_shared<om::nn::Conv2d>(4, 4, 1, 1, 0, 1, 1, true, gen), std::make_shared<om::nn::SiLU>(),
      std::make_shared<om::nn::Conv2d>(4, 4, 1, 1, 0, 1, 1, true, gen), std::make_shared<om::nn::Mish>(),
      std::make_shared<om::nn::Hardtanh>(-0.5, 0.75));
  net->eval();
  auto eager = [&](const std::vector<om::Tensor>& x) { return std::vector<om::Tensor>{(*net)(om::mul(x[0], 4.0)).flatten(1, 2)}; };
  om::TracedModel traced;
  {
    auto tracer = om::Tracer::begin();
    for (const auto& [path, t] : net->state_dict()) om::Tracer::parameter(path, t);
    om::Tensor x = tracer.input("x", om::randn({3, 2, 5, 6}, gen), {"batch", "", "", ""});
    traced = tracer.finish({{"y", eager({x})[0]}}, eager);
  }
  CHECK(tracetest::count_ops(traced.graph(), "Clip") >= 3);
  CHECK(tracetest::count_ops(traced.graph(), "Reshape") == 1);
  archtest::agree_at("layers_activations", traced, eager, {"x"},
                     {{om::randn({3, 2, 5, 6}, gen)}, {om::randn({1, 2, 5, 6}, gen)}, {om::randn({7, 2, 5, 6}, gen)}});
}

TEST_CASE("Conv1d, MaxPool1d and AvgPool1d: PyTorch's shapes, and traced on symbolic batch and length") {
  om::Generator gen(287);
  auto conv = std::make_shared<om::nn::Conv1d>(3, 4, 3, 1, 1, 1, 1, true, gen);
  CHECK(conv->weight.shape() == om::Shape{4, 3, 3});
  CHECK(conv->state_dict().names() == std::vector<std::string>{"weight", "bias"});
  auto net = std::make_shared<om::nn::Sequential>(conv, std::make_shared<om::nn::ReLU>(), std::make_shared<om::nn::MaxPool1d>(2),
                                                  std::make_shared<om::nn::Conv1d>(4, 4, 3, 1, 0, 2, 2, true, gen),
                                                  std::make_shared<om::nn::AvgPool1d>(3, 1, 1));
  net->eval();
  const om::Tensor x = om::randn({2, 3, 30}, gen);
  CHECK((*net)(x).shape() == om::Shape{2, 4, 11});  // 30 -> pool 15 -> dilated conv 11 -> same-size pool
  om::TracedModel traced = net->trace(x, {"batch", "", "len"});
  // One 1-D node per layer: no Reshape, Unsqueeze, Squeeze or Concat around them.
  const om::graph::Graph& g = traced.graph();
  CHECK(g.nodes.size() == 5);  // Conv, Relu, MaxPool, Conv, AveragePool
  CHECK(tracetest::count_ops(g, "Conv") == 2);
  CHECK(tracetest::count_ops(g, "MaxPool") == 1);
  CHECK(tracetest::count_ops(g, "AveragePool") == 1);
  for (const char* op : {"Reshape", "Unsqueeze", "Squeeze", "Concat"}) CHECK(tracetest::count_ops(g, op) == 0);
  const om::graph::TensorData* w = g.find_initializer("0.weight");
  REQUIRE(w != nullptr);
  CHECK(w->dims == om::Shape{4, 3, 3});  // the parameter itself, [O, I, K]
  REQUIRE(g.outputs.size() == 1);
  CHECK(g.outputs[0].shape[2].param == "(len/2)-4");  // pool by 2, then a dilated kernel 3 without padding
  archtest::agree_at("layers_conv1d", traced, [&](const std::vector<om::Tensor>& in) { return std::vector<om::Tensor>{(*net)(in[0])}; },
                     {"input"}, {{x}, {om::randn({1, 3, 17}, gen)}, {om::randn({4, 3, 64}, gen)}});
  CHECK_THROWS_WITH_AS((void)(*conv)(om::randn({2, 3, 4, 5})), doctest::Contains("must be [N, 3, L]"), om::Error);
}
