// quantize_static refuses what it cannot quantize with an om::Error naming the call, the value
// or option, and the fix: bad calibration sets, NaN or infinite calibration data and weights,
// unsupported options. The Status form reports the same without throwing.
#include <doctest/doctest.h>

#include <limits>

#include "quant_models.h"
#include "test_util.h"

using namespace quanttest;
using testutil::contains;
using testutil::error_of;

namespace {

struct Traced {
  om::TracedModel model;
  om::Tensor x;
};

Traced traced_mlp() {
  auto model = mlp(5);
  om::Generator gen(4);
  om::Tensor x = om::randn({16, 8}, gen);
  return Traced{model->trace(x.slice(0, 0, 4), {"batch", ""}, "features", "logits"), x};
}

}  // namespace

TEST_CASE("quantize_static: calibration sets it cannot use are refused, naming the batch and the input") {
  Traced t = traced_mlp();
  const om::graph::Graph& g = t.model.graph();

  om::Error e = error_of([&] { om::quant::quantize_static(g, {}); });
  CHECK(e.kind() == om::ErrorKind::InvalidArgument);
  CHECK(contains(e.message(), "om::quant::quantize_static"));
  CHECK(contains(e.message(), "calibration set is empty"));

  e = error_of([&] { om::quant::quantize_static(g, {{{"features", t.x}}, {{"pixels", t.x}}}); });
  CHECK(e.kind() == om::ErrorKind::InvalidArgument);
  CHECK(contains(e.message(), "calibration batch 1"));
  CHECK(contains(e.message(), "'pixels'"));
  CHECK(contains(e.message(), "features"));  // the inputs it has

  e = error_of([&] { om::quant::quantize_static(g, {{}}); });
  CHECK(contains(e.message(), "calibration batch 0"));
  CHECK(contains(e.message(), "features"));

  e = error_of([&] { om::quant::quantize_static(g, {{{"features", om::zeros({4, 8}, om::DType::i64)}}}); });
  CHECK(e.kind() == om::ErrorKind::DTypeMismatch);
  CHECK(contains(e.message(), "calibration batch 0"));
  CHECK(contains(e.message(), "'features'"));
  CHECK(contains(e.message(), "f32"));

  e = error_of([&] { om::quant::quantize_static(g, {{{"features", om::zeros({4, 5})}}}); });
  CHECK(e.kind() == om::ErrorKind::ShapeMismatch);
  CHECK(contains(e.message(), "'features'"));
  CHECK(contains(e.message(), "[batch, 8]"));

  e = error_of([&] { om::quant::quantize_static(g, {{{"features", om::Tensor()}}}); });
  CHECK(e.kind() == om::ErrorKind::InvalidArgument);
  CHECK(contains(e.message(), "undefined"));

  e = error_of([&] { om::quant::quantize_static(g, {{{"features", t.x}, {"features", t.x}}}); });
  CHECK(contains(e.message(), "got 2 inputs, the model takes 1"));
}

TEST_CASE("quantize_static: NaN or infinite calibration data is refused naming the value, the node and the batch") {
  Traced t = traced_mlp();
  om::Tensor bad = t.x.clone();
  bad.set<float>({3, 2}, std::numeric_limits<float>::quiet_NaN());
  om::Error e = error_of([&] { om::quant::quantize_static(t.model.graph(), {{{"features", t.x}}, {{"features", bad}}}); });
  CHECK(e.kind() == om::ErrorKind::InvalidArgument);
  CHECK(contains(e.message(), "value 'features'"));
  CHECK(contains(e.message(), "input 0 (A) of MatMul node 'MatMul_0'"));
  CHECK(contains(e.message(), "NaN"));
  CHECK(contains(e.message(), "calibration batch 1"));
  CHECK(contains(e.message(), "keep_nodes"));

  // An infinity reaches the first layer's output, not only its input: the first value named is
  // the input, and keeping that node moves the refusal to the next one's.
  om::Tensor inf = t.x.clone();
  inf.set<float>({0, 0}, std::numeric_limits<float>::infinity());
  e = error_of([&] { om::quant::quantize_static(t.model.graph(), {{{"features", inf}}}); });
  CHECK(contains(e.message(), "infinite"));
  CHECK(contains(e.message(), "value 'features'"));
  om::quant::QuantOptions keep;
  keep.keep_nodes = {"MatMul_0"};
  e = error_of([&] { om::quant::quantize_static(t.model.graph(), {{{"features", inf}}}, keep); });
  CHECK(contains(e.message(), "MatMul node 'MatMul_3'"));

  // The Status form: the same error, no throw, the output untouched.
  om::graph::Graph out;
  out.name = "untouched";
  const om::Status s = om::quant::try_quantize_static(t.model.graph(), {{{"features", bad}}}, {}, &out);
  CHECK_FALSE(s.is_ok());
  CHECK(contains(s.message(), "NaN"));
  CHECK(out.name == "untouched");
  CHECK(om::quant::try_quantize_static(t.model.graph(), {{{"features", t.x}}}, {}, &out).is_ok());
  CHECK(count_op(out, "QuantizeLinear") == 4);  // the input and each layer's output after its bias and Relu
}

