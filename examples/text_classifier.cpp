// Train a tiny transformer text classifier on generated token sequences, trace it with a
// symbolic batch and sequence length, and run the traced graph in a Session at other sizes.
//
// The task: sequences of tokens 2..11 (0 is padding, unused here); the label is 1 when the
// keyword token 3 appears before token 4 (or 4 is absent while 3 is present), else 0 — it needs
// the order of tokens, so the model uses position embeddings (om::arange of the sequence length,
// which the tracer records from the run-time length) and self-attention.
//
//   text_classifier
#include <onemodel/onemodel.h>

#include <cmath>
#include <cstdio>
#include <vector>

namespace {

constexpr int64_t kVocab = 12, kDim = 16, kHeads = 2, kClasses = 2, kMaxLen = 32;

struct TextClassifier : om::nn::Module {
  std::shared_ptr<om::nn::Embedding> tokens, positions;
  std::shared_ptr<om::nn::TransformerEncoder> encoder;
  std::shared_ptr<om::nn::Linear> head;

  explicit TextClassifier(om::Generator& gen) : Module("TextClassifier") {
    tokens = register_module("tokens", std::make_shared<om::nn::Embedding>(kVocab, kDim, 0, gen));
    positions = register_module("positions", std::make_shared<om::nn::Embedding>(kMaxLen, kDim, om::nn::Embedding::kNoPadding, gen));
    om::nn::EncoderLayerOptions o;
    o.dim_feedforward = 32;
    o.dropout = 0.1;
    o.batch_first = true;
    encoder = register_module("encoder", std::make_shared<om::nn::TransformerEncoder>(
                                             [&] { return std::make_shared<om::nn::TransformerEncoderLayer>(kDim, kHeads, o, gen); }, 1));
    head = register_module("head", std::make_shared<om::nn::Linear>(kDim, kClasses, true, gen));
  }

  // ids [batch, seq] (i64) -> logits [batch, classes]
  om::Tensor forward(const om::Tensor& ids) override {
    const om::Tensor pos = om::arange(ids.shape()[1], om::DType::i64);
    om::Tensor x = om::add(om::mul((*tokens)(ids), 0.5), (*positions)(pos));
    x = (*encoder)(x);
    return (*head)(om::mean(x, 1));
  }
};

// A batch of random sequences and their labels.
void make_batch(om::Generator& gen, int64_t batch, int64_t len, om::Tensor* ids, om::Tensor* labels) {
  std::vector<int64_t> v(static_cast<size_t>(batch * len)), y(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) {
    int64_t first3 = -1, first4 = -1;
    for (int64_t t = 0; t < len; ++t) {
      const int64_t tok = 2 + int64_t(gen.next_u32() % uint32_t(kVocab - 2));
      v[size_t(b * len + t)] = tok;
      if (tok == 3 && first3 < 0) first3 = t;
      if (tok == 4 && first4 < 0) first4 = t;
    }
    y[size_t(b)] = first3 >= 0 && (first4 < 0 || first3 < first4) ? 1 : 0;
  }
  *ids = om::from_vector(v, {batch, len});
  *labels = om::from_vector(y, {batch});
}

double accuracy(TextClassifier& model, om::Generator& gen) {
  om::NoGradGuard ng;
  int64_t right = 0, total = 0;
  for (int64_t len : {6, 9, 12}) {
    om::Tensor ids, labels;
    make_batch(gen, 200, len, &ids, &labels);
    const std::vector<float> logits = model(ids).to_vector<float>();
    const std::vector<int64_t> y = labels.to_vector<int64_t>();
    for (size_t i = 0; i < y.size(); ++i) right += int64_t(logits[2 * i + 1] > logits[2 * i]) == y[i];
    total += int64_t(y.size());
  }
  return double(right) / double(total);
}

}  // namespace

int main() {
  om::Generator gen(2024);
  auto model = std::make_shared<TextClassifier>(gen);
  om::optim::AdamOptions ao;
  ao.lr(3e-3);
  om::optim::Adam opt(model->parameters(), ao);
  model->train();
  float first = 0, last = 0;
  for (int step = 0; step < 300; ++step) {
    om::StoreScope scope;
    om::Tensor ids, labels;
    make_batch(gen, 32, 5 + step % 8, &ids, &labels);
    opt.zero_grad();
    om::Tensor loss = om::cross_entropy((*model)(ids), labels);
    loss.backward();
    opt.step();
    if (step == 0) first = loss.item<float>();
    last = 0.9f * (step == 1 ? loss.item<float>() : last) + 0.1f * loss.item<float>();
  }
  model->eval();
  const double acc = accuracy(*model, gen);
  std::printf("text classifier: loss %.3f -> %.3f, held-out accuracy %.1f%%\n", first, last, 100.0 * acc);

  // Trace with symbolic batch and sequence (example sizes 3 and 7 avoid the model's fixed sizes).
  om::Tensor example, unused;
  make_batch(gen, 3, 7, &example, &unused);
  om::TracedModel traced = model->trace(example, {"batch", "seq"}, "ids", "logits");
  om::Session session(traced);
  double worst = 0;
  for (auto [b, l] : {std::pair<int64_t, int64_t>{3, 7}, {5, 11}, {1, 20}}) {
    om::Tensor ids, labels;
    make_batch(gen, b, l, &ids, &labels);
    om::Tensor want;
    {
      om::NoGradGuard ng;
      want = (*model)(ids);
    }
    om::TensorView in{"ids", om::DType::i64, ids.shape().data(), ids.shape().size(), const_cast<void*>(ids.storage().data())};
    om::TensorView out;
    session.run(&in, 1, &out, 1);
    const std::vector<float> w = want.to_vector<float>();
    const float* got = static_cast<const float*>(out.data);
    double scale = 1;
    for (float v : w) scale = std::max(scale, double(std::fabs(v)));
    for (size_t i = 0; i < w.size(); ++i) worst = std::max(worst, std::fabs(double(got[i]) - double(w[i])) / scale);
    std::printf("session [%lld, %lld] -> [%lld, %lld]\n", static_cast<long long>(b), static_cast<long long>(l),
                static_cast<long long>(out.dims[0]), static_cast<long long>(out.dims[1]));
  }
  std::printf("session vs eager: max scaled difference %.2e\n", worst);
  const bool ok = acc > 0.8 && last < first && worst < 1e-5;
  std::printf(ok ? "text classifier: ok\n" : "text classifier: FAILED\n");
  return ok ? 0 : 1;
}
