// The transformer family traced (docs/tracing.md): LayerNorm, Embedding, Dropout, attention, and
// creation from sizes, then a BERT-style encoder and a GPT-style causal block with symbolic batch
// and sequence, compared with eager in the Session (Fast, 1e-5 scaled) at the traced and two
// other shapes; the ONNX files go to the ONNX Runtime oracle at the same shapes.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>

#include <cstdio>
#include <cstring>

#include "onemodel/kernels/kernels.h"
#include "onemodel/onemodel.h"
#include "oracle_case.h"
#include "trace_helpers.h"

using tracetest::count_ops;

namespace {

using Model = std::function<om::Tensor(const std::vector<om::Tensor>&)>;

struct InputSpec {
  std::string name;
  std::vector<std::string> axes;
};

// Traces on trials[0], then compares Session Fast (and Exact within `exact_tol`) with eager for
// every trial and writes the oracle case with every trial's inputs.
om::graph::Graph check_traced(const std::string& case_name, const Model& model, const std::vector<InputSpec>& specs,
                              const std::vector<std::vector<om::Tensor>>& trials, double exact_tol = 1e-5) {
  om::TracedModel traced;
  {
    auto tracer = om::Tracer::begin();
    std::vector<om::Tensor> xs;
    for (size_t i = 0; i < specs.size(); ++i) xs.push_back(tracer.input(specs[i].name, trials[0][i], specs[i].axes));
    traced = tracer.finish({{"y", model(xs)}});
  }
  om::SessionOptions exact;
  exact.mode = om::ArithmeticMode::Exact;
  om::Session fast_session(traced.graph()), exact_session(traced.graph(), exact);
  for (size_t t = 0; t < trials.size(); ++t) {
    CAPTURE(case_name);
    CAPTURE(t);
    std::vector<std::pair<std::string, om::Tensor>> feeds;
    for (size_t i = 0; i < specs.size(); ++i) feeds.push_back({specs[i].name, trials[t][i]});
    const om::Tensor eager = model(trials[t]);
    const auto got = tracetest::run_graph(fast_session, feeds);
    REQUIRE(got.size() == 1);
    CHECK(tracetest::scaled_error(got[0], eager) < 1e-5);
    const om::Tensor exact_y = tracetest::run_graph(exact_session, feeds)[0];
    CHECK(tracetest::scaled_error(exact_y, eager) < exact_tol);
    if (t == 0) {  // compared across ISAs and machines by tools/exactness.sh (make cross-test)
      uint64_t h = 1469598103934665603ULL;
      for (float v : exact_y.to_vector<float>()) {
        uint32_t bits;
        std::memcpy(&bits, &v, 4);
        for (int b = 0; b < 4; ++b) h = (h ^ ((bits >> (8 * b)) & 0xff)) * 1099511628211ULL;
      }
      std::printf("EXACT_HASH trace_%s %s %016llx\n", case_name.c_str(), om::kernels::isa_name(om::kernels::active_isa()),
                  static_cast<unsigned long long>(h));
    }
    auto data = [](const std::string& name, const om::Tensor& x) {
      om::Tensor c = x.clone();
      return om::graph::TensorData::copy_of(name, c.dtype(), c.shape(), c.storage().data(), size_t(c.numel()) * om::dtype_size(c.dtype()));
    };
    std::vector<om::graph::TensorData> in_data;
    for (const auto& [name, x] : feeds) in_data.push_back(data(name, x));
    if (t == 0) oracle::write_oracle_case("trace_" + case_name, traced.graph(), in_data, {data("y", eager)});
    else oracle::add_oracle_inputs("trace_" + case_name, "shape" + std::to_string(t), in_data, {data("y", eager)});
  }
  return traced.graph();
}

om::Tensor tokens(int64_t b, int64_t l, int64_t vocab, om::Generator& g) {
  std::vector<int64_t> v(size_t(b * l));
  for (auto& x : v) x = int64_t(g.next_u32() % uint32_t(vocab));
  return om::from_vector<int64_t>(v, {b, l});
}

// Token + position embeddings, an encoder stack, mean pooling over the sequence, a classifier.
struct Bert : om::nn::Module {
  std::shared_ptr<om::nn::Embedding> tok, pos;
  std::shared_ptr<om::nn::TransformerEncoder> encoder;
  std::shared_ptr<om::nn::LayerNorm> norm;
  std::shared_ptr<om::nn::Linear> head;
  Bert(int64_t vocab, int64_t d, int64_t heads, int64_t ff, int64_t layers, int64_t classes, om::Generator& g) : Module("Bert") {
    tok = register_module("tok", std::make_shared<om::nn::Embedding>(vocab, d, 0, g));
    pos = register_module("pos", std::make_shared<om::nn::Embedding>(64, d, om::nn::Embedding::kNoPadding, g));
    om::nn::EncoderLayerOptions o;
    o.dim_feedforward = ff;
    o.batch_first = true;
    o.activation = om::nn::Activation::Gelu;
    encoder = register_module("encoder", std::make_shared<om::nn::TransformerEncoder>(
                                             [&] { return std::make_shared<om::nn::TransformerEncoderLayer>(d, heads, o, g); }, layers));
    norm = register_module("norm", std::make_shared<om::nn::LayerNorm>(om::Shape{d}));
    head = register_module("head", std::make_shared<om::nn::Linear>(d, classes, true, g));
  }
  om::Tensor forward(const om::Tensor& ids) override {
    om::Tensor positions = om::arange(ids.shape()[1], om::DType::i64);
    om::Tensor x = om::add((*tok)(ids), (*pos)(positions));
    x = (*norm)((*encoder)(x));
    return (*head)(om::mean(x, 1));
  }
};

}  // namespace

