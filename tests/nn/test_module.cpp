// om::nn::Module: registration, paths, state dicts, train/eval, module paths during forward.
#include <doctest/doctest.h>

#include <ostream>  // doctest prints the shared_ptrs CHECKs compare through operator<<

#include <cmath>
#include <string>

#include "onemodel/onemodel.h"
#include "test_util.h"

using testutil::contains;
using testutil::error_of;

namespace {

struct Mlp : om::nn::Module {
  std::shared_ptr<om::nn::Linear> fc1, fc2;
  om::Tensor scale;
  Mlp(int64_t in, int64_t hidden, int64_t out, om::Generator& g) : Module("Mlp") {
    fc1 = register_module("fc1", std::make_shared<om::nn::Linear>(in, hidden, true, g));
    fc2 = register_module("fc2", std::make_shared<om::nn::Linear>(hidden, out, true, g));
    scale = register_buffer("scale", om::ones({out}));
  }
  om::Tensor forward(const om::Tensor& x) override { return om::mul((*fc2)(om::tanh((*fc1)(x))), scale); }
};

// Records the module path seen while its forward runs.
struct PathProbe : om::nn::Module {
  std::vector<std::string>* seen;
  explicit PathProbe(std::vector<std::string>* s) : Module("PathProbe"), seen(s) {}
  om::Tensor forward(const om::Tensor& x) override {
    seen->push_back(om::nn::current_module_path());
    return x;
  }
};

struct Encoder : om::nn::Module {
  std::shared_ptr<om::nn::Sequential> layers;
  explicit Encoder(std::vector<std::string>* seen) : Module("Encoder") {
    layers = register_module("layers", std::make_shared<om::nn::Sequential>(
                                           
                                               std::make_shared<PathProbe>(seen), std::make_shared<PathProbe>(seen)));
  }
  om::Tensor forward(const om::Tensor& x) override { return (*layers)(x); }
};

struct Model : om::nn::Module {
  std::shared_ptr<Encoder> encoder;
  explicit Model(std::vector<std::string>* seen) : Module("Model") { encoder = register_module("encoder", std::make_shared<Encoder>(seen)); }
  om::Tensor forward(const om::Tensor& x) override { return (*encoder)(x); }
};

}  // namespace

