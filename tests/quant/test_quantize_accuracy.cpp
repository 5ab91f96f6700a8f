// quantize_static on classifiers trained here: the QDQ model, run in a Session, stays within one
// percentage point of the float model's held-out accuracy, for a traced graph and for one read
// back from an ONNX file.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <unistd.h>

#include "quant_models.h"

using namespace quanttest;

namespace {

struct Accuracies {
  double float_acc = 0, quant_acc = 0;
};

Accuracies compare(const om::graph::Graph& float_graph, const om::graph::Graph& qdq, const std::string& input, const Dataset& test) {
  om::Session fs(float_graph), qs(qdq);
  Accuracies a;
  a.float_acc = accuracy(fs.run({{input, test.x}})[0], test.labels);
  a.quant_acc = accuracy(qs.run({{input, test.x}})[0], test.labels);
  MESSAGE("float accuracy ", a.float_acc * 100, "%, quantized ", a.quant_acc * 100, "%");
  return a;
}

}  // namespace

TEST_CASE("quantize_static: a trained MLP loses at most 1 point of held-out accuracy (traced and from ONNX)") {
  const Dataset train_set = blobs(1200, 11), test_set = blobs(3000, 12);
  auto model = mlp(5);
  train(*model, train_set, 300, 0.05);
  model->eval();
  om::TracedModel traced = model->trace(train_set.x.slice(0, 0, 4), {"batch", ""}, "features", "logits");
  const om::quant::CalibrationSet calib = batches_of(train_set.x, "features", 8, 64);

  SUBCASE("traced graph, per-channel u8 (the defaults)") {
    const om::graph::Graph q = om::quant::quantize_static(traced.graph(), calib);
    const Accuracies a = compare(traced.graph(), q, "features", test_set);
    CHECK(a.float_acc > 0.85);
    CHECK(a.quant_acc >= a.float_acc - 0.01);
  }
  SUBCASE("read back from an ONNX file, per-tensor s8 with percentile ranges") {
    const std::string path = (std::filesystem::temp_directory_path() / ("om_quant_mlp_" + std::to_string(::getpid()) + ".onnx")).string();
    traced.save_onnx(path);
    const om::graph::Graph imported = om::onnx::read(path);
    std::remove(path.c_str());
    om::quant::QuantOptions o;
    o.per_channel = false;
    o.activation_dtype = om::DType::i8;
    o.range_method = om::quant::RangeMethod::Percentile;
    o.percentile = 99.99;
    const om::graph::Graph q = om::quant::quantize_static(imported, calib, o);
    const Accuracies a = compare(imported, q, "features", test_set);
    CHECK(a.float_acc > 0.85);
    CHECK(a.quant_acc >= a.float_acc - 0.01);
  }
}

TEST_CASE("quantize_static: a trained CNN loses at most 1 point of held-out accuracy") {
  const Dataset train_set = bars(600, 21), test_set = bars(1500, 22);
  auto model = cnn(9);
  train(*model, train_set, 200, 0.05);
  model->eval();
  om::TracedModel traced = model->trace(train_set.x.slice(0, 0, 2), {"batch", "", "", ""}, "image", "logits");
  const om::graph::Graph q = om::quant::quantize_static(traced.graph(), batches_of(train_set.x, "image", 6, 50));
  CHECK(count_op(q, "Conv") == 2);
  CHECK(count_op(q, "QuantizeLinear") > 0);
  const Accuracies a = compare(traced.graph(), q, "image", test_set);
  CHECK(a.float_acc > 0.85);
  CHECK(a.quant_acc >= a.float_acc - 0.01);
  // A Fast session runs both convolutions on the integer kernels (fuse_qdq_conv), as accurate;
  // an Exact one runs the QDQ graph as written.
  om::Session fused(q, {om::ArithmeticMode::Fast}), exact(q, {om::ArithmeticMode::Exact});
  CHECK(count_op(fused.graph(), "QLinearConv") == 2);
  CHECK(count_op(exact.graph(), "QLinearConv") == 0);
  const double fused_acc = accuracy(fused.run({{"image", test_set.x}})[0], test_set.labels);
  const double exact_acc = accuracy(exact.run({{"image", test_set.x}})[0], test_set.labels);
  MESSAGE("integer kernels ", fused_acc * 100, "%, QDQ graph in Exact mode ", exact_acc * 100, "%");
  CHECK(fused_acc >= a.float_acc - 0.01);
  CHECK(exact_acc >= a.float_acc - 0.01);
}
