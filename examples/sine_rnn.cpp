// Train a small recurrent model to predict the next value of a noisy sine wave, then deploy it
// through the library format: trace with symbolic batch and sequence axes, save sine_rnn.om,
// load it in a Session and check it against the eager model on a longer sequence.
//
//   sine_rnn [OUT_DIR]        (default: the current directory)
#include <onemodel/onemodel.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

namespace {

// `batch` sequences of `steps + 1` samples of sin with random phase and frequency; x holds the
// noisy samples 0..steps-1, y the clean samples 1..steps ([steps, batch, 1] each).
void make_batch(om::Generator& gen, int64_t batch, int64_t steps, om::Tensor* x, om::Tensor* y) {
  std::vector<float> xv(size_t(steps * batch)), yv(size_t(steps * batch));
  for (int64_t b = 0; b < batch; ++b) {
    const double phase = 6.2831853 * gen.uniform(), freq = 0.25 + 0.15 * gen.uniform();
    for (int64_t t = 0; t < steps; ++t) {
      const double noise = 0.1 * (2.0 * gen.uniform() - 1.0);
      xv[size_t(t * batch + b)] = float(std::sin(phase + freq * double(t)) + noise);
      yv[size_t(t * batch + b)] = float(std::sin(phase + freq * double(t + 1)));
    }
  }
  *x = om::from_vector(xv, {steps, batch, 1});
  *y = om::from_vector(yv, {steps, batch, 1});
}

struct SineModel : om::nn::Module {
  SineModel(om::Generator& gen) : Module("SineModel") {
    rnn = register_module("rnn", std::make_shared<om::nn::Gru>(1, 16, om::nn::RnnOptions{}, gen));
    head = register_module("head", std::make_shared<om::nn::Linear>(16, 1, true, gen));
  }
  om::Tensor forward(const om::Tensor& x) override { return (*head)((*rnn)(x)); }
  std::shared_ptr<om::nn::Gru> rnn;
  std::shared_ptr<om::nn::Linear> head;
};

}  // namespace

int main(int argc, char** argv) {
  const std::filesystem::path out = argc > 1 ? argv[1] : ".";
  std::filesystem::create_directories(out);
  try {
    om::Generator gen(7);
    auto model = std::make_shared<SineModel>(gen);
    om::optim::Adam adam(model->parameters(), {0.02});
    float first = 0, last = 0;
    for (int step = 0; step < 200; ++step) {
      om::StoreScope scope;
      om::Tensor x, y;
      make_batch(gen, 16, 24, &x, &y);
      om::Tensor loss = om::mse_loss((*model)(x), y);
      adam.zero_grad();
      loss.backward();
      adam.step();
      (step == 0 ? first : last) = loss.item<float>();
    }
    std::printf("trained: mse %.4f -> %.4f\n", first, last);
    if (!(last < 0.25f * first)) {
      std::fprintf(stderr, "sine_rnn: training did not converge\n");
      return 1;
    }

    model->eval();
    om::Tensor example, unused;
    make_batch(gen, 3, 7, &example, &unused);
    const std::string path = (out / "sine_rnn.om").string();
    model->trace(example, {"seq", "batch", ""}, "x", "next").save(path);

    // The device side: load the file and predict on a longer, wider batch.
    om::Session session = om::Session::load(path);
    om::Tensor x, y;
    make_batch(gen, 5, 60, &x, &y);
    const om::Tensor deployed = session.run({{"x", x}})[0];
    om::Tensor eager;
    {
      om::NoGradGuard no_grad;
      eager = (*model)(x);
    }
    const std::vector<float> a = deployed.to_vector<float>(), b = eager.to_vector<float>(), target = y.to_vector<float>();
    double max_diff = 0, mse = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      max_diff = std::max(max_diff, std::fabs(double(a[i]) - double(b[i])));
      mse += (double(a[i]) - double(target[i])) * (double(a[i]) - double(target[i]));
    }
    mse /= double(a.size());
    std::printf("deployed %s: 60 steps x 5 sequences, mse %.4f against the clean wave, max |session - eager| %.2e\n", path.c_str(), mse,
                max_diff);
    if (max_diff > 1e-4) return 1;
    std::printf("sine_rnn: deployed model agrees with eager\n");
  } catch (const om::Error& e) {
    std::fprintf(stderr, "sine_rnn: %s\n", e.what());
    return 1;
  }
  return 0;
}
