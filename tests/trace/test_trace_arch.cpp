// Architectures as users write them (ViT, TCN, U-Net, a two-input model), trained one step,
// traced through Module::trace with its verification, then run at three sizes in the Session and
// in ONNX Runtime (the oracle) against eager.
#include <doctest/doctest.h>

#include "arch_helpers.h"
#include "onemodel/onemodel.h"
#include "test_util.h"

using testutil::contains;

namespace {

// A small ViT: patches by a strided Conv2d, the class token expanded to the batch read from the
// input's shape, position embeddings, one pre-norm encoder layer, the head on the class token.
class TinyViT : public om::nn::Module {
 public:
  explicit TinyViT(om::Generator& gen) : Module("TinyViT") {
    patch_embed = register_module("patch_embed", std::make_shared<om::nn::Conv2d>(3, kDim, 4, 4, 0, 1, 1, true, gen));
    cls_token = register_parameter("cls_token", om::mul(om::randn({1, 1, kDim}, gen), 0.5));
    pos_embed = register_parameter("pos_embed", om::mul(om::randn({1, 17, kDim}, gen), 0.1));
    om::nn::EncoderLayerOptions o;
    o.dim_feedforward = 32;
    o.dropout = 0;
    o.batch_first = true;
    o.norm_first = true;
    block = register_module("block", std::make_shared<om::nn::TransformerEncoderLayer>(kDim, 2, o, gen));
    norm = register_module("norm", std::make_shared<om::nn::LayerNorm>(om::Shape{kDim}));
    head = register_module("head", std::make_shared<om::nn::Linear>(kDim, 10, true, gen));
  }
  om::Tensor forward(const om::Tensor& x) override {
    const int64_t B = x.shape()[0];
    om::Tensor t = (*patch_embed)(x);                          // [B, D, 4, 4]
    t = t.reshape({B, kDim, -1}).permute({0, 2, 1});            // [B, 16, D]
    om::Tensor cls = cls_token.expand({B, -1, -1});             // [B, 1, D]
    t = om::add(om::cat({cls, t}, 1), pos_embed);               // [B, 17, D]
    t = (*norm)((*block)(t));
    return (*head)(t.select(1, 0));
  }
  static constexpr int64_t kDim = 8;
  std::shared_ptr<om::nn::Conv2d> patch_embed;
  std::shared_ptr<om::nn::TransformerEncoderLayer> block;
  std::shared_ptr<om::nn::LayerNorm> norm;
  std::shared_ptr<om::nn::Linear> head;
  om::Tensor cls_token, pos_embed;
};

}  // namespace

TEST_CASE("ViT: cls_token.expand({B, -1, -1}) follows the symbolic batch through cat") {
  om::Generator gen(281);
  auto vit = std::make_shared<TinyViT>(gen);
  archtest::train_one_step(*vit, om::randn({4, 3, 16, 16}, gen));
  om::TracedModel traced = vit->trace(om::randn({6, 3, 16, 16}, gen), {"batch", "", "", ""});
  CHECK(tracetest::count_ops(traced.graph(), "Expand") >= 1);
  archtest::agree_at("arch_vit", traced, [&](const std::vector<om::Tensor>& x) { return std::vector<om::Tensor>{(*vit)(x[0])}; },
                     {"input"}, {{om::randn({6, 3, 16, 16}, gen)}, {om::randn({2, 3, 16, 16}, gen)}, {om::randn({9, 3, 16, 16}, gen)}});
}

TEST_CASE("a buffer expanded to the batch follows it too; an expand to a size no symbol has stays a constant") {
  om::Tensor bias = om::randn({1, 4});
  auto tracer = om::Tracer::begin();
  om::Tensor x = tracer.input("x", om::randn({5, 4}), {"batch", ""});
  om::Tensor y = om::add(x, bias.expand({x.shape()[0], 4}));
  om::Tensor z = om::add(om::sum(y, 1, true), om::sum(om::ones({1, 3}).expand({2, 3}), 0, true));
  om::TracedModel m = tracer.finish({{"y", y}, {"z", z}});
  CHECK(tracetest::count_ops(m.graph(), "Expand") == 1);
  om::Tensor x7 = om::randn({7, 4});
  auto out = tracetest::run_graph(m.graph(), {{"x", x7}});
  CHECK(tracetest::scaled_error(out[0], om::add(x7, bias)) < 1e-6);
  CHECK(out[1].shape() == om::Shape{7, 3});
}

