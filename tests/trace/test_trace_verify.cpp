// Verification by default in Module::trace (docs/tracing.md, "Verification"): the classic silent
// bake of a size read from x.shape() is caught and explained; correct models pass; the check
// changes nothing in what finish writes.
#include <doctest/doctest.h>

#include "onemodel/onemodel.h"
#include "test_util.h"
#include "trace_helpers.h"

using testutil::contains;
using tracetest::trace_error_kind;

namespace {

// Meant as "swap the two axes' sizes" but written with sizes read from the shape: when the
// symbolic batch's example size equals the static width, the tracer cannot tell which one the
// reshape meant, and the graph silently keeps [batch, 4].
class SwapReshape : public om::nn::Module {
 public:
  SwapReshape() : Module("SwapReshape") {}
  om::Tensor forward(const om::Tensor& x) override { return om::relu(x.reshape({x.shape()[1], x.shape()[0]})); }
};

// The same trap through a real reshape: [batch, 2, 2] to [2 * 2, batch].
class SwapFlatten : public om::nn::Module {
 public:
  SwapFlatten() : Module("SwapFlatten") {}
  om::Tensor forward(const om::Tensor& x) override { return x.reshape({x.shape()[1] * x.shape()[2], x.shape()[0]}); }
};

// A constant built from the batch size: frozen at the example's batch.
class ConstantFromShape : public om::nn::Module {
 public:
  ConstantFromShape() : Module("ConstantFromShape") {}
  om::Tensor forward(const om::Tensor& x) override { return om::add(x, om::full({x.shape()[0], 4}, 1.0)); }
};

// The same computation written with tensor operators: no size is read.
class ConstantFromTensor : public om::nn::Module {
 public:
  ConstantFromTensor() : Module("ConstantFromTensor") {}
  om::Tensor forward(const om::Tensor& x) override { return om::add(x, om::full({1, 4}, 1.0)); }
};

}  // namespace

TEST_CASE("verification catches a size read from x.shape() that equals a static dim, and names the node") {
  auto model = std::make_shared<SwapReshape>();
  std::string m;
  CHECK(trace_error_kind([&] { (void)model->trace(om::randn({4, 4}), {"batch", ""}); }, &m) == om::TraceErrorKind::SymbolicShape);
  CHECK(contains(m, "om::Tracer::finish: verification of symbolic axis 'batch' failed"));
  CHECK(contains(m, "traced at size 4, re-run at size 5"));
  CHECK(contains(m, "output 'output' is f32[4, 5]"));
  CHECK(contains(m, "f32[5, 4] in the traced graph"));
  // [4, 4] to [4, 4] recorded nothing at trace time: no node to name, the rest of the message stands
  // A real reshape of the same kind: the node holding the example size is named.
  auto flat = std::make_shared<SwapFlatten>();
  CHECK(trace_error_kind([&] { (void)flat->trace(om::randn({4, 2, 2}), {"batch", "", ""}); }, &m) == om::TraceErrorKind::SymbolicShape);
  CHECK(contains(m, "re-run at size 5"));
  CHECK(contains(m, "node 'Reshape_0' (Reshape) has a shape operand"));
  CHECK(contains(m, "holding the constant 4, the example size of 'batch'"));
  // The same model traced at a batch size no fixed size equals: correct, and verified.
  om::TracedModel ok = model->trace(om::randn({5, 4}), {"batch", ""});
  om::Tensor x = om::randn({7, 4});
  auto out = tracetest::run_graph(ok.graph(), {{"input", x}});
  CHECK(out[0].shape() == om::Shape{4, 7});
  CHECK(tracetest::scaled_error(out[0], (*model)(x)) < 1e-6);
}

TEST_CASE("a constant built from the batch size follows the batch (creation from sizes); verification agrees") {
  // full({x.shape()[0], 4}) is recorded from Shape (docs/tracing.md, "Creation from sizes"), so
  // the graph is right at every batch and verification passes.
  auto sized = std::make_shared<ConstantFromShape>();
  om::TracedModel traced = sized->trace(om::randn({3, 4}), {"batch", ""});
  om::Tensor x = om::randn({7, 4});
  auto out = tracetest::run_graph(traced.graph(), {{"input", x}});
  CHECK(out[0].shape() == om::Shape{7, 4});
  CHECK(tracetest::scaled_error(out[0], (*sized)(x)) < 1e-6);
  auto good = std::make_shared<ConstantFromTensor>();
  CHECK_NOTHROW((void)good->trace(om::randn({3, 4}), {"batch", ""}));
}