TEST_CASE("LayerNorm, Embedding and evaluation Dropout trace to LayerNormalization, Gather and nothing") {
  om::Generator g(1);
  auto ln = std::make_shared<om::nn::LayerNorm>(om::Shape{6}, 1e-3);
  auto emb = std::make_shared<om::nn::Embedding>(11, 6, 0, g);
  auto drop = std::make_shared<om::nn::Dropout>(0.3);
  drop->eval();
  auto tracer = om::Tracer::begin();
  om::Tensor ids = tracer.input("ids", tokens(3, 5, 11, g), {"batch", "seq"});
  om::Tensor y = (*drop)((*ln)((*emb)(ids)));
  om::TracedModel m = tracer.finish({{"y", y}});
  CHECK(count_ops(m.graph(), "Gather") == 1);
  CHECK(count_ops(m.graph(), "LayerNormalization") == 1);
  CHECK(m.graph().nodes.size() == 2);
  for (const auto& n : m.graph().nodes)
    if (n.op_type == "LayerNormalization") {
      for (const auto& a : n.attributes) {
        if (a.name == "axis") CHECK(a.i == -1);
        if (a.name == "epsilon") CHECK(a.f == doctest::Approx(1e-3));
      }
    }
  om::Tensor ids2 = tokens(2, 8, 11, g);
  CHECK(tracetest::scaled_error(tracetest::run_graph(m.graph(), {{"ids", ids2}})[0], (*ln)((*emb)(ids2))) < 1e-5);
}

TEST_CASE("Dropout in training mode is refused, naming the module path") {
  auto seq = std::make_shared<om::nn::Sequential>(
      std::make_shared<om::nn::ReLU>(), std::make_shared<om::nn::Dropout>(0.2));
  seq->train();
  std::string message;
  auto tracer = om::Tracer::begin();
  om::Tensor x = tracer.input("x", om::ones({2, 3}));
  CHECK(tracetest::trace_error_kind([&] { (void)(*seq)(x); }, &message) == om::TraceErrorKind::UnsupportedOperation);
  CHECK(message.find("om::dropout") != std::string::npos);
  CHECK(message.find("1") != std::string::npos);
}

TEST_CASE("creation from sizes: arange and zeros of a symbol's size follow it at run time") {
  om::Generator g(2);
  om::Tensor table = om::randn({40, 4}, g);
  Model m = [&](const std::vector<om::Tensor>& in) {
    const om::Tensor& x = in[0];  // [batch, seq, 4]
    om::Tensor pos = om::embedding(om::arange(x.shape()[1], om::DType::i64), table);
    om::Tensor ramp = om::arange(0.5, 0.5 + 2.0 * double(x.shape()[1]), 2.0).reshape({x.shape()[1], 1});
    om::Tensor state = om::add(om::zeros({x.shape()[0], 1, 4}), 1.0);
    return om::add(om::add(om::add(x, pos), ramp), state);
  };
  om::graph::Graph gr = check_traced("creation_sizes", m, {{"x", {"batch", "seq", ""}}},
                                     {{om::randn({3, 5, 4}, g)}, {om::randn({2, 9, 4}, g)}, {om::randn({6, 2, 4}, g)}});
  CHECK(count_ops(gr, "Range") == 2);
  CHECK(count_ops(gr, "Expand") >= 1);
}

TEST_CASE("attention traces to Transpose, MatMul, Mul, Add of the mask, Softmax, MatMul with symbolic batch and sequence") {
  om::Generator g(3);
  const int64_t H = 2, D = 4;
  Model m = [&](const std::vector<om::Tensor>& in) {
    const om::Tensor& x = in[0];  // [batch, heads, seq, D]
    const om::Tensor& mask = in[1];  // [batch, seq, seq]
    return om::attention(x, om::tanh(x), om::sigmoid(x), mask);
  };
  om::graph::Graph gr = check_traced("attention_op", m, {{"x", {"batch", "", "seq", ""}}, {"mask", {"batch", "seq", "seq"}}},
                                     {{om::randn({3, H, 5, D}, g), om::randn({3, 5, 5}, g)},
                                      {om::randn({2, H, 7, D}, g), om::randn({2, 7, 7}, g)},
                                      {om::randn({4, H, 3, D}, g), om::randn({4, 3, 3}, g)}});
  for (const char* op : {"Transpose", "MatMul", "Mul", "Add", "Softmax"}) CHECK(count_ops(gr, op) >= 1);
  CHECK(count_ops(gr, "MatMul") == 2);
}

