// The shape of traced graphs: the lowering table, aliases, constants, pruning, output naming,
// symbolic shape operands, and byte-identical ONNX across processes.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>

#include "onemodel/onemodel.h"
#include "onemodel/trace/lowering.h"
#include "self_exec.h"
#include "trace_helpers.h"
#include "oracle_case.h"

using tracetest::count_ops;

namespace {

// One invocation per operator of ops.def, on a traced [2,3] input `x` (and constants), with
// the ONNX op it must lower to ("" = an alias, no node).
struct Call {
  std::function<om::Tensor(const om::Tensor&)> fn;
  const char* onnx;
};
std::map<om::OpId, Call> operator_calls() {
  using om::OpId;
  const om::Tensor c = om::full({2, 3}, 2.0);
  return {
      {OpId::Add, {[=](const om::Tensor& x) { return om::add(x, c); }, "Add"}},
      {OpId::Sub, {[=](const om::Tensor& x) { return om::sub(x, 1.5); }, "Sub"}},
      {OpId::Mul, {[=](const om::Tensor& x) { return om::mul(x, c); }, "Mul"}},
      {OpId::Div, {[=](const om::Tensor& x) { return om::div(x, c); }, "Div"}},
      {OpId::Neg, {[](const om::Tensor& x) { return om::neg(x); }, "Neg"}},
      {OpId::Relu, {[](const om::Tensor& x) { return om::relu(x); }, "Relu"}},
      {OpId::Sigmoid, {[](const om::Tensor& x) { return om::sigmoid(x); }, "Sigmoid"}},
      {OpId::Tanh, {[](const om::Tensor& x) { return om::tanh(x); }, "Tanh"}},
      {OpId::Gelu, {[](const om::Tensor& x) { return om::gelu(x, om::GeluApproximate::Tanh); }, "Gelu"}},
      {OpId::MatMul, {[](const om::Tensor& x) { return om::matmul(x, om::ones({3, 4})); }, "MatMul"}},
      {OpId::Sum, {[](const om::Tensor& x) { return om::sum(x, 1, true); }, "ReduceSum"}},
      {OpId::Mean, {[](const om::Tensor& x) { return om::mean(x, 0); }, "ReduceMean"}},
      {OpId::Softmax, {[](const om::Tensor& x) { return om::softmax(x, 0); }, "Softmax"}},
      {OpId::LogSoftmax, {[](const om::Tensor& x) { return om::log_softmax(x, 1); }, "LogSoftmax"}},
      {OpId::Concat, {[=](const om::Tensor& x) { return om::cat({x, c}, 0); }, "Concat"}},
      {OpId::IndexSelect, {[](const om::Tensor& x) { return om::index_select(x, 1, om::from_vector<int64_t>({2, 0, -1})); }, "Gather"}},
      {OpId::Reshape, {[](const om::Tensor& x) { return x.reshape({3, 2}); }, "Reshape"}},
      {OpId::Permute, {[](const om::Tensor& x) { return x.permute({1, 0}); }, "Transpose"}},
      {OpId::Squeeze, {[](const om::Tensor& x) { return x.reshape({1, 6}).squeeze(0); }, "Squeeze"}},
      {OpId::Unsqueeze, {[](const om::Tensor& x) { return x.unsqueeze(1); }, "Unsqueeze"}},
      {OpId::Expand, {[](const om::Tensor& x) { return x.unsqueeze(0).expand({4, 2, 3}); }, "Expand"}},
      {OpId::Slice, {[](const om::Tensor& x) { return x.slice(1, 1, 3); }, "Slice"}},
      {OpId::Select, {[](const om::Tensor& x) { return x.select(0, 1); }, "Gather"}},
      {OpId::Flip, {[](const om::Tensor& x) { return x.flip(1); }, "Slice"}},
      {OpId::Cast, {[](const om::Tensor& x) { return x.to(om::DType::i64); }, "Cast"}},
      {OpId::Contiguous, {[](const om::Tensor& x) { return om::relu(x.t().contiguous()); }, "Transpose"}},
      {OpId::Clone, {[](const om::Tensor& x) { return om::relu(x.clone()); }, "Relu"}},
      {OpId::NllLoss, {[](const om::Tensor& x) { return om::nll_loss(x, om::from_vector<int64_t>({0, 1})); }, nullptr}},
      {OpId::LstmLayer, {[](const om::Tensor& x) {
         return om::lstm_layer(x.unsqueeze(2), om::full({8, 1}, 0.3), om::full({8, 2}, -0.2), om::full({8}, 0.1), om::full({8}, 0.05)).output;
       }, "LSTM"}},
      {OpId::GruLayer, {[](const om::Tensor& x) {
         return om::gru_layer(x.unsqueeze(2), om::full({6, 1}, 0.3), om::full({6, 2}, -0.2), om::full({6}, 0.1), om::full({6}, 0.05), {},
                              true).output;
       }, "GRU"}},
      {OpId::RnnState, {[](const om::Tensor& x) {
         return om::lstm_layer(x.unsqueeze(2), om::full({8, 1}, 0.3), om::full({8, 2}, -0.2)).c_n;
       }, "LSTM"}},
      // appended: training (math, comparisons, selection, losses)
      {OpId::Exp, {[](const om::Tensor& x) { return om::exp(x); }, "Exp"}},
      {OpId::Log, {[](const om::Tensor& x) { return om::log(om::abs(x)); }, "Log"}},
      {OpId::Sqrt, {[](const om::Tensor& x) { return om::sqrt(om::abs(x)); }, "Sqrt"}},
      {OpId::Abs, {[](const om::Tensor& x) { return om::abs(x); }, "Abs"}},
      {OpId::Pow, {[](const om::Tensor& x) { return om::pow(x, 2.0); }, "Pow"}},
      {OpId::Clamp, {[](const om::Tensor& x) { return om::clamp(x, -0.5, std::nullopt); }, "Clip"}},
      {OpId::Eq, {[](const om::Tensor& x) { return om::eq(x, 2.0).to(om::DType::i64); }, "Equal"}},
      {OpId::Ne, {[](const om::Tensor& x) { return om::ne(x, 2.0).to(om::DType::i64); }, "Not"}},
      {OpId::Lt, {[=](const om::Tensor& x) { return om::lt(x, c).to(om::DType::i64); }, "Less"}},
      {OpId::Le, {[](const om::Tensor& x) { return om::le(x, 0.5).to(om::DType::i64); }, "LessOrEqual"}},
      {OpId::Gt, {[](const om::Tensor& x) { return om::gt(x, 0.5).to(om::DType::i64); }, "Greater"}},
      {OpId::Ge, {[](const om::Tensor& x) { return om::ge(x, 0.5).to(om::DType::i64); }, "GreaterOrEqual"}},
      {OpId::Where, {[=](const om::Tensor& x) { return om::where(om::gt(x, 0.0), x, c); }, "Where"}},
      {OpId::Maximum, {[=](const om::Tensor& x) { return om::max(x, c); }, "Max"}},
      {OpId::Minimum, {[=](const om::Tensor& x) { return om::min(x, c); }, "Min"}},
      {OpId::ArgMax, {[](const om::Tensor& x) { return om::argmax(x, 1); }, "ArgMax"}},
      {OpId::ArgMin, {[](const om::Tensor& x) { return om::argmin(x); }, "ArgMin"}},
      {OpId::MaxReduce, {[](const om::Tensor& x) { return om::max(x); }, "ReduceMax"}},
      {OpId::MinReduce, {[](const om::Tensor& x) { return om::min(x, 0, true).first; }, "ReduceMax"}},
      {OpId::TopK, {[](const om::Tensor& x) { return om::topk(x, 2).first; }, "TopK"}},
      {OpId::TopKIndices, {[](const om::Tensor& x) { return om::topk(x, 2, 0, false).second; }, "TopK"}},
      {OpId::CrossEntropy, {[](const om::Tensor& x) { return om::cross_entropy(x, om::from_vector<int64_t>({0, 1})); }, nullptr}},
      {OpId::MseLoss, {[=](const om::Tensor& x) { return om::mse_loss(x, c); }, nullptr}},
      {OpId::L1Loss, {[=](const om::Tensor& x) { return om::l1_loss(x, c); }, nullptr}},
      {OpId::SmoothL1Loss, {[=](const om::Tensor& x) { return om::smooth_l1_loss(x, c); }, nullptr}},
      {OpId::HuberLoss, {[=](const om::Tensor& x) { return om::huber_loss(x, c); }, nullptr}},
      {OpId::BceWithLogits, {[=](const om::Tensor& x) { return om::binary_cross_entropy_with_logits(x, om::ones({2, 3})); }, nullptr}},
      {OpId::CtcLoss, {[](const om::Tensor& x) {
         return om::ctc_loss(x.reshape({2, 1, 3}), om::from_vector<int64_t>({1}), {2}, {1});
       }, nullptr}},
      {OpId::LayerNorm, {[](const om::Tensor& x) { return om::layer_norm(x, {3}, om::full({3}, 1.5), om::Tensor(), 1e-3); }, "LayerNormalization"}},
      {OpId::Embedding, {[](const om::Tensor& x) { return om::embedding(om::from_vector<int64_t>({1, 0, 1}), x); }, "Gather"}},
      {OpId::Dropout, {[](const om::Tensor& x) { return om::dropout(x, 0.5, true); }, nullptr}},
      {OpId::Conv2d, {[](const om::Tensor& x) { return om::conv2d(x.reshape({1, 1, 2, 3}), om::full({2, 1, 2, 2}, 0.5), om::ones({2}), 1, 1); }, "Conv"}},
      {OpId::ConvTranspose2d, {[](const om::Tensor& x) { return om::conv_transpose2d(x.reshape({1, 1, 2, 3}), om::full({1, 2, 2, 2}, 0.5), om::Tensor(), 2, 0, 1); }, "ConvTranspose"}},
      {OpId::BatchNorm2d, {[](const om::Tensor& x) {
         return om::batch_norm2d(x.reshape({1, 3, 2, 1}), om::full({3}, 0.5), om::full({3}, 2.0), om::full({3}, 1.5), om::full({3}, -1.0), false);
       }, "BatchNormalization"}},
      {OpId::MaxPool2d, {[](const om::Tensor& x) { return om::max_pool2d(x.reshape({1, 1, 2, 3}), 2, 1); }, "MaxPool"}},
      {OpId::AvgPool2d, {[](const om::Tensor& x) { return om::avg_pool2d(x.reshape({1, 1, 2, 3}), 2, 1, {0, 1}, false, false); }, "AveragePool"}},
      {OpId::GlobalAvgPool2d, {[](const om::Tensor& x) { return om::global_avg_pool2d(x.reshape({1, 2, 3, 1})); }, "GlobalAveragePool"}},
      {OpId::Resize2d, {[](const om::Tensor& x) { return om::resize2d(x.reshape({1, 1, 2, 3}), 4, 5, om::Interpolation::Bilinear); }, "Resize"}},
  };
}

}  // namespace

