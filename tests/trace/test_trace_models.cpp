// Whole models traced and run: eager vs Session (Fast within 1e-5 scaled, Exact bit-equal where
// both layers share the kernels) at the traced shape and at other sizes of every symbolic axis;
// the ONNX files go to the ONNX Runtime oracle (tools/trace_oracle) at the same shapes.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>

#include "onemodel/kernels/kernels.h"
#include "onemodel/onemodel.h"
#include "trace_helpers.h"
#if __has_include("oracle_case.h")
#include "oracle_case.h"
#define OM_HAVE_ORACLE 1
#endif

namespace {

using Model = std::function<std::vector<om::Tensor>(const std::vector<om::Tensor>&)>;

struct InputSpec {
  std::string name;
  std::vector<std::string> axes;
};

// Traces `model` on `examples`, then for each input set in `trials` (the first being the traced
// shapes) compares the Session with eager, and writes oracle cases.
void check_model(const std::string& case_name, const Model& model, const std::vector<InputSpec>& specs,
                 const std::vector<std::vector<om::Tensor>>& trials, const std::vector<std::string>& output_names, bool exact_bits,
                 bool print_hash = false) {
  om::TracedModel traced;
  {
    auto tracer = om::Tracer::begin();
    std::vector<om::Tensor> xs;
    for (size_t i = 0; i < specs.size(); ++i) xs.push_back(tracer.input(specs[i].name, trials[0][i], specs[i].axes));
    std::vector<om::Tensor> ys = model(xs);
    std::vector<std::pair<std::string, om::Tensor>> outs;
    for (size_t i = 0; i < ys.size(); ++i) outs.push_back({output_names[i], ys[i]});
    traced = tracer.finish(outs);
  }
  om::SessionOptions fast, exact;
  exact.mode = om::ArithmeticMode::Exact;
  om::Session fast_session(traced.graph(), fast), exact_session(traced.graph(), exact);
  for (size_t t = 0; t < trials.size(); ++t) {
    CAPTURE(case_name);
    CAPTURE(t);
    std::vector<std::pair<std::string, om::Tensor>> feeds;
    for (size_t i = 0; i < specs.size(); ++i) feeds.push_back({specs[i].name, trials[t][i]});
    const std::vector<om::Tensor> eager = model(trials[t]);
    const auto got = tracetest::run_graph(fast_session, feeds);
    REQUIRE(got.size() == eager.size());
    for (size_t k = 0; k < got.size(); ++k) CHECK(tracetest::scaled_error(got[k], eager[k]) < 1e-5);
    if (exact_bits) {
      std::vector<om::Tensor> eager_exact;
      {
        om::ArithmeticModeGuard guard(om::ArithmeticMode::Exact);
        eager_exact = model(trials[t]);
      }
      const auto got_exact = tracetest::run_graph(exact_session, feeds);
      for (size_t k = 0; k < got.size(); ++k) CHECK(tracetest::bit_equal(got_exact[k], eager_exact[k]));
      // Compared across x86 AVX2, x86 scalar and AArch64 by tools/exactness.sh (make cross-test).
      if (print_hash && t == 0) {
        uint64_t h = 1469598103934665603ULL;
        for (const om::Tensor& y : got_exact)
          for (float v : y.to_vector<float>()) {
            uint32_t bits;
            std::memcpy(&bits, &v, 4);
            for (int b = 0; b < 4; ++b) h = (h ^ ((bits >> (8 * b)) & 0xff)) * 1099511628211ULL;
          }
        std::printf("EXACT_HASH trace_%s %s %016llx\n", case_name.c_str(), om::kernels::isa_name(om::kernels::active_isa()),
                    static_cast<unsigned long long>(h));
      }
    }
#ifdef OM_HAVE_ORACLE
    auto data = [](const std::string& name, const om::Tensor& x) {
      om::Tensor c = x.clone();  // fresh storage: offset 0
      return om::graph::TensorData::copy_of(name, c.dtype(), c.shape(), c.storage().data(), size_t(c.numel()) * om::dtype_size(c.dtype()));
    };
    std::vector<om::graph::TensorData> in_data, out_data;
    for (const auto& [name, x] : feeds) in_data.push_back(data(name, x));
    for (size_t k = 0; k < eager.size(); ++k) out_data.push_back(data(output_names[k], eager[k]));
    if (t == 0) oracle::write_oracle_case("trace_" + case_name, traced.graph(), in_data, out_data);
    else oracle::add_oracle_inputs("trace_" + case_name, "shape" + std::to_string(t), in_data, out_data);
#endif
  }
}

}  // namespace

