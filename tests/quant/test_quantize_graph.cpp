// The QDQ graph quantize_static writes: int8 weights with per-channel scales along each
// operator's output-channel axis, Q/DQ pairs on activations, kept nodes in float; its ONNX and
// library-format files (ONNX Runtime agrees through the oracle, the .om is 4x smaller and
// gives the same bits).
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <tuple>
#include <string>

#include "onemodel/io/format_v1.h"
#include "oracle_case.h"
#include "quant_models.h"

using namespace quanttest;
using om::graph::Graph;
using om::graph::Node;
using om::graph::TensorData;
namespace fs = std::filesystem;

namespace {

const Node* producer(const Graph& g, const std::string& v) {
  for (const Node& n : g.nodes)
    if (std::find(n.outputs.begin(), n.outputs.end(), v) != n.outputs.end()) return &n;
  return nullptr;
}

const Node* node_named(const Graph& g, const std::string& name) {
  for (const Node& n : g.nodes)
    if (n.name == name) return &n;
  return nullptr;
}

std::vector<float> random_values(size_t n, uint64_t seed) {
  om::Generator gen(seed);
  return om::randn({int64_t(n)}, gen).to_vector<float>();
}

om::graph::ValueInfo value(const std::string& name, std::vector<om::graph::Dim> dims) {
  om::graph::ValueInfo v;
  v.name = name;
  v.shape = std::move(dims);
  return v;
}

Node node(const std::string& op, const std::string& name, std::vector<std::string> in, std::vector<std::string> out) {
  Node n;
  n.op_type = op;
  n.name = name;
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

// Gemm(transB = 1) -> Relu -> Gemm(transB = 0), as exporters write a Linear stack, passed
// through an ONNX file's bytes like an imported model.
Graph gemm_graph() {
  Graph g;
  g.inputs = {value("x", {om::graph::Dim::symbol("batch"), om::graph::Dim::fixed(6)})};
  g.outputs = {value("y", {om::graph::Dim::symbol("batch"), om::graph::Dim::fixed(3)})};
  g.initializers = {TensorData::from_vector<float>("w1", {5, 6}, random_values(30, 1)),
                    TensorData::from_vector<float>("b1", {5}, random_values(5, 2)),
                    TensorData::from_vector<float>("w2", {5, 3}, random_values(15, 3))};
  Node g1 = node("Gemm", "fc1", {"x", "w1", "b1"}, {"h"});
  g1.attributes.push_back(om::graph::Attribute::of_int("transB", 1));
  g.nodes = {g1, node("Relu", "act", {"h"}, {"r"}), node("Gemm", "fc2", {"r", "w2"}, {"y"})};
  return om::onnx::read(om::onnx::write(g));
}

Graph conv_graph() {
  Graph g;
  g.inputs = {value("x", {om::graph::Dim::fixed(2), om::graph::Dim::fixed(2), om::graph::Dim::fixed(5), om::graph::Dim::fixed(5)})};
  g.outputs = {value("y", {om::graph::Dim::fixed(2), om::graph::Dim::fixed(4), om::graph::Dim::fixed(5), om::graph::Dim::fixed(5)})};
  g.initializers = {TensorData::from_vector<float>("w", {4, 2, 3, 3}, random_values(72, 4)),
                    TensorData::from_vector<float>("b", {4}, random_values(4, 5))};
  Node c = node("Conv", "conv", {"x", "w", "b"}, {"y"});
  c.attributes.push_back(om::graph::Attribute::of_ints("pads", {1, 1, 1, 1}));
  g.nodes = {c};
  return om::onnx::read(om::onnx::write(g));
}

om::quant::CalibrationSet random_batches(const std::string& input, const om::Shape& shape, int count, uint64_t seed) {
  om::Generator gen(seed);
  om::quant::CalibrationSet set;
  for (int b = 0; b < count; ++b) set.push_back({{input, om::randn(shape, gen)}});
  return set;
}

// Node n's input `slot` is DequantizeLinear(int8 weight, per-channel scale, zero point) with
// the given axis and channel count; checks the int8 values against the float weight.
void check_weight(const Graph& q, const Graph& original, const Node& n, size_t slot, const std::string& weight, int64_t axis,
                  int64_t channels) {
  INFO(n.name, " input ", slot);
  const Node* dq = producer(q, n.inputs[slot]);
  REQUIRE(dq != nullptr);
  CHECK(dq->op_type == "DequantizeLinear");
  CHECK(dq->attr_int("axis", -99) == (channels > 1 ? axis : -99));
  const TensorData* qw = q.find_initializer(dq->inputs[0]);
  const TensorData* scale = q.find_initializer(dq->inputs[1]);
  const TensorData* zp = q.find_initializer(dq->inputs[2]);
  const TensorData* w = original.find_initializer(weight);
  REQUIRE((qw && scale && zp && w));
  CHECK(q.find_initializer(weight) == nullptr);  // the float weight is gone
  CHECK(qw->dtype == om::DType::i8);
  CHECK(qw->dims == w->dims);
  CHECK(scale->dtype == om::DType::f32);
  CHECK(scale->numel() == channels);
  CHECK(zp->dtype == om::DType::i8);
  for (int64_t c = 0; c < zp->numel(); ++c) CHECK(zp->data<int8_t>()[c] == 0);
  // q = round(w / scale) within [-127, 127]; each channel reaches 127 in magnitude.
  int64_t inner = 1;
  for (size_t d = size_t(std::max<int64_t>(axis, 0)) + 1; d < w->dims.size(); ++d) inner *= w->dims[d];
  std::vector<int> peak(size_t(channels), 0);
  for (int64_t i = 0; i < w->numel(); ++i) {
    const int64_t c = channels == 1 ? 0 : (i / inner) % channels;
    const float s = scale->data<float>()[c];
    const int8_t v = qw->data<int8_t>()[i];
    CHECK(v == int8_t(std::nearbyint(w->data<float>()[i] / s)));
    peak[size_t(c)] = std::max(peak[size_t(c)], std::abs(int(v)));
  }
  for (int p : peak) CHECK(p == 127);
}

// Input `slot` of n comes through QuantizeLinear -> DequantizeLinear with a scalar scale and a
// zero point of `dtype`.
void check_activation(const Graph& q, const Node& n, size_t slot, om::DType dtype) {
  INFO(n.name, " input ", slot);
  const Node* dq = producer(q, n.inputs[slot]);
  REQUIRE(dq != nullptr);
  CHECK(dq->op_type == "DequantizeLinear");
  const Node* qn = producer(q, dq->inputs[0]);
  REQUIRE(qn != nullptr);
  CHECK(qn->op_type == "QuantizeLinear");
  CHECK(qn->inputs[1] == dq->inputs[1]);
  CHECK(qn->inputs[2] == dq->inputs[2]);
  const TensorData* scale = q.find_initializer(qn->inputs[1]);
  const TensorData* zp = q.find_initializer(qn->inputs[2]);
  REQUIRE((scale && zp));
  CHECK(scale->numel() == 1);
  CHECK(scale->data<float>()[0] > 0);
  CHECK(std::isfinite(scale->data<float>()[0]));
  CHECK(zp->dtype == dtype);
}

// The step of the last QuantizeLinear before the outputs: a consumer that fuses the QDQ graph
// into integer kernels may round that value one level apart from the float simulation.
float last_step(const Graph& q) {
  float step = 0;
  for (const Node& n : q.nodes)
    if (n.op_type == "QuantizeLinear") step = q.find_initializer(n.inputs[1])->data<float>()[0];
  return step;
}

std::string temp_path(const std::string& name) {
  return (fs::temp_directory_path() / ("om_quant_" + std::to_string(::getpid()) + "_" + name)).string();
}

TensorData as_data(const std::string& name, const om::Tensor& t) {
  return TensorData::from_vector<float>(name, t.shape(), t.contiguous().to_vector<float>());
}

}  // namespace

TEST_CASE("QDQ structure of a traced MLP: int8 weights per output channel, Q/DQ on activations, kept nodes float") {
  auto model = mlp(5);
  const Dataset d = blobs(256, 1);
  om::TracedModel traced = model->trace(d.x.slice(0, 0, 4), {"batch", ""}, "features", "logits");
  const Graph& g = traced.graph();
  const om::quant::CalibrationSet calib = batches_of(d.x, "features", 4, 64);

  const Graph q = om::quant::quantize_static(g, calib);
  CHECK(count_op(q, "MatMul") == 3);
  // Three weights; the input, and each layer's output after its bias Add and Relu (which is the
  // next layer's input).
  CHECK(count_op(q, "DequantizeLinear") == 3 + 4);
  CHECK(count_op(q, "QuantizeLinear") == 4);
  for (const Node& n : q.nodes) {
    if (n.op_type != "MatMul") continue;
    const std::string w = n.name == "MatMul_0" ? "0.weight.view_" : n.name == "MatMul_3" ? "2.weight.view_" : "4.weight.view_";
    const int64_t out_features = n.name == "MatMul_6" ? 3 : 32;
    check_weight(q, g, n, 1, w, 1, out_features);  // MatMul's B is [in, out]: the last axis
    check_activation(q, n, 0, om::DType::u8);
    // The MatMul's bias Add (and its Relu) read the product as it is; their output is written as
    // <name>_float and quantized in place.
    std::string v = n.outputs[0];
    for (const char* op : {"Add", "Relu"}) {
      for (const Node& m : q.nodes)
        if (m.op_type == op && m.inputs[0] == v) v = m.outputs[0];
    }
    CHECK(v != n.outputs[0]);
    const Node* qn = nullptr;
    for (const Node& m : q.nodes) {
      CHECK_FALSE((m.op_type == "QuantizeLinear" && m.inputs[0] == n.outputs[0]));
      if (m.op_type == "QuantizeLinear" && m.inputs[0] == v) qn = &m;
    }
    REQUIRE(qn != nullptr);
  }
  // The graph's interface is unchanged.
  REQUIRE(q.inputs.size() == 1);
  CHECK(q.inputs[0].name == "features");
  CHECK(q.outputs[0].name == "logits");
  CHECK(g.nodes.size() == 8);  // the model given is untouched

  SUBCASE("s8 activations, per-tensor weights") {
    om::quant::QuantOptions o;
    o.activation_dtype = om::DType::i8;
    o.per_channel = false;
    const Graph q8 = om::quant::quantize_static(g, calib, o);
    const Node* mm = node_named(q8, "MatMul_3");
    REQUIRE(mm != nullptr);
    check_weight(q8, g, *mm, 1, "2.weight.view_", -1, 1);
    check_activation(q8, *mm, 0, om::DType::i8);
  }
  SUBCASE("a node kept by name stays float, the others are quantized") {
    om::quant::QuantOptions o;
    o.keep_nodes = {"MatMul_0"};
    const Graph qk = om::quant::quantize_static(g, calib, o);
    const Node* first = node_named(qk, "MatMul_0");
    REQUIRE(first != nullptr);
    CHECK(first->inputs[0] == "features");        // the graph input itself
    CHECK(first->inputs[1] == "0.weight.view_");  // the float initializer
    CHECK(qk.find_initializer("0.weight.view_")->dtype == om::DType::f32);
    CHECK(count_op(qk, "QuantizeLinear") == 3);  // the outputs of the Relus and of the last Add, the inputs they feed
    check_weight(qk, g, *node_named(qk, "MatMul_3"), 1, "2.weight.view_", 1, 32);
  }
  SUBCASE("op types kept: nothing to quantize leaves the graph as it was") {
    om::quant::QuantOptions o;
    o.keep_op_types = {"MatMul"};
    const Graph qk = om::quant::quantize_static(g, calib, o);
    CHECK(count_op(qk, "QuantizeLinear") == 0);
    CHECK(qk.nodes.size() == g.nodes.size());
  }
  SUBCASE("a QDQ graph quantized again is left as it is") {
    const Graph again = om::quant::quantize_static(q, calib);
    CHECK(again.nodes.size() == q.nodes.size());
    CHECK(count_op(again, "QuantizeLinear") == 4);
  }
  SUBCASE("only inputs quantized") {
    om::quant::QuantOptions o;
    o.quantize_outputs = false;
    const Graph qi = om::quant::quantize_static(g, calib, o);
    CHECK(count_op(qi, "QuantizeLinear") == 3);
    CHECK(node_named(qi, "MatMul_0")->outputs[0] == "v0");
  }
}

TEST_CASE("QDQ of imported Gemm and Conv graphs: the output-channel axis follows transB and Conv's W") {
  const Graph g = gemm_graph();
  const om::quant::CalibrationSet gemm_calib = random_batches("x", {16, 6}, 3, 8);
  const Graph q = om::quant::quantize_static(g, gemm_calib);
  check_weight(q, g, *node_named(q, "fc1"), 1, "w1", 0, 5);  // transB = 1: B is [N, K]
  check_weight(q, g, *node_named(q, "fc2"), 1, "w2", 1, 3);  // transB = 0: B is [K, N]
  check_activation(q, *node_named(q, "fc1"), 0, om::DType::u8);
  check_activation(q, *node_named(q, "fc2"), 0, om::DType::u8);
  CHECK(node_named(q, "fc1")->inputs[2] == "b1");  // the bias stays float
  CHECK(q.find_initializer("b1")->dtype == om::DType::f32);
  // fc1's Relu reads fc1's output as it is; the Q -> DQ pair follows the Relu (one rounding, to
  // the Relu's range), and a Fast session fuses Gemm, Relu and QuantizeLinear into one kernel.
  const Node* act = node_named(q, "act");
  REQUIRE(act != nullptr);
  CHECK(act->inputs[0] == node_named(q, "fc1")->outputs[0]);
  CHECK(producer(q, act->inputs[0])->name == "fc1");
  int quantized_after_act = 0;
  for (const Node& n : q.nodes) quantized_after_act += n.op_type == "QuantizeLinear" && n.inputs[0] == act->outputs[0];
  CHECK(quantized_after_act == 1);

  const Graph c = conv_graph();
  const om::quant::CalibrationSet conv_calib = random_batches("x", {2, 2, 5, 5}, 2, 9);
  const Graph qc = om::quant::quantize_static(c, conv_calib);
  check_weight(qc, c, *node_named(qc, "conv"), 1, "w", 0, 4);
  check_activation(qc, *node_named(qc, "conv"), 0, om::DType::u8);
  {  // Conv -> Relu: quantized after the Relu, which a Fast session fuses away with the Conv.
    Graph cr = c;
    cr.nodes[0].outputs[0] = "h";
    cr.nodes.push_back(node("Relu", "act", {"h"}, {"y"}));
    const Graph qcr = om::quant::quantize_static(cr, conv_calib);
    CHECK(producer(qcr, node_named(qcr, "act")->inputs[0])->name == "conv");
    CHECK(count_op(qcr, "QuantizeLinear") == 2);  // x, and the Relu's output
    om::Session s(qcr);
    CHECK(count_op(s.graph(), "QLinearConv") == 1);
    CHECK(count_op(s.graph(), "Relu") == 0);
  }

  // On data inside the calibrated ranges (values beyond them saturate), the QDQ graphs stay
  // within a few quantization steps of the float ones.
  for (const auto& [fg, qg, x] : {std::make_tuple(&g, &q, gemm_calib[1][0].second), std::make_tuple(&c, &qc, conv_calib[1][0].second)}) {
    const std::vector<float> want = om::Session(*fg).run({{"x", x}})[0].to_vector<float>();
    const std::vector<float> got = om::Session(*qg).run({{"x", x}})[0].to_vector<float>();
    REQUIRE(want.size() == got.size());
    float peak = 0, err = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      peak = std::max(peak, std::fabs(want[i]));
      err = std::max(err, std::fabs(want[i] - got[i]));
    }
    INFO(fg->nodes[0].op_type, ": error ", err, ", largest output ", peak);
    CHECK(err < 0.03f * peak);
  }
}