namespace {

// PyTorch's TCN block: a causal dilated convolution padded on both sides, Chomp1d cutting the
// right padding off with a slice counted from the end, a residual connection.
class Chomp1d : public om::nn::Module {
 public:
  explicit Chomp1d(int64_t chomp) : Module("Chomp1d"), chomp_(chomp) {}
  om::Tensor forward(const om::Tensor& x) override { return x.slice(2, 0, -chomp_).contiguous(); }

 private:
  int64_t chomp_;
};

class TemporalBlock : public om::nn::Module {
 public:
  TemporalBlock(int64_t channels, int64_t kernel, int64_t dilation, om::Generator& gen) : Module("TemporalBlock") {
    const int64_t pad = (kernel - 1) * dilation;
    conv = register_module("conv", std::make_shared<om::nn::Conv1d>(channels, channels, kernel, 1, pad, dilation, 1, true, gen));
    chomp = register_module("chomp", std::make_shared<Chomp1d>(pad));
  }
  om::Tensor forward(const om::Tensor& x) override {  // [N, C, T]
    om::Tensor h = (*conv)(x);  // [N, C, T + pad]
    return om::relu(om::add((*chomp)(om::relu(h)), x));
  }
  std::shared_ptr<om::nn::Conv1d> conv;
  std::shared_ptr<Chomp1d> chomp;
};

}  // namespace

TEST_CASE("TCN: Chomp1d's x.slice(2, 0, -p) traces on a symbolic time axis") {
  om::Generator gen(282);
  auto tcn = std::make_shared<om::nn::Sequential>(std::make_shared<TemporalBlock>(4, 3, 1, gen), std::make_shared<TemporalBlock>(4, 3, 2, gen));
  archtest::train_one_step(*tcn, om::randn({2, 4, 37}, gen));
  om::TracedModel traced = tcn->trace(om::randn({2, 4, 37}, gen), {"batch", "", "time"});
  CHECK(tracetest::count_ops(traced.graph(), "Slice") == 2);
  archtest::agree_at("arch_tcn", traced, [&](const std::vector<om::Tensor>& x) { return std::vector<om::Tensor>{(*tcn)(x[0])}; },
                     {"input"}, {{om::randn({2, 4, 37}, gen)}, {om::randn({3, 4, 11}, gen)}, {om::randn({1, 4, 64}, gen)}});
}

TEST_CASE("slices counted from the end of a symbolic axis: negative starts and ends, INT64_MAX") {
  auto tracer = om::Tracer::begin();
  om::Tensor x = tracer.input("x", om::randn({3, 10}), {"", "n"});
  om::Tensor last = x.slice(1, -3, INT64_MAX);  // the last three: a fixed length
  om::Tensor inner = x.slice(1, 1, -1);          // all but the ends
  om::Tensor tail = x.slice(1, 2, INT64_MAX, 2);  // from 2 to the end, every other one
  om::TracedModel m = tracer.finish({{"last", last}, {"inner", inner}, {"tail", tail}});
  for (int64_t n : {4, 10, 17}) {
    om::Tensor xn = om::randn({3, n});
    auto out = tracetest::run_graph(m.graph(), {{"x", xn}});
    CHECK(tracetest::scaled_error(out[0], xn.slice(1, -3, INT64_MAX).contiguous()) == 0);
    CHECK(tracetest::scaled_error(out[1], xn.slice(1, 1, -1).contiguous()) == 0);
    CHECK(tracetest::scaled_error(out[2], xn.slice(1, 2, INT64_MAX, 2).contiguous()) == 0);
  }
}

