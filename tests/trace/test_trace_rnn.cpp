// Recurrent models traced with symbolic batch and sequence axes: each layer is one LSTM / GRU
// node with the gate rows reordered by Gather on constants; the Session and ONNX Runtime
// (tools/trace_oracle) agree with eager at the traced shape and at other sizes.
#include <doctest/doctest.h>

#include <functional>

#include "onemodel/onemodel.h"
#include "trace_helpers.h"
#if __has_include("oracle_case.h")
#include "oracle_case.h"
#define OM_HAVE_ORACLE 1
#endif

namespace {

using Model = std::function<std::vector<om::Tensor>(const std::vector<om::Tensor>&)>;

size_t count(const om::graph::Graph& g, const char* op) {
  size_t n = 0;
  for (const auto& node : g.nodes) n += node.op_type == op;
  return n;
}

om::TracedModel check_rnn_model(const std::string& case_name, const Model& model, const std::vector<std::string>& axes,
                                const std::vector<om::Tensor>& trials, const std::vector<std::string>& output_names) {
  om::TracedModel traced;
  {
    auto tracer = om::Tracer::begin();
    om::Tensor x = tracer.input("x", trials[0], axes);
    std::vector<om::Tensor> ys = model({x});
    std::vector<std::pair<std::string, om::Tensor>> outs;
    for (size_t i = 0; i < ys.size(); ++i) outs.push_back({output_names[i], ys[i]});
    traced = tracer.finish(outs);
  }
  om::SessionOptions exact;
  exact.mode = om::ArithmeticMode::Exact;
  om::Session fast_session(traced.graph()), exact_session(traced.graph(), exact);
  for (size_t t = 0; t < trials.size(); ++t) {
    CAPTURE(case_name);
    CAPTURE(t);
    const std::vector<om::Tensor> eager = model({trials[t]});
    const auto got = tracetest::run_graph(fast_session, {{"x", trials[t]}});
    const auto got_exact = tracetest::run_graph(exact_session, {{"x", trials[t]}});
    REQUIRE(got.size() == eager.size());
    for (size_t k = 0; k < got.size(); ++k) {
      CHECK(tracetest::scaled_error(got[k], eager[k]) < 1e-5);
      CHECK(tracetest::scaled_error(got_exact[k], eager[k]) < 1e-5);
    }
#ifdef OM_HAVE_ORACLE
    auto data = [](const std::string& name, const om::Tensor& x) {
      om::Tensor c = x.clone();
      return om::graph::TensorData::copy_of(name, c.dtype(), c.shape(), c.storage().data(), size_t(c.numel()) * om::dtype_size(c.dtype()));
    };
    std::vector<om::graph::TensorData> in_data = {data("x", trials[t])}, out_data;
    for (size_t k = 0; k < eager.size(); ++k) out_data.push_back(data(output_names[k], eager[k]));
    if (t == 0) oracle::write_oracle_case("trace_" + case_name, traced.graph(), in_data, out_data);
    else oracle::add_oracle_inputs("trace_" + case_name, "shape" + std::to_string(t), in_data, out_data);
#endif
  }
  return traced;
}

}  // namespace

TEST_CASE("a 2-layer LSTM sequence tagger traced at sequence 7 runs at sequence 1 and 50") {
  om::Generator gen(21);
  om::nn::RnnOptions o;
  o.num_layers = 2;
  o.dropout = 0.25;  // training only: eval() below
  om::nn::Lstm lstm(5, 8, o, gen);
  om::nn::Linear head(8, 4, true, gen);
  lstm.eval();
  Model m = [&](const std::vector<om::Tensor>& x) { return std::vector<om::Tensor>{head(lstm(x[0]))}; };
  om::TracedModel t = check_rnn_model("rnn_lstm_tagger", m, {"seq", "batch", ""},
                                      {om::randn({7, 3, 5}, gen), om::randn({1, 2, 5}, gen), om::randn({50, 6, 5}, gen)}, {"tags"});
  CHECK(count(t.graph(), "LSTM") == 2);
  CHECK(count(t.graph(), "Gather") >= 4);  // the gate reorder of W and R (and the biases), per layer
  // The reorders fold: a Session holds only the recurrent nodes and the head.
  om::Session s(t.graph());
  for (const auto& r : s.pass_reports())
    if (r.name == std::string("fold_constants")) CHECK(r.changes > 0);
}

TEST_CASE("a GRU encoder (batch first) with a linear head on its final state") {
  om::Generator gen(22);
  om::nn::RnnOptions o;
  o.batch_first = true;
  om::nn::Gru gru(4, 6, o, gen);
  om::nn::Linear head(6, 3, true, gen);
  Model m = [&](const std::vector<om::Tensor>& x) {
    om::nn::RnnOutput r = gru.run(x[0]);
    return std::vector<om::Tensor>{head(r.h_n.select(0, 0)), r.output};
  };
  om::TracedModel t = check_rnn_model("rnn_gru_encoder", m, {"batch", "seq", ""},
                                      {om::randn({5, 7, 4}, gen), om::randn({2, 1, 4}, gen), om::randn({3, 50, 4}, gen)}, {"logits", "states"});
  CHECK(count(t.graph(), "GRU") == 1);
  for (const auto& n : t.graph().nodes)
    if (n.op_type == "GRU") {
      bool lbr = false;
      for (const auto& a : n.attributes) lbr = lbr || (a.name == "linear_before_reset" && a.i == 1);
      CHECK(lbr);
    }
}

TEST_CASE("a bidirectional LSTM: output sequence and final states of both directions") {
  om::Generator gen(23);
  om::nn::RnnOptions o;
  o.bidirectional = true;
  om::nn::Lstm lstm(3, 5, o, gen);
  Model m = [&](const std::vector<om::Tensor>& x) {
    om::nn::RnnOutput r = lstm.run(x[0]);
    return std::vector<om::Tensor>{r.output, r.h_n, r.c_n};
  };
  om::TracedModel t = check_rnn_model("rnn_bilstm", m, {"seq", "batch", ""},
                                      {om::randn({7, 4, 3}, gen), om::randn({1, 2, 3}, gen), om::randn({50, 3, 3}, gen)}, {"y", "h_n", "c_n"});
  CHECK(count(t.graph(), "LSTM") == 2);
}