TEST_CASE("a constant activation gets a usable scale; percentile ranges are inside min-max") {
  const Graph g = gemm_graph();
  om::quant::CalibrationSet zeros = {{{"x", om::zeros({4, 6})}}};
  const Graph q = om::quant::quantize_static(g, zeros);
  const Node* dq = producer(q, node_named(q, "fc1")->inputs[0]);
  const float s = q.find_initializer(dq->inputs[1])->data<float>()[0];
  CHECK(s == 1.0f);  // a zero range: scale 1, every value quantizes to 0
  CHECK(q.find_initializer(dq->inputs[2])->data<uint8_t>()[0] == 0);

  // One outlier: min-max stretches to it, the 99th percentile does not.
  om::Tensor x = om::randn({200, 6});
  x.set<float>({0, 0}, 1000.0f);
  const om::quant::CalibrationSet calib = {{{"x", x}}};
  auto input_scale = [&](const om::quant::QuantOptions& opt) {
    const Graph r = om::quant::quantize_static(g, calib, opt);
    return r.find_initializer(producer(r, node_named(r, "fc1")->inputs[0])->inputs[1])->data<float>()[0];
  };
  om::quant::QuantOptions o;
  o.range_method = om::quant::RangeMethod::Percentile;
  o.percentile = 99.0;
  const float narrow = input_scale(o);
  const float wide = input_scale(om::quant::QuantOptions{});
  CHECK(wide >= 1000.0f / 255.0f);
  CHECK(narrow < wide / 50);
  CHECK(narrow > 0);
}