namespace {

// A two-level U-Net: 2x2 max pools down, scale-based bilinear upsampling up, skip concatenations.
class TinyUNet : public om::nn::Module {
 public:
  explicit TinyUNet(om::Generator& gen) : Module("TinyUNet") {
    enc1 = register_module("enc1", std::make_shared<om::nn::Conv2d>(1, 4, 3, 1, 1, 1, 1, true, gen));
    enc2 = register_module("enc2", std::make_shared<om::nn::Conv2d>(4, 8, 3, 1, 1, 1, 1, true, gen));
    mid = register_module("mid", std::make_shared<om::nn::Conv2d>(8, 8, 3, 1, 1, 1, 1, true, gen));
    dec2 = register_module("dec2", std::make_shared<om::nn::Conv2d>(16, 8, 3, 1, 1, 1, 1, true, gen));
    dec1 = register_module("dec1", std::make_shared<om::nn::Conv2d>(12, 4, 3, 1, 1, 1, 1, true, gen));
    head = register_module("head", std::make_shared<om::nn::Conv2d>(4, 2, 1, 1, 0, 1, 1, true, gen));
    pool = register_module("pool", std::make_shared<om::nn::MaxPool2d>(2));
    up = register_module("up", om::nn::Upsample::with_scale(2, 2, om::Interpolation::Bilinear));
  }
  om::Tensor forward(const om::Tensor& x) override {
    om::Tensor e1 = om::relu((*enc1)(x));
    om::Tensor e2 = om::relu((*enc2)((*pool)(e1)));
    om::Tensor m = om::relu((*mid)((*pool)(e2)));
    om::Tensor d2 = om::relu((*dec2)(om::cat({(*up)(m), e2}, 1)));
    om::Tensor d1 = om::relu((*dec1)(om::cat({om::interpolate(d2, 2.0, om::Interpolation::Nearest), e1}, 1)));
    return (*head)(d1);
  }
  std::shared_ptr<om::nn::Conv2d> enc1, enc2, mid, dec2, dec1, head;
  std::shared_ptr<om::nn::MaxPool2d> pool;
  std::shared_ptr<om::nn::Upsample> up;
};

}  // namespace

TEST_CASE("U-Net: scale-based upsampling lowers to Resize with scales and follows symbolic height and width") {
  om::Generator gen(283);
  auto unet = std::make_shared<TinyUNet>(gen);
  archtest::train_one_step(*unet, om::randn({2, 1, 20, 24}, gen));
  // Default verification: the model cannot run at h = 21 or w = 25 (the pools and the skip
  // concatenations need multiples of 4), so the next sizes keeping the examples' factors of two
  // are tried.
  om::TracedModel traced = unet->trace(om::randn({2, 1, 20, 24}, gen), {"batch", "", "h", "w"});
  CHECK(tracetest::count_ops(traced.graph(), "Resize") == 2);
  archtest::agree_at("arch_unet", traced, [&](const std::vector<om::Tensor>& x) { return std::vector<om::Tensor>{(*unet)(x[0])}; },
                     {"input"}, {{om::randn({2, 1, 20, 24}, gen)}, {om::randn({3, 1, 12, 40}, gen)}, {om::randn({1, 1, 32, 16}, gen)}});
}

TEST_CASE("resize2d to an explicit size keeps its rule on a symbolic spatial axis") {
  auto tracer = om::Tracer::begin();
  om::Tensor x = tracer.input("x", om::randn({1, 2, 6, 8}), {"", "", "h", ""});
  std::string m;
  CHECK(tracetest::trace_error_kind([&] { (void)om::resize2d(x, 12, 16); }, &m) == om::TraceErrorKind::SymbolicShape);
  CHECK(contains(m, "a symbolic spatial axis reaches resize2d, whose output size is fixed"));
  CHECK(contains(m, "om::interpolate"));
  CHECK_NOTHROW((void)om::interpolate(x, 2.0));
}

namespace {

// Two inputs (tokens and a padding mask), two outputs (per-token logits, a masked mean).
class MaskedPool : public om::nn::Module {
 public:
  explicit MaskedPool(om::Generator& gen) : Module("MaskedPool") {
    proj = register_module("proj", std::make_shared<om::nn::Linear>(6, 3, true, gen));
  }
  std::vector<om::Tensor> forward(const om::Tensor& x, const om::Tensor& mask) {  // [B, T, 6], [B, T]
    om::Tensor logits = (*proj)(x);
    om::Tensor m = mask.unsqueeze(2);
    om::Tensor pooled = om::div(om::sum(om::mul(logits, m), 1), om::add(om::sum(m, 1), 1e-6));
    return {logits, pooled};
  }
  std::shared_ptr<om::nn::Linear> proj;
};

}  // namespace

