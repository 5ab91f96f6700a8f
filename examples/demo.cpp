// The onemodel demo: train a small MLP with autograd, trace it with a symbolic batch axis,
// write model.onnx and model.om, run both in a Session (Fast and Exact, two batch sizes), and
// let ONNX Runtime check the ONNX file.
//
//   demo [path/to/tools/trace_oracle/oracle.js]     (make demo passes it)
#include <onemodel/onemodel.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace {

// Three Gaussian blobs in 4-D: a classification task an MLP learns in a few hundred steps.
void make_data(int64_t n, om::Generator& gen, om::Tensor* features, om::Tensor* labels) {
  std::vector<float> x(size_t(n * 4));
  std::vector<int64_t> y(static_cast<size_t>(n));
  const float centers[3][4] = {{2, 0, -1, 1}, {-2, 1, 0, -1}, {0, -2, 2, 0}};
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = int64_t(gen.next_u32() % 3);
    y[size_t(i)] = c;
    for (int k = 0; k < 4; ++k) x[size_t(i * 4 + k)] = centers[c][k] + 0.8f * gen.normal();
  }
  *features = om::from_vector(x, {n, 4});
  *labels = om::from_vector(y, {n});
}

double accuracy(const om::Tensor& logits, const om::Tensor& labels) {
  const std::vector<float> l = logits.to_vector<float>();
  const std::vector<int64_t> y = labels.to_vector<int64_t>();
  const int64_t classes = logits.shape()[1];
  int64_t right = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    const float* row = &l[i * size_t(classes)];
    right += std::max_element(row, row + classes) - row == y[i];
  }
  return double(right) / double(y.size());
}

om::TensorView view_of(const char* name, const om::Tensor& t) {
  om::TensorView v;
  v.name = name;
  v.dtype = t.dtype();
  v.dims = t.shape().data();
  v.rank = t.shape().size();
  v.data = const_cast<float*>(t.data<float>());
  return v;
}

struct RunResult {
  std::vector<float> values;
  double micros = 0;  // median latency of one run()
};

RunResult run_session(om::Session& session, const om::Tensor& x) {
  om::TensorView in = view_of("features", x);
  om::TensorView out;
  session.run(&in, 1, &out, 1);  // plans this batch size (the only run that allocates)
  RunResult r;
  r.values.assign(static_cast<const float*>(out.data), static_cast<const float*>(out.data) + out.numel());
  std::vector<double> times;
  for (int i = 0; i < 200; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    session.run(&in, 1, &out, 1);
    times.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  r.micros = times[times.size() / 2];
  return r;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, double(std::fabs(a[i] - b[i])));
  return m;
}