TEST_CASE("the QDQ model saves as ONNX (ONNX Runtime agrees within one quantization step) and as a 4x smaller .om") {
  const Dataset train_set = blobs(600, 31), test_set = blobs(64, 32);
  auto model = mlp(6);
  train(*model, train_set, 100, 0.05);
  om::TracedModel traced = model->trace(train_set.x.slice(0, 0, 4), {"batch", ""}, "features", "logits");
  const Graph q = om::quant::quantize_static(traced.graph(), batches_of(train_set.x, "features", 4, 100));
  const om::Tensor x = test_set.x;
  const om::Tensor y = om::Session(q).run({{"features", x}})[0];

  // ONNX: read back, the same bits in a Session; ONNX Runtime runs it through the oracle
  // (tools/trace_oracle), within one step of the last quantized value relative to the scale
  // the oracle divides by.
  const Graph back = om::onnx::read(om::onnx::write(q));
  CHECK(om::Session(back).run({{"features", x}})[0].to_vector<float>() == y.to_vector<float>());
  write_oracle_case("quant_mlp_qdq", q, {as_data("features", x)}, {as_data("logits", y)});
  float peak = 1;
  for (float v : y.to_vector<float>()) peak = std::max(peak, std::fabs(v));
  oracle::set_oracle_u8s8("quant_mlp_qdq");
  oracle::set_oracle_rtol("quant_mlp_qdq", 1.001 * double(last_step(q)) / double(peak));

  // Per-tensor weights: the form ONNX Runtime's QDQ fusion turns into integer MatMuls.
  om::quant::QuantOptions per_tensor;
  per_tensor.per_channel = false;
  const Graph qt = om::quant::quantize_static(traced.graph(), batches_of(train_set.x, "features", 4, 100), per_tensor);
  const om::Tensor yt = om::Session(qt).run({{"features", x}})[0];
  write_oracle_case("quant_mlp_qdq_per_tensor", qt, {as_data("features", x)}, {as_data("logits", yt)});
  float tpeak = 1;
  for (float v : yt.to_vector<float>()) tpeak = std::max(tpeak, std::fabs(v));
  oracle::set_oracle_u8s8("quant_mlp_qdq_per_tensor");
  oracle::set_oracle_rtol("quant_mlp_qdq_per_tensor", 1.001 * double(last_step(qt)) / double(tpeak));

  // The same for the Conv graph, in its static shape.
  const Graph c = conv_graph();
  const Graph qc = om::quant::quantize_static(c, random_batches("x", {2, 2, 5, 5}, 3, 10));
  om::Generator gen(12);
  const om::Tensor cx = om::randn({2, 2, 5, 5}, gen);
  const om::Tensor cy = om::Session(qc).run({{"x", cx}})[0];
  write_oracle_case("quant_conv_qdq", qc, {as_data("x", cx)}, {as_data("y", cy)});
  float cpeak = 1;
  for (float v : cy.to_vector<float>()) cpeak = std::max(cpeak, std::fabs(v));
  oracle::set_oracle_u8s8("quant_conv_qdq");
  oracle::set_oracle_rtol("quant_conv_qdq", 1.001 * double(last_step(qc)) / double(cpeak));

  // .om: the same bits from the file, Exact and Fast.
  const std::string path = temp_path("mlp_q.om");
  om::Model(q).save(path);
  for (om::ArithmeticMode mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
    const std::vector<float> in_memory = om::Session(q, {mode}).run({{"features", x}})[0].to_vector<float>();
    CHECK(om::Session::load(path, {mode}).run({{"features", x}})[0].to_vector<float>() == in_memory);
  }
  const Graph loaded = om::Model::load(path).graph();
  for (const TensorData& t : q.initializers) {
    const TensorData* u = loaded.find_initializer(t.name);
    REQUIRE(u != nullptr);
    CHECK(u->dtype == t.dtype);
    CHECK(u->nbytes == t.nbytes);
  }
  fs::remove(path);
}

