// Malformed convolutional models as fuzz seeds (fuzz/corpus/onnx for the reader, fuzz/corpus/session
// for the Session harness): a kernel larger than the padded input, groups not dividing the
// channels, weights of the wrong rank, negative pads, zero strides, a pool window larger than its
// input, a Resize with scales on N and C, and two well-formed small CNNs to mutate from (one
// whose convolutions take the Winograd form in Fast sessions). Each
// malformed one must fail with an error naming the node (when read, or when the Session plans
// for the input's shape), never crash.
//   Regenerate: build/test_io -tc="conv fuzz seeds*" --no-skip
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <utility>

#include "fuzz/session_harness.h"
#include "onemodel/io/onnx.h"

namespace g = om::graph;
using om::DType;

namespace {

g::ValueInfo vi(std::string name, std::vector<int64_t> dims) {
  g::ValueInfo v;
  v.name = std::move(name);
  v.dtype = DType::f32;
  for (int64_t d : dims) v.shape.push_back(g::Dim::fixed(d));
  return v;
}
g::Node nd(std::string op, std::vector<std::string> ins, std::vector<g::Attribute> attrs = {}) {
  g::Node n;
  n.op_type = std::move(op);
  n.name = "bad_" + n.op_type;
  n.inputs = std::move(ins);
  n.outputs = {"y"};
  n.attributes = std::move(attrs);
  return n;
}
g::TensorData zeros(std::string name, std::vector<int64_t> dims) {
  size_t n = 1;
  for (int64_t d : dims) n *= size_t(d);
  return g::TensorData::from_vector(std::move(name), std::move(dims), std::vector<float>(n, 0.5f));
}
g::Graph one(const g::Node& n, std::vector<g::TensorData> inits, std::vector<int64_t> x = {1, 3, 4, 4}) {
  g::Graph gr;
  gr.name = "conv_seed";
  gr.inputs = {vi("x", x)};
  gr.initializers = std::move(inits);
  gr.nodes = {n};
  g::ValueInfo y;
  y.name = "y";
  gr.outputs = {y};
  return gr;
}
using A = g::Attribute;

std::vector<std::pair<std::string, g::Graph>> malformed() {
  return {
      {"conv_kernel_larger_than_input", one(nd("Conv", {"x", "w"}), {zeros("w", {2, 3, 5, 5})})},
      {"conv_groups_not_dividing", one(nd("Conv", {"x", "w"}, {A::of_int("group", 2)}), {zeros("w", {2, 1, 3, 3})})},
      {"conv_weight_rank", one(nd("Conv", {"x", "w"}), {zeros("w", {2, 3, 3})})},
      {"conv_negative_pads", one(nd("Conv", {"x", "w"}, {A::of_ints("pads", {-1, 0, 0, 0})}), {zeros("w", {2, 3, 3, 3})})},
      {"conv_zero_stride", one(nd("Conv", {"x", "w"}, {A::of_ints("strides", {0, 1})}), {zeros("w", {2, 3, 3, 3})})},
      {"conv_huge_dilation", one(nd("Conv", {"x", "w"}, {A::of_ints("dilations", {int64_t(1) << 62, 1})}), {zeros("w", {2, 3, 3, 3})})},
      {"convtranspose_weight_channels", one(nd("ConvTranspose", {"x", "w"}), {zeros("w", {2, 3, 3, 3})})},
      {"maxpool_window_larger_than_input", one(nd("MaxPool", {"x"}, {A::of_ints("kernel_shape", {6, 6})}), {})},
      {"resize_scales_on_channels",
       one(nd("Resize", {"x", "", "s"}), {g::TensorData::from_vector<float>("s", {4}, {1, 2, 2, 2})})},
  };
}

// A node of a well-formed seed, named after its op and output.
g::Node step(const std::string& op, std::vector<std::string> in, std::string out, std::vector<A> attrs = {}) {
  g::Node x;
  x.op_type = op;
  x.name = op + "_" + out;
  x.inputs = std::move(in);
  x.outputs = {std::move(out)};
  x.attributes = std::move(attrs);
  return x;
}

g::Graph small_cnn() {
  g::Graph gr;
  gr.name = "small_cnn";
  gr.inputs = {vi("x", {1, 3, 8, 8})};
  gr.initializers = {zeros("w1", {4, 3, 3, 3}), zeros("b1", {4}), zeros("s", {4}), zeros("bb", {4}), zeros("m", {4}), zeros("v", {4}),
                     zeros("w2", {4, 1, 3, 3})};
  gr.nodes = {step("Conv", {"x", "w1", "b1"}, "c", {A::of_ints("pads", {1, 1, 1, 1})}),
              step("BatchNormalization", {"c", "s", "bb", "m", "v"}, "n"),
              step("Relu", {"n"}, "r"),
              step("Conv", {"r", "w2"}, "d", {A::of_int("group", 4), A::of_ints("strides", {2, 2})}),
              step("MaxPool", {"d"}, "p", {A::of_ints("kernel_shape", {2, 2})}),
              step("GlobalAveragePool", {"p"}, "y")};
  g::ValueInfo y;
  y.name = "y";
  gr.outputs = {y};
  return gr;
}

// Two 3x3 stride-1 convolutions with 16 channels: Fast sessions take the Winograd form
// (kernels/conv_winograd.cpp) from weights packed when planning, Exact ones fuse the
// BatchNormalization into the first one's epilogue; odd extents crop the last tiles.
g::Graph winograd_cnn() {
  g::Graph gr;
  gr.name = "winograd_cnn";
  gr.inputs = {vi("x", {1, 16, 6, 7})};
  gr.initializers = {zeros("w1", {16, 16, 3, 3}), zeros("s", {16}),  zeros("bb", {16}), zeros("m", {16}),
                     zeros("v", {16}),            zeros("w2", {16, 16, 3, 3}), zeros("b2", {16})};
  gr.nodes = {step("Conv", {"x", "w1"}, "c", {A::of_ints("pads", {1, 1, 1, 1})}),
              step("BatchNormalization", {"c", "s", "bb", "m", "v"}, "n"),
              step("Relu", {"n"}, "r"),
              step("Conv", {"r", "w2", "b2"}, "y", {A::of_ints("pads", {0, 1, 2, 0})})};
  g::ValueInfo y;
  y.name = "y";
  gr.outputs = {y};
  return gr;
}

}  // namespace

