// The models `make mcu-test` runs on the Cortex-M4 (tests/mcu/device/mcu_models.cpp under
// qemu-system-arm): built here, run in Exact mode on every ISA of this machine (EXACT_HASH lines
// that tools/exactness.sh compares with the AArch64 and Cortex-M runs), and written with their
// inputs and the expected hash as C arrays to <build>/mcu/mcu_models.h for the device program
// (and each model as <build>/mcu/<name>.om).
#include <doctest/doctest.h>

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "onemodel/io/format_v1.h"
#include "onemodel/kernels/kernels.h"
#include "runtime/runtime_helpers.h"

using namespace rt;
using om::graph::Attribute;

namespace {

// Keyword spotting as the small CNNs of that task do it: a 49x10 MFCC map, three Conv + ReLU
// stages (BatchNorm folded into each conv's weights and bias, as exporters leave it), MaxPool,
// global average pool, a Linear layer to 12 classes and Softmax. Also the model of
// examples/cortex_m_kws.
g::Graph kws_cnn(uint32_t seed) {
  g::Graph gr;
  gr.inputs.push_back(value("mfcc", DType::f32, {1, 1, 49, 10}));
  struct Stage { int in, out, k; };
  const Stage stages[] = {{1, 16, 3}, {16, 32, 3}, {32, 64, 3}};
  std::string x = "mfcc";
  for (int i = 0; i < 3; ++i) {
    const Stage& s = stages[i];
    const std::string w = "conv" + std::to_string(i) + ".w", b = "conv" + std::to_string(i) + ".b";
    const float scale = 1.5f / float(s.in * s.k * s.k);
    gr.initializers.push_back(g::TensorData::from_vector<float>(
        w, {s.out, s.in, s.k, s.k}, random_floats(size_t(s.out * s.in * s.k * s.k), seed + uint32_t(2 * i), -scale * 3, scale * 3)));
    gr.initializers.push_back(g::TensorData::from_vector<float>(b, {s.out}, random_floats(size_t(s.out), seed + uint32_t(2 * i + 1), -0.1f, 0.1f)));
    const std::string c = "c" + std::to_string(i), r = "r" + std::to_string(i), p = "p" + std::to_string(i);
    gr.nodes.push_back(node("Conv", {x, w, b}, {c}, {Attribute::of_ints("kernel_shape", {s.k, s.k}), Attribute::of_ints("pads", {1, 1, 1, 1})}));
    gr.nodes.push_back(node("Relu", {c}, {r}));
    if (i < 2) {
      gr.nodes.push_back(node("MaxPool", {r}, {p}, {Attribute::of_ints("kernel_shape", {2, 2}), Attribute::of_ints("strides", {2, 2})}));
      x = p;
    } else {
      x = r;
    }
  }
  gr.nodes.push_back(node("GlobalAveragePool", {x}, {"gap"}));
  gr.nodes.push_back(node("Flatten", {"gap"}, {"feat"}));
  gr.initializers.push_back(g::TensorData::from_vector<float>("fc.w", {12, 64}, random_floats(12 * 64, seed + 10, -0.3f, 0.3f)));
  gr.initializers.push_back(g::TensorData::from_vector<float>("fc.b", {12}, random_floats(12, seed + 11, -0.1f, 0.1f)));
  gr.nodes.push_back(node("Gemm", {"feat", "fc.w", "fc.b"}, {"logits"}, {Attribute::of_int("transB", 1)}));
  gr.nodes.push_back(node("Softmax", {"logits"}, {"probs"}, {Attribute::of_int("axis", -1)}));
  gr.outputs.push_back(value("logits", DType::f32, {}));
  gr.outputs.push_back(value("probs", DType::f32, {}));
  return gr;
}

// A sensor-style MLP with the transcendental operators Exact mode computes itself: LayerNorm,
// Gelu, Tanh, Sigmoid, Exp, Log, Sqrt and a reduction.
g::Graph sensor_mlp(uint32_t seed) {
  g::Graph gr;
  gr.inputs.push_back(value("x", DType::f32, {4, 24}));
  gr.initializers.push_back(g::TensorData::from_vector<float>("W1", {24, 32}, random_floats(24 * 32, seed, -0.4f, 0.4f)));
  gr.initializers.push_back(g::TensorData::from_vector<float>("b1", {32}, random_floats(32, seed + 1, -0.1f, 0.1f)));
  gr.initializers.push_back(g::TensorData::from_vector<float>("gamma", {32}, random_floats(32, seed + 2, 0.5f, 1.5f)));
  gr.initializers.push_back(g::TensorData::from_vector<float>("beta", {32}, random_floats(32, seed + 3, -0.2f, 0.2f)));
  gr.initializers.push_back(g::TensorData::from_vector<float>("W2", {32, 8}, random_floats(32 * 8, seed + 4, -0.4f, 0.4f)));
  gr.initializers.push_back(g::TensorData::from_vector<int64_t>("ax", {1}, {-1}));
  gr.nodes.push_back(node("MatMul", {"x", "W1"}, {"h0"}));
  gr.nodes.push_back(node("Add", {"h0", "b1"}, {"h1"}));
  gr.nodes.push_back(node("LayerNormalization", {"h1", "gamma", "beta"}, {"n"}, {Attribute::of_int("axis", -1)}));
  gr.nodes.push_back(node("Gelu", {"n"}, {"g"}));
  gr.nodes.push_back(node("MatMul", {"g", "W2"}, {"h2"}));
  gr.nodes.push_back(node("Tanh", {"h2"}, {"t"}));
  gr.nodes.push_back(node("Sigmoid", {"h2"}, {"s"}));
  gr.nodes.push_back(node("Exp", {"t"}, {"e"}));
  gr.nodes.push_back(node("Log", {"s"}, {"l"}));
  gr.nodes.push_back(node("Abs", {"h2"}, {"a"}));
  gr.nodes.push_back(node("Sqrt", {"a"}, {"q"}));
  gr.nodes.push_back(node("Sum", {"e", "l", "q"}, {"y"}));
  gr.nodes.push_back(node("ReduceSum", {"y", "ax"}, {"total"}, {Attribute::of_int("keepdims", 0)}));
  gr.outputs.push_back(value("y", DType::f32, {}));
  gr.outputs.push_back(value("total", DType::f32, {}));
  return gr;
}

// The plain MLP nn::Linear, nn::ReLU, nn::Linear traces to (Gemm with transB, Relu, Gemm): the
// AArch64 size check registers only its operators (tools/size_check.sh).
g::Graph mlp(uint32_t seed) {
  g::Graph gr;
  gr.inputs.push_back(value("x", DType::f32, {8, 16}));
  gr.initializers.push_back(g::TensorData::from_vector<float>("W1", {32, 16}, random_floats(32 * 16, seed, -0.3f, 0.3f)));
  gr.initializers.push_back(g::TensorData::from_vector<float>("b1", {32}, random_floats(32, seed + 1, -0.1f, 0.1f)));
  gr.initializers.push_back(g::TensorData::from_vector<float>("W2", {4, 32}, random_floats(4 * 32, seed + 2, -0.3f, 0.3f)));
  gr.initializers.push_back(g::TensorData::from_vector<float>("b2", {4}, random_floats(4, seed + 3, -0.1f, 0.1f)));
  gr.nodes.push_back(node("Gemm", {"x", "W1", "b1"}, {"h"}, {Attribute::of_int("transB", 1)}));
  gr.nodes.push_back(node("Relu", {"h"}, {"r"}));
  gr.nodes.push_back(node("Gemm", {"r", "W2", "b2"}, {"y"}, {Attribute::of_int("transB", 1)}));
  gr.outputs.push_back(value("y", DType::f32, {}));
  return gr;
}

// `const uint8_t name[] = {...};` (aligned so the device reads floats from it in place).
void write_array(std::ostream& os, const std::string& name, const std::vector<uint8_t>& bytes) {
  os << "alignas(64) static const uint8_t " << name << "[" << bytes.size() << "] = {";
  for (size_t i = 0; i < bytes.size(); ++i) os << (i % 24 == 0 ? "\n  " : "") << unsigned(bytes[i]) << ",";
  os << "\n};\n";
}

}  // namespace