TEST_CASE("a weight-dominated model: the quantized .om is at most 0.35 of the float one") {
  om::Generator gen(2);
  auto big = std::make_shared<om::nn::Sequential>(std::vector<std::shared_ptr<om::nn::Module>>{
      std::make_shared<om::nn::Linear>(64, 256, true, gen), std::make_shared<om::nn::ReLU>(),
      std::make_shared<om::nn::Linear>(256, 256, true, gen), std::make_shared<om::nn::ReLU>(),
      std::make_shared<om::nn::Linear>(256, 10, true, gen)});
  const om::Tensor x = om::randn({32, 64}, gen);
  om::TracedModel traced = big->trace(x, {"batch", ""}, "x", "y");
  const Graph q = om::quant::quantize_static(traced.graph(), batches_of(x, "x", 2, 16));
  const std::string fp = temp_path("big.om"), qp = temp_path("big_q.om");
  om::Model(traced.graph()).save(fp);
  om::Model(q).save(qp);
  const double ratio = double(fs::file_size(qp)) / double(fs::file_size(fp));
  MESSAGE("float .om ", fs::file_size(fp), " bytes, quantized ", fs::file_size(qp), " bytes, ratio ", ratio);
  CHECK(ratio <= 0.35);
  CHECK(om::Session::load(qp).run({{"x", x}})[0].to_vector<float>() == om::Session(q).run({{"x", x}})[0].to_vector<float>());
  fs::remove(fp);
  fs::remove(qp);
}