TEST_CASE("every operator of ops.def is lowered, or refused with UnsupportedOperation naming it") {
  const auto calls = operator_calls();
  REQUIRE(calls.size() == om::kOpCount);  // a new operator needs a line here
  for (size_t i = 0; i < om::kOpCount; ++i) {
    const auto op = om::OpId(i);
    CAPTURE(om::op_name(op));
    const Call& call = calls.at(op);
    const bool lowered = om::op_traceable(op) && om::trace::has_lowering(op);
    auto tracer = om::Tracer::begin();
    om::Tensor x = tracer.input("x", om::from_vector<float>({-1, 0.5f, 2, -3, 4, 0.25f}, {2, 3}));
    if (!lowered) {
      std::string m;
      CHECK(tracetest::trace_error_kind([&] { (void)call.fn(x); }, &m) == om::TraceErrorKind::UnsupportedOperation);
      CHECK(m.find(om::op_name(op)) != std::string::npos);
      continue;
    }
    REQUIRE(call.onnx != nullptr);
    om::Tensor y = call.fn(x);
    om::TracedModel m = tracer.finish({{"y", y}});
    CHECK(count_ops(m.graph(), call.onnx) >= 1);
    // and the graph computes what eager computed
    for (om::ArithmeticMode mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
      if (mode == om::ArithmeticMode::Exact && !tracetest::all_exact(m.graph())) continue;  // e.g. Pow: fast only
      auto out = tracetest::run_graph(m.graph(), {{"x", om::from_vector<float>({-1, 0.5f, 2, -3, 4, 0.25f}, {2, 3})}}, mode);
      if (y.dtype() == om::DType::f32) CHECK(tracetest::scaled_error(out[0], y) < 1e-5);
      else CHECK(out[0].to_vector<int64_t>() == y.to_vector<int64_t>());
    }
    // and so does ONNX Runtime (tools/trace_oracle, run after the suites)
    om::Tensor xin = om::from_vector<float>({-1, 0.5f, 2, -3, 4, 0.25f}, {2, 3});
    om::Tensor yc = y.clone();  // fresh storage: offset 0
    oracle::write_oracle_case(std::string("trace_op_") + om::op_enum_name(op), m.graph(),
                              {om::graph::TensorData::copy_of("x", om::DType::f32, {2, 3}, xin.storage().data(), 24)},
                              {om::graph::TensorData::copy_of("y", yc.dtype(), yc.shape(), yc.storage().data(),
                                                              size_t(yc.numel()) * om::dtype_size(yc.dtype()))});
  }
}

