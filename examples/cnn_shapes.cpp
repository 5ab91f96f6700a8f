// Train a small CNN to tell squares from circles, then deploy it through the library format.
//
// The images are generated: 16x16, one filled square or circle of random size and position on
// a noisy background. The model (Conv2d + BatchNorm2d + ReLU + MaxPool2d, a second conv block,
// global average pooling, Linear) trains with SGD; then, in eval mode, it is traced with a
// symbolic batch, saved as cnn_shapes.om, loaded into a Session (Fast and Exact) and checked
// against eager on a fresh test set.
//
//   cnn_shapes [OUT_DIR]        (default: the current directory)
#include <onemodel/onemodel.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

namespace {

constexpr int64_t kSize = 16;

// n images [n, 1, 16, 16] and labels (0 square, 1 circle), alternating.
void make_images(om::Generator& gen, int64_t n, om::Tensor* x, om::Tensor* y) {
  std::vector<float> pix(static_cast<size_t>(n * kSize * kSize));
  std::vector<int64_t> labels(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const bool circle = i % 2 == 1;
    labels[size_t(i)] = circle ? 1 : 0;
    const float r = 3.0f + 3.0f * gen.uniform();  // half side or radius
    const float cx = r + (float(kSize) - 2 * r) * gen.uniform(), cy = r + (float(kSize) - 2 * r) * gen.uniform();
    for (int64_t h = 0; h < kSize; ++h)
      for (int64_t w = 0; w < kSize; ++w) {
        const float dx = float(w) + 0.5f - cx, dy = float(h) + 0.5f - cy;
        const bool inside = circle ? dx * dx + dy * dy <= r * r : std::fabs(dx) <= r && std::fabs(dy) <= r;
        pix[size_t((i * kSize + h) * kSize + w)] = (inside ? 1.0f : 0.0f) + 0.2f * (gen.uniform() - 0.5f);
      }
  }
  *x = om::from_vector(pix, {n, 1, kSize, kSize});
  *y = om::from_vector(labels, {n});
}

std::shared_ptr<om::nn::Sequential> make_model(om::Generator& gen) {
  using namespace om::nn;
  return std::make_shared<Sequential>(std::vector<std::shared_ptr<Module>>{
      std::make_shared<Conv2d>(1, 8, 3, 1, 1, 1, 1, false, gen), std::make_shared<BatchNorm2d>(8), std::make_shared<ReLU>(),
      std::make_shared<MaxPool2d>(2), std::make_shared<Conv2d>(8, 16, 3, 1, 1, 1, 1, true, gen), std::make_shared<ReLU>(),
      std::make_shared<GlobalAvgPool2d>(), std::make_shared<Flatten>(), std::make_shared<Linear>(16, 2, true, gen)});
}

// Fraction of rows whose largest logit is the label.
double accuracy(const om::Tensor& logits, const om::Tensor& labels) {
  const std::vector<float> l = logits.contiguous().to_vector<float>();
  const std::vector<int64_t> y = labels.to_vector<int64_t>();
  int64_t right = 0;
  for (size_t i = 0; i < y.size(); ++i) right += (l[2 * i + 1] > l[2 * i] ? 1 : 0) == y[i];
  return double(right) / double(y.size());
}

}  // namespace

int main(int argc, char** argv) {
  const std::filesystem::path out = argc > 1 ? argv[1] : ".";
  std::filesystem::create_directories(out);
  try {
    om::Generator gen(7);
    om::Tensor train_x, train_y, test_x, test_y;
    make_images(gen, 256, &train_x, &train_y);
    make_images(gen, 64, &test_x, &test_y);
    auto model = make_model(gen);
    om::optim::SGD sgd(model->parameters(), om::optim::SGDOptions(0.05).momentum(0.9));
    float first = 0, last = 0;
    for (int epoch = 0; epoch < 6; ++epoch) {
      for (int64_t b = 0; b < 256; b += 32) {
        om::StoreScope scope;
        om::Tensor loss = om::cross_entropy((*model)(train_x.slice(0, b, b + 32)), train_y.slice(0, b, b + 32));
        sgd.zero_grad();
        loss.backward();
        sgd.step();
        if (epoch == 0 && b == 0) first = loss.item<float>();
        last = loss.item<float>();
      }
    }
    // The running statistics lag behind weights that moved quickly: re-estimate them for the
    // final weights with a few training-mode passes (no gradients), as is usual before export.
    {
      om::NoGradGuard no_grad;
      for (int pass = 0; pass < 4; ++pass)
        for (int64_t b = 0; b < 256; b += 32) (*model)(train_x.slice(0, b, b + 32));
    }
    model->eval();
    om::Tensor eager;
    {
      om::NoGradGuard no_grad;
      eager = (*model)(test_x);
    }
    const double acc = accuracy(eager, test_y);
    std::printf("trained: loss %.4f -> %.4f, test accuracy %.3f\n", first, last, acc);

    const std::string path = (out / "cnn_shapes.om").string();
    model->trace(test_x.slice(0, 0, 4).contiguous(), {"batch", "", "", ""}, "image", "logits").save(path);
    om::SessionOptions exact_options;
    exact_options.mode = om::ArithmeticMode::Exact;
    om::Session fast = om::Session::load(path), exact = om::Session::load(path, exact_options);
    const om::Tensor deployed = fast.run({{"image", test_x}})[0];
    double err = 0;
    const std::vector<float> a = deployed.to_vector<float>(), e = eager.contiguous().to_vector<float>();
    for (size_t i = 0; i < a.size(); ++i) err = std::max(err, double(std::fabs(a[i] - e[i])));
    om::Tensor eager_exact;
    {
      om::NoGradGuard no_grad;
      om::ArithmeticModeGuard guard(om::ArithmeticMode::Exact);
      eager_exact = (*model)(test_x);
    }
    const bool bits = exact.run({{"image", test_x}})[0].to_vector<float>() == eager_exact.contiguous().to_vector<float>();
    std::printf("deployed %s: accuracy %.3f, max |session - eager| %.2e, exact session bit-equal to eager: %s\n", path.c_str(),
                accuracy(deployed, test_y), err, bits ? "yes" : "NO");
    if (acc < 0.9 || err > 1e-4 || !bits) return 1;
    std::printf("cnn_shapes: ok\n");
  } catch (const om::Error& e) {
    std::fprintf(stderr, "cnn_shapes: %s\n", e.what());
    return 1;
  }
  return 0;
}