TEST_CASE("an MLP trained with autograd, traced with a symbolic batch") {
  om::Generator gen(11);
  om::Tensor w1 = om::randn({16, 4}, gen).requires_grad_(), b1 = om::zeros({16}).requires_grad_();
  om::Tensor w2 = om::randn({3, 16}, gen).requires_grad_(), b2 = om::zeros({3}).requires_grad_();
  om::Tensor data = om::randn({32, 4}, gen);
  om::Tensor target = om::randn({32, 3}, gen);
  float first = 0, last = 0;
  for (int step = 0; step < 30; ++step) {
    om::StoreScope scope;
    om::Tensor y = om::linear(om::relu(om::linear(data, w1, b1)), w2, b2);
    om::Tensor loss = om::mse_loss(y, target);
    for (om::Tensor* p : {&w1, &b1, &w2, &b2}) p->zero_grad();
    loss.backward();
    for (om::Tensor* p : {&w1, &b1, &w2, &b2}) {
      om::Tensor upd = om::sub(p->detach(), om::mul(p->grad(), 0.05));
      p->detach().copy_from(upd);
    }
    (step == 0 ? first : last) = loss.item<float>();
  }
  CHECK(last < first);
  Model mlp = [&](const std::vector<om::Tensor>& x) {
    return std::vector<om::Tensor>{om::linear(om::relu(om::linear(x[0], w1, b1)), w2, b2)};
  };
  check_model("mlp", mlp, {{"x", {"batch", ""}}}, {{om::randn({5, 4}, gen)}, {om::randn({2, 4}, gen)}, {om::randn({9, 4}, gen)}}, {"y"}, true);
}

TEST_CASE("a reshape that reads x.shape()[0] * x.shape()[1]") {
  om::Generator gen(12);
  om::Tensor w = om::randn({6, 5}, gen);
  Model m = [&](const std::vector<om::Tensor>& x) {
    const om::Tensor& in = x[0];
    om::Tensor flat = in.reshape({in.shape()[0] * in.shape()[1], in.shape()[2]});
    om::Tensor h = om::tanh(om::matmul(flat, w));
    return std::vector<om::Tensor>{h.reshape({in.shape()[0], in.shape()[1], 5})};
  };
  check_model("reshape_product", m, {{"x", {"batch", "seq", ""}}},
              {{om::randn({3, 4, 6}, gen)}, {om::randn({2, 7, 6}, gen)}, {om::randn({5, 2, 6}, gen)}}, {"y"}, true, true);
}

TEST_CASE("a self-attention block on [batch, seq, d] with batch and seq symbolic") {
  om::Generator gen(13);
  const int64_t d = 8, heads = 2, dh = d / heads;
  om::Tensor wq = om::randn({d, d}, gen), wk = om::randn({d, d}, gen), wv = om::randn({d, d}, gen), wo = om::randn({d, d}, gen);
  om::Tensor bo = om::randn({d}, gen);
  Model m = [&](const std::vector<om::Tensor>& x) {
    const om::Tensor& in = x[0];
    const int64_t b = in.shape()[0], s = in.shape()[1];
    auto split = [&](const om::Tensor& t) { return t.reshape({b, s, heads, dh}).permute({0, 2, 1, 3}); };
    om::Tensor q = split(om::linear(in, wq)), k = split(om::linear(in, wk)), v = split(om::linear(in, wv));
    om::Tensor scores = om::mul(om::matmul(q, k.transpose(-1, -2)), 1.0 / std::sqrt(double(dh)));
    om::Tensor attn = om::matmul(om::softmax(scores, -1), v);
    om::Tensor merged = attn.permute({0, 2, 1, 3}).reshape({b, s, d});
    return std::vector<om::Tensor>{om::add(in, om::linear(merged, wo, bo))};
  };
  check_model("attention", m, {{"x", {"batch", "seq", ""}}},
              {{om::randn({2, 5, d}, gen)}, {om::randn({3, 5, d}, gen)}, {om::randn({2, 9, d}, gen)}, {om::randn({4, 3, d}, gen)}}, {"y"},
              false);
}

TEST_CASE("a model that uses a weight and its transpose") {
  om::Generator gen(14);
  om::Tensor w = om::randn({6, 3}, gen);
  Model m = [&](const std::vector<om::Tensor>& x) {
    om::Tensor code = om::relu(om::matmul(x[0], w));   // [batch, 3]
    return std::vector<om::Tensor>{om::matmul(code, w.t())};  // tied decoder
  };
  check_model("tied_weights", m, {{"x", {"batch", ""}}}, {{om::randn({4, 6}, gen)}, {om::randn({2, 6}, gen)}, {om::randn({7, 6}, gen)}}, {"y"},
              true, true);
}

TEST_CASE("outputs that repeat and outputs that are inputs; two inputs; reductions and selects") {
  om::Generator gen(15);
  Model m = [&](const std::vector<om::Tensor>& x) {
    om::Tensor s = om::sum(om::mul(x[0], x[1]), -1);
    om::Tensor first = x[0].select(1, 0);
    om::Tensor joined = om::cat({x[0], x[1]}, 0);
    return std::vector<om::Tensor>{s, s, x[1], om::add(first, om::mean(x[1], 1)), joined.flip(1)};
  };
  check_model("outputs", m, {{"a", {"batch", ""}}, {"b", {"batch", ""}}},
              {{om::randn({3, 4}, gen), om::randn({3, 4}, gen)}, {om::randn({5, 4}, gen), om::randn({5, 4}, gen)},
               {om::randn({2, 4}, gen), om::randn({2, 4}, gen)}},
              {"dot", "dot_again", "b_echo", "mix", "flipped"}, false);
}