TEST_CASE("verification options: off, chosen sizes; it never changes the written graph") {
  auto model = std::make_shared<SwapReshape>();
  om::TracerOptions off;
  off.verify = false;
  CHECK_NOTHROW((void)model->trace(om::randn({4, 4}), {"batch", ""}, "input", "output", off));
  om::TracerOptions sized;
  sized.verify_sizes = {{"batch", 9}};
  std::string m;
  CHECK(trace_error_kind([&] { (void)model->trace(om::randn({4, 4}), {"batch", ""}, "input", "output", sized); }, &m) ==
        om::TraceErrorKind::SymbolicShape);
  CHECK(contains(m, "re-run at size 9"));
  sized.verify_sizes = {{"batch", 5}};
  auto mlp = std::make_shared<om::nn::Sequential>(
      std::make_shared<om::nn::Linear>(3, 6), std::make_shared<om::nn::ReLU>(), std::make_shared<om::nn::Linear>(6, 2));
  om::Tensor example = om::randn({4, 3});
  const auto verified = mlp->trace(example, {"batch", ""}).to_onnx();
  const auto unverified = mlp->trace(example, {"batch", ""}, "input", "output", off).to_onnx();
  CHECK(verified == unverified);
  sized.verify_sizes = {{"batch", 4}};  // the example size itself: refused
  bool refused = false;
  try {
    (void)mlp->trace(example, {"batch", ""}, "input", "output", sized);
  } catch (const om::Error& e) {
    refused = contains(e.what(), "verify_sizes");
  }
  CHECK(refused);
}

TEST_CASE("the plain Tracer verifies when given a re-run callable; integer inputs are tiled") {
  om::Tensor w = om::randn({5, 3});
  auto model = [&](const om::Tensor& ids, const om::Tensor& x) {
    return om::add(om::matmul(x, w), ids.to(om::DType::f32).unsqueeze(1));
  };
  {
    auto tracer = om::Tracer::begin();
    om::Tensor ids = tracer.input("ids", om::from_vector<int64_t>({1, 2, 3}), {"n"});
    om::Tensor x = tracer.input("x", om::randn({3, 5}), {"n", ""});
    om::Tensor y = model(ids, x);
    CHECK_NOTHROW(tracer.finish({{"y", y}}, [&](const std::vector<om::Tensor>& in) { return std::vector<om::Tensor>{model(in[0], in[1])}; }));
  }
  {
    // a bake through the plain API: the batch size read into a constant
    auto tracer = om::Tracer::begin();
    om::Tensor x = tracer.input("x", om::randn({3, 5}), {"n", ""});
    auto baked = [&](const om::Tensor& t) { return om::matmul(t, w).reshape({3, 3}); };
    om::Tensor y = baked(x);
    std::string m;
    CHECK(trace_error_kind([&] { tracer.finish({{"y", y}}, [&](const std::vector<om::Tensor>& in) { return std::vector<om::Tensor>{baked(in[0])}; }); },
                           &m) == om::TraceErrorKind::SymbolicShape);
    CHECK(contains(m, "axis 'n'"));
  }
}

TEST_CASE("Tracer::parameter outside a trace does nothing") {
  CHECK_NOTHROW(om::Tracer::parameter("fc1.bias", om::ones({2})));
  auto tracer = om::Tracer::begin();
  om::Tensor x = tracer.input("x", om::ones({2}));
  om::Tracer::parameter("fc1.bias", om::ones({2}));  // the name was not taken by the call outside
  CHECK_NOTHROW(tracer.finish({{"y", om::relu(x)}}));
}

namespace {
// Selection operators along the static axis of a [batch, 6] input.
class Selecting : public om::nn::Module {
 public:
  Selecting() : Module("Selecting") {}
  om::Tensor forward(const om::Tensor& x) override {
    om::Tensor top = om::topk(x, 3, 1).first;
    om::Tensor idx = om::argmax(x, 1, true).to(om::DType::f32);
    om::Tensor low = om::min(x, 1, true).first;
    om::Tensor mask = om::where(om::le(x.slice(1, 0, 3), top), top, om::clamp(om::max(top, low), -0.5, 0.5));
    return om::add(om::add(mask, idx), om::sqrt(om::abs(low)));
  }
};
}  // namespace

TEST_CASE("selection, comparison and math operators trace with a symbolic batch and pass verification") {
  auto model = std::make_shared<Selecting>();
  om::TracedModel m = model->trace(om::randn({4, 6}), {"batch", ""});
  for (int64_t b : {1, 3, 9}) {
    om::Tensor x = om::randn({b, 6});
    auto out = tracetest::run_graph(m.graph(), {{"input", x}}, om::ArithmeticMode::Exact);
    CHECK(tracetest::scaled_error(out[0], (*model)(x)) == 0);  // shared kernels: equal bits
  }
}