TEST_CASE("Module::trace with two inputs and two outputs") {
  om::Generator gen(284);
  auto model = std::make_shared<MaskedPool>(gen);
  auto fwd = [&](const std::vector<om::Tensor>& x) { return model->forward(x[0], x[1]); };
  auto mask = [&](int64_t b, int64_t t) { return om::gt(om::rand({b, t}, gen), 0.3).to(om::DType::f32); };
  om::TracedModel traced = model->trace({{"tokens", om::randn({3, 7, 6}, gen), {"batch", "seq", ""}}, {"mask", mask(3, 7), {"batch", "seq"}}},
                                        fwd, {"logits", "pooled"});
  const om::graph::Graph& g = traced.graph();
  REQUIRE(g.inputs.size() == 2);
  CHECK(g.inputs[0].name == "tokens");
  CHECK(g.inputs[1].name == "mask");
  bool named = false;
  for (const auto& init : g.initializers) named = named || init.name == "proj.bias";
  CHECK(named);  // parameters by state-dict path
  archtest::agree_at("arch_two_inputs", traced, fwd, {"tokens", "mask"},
                     {{om::randn({3, 7, 6}, gen), mask(3, 7)}, {om::randn({1, 12, 6}, gen), mask(1, 12)}, {om::randn({5, 2, 6}, gen), mask(5, 2)}});
  std::string m;
  CHECK(tracetest::trace_error_kind([&] { (void)model->trace({{"tokens", om::randn({3, 7, 6}, gen), {}}, {"mask", mask(3, 7), {}}}, fwd, {"only"}); },
                                    &m) == om::TraceErrorKind::InvalidUsage);
  CHECK(contains(m, "forward returned 2 outputs but 1 output names were given"));
}

namespace {
// Only runs at length 20: adds a fixed [1, 1, 20] weight.
class FixedLength : public om::nn::Module {
 public:
  FixedLength() : Module("FixedLength") { w = register_parameter("w", om::ones({1, 1, 20})); }
  om::Tensor forward(const om::Tensor& x) override { return om::add(x, w); }
  om::Tensor w;
};
}  // namespace

TEST_CASE("verification says plainly when the model itself cannot run at the re-run sizes") {
  auto model = std::make_shared<FixedLength>();
  std::string m;
  CHECK(tracetest::trace_error_kind([&] { (void)model->trace(om::randn({2, 3, 20}), {"", "", "t"}); }, &m) == om::TraceErrorKind::SymbolicShape);
  CHECK(contains(m, "verification of symbolic axis 't' (traced at size 20) could not run the model itself at sizes 21, 24, 28, 32"));
  CHECK(contains(m, "nothing is known to be wrong with the graph"));
  CHECK(contains(m, "TracerOptions::verify_sizes"));
  CHECK(!contains(m, "frozen"));
  om::TracerOptions off;
  off.verify = false;
  CHECK_NOTHROW((void)model->trace(om::randn({2, 3, 20}), {"", "", "t"}, "input", "output", off));
}

