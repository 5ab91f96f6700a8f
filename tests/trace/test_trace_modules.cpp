// nn::Module::trace: parameters and buffers named by state-dict path; errors name the module.
#include <doctest/doctest.h>

#include "onemodel/onemodel.h"
#include "trace_helpers.h"

namespace {

// A block with a buffer (a fixed scale) and a child layer.
class Scaled : public om::nn::Module {
 public:
  Scaled() : Module("Scaled") {
    fc = register_module("fc", std::make_shared<om::nn::Linear>(4, 4));
    scale = register_buffer("scale", om::full({4}, 0.5));
  }
  om::Tensor forward(const om::Tensor& x) override { return om::mul((*fc)(x), scale); }
  std::shared_ptr<om::nn::Linear> fc;
  om::Tensor scale;
};

// Reads its input's values: refused while tracing.
class Peeking : public om::nn::Module {
 public:
  Peeking() : Module("Peeking") {}
  om::Tensor forward(const om::Tensor& x) override {
    if (x.to_vector<float>()[0] > 0) return om::relu(x);
    return x;
  }
};

}  // namespace

TEST_CASE("Module::trace names every parameter and buffer by its state-dict path") {
  auto model = std::make_shared<om::nn::Sequential>(
      std::make_shared<Scaled>(), std::make_shared<om::nn::ReLU>(), std::make_shared<om::nn::Linear>(4, 2));
  om::Tensor x = om::randn({3, 4});
  om::TracedModel m = model->trace(x, {"batch", ""}, "x", "y");
  const auto& g = m.graph();
  // linear multiplies by weight.t(): a view of the named weight
  CHECK(g.find_initializer("0.fc.weight.view_") != nullptr);
  CHECK(g.find_initializer("0.fc.bias") != nullptr);
  CHECK(g.find_initializer("0.scale") != nullptr);
  CHECK(g.find_initializer("2.weight.view_") != nullptr);
  CHECK(g.find_initializer("2.bias") != nullptr);
  CHECK(g.inputs[0].name == "x");
  CHECK(g.outputs[0].name == "y");
  for (int64_t batch : {3, 6}) {
    om::Tensor in = om::randn({batch, 4});
    auto out = tracetest::run_graph(g, {{"x", in}});
    CHECK(tracetest::scaled_error(out[0], (*model)(in)) < 1e-5);
  }
}

TEST_CASE("errors inside a module name its state-dict path") {
  auto model = std::make_shared<om::nn::Sequential>(
      std::make_shared<om::nn::Linear>(4, 4), std::make_shared<Peeking>());
  std::string message;
  CHECK(tracetest::trace_error_kind([&] { (void)model->trace(om::randn({3, 4}), {"batch", ""}); }, &message) ==
        om::TraceErrorKind::DataDependent);
  CHECK(message.find("om::Tensor::to_vector") != std::string::npos);
  CHECK(message.find("module '1'") != std::string::npos);
  // the failed trace left the thread clean
  CHECK_NOTHROW(om::Tracer::begin());
}
