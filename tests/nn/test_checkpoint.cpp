// Checkpoints: a resumed run continues bit-identically; every mismatch names its entry.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "onemodel/onemodel.h"
#include "test_util.h"

namespace {

std::shared_ptr<om::nn::Sequential> make_model(uint64_t seed, int64_t hidden = 8) {
  om::Generator gen(seed);
  return std::make_shared<om::nn::Sequential>(std::vector<std::shared_ptr<om::nn::Module>>{
      std::make_shared<om::nn::Linear>(3, hidden, true, gen), std::make_shared<om::nn::Tanh>(), std::make_shared<om::nn::Linear>(hidden, 2, true, gen)});
}

struct Run {
  std::shared_ptr<om::nn::Sequential> model;
  std::unique_ptr<om::optim::AdamW> opt;
  std::unique_ptr<om::optim::SequentialLR> schedule;
  explicit Run(uint64_t seed) : model(make_model(seed)) {
    opt = std::make_unique<om::optim::AdamW>(model->parameters(), om::optim::AdamWOptions(0.05));
    schedule = std::make_unique<om::optim::SequentialLR>(
        *opt, std::vector<std::shared_ptr<om::optim::LrSchedule>>{std::make_shared<om::optim::LinearLR>(*opt, 0.5, 1.0, 3), std::make_shared<om::optim::StepLR>(*opt, 2, 0.7)},
        std::vector<int64_t>{3});
  }
  void train(const om::Tensor& x, const om::Tensor& y, int steps) {
    for (int s = 0; s < steps; ++s) {
      om::StoreScope scope;
      opt->zero_grad();
      om::Tensor loss = om::cross_entropy((*model)(x), y);
      loss.backward();
      om::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
      opt->step();
      schedule->step();
    }
  }
  std::vector<float> params() const {
    std::vector<float> out;
    for (const om::Tensor& p : model->parameters()) {
      const auto v = p.to_vector<float>();
      out.insert(out.end(), v.begin(), v.end());
    }
    return out;
  }
};

}  // namespace

TEST_CASE("training resumed from a checkpoint continues bit-identically") {
  om::Generator g(3);
  om::Tensor x = om::randn({16, 3}, g);
  std::vector<int64_t> labels;
  for (int i = 0; i < 16; ++i) labels.push_back(i % 2);
  om::Tensor y = om::from_vector<int64_t>(labels);
  const std::string path = "test_checkpoint_resume.omckpt";

  Run straight(1);
  straight.train(x, y, 10);

  Run first(1);
  first.train(x, y, 4);
  om::nn::save_checkpoint(path, *first.model, first.opt.get(), first.schedule.get());
  Run resumed(99);  // other initial weights: everything must come from the file
  om::nn::load_checkpoint(path, *resumed.model, resumed.opt.get(), resumed.schedule.get());
  CHECK(resumed.opt->steps() == 4);
  CHECK(resumed.schedule->epoch() == 4);
  CHECK(resumed.opt->lr() == first.opt->lr());
  resumed.train(x, y, 6);
  const auto a = straight.params(), b = resumed.params();
  REQUIRE(a.size() == b.size());
  CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
  std::remove(path.c_str());
}

TEST_CASE("checkpoint errors name the file and the entry") {
  const std::string path = "test_checkpoint_errors.omckpt";
  auto model = make_model(1);
  om::optim::Adam adam(model->parameters());
  om::nn::save_checkpoint(path, *model, &adam);
  // another hidden size: the first mismatching entry is named with both shapes
  auto wider = make_model(1, 9);
  const auto before = wider->parameters()[2].to_vector<float>();  // [2] bias: the same shape in both
  std::string m = testutil::error_of([&] { om::nn::load_checkpoint(path, *wider); }).what();
  CHECK(testutil::contains(m, "'model.0.weight'"));
  CHECK(testutil::contains(m, "f32[8, 3]"));
  CHECK(testutil::contains(m, "f32[9, 3]"));
  // an optimizer the file does not hold
  om::optim::RMSprop rms(model->parameters());
  m = testutil::error_of([&] { om::nn::load_checkpoint(path, *model, &rms); }).what();
  CHECK(testutil::contains(m, "optimizer.square_avg.0"));
  // a failed load changes nothing (not even the entries that matched)
  CHECK(wider->parameters()[2].to_vector<float>() == before);
  // corruption: one flipped byte fails the checksum
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);
    f.put('\x7f');
  }
  m = testutil::error_of([&] { om::nn::load_checkpoint(path, *model); }).what();
  CHECK(testutil::contains(m, "checksum"));
  m = testutil::error_of([&] { om::nn::load_checkpoint("no_such_checkpoint.omckpt", *model); }).what();
  CHECK(testutil::contains(m, "cannot open"));
  std::remove(path.c_str());
}
