// Train a small MLP, checkpoint its state, restore it into a fresh model and export it.
//
// onemodel has no checkpoint file format yet: the state (state_dict(): parameters, then
// buffers) is saved as one .npy file per entry, named by its state-dict path, with
// om::save_npy and read back with om::load_npy + load_state_dict. Finally the trained model is
// traced and written as model.om and model.onnx, with an input batch in input.npy, for
// deploy_device and run_onnx.
//
//   train_checkpoint [OUT_DIR]        (default: the current directory)
#include <onemodel/onemodel.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>

namespace {

std::shared_ptr<om::nn::Sequential> make_model() {
  return std::make_shared<om::nn::Sequential>(
      std::make_shared<om::nn::Linear>(4, 16), std::make_shared<om::nn::ReLU>(), std::make_shared<om::nn::Linear>(16, 3));
}

// Three classes, each a blob around its own centre.
void make_data(om::Generator& gen, om::Tensor* x, om::Tensor* y) {
  const int64_t n = 96;
  *x = om::randn({n, 4}, gen);
  std::vector<int64_t> labels(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    labels[size_t(i)] = i % 3;
    for (int k = 0; k < 4; ++k) x->set<float>({i, k}, x->get<float>({i, k}) * 0.5f + (k == i % 3 ? 2.0f : 0.0f));
  }
  *y = om::from_vector(labels, {n});
}

}  // namespace

int main(int argc, char** argv) {
  const std::filesystem::path out = argc > 1 ? argv[1] : ".";
  const std::filesystem::path ckpt = out / "checkpoint";
  std::filesystem::create_directories(ckpt);
  try {
    om::Generator gen(42);
    om::Tensor x, y;
    make_data(gen, &x, &y);

    auto model = make_model();
    om::optim::SGD sgd(model->parameters(), {0.1, 0.9});
    float first = 0, last = 0;
    for (int step = 0; step < 100; ++step) {
      om::StoreScope scope;  // this step's activations go when the step ends
      om::Tensor loss = om::cross_entropy((*model)(x), y);
      sgd.zero_grad();
      loss.backward();
      sgd.step();
      (step == 0 ? first : last) = loss.item<float>();
    }
    std::printf("trained: loss %.4f -> %.4f\n", first, last);

    // Checkpoint: one .npy per state entry.
    for (const auto& [name, tensor] : model->state_dict()) om::save_npy((ckpt / (name + ".npy")).string(), tensor);
    std::printf("checkpoint: %zu tensors in %s\n", model->state_dict().size(), ckpt.string().c_str());

    // Restore into a fresh model and check it computes the same logits.
    auto restored = make_model();
    om::nn::StateDict state;
    for (const auto& [name, tensor] : restored->state_dict()) state.emplace_back(name, om::load_npy((ckpt / (name + ".npy")).string()));
    restored->load_state_dict(state);
    bool same = false;
    {
      om::NoGradGuard no_grad;  // only while comparing: tracing below records under grad mode
      same = (*model)(x).to_vector<float>() == (*restored)(x).to_vector<float>();
    }
    std::printf("restored model agrees: %s\n", same ? "yes" : "NO");
    if (!same) return 1;

    // Export for the device and for ONNX consumers.
    om::Tensor batch = x.slice(0, 0, 8).contiguous();
    om::TracedModel traced = restored->trace(batch, {"batch", ""}, "features", "logits");
    traced.save((out / "model.om").string());
    traced.save_onnx((out / "model.onnx").string());
    om::save_npy((out / "input.npy").string(), batch);
    std::printf("exported model.om, model.onnx and input.npy to %s\n", out.string().c_str());
    std::cout << "first logits: " << om::Session(traced).run({{"features", batch}})[0].slice(0, 0, 2) << "\n";
  } catch (const om::Error& e) {
    std::fprintf(stderr, "train_checkpoint: %s\n", e.what());
    return 1;
  }
  return 0;
}
