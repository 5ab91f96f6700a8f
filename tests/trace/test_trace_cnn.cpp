// Convolutional models built from nn modules, traced and run: a ResNet-style classifier with
// BatchNorm in eval mode, a depthwise-separable (MobileNet-style) stack and a conv autoencoder
// with ConvTranspose2d and Resize2d. Session Fast within 1e-5 scaled of eager and Exact
// bit-equal to eager Exact (the layers share the kernels), at the traced shape and at other
// batch and spatial sizes; the ONNX files go to the ONNX Runtime oracle at the same shapes.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>

#include "onemodel/kernels/kernels.h"
#include "onemodel/onemodel.h"
#include "oracle_case.h"
#include "trace_helpers.h"

namespace {

using namespace om::nn;

// conv-bn-relu-conv-bn + identity, relu.
class Residual : public Module {
 public:
  explicit Residual(int64_t c, om::Generator& g) : Module("Residual") {
    conv1 = register_module("conv1", std::make_shared<Conv2d>(c, c, 3, 1, 1, 1, 1, false, g));
    bn1 = register_module("bn1", std::make_shared<BatchNorm2d>(c));
    conv2 = register_module("conv2", std::make_shared<Conv2d>(c, c, 3, 1, 1, 1, 1, false, g));
    bn2 = register_module("bn2", std::make_shared<BatchNorm2d>(c));
  }
  om::Tensor forward(const om::Tensor& x) override {
    om::Tensor h = om::relu((*bn1)((*conv1)(x)));
    return om::relu(om::add((*bn2)((*conv2)(h)), x));
  }
  std::shared_ptr<Conv2d> conv1, conv2;
  std::shared_ptr<BatchNorm2d> bn1, bn2;
};

std::shared_ptr<Sequential> resnet(om::Generator& g) {
  return std::make_shared<Sequential>(std::vector<std::shared_ptr<Module>>{
      std::make_shared<Conv2d>(3, 8, 3, 1, 1, 1, 1, false, g), std::make_shared<BatchNorm2d>(8), std::make_shared<ReLU>(),
      std::make_shared<Residual>(8, g), std::make_shared<Conv2d>(8, 16, 3, 2, 1, 1, 1, false, g), std::make_shared<BatchNorm2d>(16),
      std::make_shared<ReLU>(), std::make_shared<Residual>(16, g), std::make_shared<MaxPool2d>(3, 2, 1),
      std::make_shared<GlobalAvgPool2d>(), std::make_shared<Flatten>(), std::make_shared<Linear>(16, 5, true, g)});
}

std::shared_ptr<Sequential> mobilenet(om::Generator& g) {
  return std::make_shared<Sequential>(std::vector<std::shared_ptr<Module>>{
      std::make_shared<Conv2d>(3, 8, 3, 2, 1, 1, 1, false, g), std::make_shared<BatchNorm2d>(8), std::make_shared<ReLU>(),
      std::make_shared<Conv2d>(8, 8, 3, 1, 1, 1, 8, false, g), std::make_shared<BatchNorm2d>(8), std::make_shared<ReLU>(),
      std::make_shared<Conv2d>(8, 16, 1, 1, 0, 1, 1, false, g), std::make_shared<BatchNorm2d>(16), std::make_shared<ReLU>(),
      std::make_shared<Conv2d>(16, 16, 3, 2, 1, 1, 16, true, g), std::make_shared<ReLU>(),
      std::make_shared<Conv2d>(16, 24, 1, 1, 0, 1, 1, true, g), std::make_shared<AvgPool2d>(2, 2, 0, true),
      std::make_shared<AdaptiveAvgPool2d>(1), std::make_shared<Flatten>(), std::make_shared<Linear>(24, 3, true, g)});
}

std::shared_ptr<Sequential> autoencoder(om::Generator& g) {
  return std::make_shared<Sequential>(std::vector<std::shared_ptr<Module>>{
      std::make_shared<Conv2d>(1, 4, 3, 2, 1, 1, 1, true, g), std::make_shared<ReLU>(),
      std::make_shared<Conv2d>(4, 8, 3, 2, 1, 1, 1, true, g), std::make_shared<ReLU>(),
      std::make_shared<ConvTranspose2d>(8, 4, 3, 2, 1, 1, 1, true, 1, g), std::make_shared<ReLU>(),
      std::make_shared<Upsample>(om::Size2d(16, 20), om::Interpolation::Bilinear),
      std::make_shared<Conv2d>(4, 4, 3, 1, 1, 1, 1, true, g), std::make_shared<Tanh>(),
      std::make_shared<Upsample>(om::Size2d(24, 28), om::Interpolation::Nearest),
      std::make_shared<Conv2d>(4, 1, 3, 1, 1, 1, 1, true, g), std::make_shared<Sigmoid>()});
}

// A few training-mode passes so the BatchNorm running statistics are not the defaults.
void warm_up(Module& m, const om::Shape& s, om::Generator& g) {
  m.train();
  for (int i = 0; i < 3; ++i) {
    om::NoGradGuard ng;
    m(om::add(om::mul(om::randn(s, g), 1.5), 0.3));
  }
  m.eval();
}

void check_module(const std::string& name, Module& m, const std::vector<std::string>& axes, const std::vector<om::Tensor>& trials) {
  const om::TracedModel traced = m.trace(trials[0], axes, "x", "y");
  om::SessionOptions exact;
  exact.mode = om::ArithmeticMode::Exact;
  om::Session fast_session(traced.graph(), {}), exact_session(traced.graph(), exact);
  for (size_t t = 0; t < trials.size(); ++t) {
    CAPTURE(name);
    CAPTURE(om::shape_str(trials[t].shape()));
    om::Tensor eager, eager_exact;
    {
      om::NoGradGuard ng;
      eager = m(trials[t]);
      om::ArithmeticModeGuard guard(om::ArithmeticMode::Exact);
      eager_exact = m(trials[t]);
    }
    const auto got = tracetest::run_graph(fast_session, {{"x", trials[t]}});
    CHECK(tracetest::scaled_error(got[0], eager) < 1e-5);
    const auto got_exact = tracetest::run_graph(exact_session, {{"x", trials[t]}});
    CHECK(tracetest::bit_equal(got_exact[0], eager_exact));
    if (t == 0) {
      uint64_t h = 1469598103934665603ULL;
      for (float v : got_exact[0].to_vector<float>()) {
        uint32_t bits;
        std::memcpy(&bits, &v, 4);
        for (int b = 0; b < 4; ++b) h = (h ^ ((bits >> (8 * b)) & 0xff)) * 1099511628211ULL;
      }
      std::printf("EXACT_HASH trace_cnn_%s %s %016llx\n", name.c_str(), om::kernels::isa_name(om::kernels::active_isa()),
                  static_cast<unsigned long long>(h));
    }
    auto data = [](const std::string& n, const om::Tensor& x) {
      om::Tensor c = x.clone();
      return om::graph::TensorData::copy_of(n, c.dtype(), c.shape(), c.storage().data(), size_t(c.numel()) * om::dtype_size(c.dtype()));
    };
    if (t == 0) oracle::write_oracle_case("trace_cnn_" + name, traced.graph(), {data("x", trials[t])}, {data("y", eager)});
    else oracle::add_oracle_inputs("trace_cnn_" + name, "shape" + std::to_string(t), {data("x", trials[t])}, {data("y", eager)});
  }
}

}  // namespace