TEST_CASE("conv fuzz seeds: write fuzz/corpus/onnx and fuzz/corpus/session" * doctest::skip()) {
  auto seeds = malformed();
  seeds.push_back({"small_cnn", small_cnn()});
  seeds.push_back({"winograd_cnn", winograd_cnn()});
  for (const char* sub : {"/fuzz/corpus/onnx/", "/fuzz/corpus/session/"}) {
    for (const auto& [name, gr] : seeds) {
      auto bytes = om::onnx::write_bytes(gr);
      REQUIRE(bytes.is_ok());
      std::ofstream(std::string(OM_SOURCE_DIR) + sub + name + ".onnx", std::ios::binary)
          .write(reinterpret_cast<const char*>(bytes.value().data()), std::streamsize(bytes.value().size()));
    }
  }
}

TEST_CASE("malformed convolutional models fail naming the node, when read or when the Session plans") {
  for (const auto& [name, gr] : malformed()) {
    CAPTURE(name);
    auto bytes = om::onnx::write_bytes(gr);
    REQUIRE(bytes.is_ok());
    std::string message;
    om::Result<g::Graph> read = om::onnx::read_bytes(bytes.value().data(), bytes.value().size());
    if (!read.is_ok()) {
      message = read.status().message();
    } else {
      for (om::ArithmeticMode mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
        om::SessionOptions o;
        o.mode = mode;
        om::Session s;
        om::Status st = om::Session::create(read.value(), o, &s);
        if (st.is_ok()) {  // shape errors surface when the session plans for the input's shape
          std::vector<int64_t> dims{1, 3, 4, 4};
          std::vector<float> data(48, 1.0f);
          om::TensorView in;
          in.name = "x";
          in.dtype = DType::f32;
          in.dims = dims.data();
          in.rank = 4;
          in.data = data.data();
          st = s.try_prepare(&in, 1);
        }
        REQUIRE(!st.is_ok());
        message = st.message();
      }
    }
    CHECK(message.find("bad_") != std::string::npos);
    CHECK(om::fuzz::run_session_case(bytes.value().data(), bytes.value().size()) == 0);
  }
  for (const g::Graph& gr : {small_cnn(), winograd_cnn()}) {
    auto ok = om::onnx::write_bytes(gr);
    REQUIRE(ok.is_ok());
    CHECK(om::fuzz::run_session_case(ok.value().data(), ok.value().size()) >= 1);
  }
}