TEST_CASE("a BERT-style encoder with symbolic batch and sequence agrees with eager at three shapes") {
  om::Generator g(4);
  auto model = std::make_shared<Bert>(23, 16, 2, 32, 2, 4, g);
  model->eval();
  Model m = [&](const std::vector<om::Tensor>& in) { return model->forward(in[0]); };
  om::graph::Graph gr = check_traced("bert_encoder", m, {{"ids", {"batch", "seq"}}},
                                     {{tokens(3, 5, 23, g)}, {tokens(2, 9, 23, g)}, {tokens(6, 3, 23, g)}});
  CHECK(count_ops(gr, "LayerNormalization") == 5);
  CHECK(count_ops(gr, "Gather") >= 2);
  CHECK(count_ops(gr, "Range") == 1);
  CHECK(count_ops(gr, "Softmax") == 2);
  // In a Fast session the passes fuse both attentions and merge each layer's Q, K, V projections.
  om::Session fast(gr);
  CHECK(count_ops(fast.graph(), "Attention") == 2);
  CHECK(count_ops(fast.graph(), "Softmax") == 0);
  size_t merged = 0;
  for (const auto& r : fast.pass_reports())
    if (r.name == "merge_qkv_projections") merged = r.changes;
  CHECK(merged == 6);
}

TEST_CASE("a GPT-style pre-norm decoder block with a causal mask agrees with eager at three shapes") {
  om::Generator g(5);
  om::nn::EncoderLayerOptions o;
  o.dim_feedforward = 32;
  o.batch_first = true;
  o.norm_first = true;
  o.activation = om::nn::Activation::Gelu;
  auto tok = std::make_shared<om::nn::Embedding>(23, 16, om::nn::Embedding::kNoPadding, g);
  auto block = std::make_shared<om::nn::TransformerEncoderLayer>(16, 2, o, g);
  auto lm_head = std::make_shared<om::nn::Linear>(16, 23, false, g);
  block->eval();
  Model m = [&](const std::vector<om::Tensor>& in) {
    om::Tensor h = block->forward((*tok)(in[0]), {om::Tensor(), om::Tensor(), true});
    return (*lm_head)(h);
  };
  om::graph::Graph gr = check_traced("gpt_block", m, {{"ids", {"batch", "seq"}}},
                                     {{tokens(3, 5, 23, g)}, {tokens(2, 9, 23, g)}, {tokens(4, 2, 23, g)}});
  CHECK(count_ops(gr, "Range") == 2);
  CHECK(count_ops(om::Session(gr).graph(), "Attention") == 1);
  // Causality: the first position's logits do not depend on later tokens.
  om::Tensor a = tokens(1, 6, 23, g);
  std::vector<int64_t> bv = a.to_vector<int64_t>();
  bv[5] = (bv[5] + 1) % 23;
  om::Tensor b = om::from_vector<int64_t>(bv, {1, 6});
  om::Tensor ya = tracetest::run_graph(gr, {{"ids", a}})[0], yb = tracetest::run_graph(gr, {{"ids", b}})[0];
  CHECK(tracetest::scaled_error(ya.slice(1, 0, 5), yb.slice(1, 0, 5)) == 0.0);
  CHECK(tracetest::scaled_error(ya.slice(1, 5, 6), yb.slice(1, 5, 6)) > 0.0);
}

TEST_CASE("MultiheadAttention (sequence first) with a bool key-padding mask input traces with symbolic batch and sequence") {
  om::Generator g(6);
  auto mha = std::make_shared<om::nn::MultiheadAttention>(12, 3, 0.0, true, false, g);
  {
    om::NoGradGuard ng;
    mha->in_proj_bias.copy_from(om::randn({36}, g));
  }
  mha->eval();
  auto padding = [&](int64_t b, int64_t s) {  // the last key of every other sequence is padding
    std::vector<uint8_t> v(static_cast<size_t>(b * s), 0);
    for (int64_t i = 0; i < b; i += 2) v[size_t(i * s + s - 1)] = 1;
    return om::from_vector<uint8_t>(v, {b, s}).to(om::DType::boolean);
  };
  Model m = [&](const std::vector<om::Tensor>& in) {
    return mha->forward(in[0], in[0], in[0], {om::Tensor(), in[1], false});
  };
  om::graph::Graph gr = check_traced("mha_key_padding", m, {{"x", {"seq", "batch", ""}}, {"pad", {"batch", "seq"}}},
                                     {{om::randn({5, 3, 12}, g), padding(3, 5)},
                                      {om::randn({8, 2, 12}, g), padding(2, 8)},
                                      {om::randn({2, 4, 12}, g), padding(4, 2)}});
  CHECK(count_ops(gr, "Cast") == 1);
  CHECK(count_ops(om::Session(gr).graph(), "Attention") == 1);
}