TEST_CASE("aliases write no node; detach of a traced tensor returns it") {
  auto tracer = om::Tracer::begin();
  om::Tensor x = tracer.input("x", om::ones({2, 3}));
  om::Tensor a = om::relu(x);
  om::Tensor b = a.reshape({2, 3}).contiguous().clone().slice(1, 0, 3).detach();
  om::Tensor y = om::tanh(b);
  om::TracedModel m = tracer.finish({{"y", y}});
  CHECK(m.graph().nodes.size() == 2);
  CHECK(count_ops(m.graph(), "Relu") == 1);
  CHECK(count_ops(m.graph(), "Tanh") == 1);
}

TEST_CASE("constants: named parameters, .view_ names, dedup, generated names, folding of constant-only ops") {
  om::Tensor w = om::randn({3, 3}), u = om::randn({3, 3}), bias = om::ones({3});
  auto tracer = om::Tracer::begin();
  om::Tracer::parameter("fc.weight", w);
  om::Tracer::parameter("fc.bias", bias);
  om::Tensor x = tracer.input("x", om::ones({2, 3}));
  om::Tensor y = om::matmul(x, w);       // fc.weight as is
  y = om::add(y, om::matmul(x, w));      // deduplicated
  y = om::add(y, om::matmul(x, w.t()));  // a differently strided view: fc.weight.view_
  y = om::add(y, om::matmul(x, w.t()));  // the same view again: deduplicated by storage, offset, shape, strides
  y = om::add(y, om::add(bias, bias));   // constant-only: runs eagerly, no node
  y = om::add(y, om::matmul(x, u));      // unnamed: generated name
  om::TracedModel m = tracer.finish({{"y", y}});
  std::vector<std::string> names;
  for (const auto& t : m.graph().initializers) names.push_back(t.name);
  CHECK(std::count(names.begin(), names.end(), "fc.weight") == 1);
  CHECK(std::count(names.begin(), names.end(), "fc.weight.view_") == 1);
  CHECK(std::find(names.begin(), names.end(), "const_0") != names.end());
  CHECK(names.size() == 4);  // fc.weight, its view, 2*bias, u
  CHECK(count_ops(m.graph(), "MatMul") == 5);
  // the constant-only add became one initializer consumed by one Add
  for (const auto& n : m.graph().nodes) {
    if (n.op_type != "Add") continue;
    const bool both_const = m.graph().find_initializer(n.inputs[0]) && m.graph().find_initializer(n.inputs[1]);
    CHECK_FALSE(both_const);
  }
  auto out = tracetest::run_graph(m.graph(), {{"x", om::ones({2, 3})}});
  CHECK(tracetest::scaled_error(out[0], y) < 1e-5);
}

