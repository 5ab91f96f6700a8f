// Train a small classifier the libtorch way — a DataLoader over a TensorDataset, Dropout, SGD
// with a StepLR schedule — checkpoint it halfway through an epoch, resume in fresh objects and
// check the resumed run ends bit-identical to an uninterrupted one; then export the model.
//
// A libtorch program reads the same with torch:: for om:: (torch::data's loader is built by
// make_data_loader; onemodel's is a class). The trained model is traced in eval() mode and
// written as model.om and model.onnx, with an input batch in input.npy, for deploy_device and
// run_onnx.
//
//   train_checkpoint [OUT_DIR]        (default: the current directory)
#include <onemodel/onemodel.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>

namespace {

struct Net {
  std::shared_ptr<om::nn::Sequential> model;
  std::unique_ptr<om::optim::SGD> sgd;
  std::unique_ptr<om::optim::StepLR> schedule;
  std::unique_ptr<om::data::DataLoader> loader;

  Net(const om::data::Dataset& data, uint64_t seed) {
    om::Generator gen(seed);
    // A braced list: the layers draw from `gen` left to right on every compiler.
    model = std::make_shared<om::nn::Sequential>(std::vector<std::shared_ptr<om::nn::Module>>{
        std::make_shared<om::nn::Linear>(4, 16, true, gen), std::make_shared<om::nn::ReLU>(), std::make_shared<om::nn::Dropout>(0.2, seed),
        std::make_shared<om::nn::Linear>(16, 3, true, gen)});
    sgd = std::make_unique<om::optim::SGD>(model->parameters(), om::optim::SGDOptions(0.1).momentum(0.9));
    schedule = std::make_unique<om::optim::StepLR>(*sgd, 2, 0.5);
    loader = std::make_unique<om::data::DataLoader>(data, om::data::DataLoaderOptions{16, /*shuffle*/ true, /*drop_last*/ false, /*seed*/ 7});
  }

  // Trains until `epochs` epochs are done, or stops after `stop_after` batches (a checkpoint).
  float train(int epochs, int stop_after = -1) {
    float loss_value = 0;
    int seen = 0;
    while (loader->epoch() < epochs) {
      for (const om::data::Batch& batch : *loader) {
        om::StoreScope scope;  // this step's activations go when the step ends
        sgd->zero_grad();
        om::Tensor loss = om::cross_entropy((*model)(batch.x), batch.y);
        loss.backward();
        sgd->step();
        loss_value = loss.item<float>();
        if (++seen == stop_after) return loss_value;
      }
      schedule->step();  // once per epoch
    }
    return loss_value;
  }

  std::vector<float> weights() const {
    std::vector<om::Tensor> flat;
    for (const om::Tensor& p : model->parameters()) flat.push_back(p.reshape({-1}));
    return om::cat(flat).to_vector<float>();
  }
};

// Three classes, each a blob around its own centre: samples built one by one, then stacked.
om::data::TensorDataset make_data(om::Generator& gen) {
  std::vector<om::Tensor> rows;
  std::vector<int64_t> labels;
  for (int64_t i = 0; i < 96; ++i) {
    om::Tensor centre = om::zeros({4});
    centre.set<float>({i % 3}, 2.0f);
    rows.push_back(om::add(om::mul(om::randn({4}, gen), 0.5), centre));
    labels.push_back(i % 3);
  }
  return om::data::TensorDataset(om::stack(rows), om::from_vector(labels));
}

}  // namespace

int main(int argc, char** argv) {
  const std::filesystem::path out = argc > 1 ? argv[1] : ".";
  std::filesystem::create_directories(out);
  const std::string ckpt = (out / "train.omckpt").string();
  try {
    om::Generator gen(42);
    const om::data::TensorDataset data = make_data(gen);
    const int epochs = 6;

    Net straight(data, 1);
    const float first = straight.train(1, 1);
    const float last = straight.train(epochs);
    std::printf("trained %d epochs of %lld batches: loss %.4f -> %.4f\n", epochs, (long long)straight.loader->batches_per_epoch(), first, last);

    // Interrupted halfway through epoch 3 (3 epochs + 3 batches), checkpointed, resumed in
    // objects made from another seed: everything must come from the file.
    Net first_half(data, 1);
    first_half.train(epochs, 3 * 6 + 3);
    om::nn::save_checkpoint(ckpt, *first_half.model, first_half.sgd.get(), first_half.schedule.get(), {first_half.loader.get()});
    Net resumed(data, 99);
    om::nn::load_checkpoint(ckpt, *resumed.model, resumed.sgd.get(), resumed.schedule.get(), {resumed.loader.get()});
    std::printf("checkpoint: %s at epoch %lld, batch %lld\n", ckpt.c_str(), (long long)resumed.loader->epoch(), (long long)resumed.loader->position());
    resumed.train(epochs);
    const std::vector<float> a = straight.weights(), b = resumed.weights();
    const bool same = a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
    std::printf("resumed run bit-identical to the uninterrupted one: %s\n", same ? "yes" : "NO");
    if (!same) return 1;

    // Export for the device and for ONNX consumers (eval(): Dropout passes values through).
    resumed.model->eval();
    om::Tensor batch = data.x().slice(0, 0, 8).contiguous();
    om::TracedModel traced = resumed.model->trace(batch, {"batch", ""}, "features", "logits");
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