TEST_CASE("named_parameters, named_buffers, parameters and state_dict use state-dict paths") {
  om::Generator g(1);
  auto m = std::make_shared<Mlp>(3, 4, 2, g);
  CHECK(m->named_parameters().names() == std::vector<std::string>{"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"});
  CHECK(m->named_buffers().names() == std::vector<std::string>{"scale"});
  CHECK(m->named_parameters(false).empty());
  CHECK(m->parameters().size() == 4);
  CHECK(m->buffers().size() == 1);
  CHECK(m->state_dict().names() == std::vector<std::string>{"scale", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"});
  CHECK(m->named_parameters().at("fc1.weight").shape() == om::Shape{4, 3});
  CHECK(m->named_parameters().at("fc2.bias").shape() == om::Shape{2});
  CHECK(m->named_parameters().at("fc1.weight").impl() == m->fc1->weight.impl());  // the same tensor
  for (const om::Tensor& p : m->parameters()) CHECK(p.requires_grad());
  CHECK_FALSE(m->named_buffers().at("scale").requires_grad());
  om::Error e = error_of([&] { m->state_dict().at("fc3.weight"); });
  CHECK(contains(e.what(), "fc3.weight"));
  CHECK(contains(e.what(), "fc1.weight"));
  CHECK(m->fc1->path() == "fc1");
  CHECK(m->path().empty());
  CHECK(m->display_name() == "<root Mlp>");
  const auto mods = m->named_modules();
  REQUIRE(mods.size() == 3);
  CHECK(mods[1].first == "fc1");
  CHECK(m->named_children().size() == 2);
}

TEST_CASE("registration errors") {
  om::nn::Module m("Custom");
  m.register_parameter("w", om::ones({2}));
  CHECK(error_of([&] { m.register_parameter("w", om::ones({2})); }).kind() == om::ErrorKind::InvalidArgument);
  CHECK(error_of([&] { m.register_buffer("w", om::ones({2})); }).kind() == om::ErrorKind::InvalidArgument);
  CHECK(error_of([&] { m.register_parameter("a.b", om::ones({2})); }).kind() == om::ErrorKind::InvalidArgument);
  CHECK(error_of([&] { m.register_parameter("", om::ones({2})); }).kind() == om::ErrorKind::InvalidArgument);
  CHECK(error_of([&] { m.register_parameter("u", om::Tensor()); }).kind() == om::ErrorKind::InvalidArgument);
  CHECK(error_of([&] { m.register_module("w", std::make_shared<om::nn::ReLU>()); }).kind() == om::ErrorKind::InvalidArgument);
  CHECK(error_of([&] { m.register_module("c", std::shared_ptr<om::nn::Module>()); }).kind() == om::ErrorKind::InvalidArgument);
  om::Tensor frozen = m.register_parameter("frozen", om::ones({2}), false);
  CHECK_FALSE(frozen.requires_grad());
  om::Error f = error_of([&] { m.forward(om::ones({1})); });
  CHECK(f.kind() == om::ErrorKind::Unsupported);
  CHECK(contains(f.what(), "Custom"));
}

TEST_CASE("paths follow nesting, including a module registered after it was built") {
  std::vector<std::string> seen;
  auto model = std::make_shared<Model>(&seen);
  CHECK(model->encoder->layers->path() == "encoder.layers");
  CHECK((*model->encoder->layers)[1]->path() == "encoder.layers.1");
  CHECK(model->named_modules().back().first == "encoder.layers.1");
  CHECK(om::nn::current_module_path().empty());
  (*model)(om::ones({1}));
  CHECK(seen == std::vector<std::string>{"encoder.layers.0", "encoder.layers.1"});
  CHECK(om::nn::current_module_path().empty());  // popped again
  // The path stack unwinds with exceptions.
  auto bad = std::make_shared<om::nn::Sequential>(std::make_shared<om::nn::Linear>(3, 2));
  CHECK_THROWS_AS((*bad)(om::ones({4})), om::Error);
  CHECK(om::nn::current_module_path().empty());
  {
    om::nn::ModulePathGuard outer("a");
    {
      om::nn::ModulePathGuard inner("a.b");
      CHECK(om::nn::current_module_path() == "a.b");
    }
    CHECK(om::nn::current_module_path() == "a");
  }
}

TEST_CASE("train and eval recurse") {
  om::Generator g(2);
  auto m = std::make_shared<Mlp>(2, 2, 2, g);
  CHECK(m->is_training());
  m->eval();
  CHECK_FALSE(m->is_training());
  CHECK_FALSE(m->fc1->is_training());
  m->train();
  CHECK(m->fc2->is_training());
}

TEST_CASE("state_dict round trip gives an identical model") {
  om::Generator g1(10), g2(20);
  auto a = std::make_shared<Mlp>(3, 5, 2, g1);
  auto b = std::make_shared<Mlp>(3, 5, 2, g2);
  a->named_buffers().at("scale").fill_(1.5);
  om::Tensor x = om::randn({4, 3});
  CHECK((*a)(x).to_vector<float>() != (*b)(x).to_vector<float>());
  om::Tensor held = b->fc1->weight;  // references held by layers stay valid after a load
  b->load_state_dict(a->state_dict());
  CHECK((*a)(x).to_vector<float>() == (*b)(x).to_vector<float>());
  CHECK(held.to_vector<float>() == a->fc1->weight.to_vector<float>());
  CHECK(b->named_buffers().at("scale").to_vector<float>() == std::vector<float>{1.5f, 1.5f});
  CHECK(b->fc1->weight.requires_grad());
  CHECK_FALSE(b->fc1->weight.impl()->grad_fn);  // still a leaf
  // The copy is independent of the source.
  a->fc1->weight.fill_(0.0);
  CHECK(b->fc1->weight.to_vector<float>() != a->fc1->weight.to_vector<float>());
}

TEST_CASE("load_state_dict refuses mismatches with clear errors and leaves the model unchanged") {
  om::Generator g(3);
  auto m = std::make_shared<Mlp>(3, 4, 2, g);
  auto other = std::make_shared<Mlp>(3, 5, 2, g);
  const std::vector<float> before = m->fc1->weight.to_vector<float>();
  const std::vector<float> bias_before = m->fc1->bias.to_vector<float>();
  om::Error e = error_of([&] { m->load_state_dict(other->state_dict()); });
  INFO(e.what());
  CHECK(e.kind() == om::ErrorKind::ShapeMismatch);
  CHECK(contains(e.what(), "om::nn::Module::load_state_dict"));
  CHECK(contains(e.what(), "'fc1.weight'"));
  CHECK(contains(e.what(), "f32[5, 3]"));
  CHECK(contains(e.what(), "f32[4, 3]"));
  CHECK(contains(e.what(), "'fc2.weight'"));
  CHECK(m->fc1->weight.to_vector<float>() == before);
  CHECK(m->fc1->bias.to_vector<float>() == bias_before);  // nothing written before the check
  // missing and unexpected names (strict)
  om::nn::StateDict sd = m->state_dict();
  sd.erase(sd.begin() + 1);                       // drop fc1.weight
  sd.emplace_back("fc3.bias", om::zeros({2}));
  om::Error s = error_of([&] { m->load_state_dict(sd); });
  INFO(s.what());
  CHECK(s.kind() == om::ErrorKind::InvalidArgument);
  CHECK(contains(s.what(), "missing 'fc1.weight'"));
  CHECK(contains(s.what(), "unexpected 'fc3.bias'"));
  // non-strict loads what matches
  for (auto& e2 : sd)
    if (e2.first == "fc1.bias") e2.second = om::full({4}, 7.0);
  m->load_state_dict(sd, false);
  CHECK(m->fc1->bias.to_vector<float>() == std::vector<float>(4, 7.0f));
  CHECK(m->fc1->weight.to_vector<float>() == before);
  // dtype mismatch
  om::nn::StateDict wrong = m->state_dict();
  wrong[0].second = om::ones({2}, om::DType::i64);
  CHECK(error_of([&] { m->load_state_dict(wrong); }).kind() == om::ErrorKind::ShapeMismatch);
}

TEST_CASE("Linear: PyTorch's initialisation bounds, seeded, forward = x W^T + b") {
  om::Generator g1(5), g2(5);
  om::nn::Linear a(64, 32, true, g1), b(64, 32, true, g2);
  CHECK(a.weight.to_vector<float>() == b.weight.to_vector<float>());
  CHECK(a.bias.to_vector<float>() == b.bias.to_vector<float>());
  const double bound = 1.0 / 8.0;
  double mean = 0, sq = 0;
  const std::vector<float> w = a.weight.to_vector<float>();
  for (float v : w) {
    CHECK(std::fabs(v) <= bound);
    mean += v;
    sq += double(v) * v;
  }
  mean /= double(w.size());
  CHECK(std::fabs(mean) < 0.01);
  CHECK(sq / double(w.size()) == doctest::Approx(bound * bound / 3).epsilon(0.1));  // variance of U(-b, b)
  for (float v : a.bias.to_vector<float>()) CHECK(std::fabs(v) <= bound);
  om::nn::Linear nb(3, 2, false);
  CHECK_FALSE(nb.bias.defined());
  CHECK(nb.named_parameters().names() == std::vector<std::string>{"weight"});
  om::Tensor x = om::randn({5, 3});
  CHECK(nb.forward(x).to_vector<float>() == om::matmul(x, nb.weight.t()).to_vector<float>());
  om::Error e = error_of([&] { nb.forward(om::ones({5, 4})); });
  CHECK(e.kind() == om::ErrorKind::ShapeMismatch);
  CHECK(error_of([] { om::nn::Linear(0, 3); }).kind() == om::ErrorKind::InvalidArgument);
}

TEST_CASE("Sequential with activation modules") {
  om::Generator g(6);
  auto l1 = std::make_shared<om::nn::Linear>(4, 8, true, g);
  auto l2 = std::make_shared<om::nn::Linear>(8, 3, true, g);
  om::nn::Sequential seq{l1, std::make_shared<om::nn::ReLU>(), l2, std::make_shared<om::nn::Tanh>(),
                         std::make_shared<om::nn::Sigmoid>(), std::make_shared<om::nn::GELU>(om::GeluApproximate::Tanh)};
  CHECK(seq.size() == 6);
  CHECK(seq.named_parameters().names() == std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"});
  om::Tensor x = om::randn({2, 4});
  om::Tensor want = om::gelu(om::sigmoid(om::tanh(om::linear(om::relu(om::linear(x, l1->weight, l1->bias)), l2->weight, l2->bias))),
                             om::GeluApproximate::Tanh);
  CHECK(seq(x).to_vector<float>() == want.to_vector<float>());
  seq.push_back(std::make_shared<om::nn::GELU>());
  CHECK(seq[6]->path() == "6");
  CHECK(seq(x).to_vector<float>() == om::gelu(want).to_vector<float>());
}