TEST_CASE("a second differently strided view of a named weight is .view_2") {
  om::Tensor w = om::randn({4, 4});
  auto tracer = om::Tracer::begin();
  om::Tracer::parameter("w", w);
  om::Tensor x = tracer.input("x", om::ones({2, 4}));
  om::Tensor y1 = om::matmul(x, w.t());
  om::Tensor y2 = om::matmul(x, w.slice(1, 0, 2));
  om::TracedModel m = tracer.finish({{"y1", y1}, {"y2", y2}});
  CHECK(m.graph().find_initializer("w.view_") != nullptr);
  CHECK(m.graph().find_initializer("w.view_2") != nullptr);
  CHECK(m.graph().find_initializer("w") == nullptr);
}

TEST_CASE("pruning and output naming: unused work is dropped; Identity for outputs that are inputs or repeated") {
  auto tracer = om::Tracer::begin();
  om::Tensor x = tracer.input("x", om::ones({2, 3}));
  (void)om::sigmoid(x);  // scratch nothing uses
  om::Tensor y = om::relu(x);
  om::TracedModel m = tracer.finish({{"y", y}, {"again", y}, {"echo", x}});
  const auto& g = m.graph();
  CHECK(count_ops(g, "Sigmoid") == 0);
  CHECK(count_ops(g, "Relu") == 1);
  CHECK(count_ops(g, "Identity") == 2);
  REQUIRE(g.outputs.size() == 3);
  CHECK(g.outputs[0].name == "y");
  CHECK(g.outputs[1].name == "again");
  CHECK(g.outputs[2].name == "echo");
  auto out = tracetest::run_graph(g, {{"x", om::full({2, 3}, -2.0)}});
  CHECK(out[1].to_vector<float>() == std::vector<float>(6, 0.0f));
  CHECK(out[2].to_vector<float>() == std::vector<float>(6, -2.0f));
}