TEST_CASE("output axes are named after simple functions of the input symbols") {
  om::Generator gen(285);
  auto conv = std::make_shared<om::nn::Conv2d>(1, 2, 3, 1, 0, 1, 1, true, gen);  // h - 2
  auto tracer = om::Tracer::begin();
  om::Tensor x = tracer.input("x", om::randn({2, 1, 12, 16}, gen), {"batch", "", "h", "w"});
  om::Tensor pooled = om::max_pool2d(x, 2);             // [batch, 1, h/2, w/2]
  om::Tensor valid = (*conv)(x);                         // [batch, 2, h-2, w-2]
  om::Tensor up = om::interpolate(x, 2.0);               // [batch, 1, 2*h, 2*w]
  om::Tensor chomped = x.slice(3, 0, -3);                // [batch, 1, h, w-3]
  om::TracedModel m = tracer.finish({{"pooled", pooled}, {"valid", valid}, {"up", up}, {"chomped", chomped}});
  const auto& outs = m.graph().outputs;
  REQUIRE(outs.size() == 4);
  auto names = [](const om::graph::ValueInfo& v) {
    std::vector<std::string> n;
    for (const om::graph::Dim& d : v.shape) n.push_back(d.is_static() ? std::to_string(d.size) : d.param);
    return n;
  };
  CHECK(names(outs[0]) == std::vector<std::string>{"batch", "1", "h/2", "w/2"});
  CHECK(names(outs[1]) == std::vector<std::string>{"batch", "2", "h-2", "w-2"});
  CHECK(names(outs[2]) == std::vector<std::string>{"batch", "1", "2*h", "2*w"});
  CHECK(names(outs[3]) == std::vector<std::string>{"batch", "1", "h", "w-3"});
  om::Tensor x2 = om::randn({3, 1, 10, 9}, gen);
  auto got = tracetest::run_graph(m.graph(), {{"x", x2}});
  CHECK(got[0].shape() == om::Shape{3, 1, 5, 4});
  CHECK(got[1].shape() == om::Shape{3, 2, 8, 7});
  CHECK(got[2].shape() == om::Shape{3, 1, 20, 18});
  CHECK(got[3].shape() == om::Shape{3, 1, 10, 6});
}

namespace {
// A class token repeated by a loop over the batch read from the shape: the copies are constants,
// so the graph holds exactly the example's number of them.
class LoopTokens : public om::nn::Module {
 public:
  LoopTokens() : Module("LoopTokens") { cls = register_parameter("cls", om::randn({1, 1, 4})); }
  om::Tensor forward(const om::Tensor& x) override {  // [B, 3, 4]
    std::vector<om::Tensor> copies;
    for (int64_t b = 0; b < x.shape()[0]; ++b) copies.push_back(cls);
    om::Tensor tokens = om::cat({om::cat(copies, 0), om::relu(x)}, 1);  // [B, 4, 4]
    return om::mul(tokens, 2.0);
  }
  om::Tensor cls;
};
}  // namespace

TEST_CASE("verification's likely cause: the first node where a constant holding the example size meets a symbolic axis") {
  auto model = std::make_shared<LoopTokens>();
  std::string m;
  CHECK(tracetest::trace_error_kind([&] { (void)model->trace(om::randn({5, 3, 4}), {"batch", "", ""}); }, &m) == om::TraceErrorKind::SymbolicShape);
  CHECK(contains(m, "re-run at size 6"));
  CHECK(contains(m, "the traced graph does not run at this size"));
  CHECK(contains(m, "The likely cause: node 'Concat_1' (Concat) reads the constant 'const_0' of shape [5, 1, 4], the example size of 'batch'"));
}

TEST_CASE("creation and expand to a product of two symbols' sizes (B*T) follow both") {
  // [B, T, D] flattened to [B*T, D], plus a bias row expanded and zeros created at B*T rows.
  om::Generator gen(297);
  const om::Tensor bias = om::randn({1, 4}, gen);
  auto forward = [bias](const om::Tensor& x) {
    const int64_t rows = x.shape()[0] * x.shape()[1];
    om::Tensor flat = x.reshape({rows, 4});
    return om::add(om::add(flat, bias.expand({rows, 4})), om::ones({rows, 4}));
  };
  auto tracer = om::Tracer::begin();
  om::Tensor x = tracer.input("x", om::randn({3, 5, 4}, gen), {"batch", "time", ""});
  om::TracedModel traced = tracer.finish({{"y", forward(x)}});
  archtest::agree_at("arch_product_sizes", traced, [&](const std::vector<om::Tensor>& in) { return std::vector<om::Tensor>{forward(in[0])}; },
                     {"x"}, {{om::randn({3, 5, 4}, gen)}, {om::randn({2, 7, 4}, gen)}, {om::randn({6, 2, 4}, gen)}});
}