TEST_CASE("quantize_static: a NaN weight is refused naming the weight, the node and the channel") {
  Traced t = traced_mlp();
  om::graph::Graph g = t.model.graph();
  for (om::graph::TensorData& w : g.initializers) {
    if (w.name != "2.weight.view_") continue;
    std::vector<float> v(w.data<float>(), w.data<float>() + w.numel());
    v[5] = std::numeric_limits<float>::quiet_NaN();
    w = om::graph::TensorData::from_vector<float>(w.name, w.dims, v);
  }
  const om::Error e = error_of([&] { om::quant::quantize_static(g, {{{"features", t.x}}}); });
  CHECK(e.kind() == om::ErrorKind::InvalidArgument);
  CHECK(contains(e.message(), "MatMul node 'MatMul_3', input 1 (B)"));
  CHECK(contains(e.message(), "weight '2.weight.view_'"));
  CHECK(contains(e.message(), "channel 5"));
}

TEST_CASE("quantize_static: unsupported options are refused naming the option and what it takes") {
  Traced t = traced_mlp();
  const om::quant::CalibrationSet calib = {{{"features", t.x}}};
  om::quant::QuantOptions o;
  o.activation_dtype = om::DType::f32;
  om::Error e = error_of([&] { om::quant::quantize_static(t.model.graph(), calib, o); });
  CHECK(e.kind() == om::ErrorKind::Unsupported);
  CHECK(contains(e.message(), "QuantOptions::activation_dtype is f32"));

  for (double p : {30.0, 100.5, std::numeric_limits<double>::quiet_NaN()}) {
    o = {};
    o.range_method = om::quant::RangeMethod::Percentile;
    o.percentile = p;
    e = error_of([&] { om::quant::quantize_static(t.model.graph(), calib, o); });
    CHECK(e.kind() == om::ErrorKind::InvalidArgument);
    CHECK(contains(e.message(), "QuantOptions::percentile"));
    CHECK(contains(e.message(), "(50, 100]"));
  }
  o = {};
  o.keep_nodes = {"MatMul_9"};
  e = error_of([&] { om::quant::quantize_static(t.model.graph(), calib, o); });
  CHECK(contains(e.message(), "'MatMul_9'"));
  CHECK(contains(e.message(), "MatMul_0, MatMul_3, MatMul_6"));
  o = {};
  o.keep_op_types = {"Relu"};
  e = error_of([&] { om::quant::quantize_static(t.model.graph(), calib, o); });
  CHECK(contains(e.message(), "keep_op_types names 'Relu'"));
  o = {};
  o.threads = -2;
  e = error_of([&] { om::quant::quantize_static(t.model.graph(), calib, o); });
  CHECK(contains(e.message(), "QuantOptions::threads"));

  // A graph that does not verify is refused before anything runs.
  om::graph::Graph broken = t.model.graph();
  broken.nodes[0].inputs[0] = "nowhere";
  e = error_of([&] { om::quant::quantize_static(broken, calib); });
  CHECK(contains(e.message(), "om::quant::quantize_static"));
  CHECK(contains(e.message(), "nowhere"));
}