TEST_CASE("symbolic axes: dim_param inputs, -1 for one symbolic extent, Shape chains otherwise") {
  auto tracer = om::Tracer::begin();
  om::Tensor x = tracer.input("x", om::randn({3, 5, 4}), {"batch", "seq", ""});
  const int64_t b = x.shape()[0], s = x.shape()[1];
  om::Tensor flat = x.reshape({b * s, 4});   // one symbolic extent (batch*seq): constant with -1
  om::Tensor back = om::relu(flat).reshape({b, s, 4});  // two: Shape chains
  om::TracedModel m = tracer.finish({{"y", back}});
  const auto& g = m.graph();
  REQUIRE(g.inputs.size() == 1);
  CHECK(g.inputs[0].shape[0].param == "batch");
  CHECK(g.inputs[0].shape[1].param == "seq");
  CHECK(g.inputs[0].shape[2].size == 4);
  CHECK(count_ops(g, "Shape") == 2);
  CHECK(count_ops(g, "Concat") == 1);
  CHECK(g.outputs[0].shape[0].param == "batch");
  CHECK(g.outputs[0].shape[1].param == "seq");
  for (auto [bb, ss] : {std::pair<int64_t, int64_t>{3, 5}, {2, 7}, {6, 2}}) {
    om::Tensor in = om::randn({bb, ss, 4});
    auto out = tracetest::run_graph(g, {{"x", in}});
    CHECK(tracetest::scaled_error(out[0], om::relu(in)) < 1e-6);
  }
}

namespace {
std::vector<uint8_t> trace_reference_model() {
  om::Generator gen(7);
  om::Tensor w1 = om::randn({16, 8}, gen), b1 = om::randn({16}, gen), w2 = om::randn({4, 16}, gen);
  auto tracer = om::Tracer::begin();
  om::Tracer::parameter("l1.weight", w1);
  om::Tracer::parameter("l1.bias", b1);
  om::Tracer::parameter("l2.weight", w2);
  om::Tensor x = tracer.input("x", om::randn({3, 8}, gen), {"batch", ""});
  om::Tensor y = om::log_softmax(om::linear(om::gelu(om::linear(x, w1, b1)), w2));
  return tracer.finish({{"y", y}}).to_onnx();
}
std::string hex_digest(const std::vector<uint8_t>& bytes) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a over every byte
  for (uint8_t b : bytes) h = (h ^ b) * 1099511628211ULL;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx:%zu", static_cast<unsigned long long>(h), bytes.size());
  return buf;
}
}  // namespace

TEST_CASE("trace digest child" * doctest::skip(std::getenv("OM_TRACE_DIGEST_CHILD") == nullptr)) {
  std::printf("DIGEST %s\n", hex_digest(trace_reference_model()).c_str());
}

TEST_CASE("tracing the same model twice gives byte-identical ONNX, also across processes") {
  const std::vector<uint8_t> a = trace_reference_model(), b = trace_reference_model();
  CHECK(a == b);
  const std::string cmd = "OM_TRACE_DIGEST_CHILD=1 " + testutil::self_command() + " --test-case='trace digest child' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char line[256];
  std::string child;
  while (std::fgets(line, sizeof line, p))
    if (std::string(line).rfind("DIGEST ", 0) == 0) child = std::string(line + 7);
  pclose(p);
  while (!child.empty() && (child.back() == '\n' || child.back() == '\r')) child.pop_back();
  CHECK(child == hex_digest(a));
}

TEST_CASE("a traced graph is verified once on its way to ONNX, the library format and a Session") {
  auto tracer = om::Tracer::begin();
  om::Tensor x = tracer.input("x", om::ones({2, 3}), {"batch", ""});
  om::Tensor y = om::exp(om::relu(x));  // no pass rewrites Relu -> Exp
  const uint64_t before = om::graph::verify_count();
  om::TracedModel m = tracer.finish({{"y", y}});
  CHECK(om::graph::verify_count() == before + 1);  // finish
  (void)m.to_onnx();
  const std::string path = std::string(OM_BINARY_DIR) + "/verify_once.om";
  m.save(path);
  om::Session fast(m, {om::ArithmeticMode::Fast});
  om::Session exact(m, {om::ArithmeticMode::Exact});
  CHECK(om::graph::verify_count() == before + 1);  // no pass changes this graph: nothing re-verified
  om::Session loaded = om::Session::load(path);
  CHECK(om::graph::verify_count() == before + 2);  // the reader checks the file once, the Session trusts it
  std::remove(path.c_str());
}