TEST_CASE("Tensor::repeat: values as PyTorch's, gradients, and a count equal to the batch follows it when traced") {
  const om::Tensor a = om::tensor({1.f, 2.f, 3.f}, {1, 3});
  CHECK(a.repeat({2, 2}).to_vector<float>() == std::vector<float>{1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3});
  CHECK(a.repeat({2, 1, 1}).shape() == om::Shape{2, 1, 3});
  CHECK(a.tile({2}).to_vector<float>() == std::vector<float>{1, 2, 3, 1, 2, 3});  // PyTorch: [1, 6]
  CHECK(a.tile({2}).shape() == om::Shape{1, 6});
  CHECK(a.tile({2, 1, 1}).shape() == om::Shape{2, 1, 3});
  CHECK(contains(testutil::error_of([&] { a.repeat({2}); }).what(), "give at least one per dim (2)"));
  om::Tensor w = om::tensor({1.f, 2.f}, {2}).requires_grad_();
  om::sum(om::mul(w.repeat({3}), om::arange(6, om::DType::f32))).backward();
  CHECK(w.grad().to_vector<float>() == std::vector<float>{0 + 2 + 4, 1 + 3 + 5});
  // A learned query row repeated to the batch, concatenated with the input.
  om::Generator gen(311);
  const om::Tensor query = om::randn({1, 4}, gen);
  auto forward = [query](const om::Tensor& x) { return om::cat({query.repeat({x.shape()[0], 1}), x}, 1); };
  auto tracer = om::Tracer::begin();
  om::Tensor x = tracer.input("x", om::randn({5, 4}, gen), {"batch", ""});
  om::TracedModel traced = tracer.finish({{"y", forward(x)}});
  archtest::agree_at("arch_repeat", traced, [&](const std::vector<om::Tensor>& in) { return std::vector<om::Tensor>{forward(in[0])}; },
                     {"x"}, {{om::randn({5, 4}, gen)}, {om::randn({2, 4}, gen)}, {om::randn({9, 4}, gen)}});
}

TEST_CASE("om::eye, om::empty and Tensor::view: eager values as PyTorch's, and traced from sizes") {
  CHECK(om::eye(2, 3).to_vector<float>() == std::vector<float>{1, 0, 0, 0, 1, 0});
  CHECK(om::eye(3).shape() == om::Shape{3, 3});
  CHECK(om::eye(2, -1, om::DType::i64).to_vector<int64_t>() == std::vector<int64_t>{1, 0, 0, 1});
  CHECK(contains(testutil::error_of([] { om::eye(-2); }).what(), "om::eye: sizes -2 x -2 must not be negative"));
  const om::Tensor a = om::arange(6, om::DType::f32);
  om::Tensor v = a.view({2, 3});
  CHECK(v.storage().data() == a.storage().data());  // a view: no copy
  CHECK(v.view({3, -1}).shape() == om::Shape{3, 2});
  // A transposed matrix cannot be merged without a copy: PyTorch's view refuses it, so do we.
  const std::string m = testutil::error_of([&] { v.t().view({6}); }).what();
  CHECK(contains(m, "om::Tensor::view: shape [6] cannot view"));
  CHECK(contains(m, "use reshape()"));
  CHECK(v.t().reshape({6}).to_vector<float>() == std::vector<float>{0, 3, 1, 4, 2, 5});
  // Traced: an identity mask and an accumulator of the batch's size follow the batch; view
  // records a Reshape that follows it too.
  om::Generator gen(331);
  // (Eager empty is uninitialised; while tracing it is zeros, so the eager reference uses zeros.)
  auto forward = [](const om::Tensor& x, bool tracing) {
    const int64_t B = x.shape()[0];
    om::Tensor acc = om::add(tracing ? om::empty({B, 4}) : om::zeros({B, 4}), x.view({B, 4}));
    return om::add(om::matmul(om::eye(B), acc), om::eye(B, 4));
  };
  auto tracer = om::Tracer::begin();
  om::Tensor x = tracer.input("x", om::randn({5, 2, 2}, gen), {"batch", "", ""});
  om::TracedModel traced = tracer.finish({{"y", forward(x, true)}});
  CHECK(tracetest::count_ops(traced.graph(), "EyeLike") == 2);
  archtest::agree_at("arch_eye_empty_view", traced, [&](const std::vector<om::Tensor>& in) { return std::vector<om::Tensor>{forward(in[0], false)}; },
                     {"x"}, {{om::randn({5, 2, 2}, gen)}, {om::randn({2, 2, 2}, gen)}, {om::randn({7, 2, 2}, gen)}});
}