TEST_CASE("a ResNet-style classifier with BatchNorm in eval mode, traced at 32x48, runs at other batch and spatial sizes") {
  om::Generator g(101);
  auto m = resnet(g);
  warm_up(*m, {4, 3, 16, 16}, g);
  const om::TracedModel t = m->trace(om::randn({2, 3, 32, 48}, g), {"batch", "", "height", "width"});
  CHECK(tracetest::count_ops(t.graph(), "Conv") == 6);
  CHECK(tracetest::count_ops(t.graph(), "BatchNormalization") == 6);
  CHECK(tracetest::count_ops(t.graph(), "GlobalAveragePool") == 1);
  check_module("resnet", *m, {"batch", "", "height", "width"},
               {om::randn({2, 3, 32, 48}, g), om::randn({3, 3, 64, 80}, g), om::randn({1, 3, 17, 23}, g)});
}

TEST_CASE("a depthwise-separable stack, symbolic batch and spatial axes") {
  om::Generator g(102);
  auto m = mobilenet(g);
  warm_up(*m, {4, 3, 16, 16}, g);
  check_module("mobilenet", *m, {"batch", "", "height", "width"},
               {om::randn({2, 3, 32, 48}, g), om::randn({5, 3, 64, 80}, g), om::randn({1, 3, 24, 20}, g)});
}