void write_npy(const std::string& path, const std::string& name, const om::Tensor& t) {
  om::Tensor c = t.clone();
  om::npy::write(om::graph::TensorData::copy_of(name, c.dtype(), c.shape(), c.data<float>(), size_t(c.numel()) * sizeof(float)), path);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    om::Generator gen(2024);
    om::Tensor train_x, train_y, test_x, test_y;
    make_data(512, gen, &train_x, &train_y);
    make_data(256, gen, &test_x, &test_y);

    // ---- 1. train ----
    // A braced list: its layers draw from `gen` left to right on every compiler.
    auto model = std::make_shared<om::nn::Sequential>(std::vector<std::shared_ptr<om::nn::Module>>{
        std::make_shared<om::nn::Linear>(4, 32, true, gen), std::make_shared<om::nn::ReLU>(),
        std::make_shared<om::nn::Linear>(32, 32, true, gen), std::make_shared<om::nn::GELU>(),
        std::make_shared<om::nn::Linear>(32, 3, true, gen)});
    om::optim::SGD sgd(model->parameters(), om::optim::SGDOptions(0.05).momentum(0.9));
    float first_loss = 0, loss_value = 0;
    for (int step = 0; step < 300; ++step) {
      om::StoreScope scope;  // this step's activations and gradients-in-flight go away at its end
      const int64_t start = (step * 64) % 512;
      om::Tensor xb = train_x.slice(0, start, start + 64), yb = train_y.slice(0, start, start + 64);
      om::Tensor loss = om::cross_entropy((*model)(xb), yb);
      sgd.zero_grad();
      loss.backward();
      sgd.step();
      loss_value = loss.item<float>();
      if (step == 0) first_loss = loss_value;
    }
    model->eval();
    om::Tensor test_logits = (*model)(test_x);
    std::printf("1. trained a 4-32-32-3 MLP for 300 SGD steps: loss %.4f -> %.4f, test accuracy %.1f%%\n", first_loss, loss_value,
                100.0 * accuracy(test_logits, test_y));

    // ---- 2. trace with a symbolic batch axis ----
    om::TracedModel traced = model->trace(test_x.slice(0, 0, 8), {"batch", ""}, "features", "logits");
    traced.save_onnx("model.onnx");
    traced.save("model.om");
    std::printf("2. traced: %zu nodes, %zu initializers; wrote model.onnx (%ju bytes) and model.om (%ju bytes)\n", traced.graph().nodes.size(),
                traced.graph().initializers.size(), std::uintmax_t(std::filesystem::file_size("model.onnx")),
                std::uintmax_t(std::filesystem::file_size("model.om")));

    // ---- 3. run both files in a Session, Fast and Exact, at two batch sizes ----
    std::printf("3. Session vs eager (max |difference|), median latency of run():\n");
    bool ok = true;
    for (int64_t batch : {8, 33}) {
      om::Tensor x = test_x.slice(0, 0, batch).contiguous();
      std::vector<float> eager = (*model)(x).to_vector<float>();
      std::vector<float> eager_exact;
      {
        om::ArithmeticModeGuard exact(om::ArithmeticMode::Exact);
        eager_exact = (*model)(x).to_vector<float>();
      }
      std::vector<float> exact_bits;
      for (const char* file : {"model.onnx", "model.om"}) {
        for (om::ArithmeticMode mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
          om::SessionOptions options;
          options.mode = mode;
          om::Session session = std::strcmp(file, "model.om") == 0 ? om::Session::load(file, options)
                                                                   : om::Session::from_onnx_file(file, options);
          RunResult r = run_session(session, x);
          const bool exact = mode == om::ArithmeticMode::Exact;
          const double err = max_abs_diff(r.values, exact ? eager_exact : eager);
          std::printf("   batch %2lld  %-10s %-5s  max error %.3g  %8.2f us\n", static_cast<long long>(batch), file, exact ? "Exact" : "Fast", err,
                      r.micros);
          ok = ok && err <= 1e-5;
          if (exact) {
            if (exact_bits.empty()) exact_bits = r.values;
            else ok = ok && std::memcmp(exact_bits.data(), r.values.data(), r.values.size() * sizeof(float)) == 0;
          }
        }
      }
    }
    std::printf("   Exact mode: model.onnx and model.om give the same bits: %s\n", ok ? "yes" : "NO");

    // ---- 4. ONNX Runtime on the same file ----
    if (argc > 1) {
      const std::string dir = "demo_oracle/mlp";
      std::filesystem::remove_all("demo_oracle");
      std::filesystem::create_directories(dir);
      std::filesystem::copy_file("model.onnx", dir + "/model.onnx");
      int set = 0;
      for (int64_t batch : {8, 33}) {
        const std::string sub = set++ == 0 ? dir : dir + "/batch" + std::to_string(batch);
        std::filesystem::create_directories(sub);
        om::Tensor x = test_x.slice(0, 0, batch).contiguous();
        write_npy(sub + "/input_features.npy", "features", x);
        write_npy(sub + "/expected_logits.npy", "logits", (*model)(x));
      }
      std::printf("4. ONNX Runtime on model.onnx vs eager:\n");
      std::fflush(stdout);
      const std::string cmd = std::string("node '") + argv[1] + "' demo_oracle --time 200";
      const int rc = std::system(cmd.c_str());
      ok = ok && rc == 0;
    } else {
      std::printf("4. (pass tools/trace_oracle/oracle.js to compare with ONNX Runtime)\n");
    }
    std::printf("%s\n", ok ? "demo: all checks agree" : "demo: DISAGREEMENT");
    return ok ? 0 : 1;
  } catch (const om::Error& e) {
    std::fprintf(stderr, "demo failed: %s\n", e.what());
    return 1;
  }
}
