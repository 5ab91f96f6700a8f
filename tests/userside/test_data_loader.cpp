// om::data: the loader's order, batches and place; checkpoints that carry the loader, the
// modules' generators (Dropout) and the default generator, so resumed runs are bit-identical.
#include <doctest/doctest.h>

#include <ostream>  // doctest prints the shared_ptrs CHECKs compare through operator<<

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "onemodel/onemodel.h"
#include "test_util.h"

namespace {

om::data::TensorDataset numbered(int64_t n) {
  std::vector<float> x;
  std::vector<int64_t> y;
  for (int64_t i = 0; i < n; ++i) x.push_back(float(i)), x.push_back(float(-i)), y.push_back(i);
  return om::data::TensorDataset(om::from_vector(x, {n, 2}), om::from_vector(y));
}

// The labels of every batch of one loop (a whole epoch, or the rest of one).
std::vector<std::vector<int64_t>> one_loop(om::data::DataLoader& loader) {
  std::vector<std::vector<int64_t>> out;
  for (const om::data::Batch& b : loader) {
    const auto y = b.y.to_vector<int64_t>();
    const auto x = b.x.to_vector<float>();
    for (size_t k = 0; k < y.size(); ++k) CHECK(x[2 * k] == float(y[k]));  // x and y stay paired
    out.push_back(y);
  }
  return out;
}

}  // namespace

TEST_CASE("DataLoader: every sample once per epoch, batch sizes, drop_last, order per (seed, epoch)") {
  const auto data = numbered(10);
  om::data::DataLoader plain(data, {4});
  const auto e0 = one_loop(plain);
  CHECK(e0 == std::vector<std::vector<int64_t>>{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}});
  CHECK(plain.epoch() == 1);
  CHECK(plain.position() == 0);

  om::data::DataLoader dropped(data, {4, false, true});
  CHECK(dropped.batches_per_epoch() == 2);
  CHECK(one_loop(dropped).size() == 2);

  om::data::DataLoader a(data, {3, true, false, 11}), b(data, {3, true, false, 11}), c(data, {3, true, false, 12});
  const auto a0 = one_loop(a), a1 = one_loop(a), b0 = one_loop(b), c0 = one_loop(c);
  CHECK(a0 == b0);  // same seed, same epoch: same order
  CHECK(a0 != a1);  // another epoch: another order
  CHECK(a0 != c0);  // another seed
  std::vector<int64_t> all;
  for (const auto& batch : a1) all.insert(all.end(), batch.begin(), batch.end());
  std::sort(all.begin(), all.end());
  CHECK(all == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(a.order(1) == b.order(1));  // an epoch's order is a function of (seed, epoch): replayable

  CHECK(testutil::contains(testutil::error_of([&] { om::data::DataLoader(data, {0}); }).what(), "batch_size 0 must be at least 1"));
  CHECK(testutil::contains(testutil::error_of([&] { a.set_place(0, 5); }).what(), "at most the 4 batches"));
  CHECK(testutil::contains(testutil::error_of([] { om::data::TensorDataset(om::zeros({3, 2}), om::zeros({4})); }).what(),
                           "same first (sample) axis"));
}

TEST_CASE("DataLoader: a loop left early continues where it stopped") {
  const auto data = numbered(9);
  om::data::DataLoader whole(data, {2, true, false, 5}), parts(data, {2, true, false, 5});
  const auto want = one_loop(whole);
  std::vector<std::vector<int64_t>> got;
  for (const om::data::Batch& b : parts) {
    got.push_back(b.y.to_vector<int64_t>());
    if (got.size() == 2) break;
  }
  CHECK(parts.epoch() == 0);
  CHECK(parts.position() == 2);
  for (const auto& rest : one_loop(parts)) got.push_back(rest);
  CHECK(got == want);
  CHECK(parts.epoch() == 1);
}