TEST_CASE("a conv autoencoder with ConvTranspose2d and Resize2d, symbolic batch") {
  om::Generator g(103);
  auto m = autoencoder(g);
  m->eval();
  const om::TracedModel t = m->trace(om::randn({2, 1, 24, 28}, g), {"batch", "", "", ""});
  CHECK(tracetest::count_ops(t.graph(), "ConvTranspose") == 1);
  CHECK(tracetest::count_ops(t.graph(), "Resize") == 2);
  check_module("autoencoder", *m, {"batch", "", "", ""}, {om::randn({2, 1, 24, 28}, g), om::randn({4, 1, 24, 28}, g)});
}

TEST_CASE("tracing refuses BatchNorm in training mode naming the module, and a symbolic spatial axis into resize2d to a fixed size") {
  om::Generator g(104);
  auto m = resnet(g);
  m->train();
  std::string message;
  CHECK(tracetest::trace_error_kind([&] { m->trace(om::randn({2, 3, 8, 8}, g)); }, &message) == om::TraceErrorKind::UnsupportedOperation);
  CHECK(message.find("om::batch_norm2d") != std::string::npos);
  CHECK(message.find("'1'") != std::string::npos);  // the module path of the first BatchNorm2d
  CHECK(message.find("eval()") != std::string::npos);
  // An explicit output size cannot follow a symbolic spatial axis; a scale factor can.
  auto fixed = std::make_shared<Sequential>(std::make_shared<Conv2d>(1, 2, 3, 1, 1, 1, 1, true, g),
                                            std::make_shared<Upsample>(om::Size2d(16, 20), om::Interpolation::Bilinear));
  fixed->eval();
  CHECK(tracetest::trace_error_kind([&] { fixed->trace(om::randn({1, 1, 8, 10}, g), {"", "", "h", "w"}); }, &message) ==
        om::TraceErrorKind::SymbolicShape);
  CHECK(message.find("resize2d") != std::string::npos);
  auto up = std::make_shared<Sequential>(std::make_shared<Conv2d>(1, 2, 3, 1, 1, 1, 1, true, g),
                                         Upsample::with_scale(2, 2, om::Interpolation::Bilinear));
  up->eval();
  const om::TracedModel scaled = up->trace(om::randn({1, 1, 8, 10}, g), {"", "", "h", "w"});
  om::Tensor x = om::randn({1, 1, 5, 13}, g);
  const auto got = tracetest::run_graph(scaled.graph(), {{"input", x}});
  CHECK(got[0].shape() == om::Shape{1, 2, 10, 26});
  CHECK(tracetest::scaled_error(got[0], (*up)(x)) < 1e-5);
  // With static spatial axes the same model traces.
  const om::TracedModel ok = up->trace(om::randn({2, 1, 8, 8}, g), {"batch", "", "", ""});
  CHECK(tracetest::count_ops(ok.graph(), "Resize") == 1);
}