TEST_CASE("the Cortex-M models: exact on every ISA here, written as C arrays for the device") {
  using om::kernels::Isa;
  struct M { const char* name; g::Graph graph; Feed feed; };
  std::vector<M> models;
  models.push_back({"kws_cnn", kws_cnn(71), Feed::of("mfcc", {1, 1, 49, 10}, random_floats(490, 81, -3, 3))});
  models.push_back({"sensor_mlp", sensor_mlp(91), Feed::of("x", {4, 24}, random_floats(96, 101, -2, 2))});
  models.push_back({"mlp", mlp(111), Feed::of("x", {8, 16}, random_floats(128, 121, -2, 2))});
  std::ostringstream header;
  header << "// Generated by tests/mcu/test_mcu_models.cpp (test_mcu): the models tests/mcu/device runs.\n"
            "#pragma once\n#include <cstddef>\n#include <cstdint>\n\n";
  std::ostringstream table;
  table << "struct McuModel { const char* name; const uint8_t* om; size_t om_size; const char* input; const int64_t* dims;\n"
           "                  size_t rank; const float* data; uint64_t hash; };\n"
           "static const McuModel kMcuModels[] = {\n";
  const Isa original = om::kernels::active_isa();
  for (auto& m : models) {
    CAPTURE(m.name);
    std::vector<uint64_t> hashes;
    for (Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512, Isa::Neon}) {
      if (!om::kernels::isa_supported(isa)) continue;
      REQUIRE(om::kernels::force_isa(isa));
      const uint64_t h = hash_outputs(run_graph(m.graph, {m.feed}, {om::ArithmeticMode::Exact}));
      hashes.push_back(h);
      std::printf("EXACT_HASH mcu_%s %s %016" PRIx64 "\n", m.name, om::kernels::isa_name(isa), h);
    }
    om::kernels::force_isa(original);
    for (uint64_t h : hashes) CHECK(h == hashes[0]);
    // The softmax outputs are probabilities: the model computes what it says.
    const auto outs = run_graph(m.graph, {m.feed}, {om::ArithmeticMode::Exact});
    if (std::string(m.name) == "kws_cnn") {
      float sum = 0;
      for (float p : outs[1].as<float>()) sum += p;
      CHECK(std::fabs(sum - 1.0f) < 1e-5f);
    }
    auto bytes = om::format_v1::write_bytes(m.graph);
    REQUIRE(bytes.is_ok());
    // The bytes read back give the same outputs (the device reads exactly these).
    auto back = om::format_v1::read_bytes(bytes.value().data(), bytes.value().size());
    REQUIRE(back.is_ok());
    CHECK(hash_outputs(run_graph(back.value(), {m.feed}, {om::ArithmeticMode::Exact})) == hashes[0]);
    const std::string id = m.name;
    {
      // The .om file itself too: examples/cortex_m_kws embeds it as its C array.
      std::system(("mkdir -p '" + std::string(OM_BINARY_DIR) + "/mcu'").c_str());
      std::ofstream om_file(std::string(OM_BINARY_DIR) + "/mcu/" + id + ".om", std::ios::binary);
      om_file.write(reinterpret_cast<const char*>(bytes.value().data()), std::streamsize(bytes.value().size()));
      REQUIRE(om_file.good());
    }
    write_array(header, id + "_om", bytes.value());
    write_array(header, id + "_input", m.feed.bytes);
    header << "static const int64_t " << id << "_dims[] = {";
    for (int64_t d : m.feed.dims) header << d << ",";
    header << "};\n\n";
    table << "    {\"" << id << "\", " << id << "_om, sizeof " << id << "_om, \"" << m.feed.name << "\", " << id << "_dims, "
          << m.feed.dims.size() << ", reinterpret_cast<const float*>(" << id << "_input), 0x" << std::hex << hashes[0] << std::dec
          << "ull},\n";
  }
  table << "};\n";
  const std::string dir = std::string(OM_BINARY_DIR) + "/mcu";
  std::system(("mkdir -p '" + dir + "'").c_str());
  std::ofstream f(dir + "/mcu_models.h");
  f << header.str() << table.str();
  REQUIRE(f.good());
}