namespace {

struct Trainer {
  std::shared_ptr<om::nn::Sequential> model;
  std::unique_ptr<om::optim::SGD> opt;
  std::unique_ptr<om::optim::StepLR> schedule;
  std::unique_ptr<om::data::DataLoader> loader;
  Trainer(const om::data::Dataset& data, uint64_t seed) {
    om::Generator gen(seed);
    model = std::make_shared<om::nn::Sequential>(std::vector<std::shared_ptr<om::nn::Module>>{
        std::make_shared<om::nn::Linear>(2, 12, true, gen), std::make_shared<om::nn::Tanh>(), std::make_shared<om::nn::Dropout>(0.2, seed),
        std::make_shared<om::nn::Linear>(12, 3, true, gen)});
    opt = std::make_unique<om::optim::SGD>(model->parameters(), om::optim::SGDOptions(0.05).momentum(0.9));
    schedule = std::make_unique<om::optim::StepLR>(*opt, 1, 0.8);
    loader = std::make_unique<om::data::DataLoader>(data, om::data::DataLoaderOptions{4, true, false, 3});
  }
  // Runs batches until `epochs` are done or `budget` batches ran.
  void train(int epochs, int budget = 1 << 30) {
    while (loader->epoch() < epochs) {
      for (const om::data::Batch& b : *loader) {
        om::StoreScope scope;
        opt->zero_grad();
        om::cross_entropy((*model)(b.x), b.y).backward();
        opt->step();
        if (--budget == 0) return;
      }
      schedule->step();
    }
  }
  std::vector<float> weights() const {
    std::vector<om::Tensor> flat;
    for (const om::Tensor& p : model->parameters()) flat.push_back(p.reshape({-1}));
    return om::cat(flat).to_vector<float>();
  }
};

// Labels i % 3 over points spread on a line.
om::data::TensorDataset three_classes(int64_t n) {
  std::vector<float> x;
  std::vector<int64_t> y;
  for (int64_t i = 0; i < n; ++i) x.push_back(float(i % 3) + 0.1f * float(i)), x.push_back(float(i) / float(n)), y.push_back(i % 3);
  return om::data::TensorDataset(om::from_vector(x, {n, 2}), om::from_vector(y));
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("a run with Dropout and a shuffled loader resumes bit-identically from a mid-epoch checkpoint") {
  const auto data = three_classes(22);  // 6 batches per epoch, the last one of 2
  const std::string path = "test_data_loader_resume.omckpt";
  Trainer straight(data, 1);
  straight.train(4);

  Trainer first(data, 1);
  first.train(4, 6 + 6 + 3);  // two epochs and three batches
  om::nn::save_checkpoint(path, *first.model, first.opt.get(), first.schedule.get(), {first.loader.get()});
  Trainer resumed(data, 77);  // other weights, another Dropout seed: everything must come from the file
  om::nn::load_checkpoint(path, *resumed.model, resumed.opt.get(), resumed.schedule.get(), {resumed.loader.get()});
  CHECK(resumed.loader->epoch() == 2);
  CHECK(resumed.loader->position() == 3);
  resumed.train(4);
  CHECK(same_bits(straight.weights(), resumed.weights()));

  // Without the Dropout generator's state the run differs: the test would catch its loss.
  Trainer forgetful(data, 77);
  om::nn::load_checkpoint(path, *forgetful.model, forgetful.opt.get(), forgetful.schedule.get(), {forgetful.loader.get()});
  auto dropout = std::dynamic_pointer_cast<om::nn::Dropout>((*forgetful.model)[2]);
  REQUIRE(dropout);
  dropout->generator().seed(77);
  forgetful.train(4);
  CHECK_FALSE(same_bits(straight.weights(), forgetful.weights()));

  // The loader's options must match the saved run's.
  Trainer other(data, 1);
  om::data::DataLoader unshuffled(data, {4});
  const std::string m = testutil::error_of([&] { om::nn::load_checkpoint(path, *other.model, other.opt.get(), other.schedule.get(), {&unshuffled}); }).what();
  CHECK(testutil::contains(m, "saved from a loader with shuffle 1, this one has 0"));
  std::remove(path.c_str());
}

TEST_CASE("generator state: get_state/set_state continue a stream; checkpoints carry the default generator on request") {
  om::Generator g(5);
  g.normal();  // leaves a spare normal in the state
  const om::Tensor s = g.get_state();
  CHECK(s.dtype() == om::DType::u8);
  CHECK(s.numel() == om::Generator::kStateBytes);
  const float n1 = g.normal(), u1 = g.uniform();
  om::Generator h(999);
  h.set_state(s);
  CHECK(h.normal() == n1);
  CHECK(h.uniform() == u1);
  om::Tensor bad = s.clone();
  bad.set<uint8_t>({13}, 1);
  CHECK(testutil::contains(testutil::error_of([&] { h.set_state(bad); }).what(), "not a state get_state() wrote"));
  CHECK(testutil::contains(testutil::error_of([&] { h.set_state(om::zeros({4})); }).what(), "u8 tensor of 16 bytes"));

  const std::string path = "test_data_loader_default_gen.omckpt";
  auto model = std::make_shared<om::nn::Sequential>(std::make_shared<om::nn::Linear>(2, 2));
  om::default_generator().seed(123);
  om::nn::save_checkpoint(path, *model, nullptr, nullptr, {nullptr, true});
  const auto want = om::rand({5}).to_vector<float>();
  om::rand({3});  // moves the stream on
  om::nn::load_checkpoint(path, *model, nullptr, nullptr, {nullptr, true});
  CHECK(om::rand({5}).to_vector<float>() == want);
  // A checkpoint saved without it cannot restore it.
  om::nn::save_checkpoint(path, *model);
  CHECK(testutil::contains(testutil::error_of([&] { om::nn::load_checkpoint(path, *model, nullptr, nullptr, {nullptr, true}); }).what(),
                           "'generator.default'"));
  std::remove(path.c_str());
}

TEST_CASE("from_blob: a tracer captures caller memory as a copy, so later writes do not reach the graph") {
  alignas(64) float w[6] = {1, 2, 3, 4, 5, 6};
  om::Tensor weight = om::from_blob(w, {3, 2});
  auto tracer = om::Tracer::begin();
  om::Tensor x = tracer.input("x", om::ones({4, 3}), {"batch", ""});
  om::TracedModel m = tracer.finish({{"y", om::matmul(x, weight)}});
  w[0] = 100;  // after the trace: the caller's memory changes
  om::Session s(m);
  const std::vector<float> y = s.run({{"x", om::ones({2, 3})}})[0].to_vector<float>();
  CHECK(y == std::vector<float>{9, 12, 9, 12});  // the captured values: 1 + 3 + 5, 2 + 4 + 6
}
