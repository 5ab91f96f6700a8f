// compute_f16_in_f32: f16 models run as f32 regions, rounded to f16 only at region boundaries.
// The reference for each f16 graph is the same graph in f32 on the widened inputs and weights,
// its outputs rounded to f16 once: the bits must match exactly.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>

#include "../oracle_case.h"
#include "onemodel/graph/passes/pass.h"
#include "onemodel/io/onnx.h"
#include "runtime_helpers.h"

using namespace rt;
using om::half;
using om::graph::Attribute;

namespace {

std::vector<half> to_half(const std::vector<float>& v) {
  std::vector<half> h(v.size());
  for (size_t i = 0; i < v.size(); ++i) h[i] = om::float_to_half(v[i]);
  return h;
}

std::vector<float> widen(const std::vector<half>& h) {
  std::vector<float> v(h.size());
  for (size_t i = 0; i < h.size(); ++i) v[i] = om::half_to_float(h[i]);
  return v;
}

std::vector<uint16_t> bits(const std::vector<half>& h) {
  std::vector<uint16_t> b(h.size());
  for (size_t i = 0; i < h.size(); ++i) b[i] = h[i].bits;
  return b;
}

// The graph's f32 twin: every f16 input, output, value_info and initializer made f32 (values
// widened exactly), every Cast to f16 made a Cast to f32.
g::Graph f32_twin(g::Graph gr) {
  for (auto& v : gr.inputs) if (v.dtype == DType::f16) v.dtype = DType::f32;
  for (auto& v : gr.outputs) if (v.dtype == DType::f16) v.dtype = DType::f32;
  for (auto& v : gr.value_info) if (v.dtype == DType::f16) v.dtype = DType::f32;
  for (auto& t : gr.initializers)
    if (t.dtype == DType::f16) {
      std::vector<half> h(size_t(t.numel()));
      std::memcpy(h.data(), t.bytes, t.nbytes);
      t = g::TensorData::from_vector(t.name, t.dims, widen(h));
    }
  for (auto& n : gr.nodes)
    if (n.op_type == "Cast")
      for (auto& a : n.attributes)
        if (a.name == "to" && a.i == 10) a.i = 1;
  return gr;
}

size_t count_op(const g::Graph& gr, const std::string& op) {
  size_t k = 0;
  for (const auto& n : gr.nodes) k += n.op_type == op;
  return k;
}

g::Graph after_pass(g::Graph gr) {
  size_t changes = 0;
  REQUIRE(om::graph::passes::compute_f16_in_f32(gr, om::ArithmeticMode::Fast, &changes).is_ok());
  REQUIRE(om::graph::verify(gr).is_ok());
  return gr;
}

// x16 [2,8] -> MatMul(W16 [8,4]) -> Add(B16 [4]) -> Sigmoid -> y16.
g::Graph mlp16() {
  g::Graph gr;
  gr.inputs = {value("x", DType::f16, {2, 8})};
  gr.outputs = {value("y", DType::f16, {2, 4})};
  gr.initializers = {g::TensorData::from_vector("W", {8, 4}, to_half(random_floats(32, 3, -1, 1))),
                     g::TensorData::from_vector("B", {4}, to_half(random_floats(4, 4, -1, 1)))};
  gr.nodes = {node("MatMul", {"x", "W"}, {"m"}), node("Add", {"m", "B"}, {"a"}), node("Sigmoid", {"a"}, {"y"})};
  return gr;
}

}  // namespace

TEST_CASE("compute_f16_in_f32: one f32 region, f16 weights converted once, one rounding at the output") {
  const g::Graph gr = mlp16();
  const g::Graph p = after_pass(gr);
  // An entry Cast for x, the three ops in f32, an exit Cast writing y; no f16 weight is read.
  CHECK(count_op(p, "Cast") == 2);
  CHECK(p.nodes.size() == 5);
  CHECK(p.nodes.front().op_type == "Cast");
  CHECK(p.nodes.back().op_type == "Cast");
  CHECK(p.nodes.back().outputs[0] == "y");
  for (const auto& n : p.nodes)
    for (const auto& in : n.inputs)
      if (const g::TensorData* t = p.find_initializer(in)) CHECK(t->dtype == DType::f32);

  const std::vector<half> x = to_half(random_floats(16, 5));
  for (om::ArithmeticMode mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
    om::SessionOptions opt;
    opt.mode = mode;
    om::Session s(gr, opt);
    bool reported = false;
    for (const auto& r : s.pass_reports())
      if (r.name == "compute_f16_in_f32") reported = r.exact_safe && r.changes == 3;
    CHECK(reported);
    const auto out = run(s, {Feed::of("x", {2, 8}, x)});
    REQUIRE(out[0].dtype == DType::f16);
    const auto ref = run_graph(f32_twin(gr), {Feed::of("x", {2, 8}, widen(x))}, opt);
    CHECK(bits(out[0].as<half>()) == bits(to_half(ref[0].as<float>())));
  }
}

TEST_CASE("compute_f16_in_f32: Cast pairs fold only when they are identities") {
  SUBCASE("f16 -> f32 -> f16 is the identity: the pair folds, the widening is reused") {
    g::Graph gr;
    gr.inputs = {value("x", DType::f16, {6})};
    gr.outputs = {value("y", DType::f16, {6})};
    gr.nodes = {node("Cast", {"x"}, {"a"}, {Attribute::of_int("to", 1)}), node("Cast", {"a"}, {"b"}, {Attribute::of_int("to", 10)}),
                node("Tanh", {"b"}, {"y"})};
    const g::Graph p = after_pass(gr);
    // The model's widening, Tanh in f32 on it, the exit: the f32 -> f16 Cast is gone.
    REQUIRE(p.nodes.size() == 3);
    CHECK(p.nodes[1].op_type == "Tanh");
    CHECK(p.nodes[1].inputs[0] == "a");
    const std::vector<half> x = to_half(random_floats(6, 9));
    const auto out = run_graph(gr, {Feed::of("x", {6}, x)});
    const auto ref = run_graph(f32_twin(gr), {Feed::of("x", {6}, widen(x))});
    CHECK(bits(out[0].as<half>()) == bits(to_half(ref[0].as<float>())));
  }
  SUBCASE("f32 -> f16 -> f32 rounds: both Casts stay") {
    g::Graph gr;
    gr.inputs = {value("x", DType::f32, {5})};
    gr.outputs = {value("y", DType::f32, {5})};
    gr.nodes = {node("Cast", {"x"}, {"h"}, {Attribute::of_int("to", 10)}), node("Cast", {"h"}, {"y"}, {Attribute::of_int("to", 1)})};
    CHECK(count_op(after_pass(gr), "Cast") == 2);
    const std::vector<float> x = {0.1f, 1.0f / 3, 65519.0f, -2.5e-8f, 1e6f};
    const auto out = run_graph(gr, {Feed::of("x", {5}, x)});
    CHECK(out[0].as<float>() == widen(to_half(x)));
  }
}

TEST_CASE("compute_f16_in_f32: a Cast the model wrote sees f16, so a region value is rounded before it") {
  g::Graph gr;
  gr.inputs = {value("x", DType::f16, {7})};
  gr.outputs = {value("y", DType::f32, {7}), value("z", DType::f16, {7})};
  // Sigmoid's result leaves the region twice: to the model's Cast(to=f32) and as output z. One
  // rounding serves the Cast; the graph output gets its own exit writing its name.
  gr.nodes = {node("Sigmoid", {"x"}, {"s"}), node("Cast", {"s"}, {"y"}, {Attribute::of_int("to", 1)}), node("Relu", {"s"}, {"z"})};
  const std::vector<half> x = to_half(random_floats(7, 11, -6, 6));
  const auto out = run_graph(gr, {Feed::of("x", {7}, x)});
  g::Graph twin = f32_twin(gr);
  const auto ref = run_graph(twin, {Feed::of("x", {7}, widen(x))});
  CHECK(out[0].as<float>() == widen(to_half(ref[0].as<float>())));
  CHECK(bits(out[1].as<half>()) == bits(to_half(ref[1].as<float>())));
  // Without the exit before the model's Cast y would keep f32 precision: the test would catch it.
  CHECK(out[0].as<float>() != ref[0].as<float>());
}

TEST_CASE("compute_f16_in_f32: graphs without f16 are left alone") {
  g::Graph gr = f32_twin(mlp16());
  size_t changes = 0;
  const size_t nodes = gr.nodes.size();
  REQUIRE(om::graph::passes::compute_f16_in_f32(gr, om::ArithmeticMode::Fast, &changes).is_ok());
  CHECK(changes == 0);
  CHECK(gr.nodes.size() == nodes);
}

TEST_CASE("compute_f16_in_f32: an f16 session's runs allocate nothing once planned") {
  om::Session s(mlp16());
  std::vector<Feed> feeds = {Feed::of("x", {2, 8}, to_half(random_floats(16, 13)))};
  auto in = views(feeds);
  std::vector<om::TensorView> out(1);
  s.run(in.data(), 1, out.data(), 1);
  const size_t before = g_allocations.load();
  for (int i = 0; i < 10; ++i) CHECK(s.try_run(in.data(), 1, out.data(), 1).is_ok());
  CHECK(g_allocations.load() - before == 0);
}

namespace {

g::TensorData f16_weight(const std::string& name, std::vector<int64_t> dims, uint32_t seed, float scale) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return g::TensorData::from_vector(name, std::move(dims), to_half(random_floats(size_t(n), seed, -scale, scale)));
}

// A converter-style fp16 CNN: f32 in, Cast to f16, the network in f16, Cast back to f32; plus
// one f16 graph output.
g::Graph cnn16() {
  g::Graph gr;
  gr.name = "cnn16";
  gr.inputs = {value("x", DType::f32, {1, 3, 8, 8})};
  gr.outputs = {value("y", DType::f32, {1, 8, 8, 8}), value("h", DType::f16, {1, 8, 8, 8})};
  gr.initializers = {f16_weight("W", {4, 3, 3, 3}, 21, 0.5f), f16_weight("B", {4}, 22, 0.2f), f16_weight("M", {8, 8}, 23, 0.5f),
                     g::TensorData::from_vector("scales", {4}, std::vector<float>{1, 1, 2, 2})};
  gr.nodes = {
      node("Cast", {"x"}, {"x16"}, {Attribute::of_int("to", 10)}),
      node("Conv", {"x16", "W", "B"}, {"c"}, {Attribute::of_ints("pads", {1, 1, 1, 1}), Attribute::of_ints("kernel_shape", {3, 3})}),
      node("Relu", {"c"}, {"r"}),
      node("MaxPool", {"r"}, {"p"}, {Attribute::of_ints("kernel_shape", {2, 2}), Attribute::of_ints("strides", {2, 2})}),
      node("Sigmoid", {"p"}, {"s"}),
      node("Add", {"p", "s"}, {"a"}),
      node("Concat", {"a", "p"}, {"k"}, {Attribute::of_int("axis", 1)}),
      node("Resize", {"k", "", "scales"}, {"z"}, {Attribute::of_string("mode", "nearest")}),
      node("Softmax", {"z"}, {"sm"}, {Attribute::of_int("axis", -1)}),
      node("MatMul", {"sm", "M"}, {"mm"}),
      node("Cast", {"mm"}, {"y"}, {Attribute::of_int("to", 1)}),
      node("Sigmoid", {"mm"}, {"h"}),
  };
  return gr;
}

}  // namespace

TEST_CASE("compute_f16_in_f32: an fp16 CNN with its Casts at the end of the node list agrees with ONNX Runtime") {
  const g::Graph sorted = cnn16();
  // The converter's form: the Casts appended after the network (the reader sorts the list).
  g::Graph unsorted = sorted;
  unsorted.nodes.clear();
  for (const auto& n : sorted.nodes)
    if (n.op_type != "Cast") unsorted.nodes.push_back(n);
  for (const auto& n : sorted.nodes)
    if (n.op_type == "Cast") unsorted.nodes.push_back(n);
  auto bytes = om::onnx::write_bytes(unsorted, om::graph::GraphCheck::AlreadyVerified);
  REQUIRE(bytes.is_ok());
  auto read = om::onnx::read_bytes(bytes.value().data(), bytes.value().size());
  REQUIRE(read.is_ok());

  const std::vector<float> x = random_floats(3 * 64, 31);
  std::vector<Out> outs[2];
  for (int m = 0; m < 2; ++m) {
    om::SessionOptions opt;
    opt.mode = m ? om::ArithmeticMode::Exact : om::ArithmeticMode::Fast;
    om::Session s(read.value(), opt);
    outs[m] = run(s, {Feed::of("x", {1, 3, 8, 8}, x)});
    REQUIRE(outs[m].size() == 2);
    CHECK(outs[m][0].dtype == DType::f32);
    CHECK(outs[m][1].dtype == DType::f16);
  }
  // The same region in f32 rounded once at the outputs (the f32 twin rounds x on entry too).
  g::Graph twin = f32_twin(sorted);
  for (auto& n : twin.nodes)
    if (n.op_type == "Cast" && n.outputs[0] == "x16") {
      n = node("Cast", {"x"}, {"x16h"}, {Attribute::of_int("to", 10)});
      twin.nodes.insert(twin.nodes.begin() + 1, node("Cast", {"x16h"}, {"x16"}, {Attribute::of_int("to", 1)}));
      break;
    }
  om::SessionOptions exact;
  exact.mode = om::ArithmeticMode::Exact;
  const auto ref = run_graph(twin, {Feed::of("x", {1, 3, 8, 8}, x)}, exact);
  CHECK(outs[1][0].as<float>() == widen(to_half(ref[0].as<float>())));
  CHECK(bits(outs[1][1].as<half>()) == bits(to_half(ref[1].as<float>())));

  g::TensorData xin = g::TensorData::from_vector("x", {1, 3, 8, 8}, x);
  g::TensorData y = g::TensorData::copy_of("y", DType::f32, {1, 8, 8, 8}, outs[0][0].bytes.data(), outs[0][0].bytes.size());
  g::TensorData h = g::TensorData::copy_of("h", DType::f16, {1, 8, 8, 8}, outs[0][1].bytes.data(), outs[0][1].bytes.size());
  write_oracle_case("runtime_f16_cnn", sorted, {xin}, {y, h});
  // ONNX Runtime reads the unsorted file, as the converter wrote it.
  REQUIRE(om::onnx::write_file(unsorted, oracle::case_dir("runtime_f16_cnn") + "/model.onnx", om::graph::GraphCheck::AlreadyVerified).is_ok());
  // ONNX Runtime rounds to f16 between some ops where onemodel keeps one f32 region: a few f16
  // ulps (2^-11 relative each) may separate the results.
  set_oracle_rtol("runtime_f16_cnn", 2e-3);
}

TEST_CASE("compute_f16_in_f32: f16 graphs run without optimisation too, with the same bits in Exact mode") {
  om::SessionOptions on, off;
  on.mode = off.mode = om::ArithmeticMode::Exact;
  off.optimize = false;
  const std::vector<Feed> feeds = {Feed::of("x", {2, 8}, to_half(random_floats(16, 17)))};
  om::Session s(mlp16(), off);
  REQUIRE(s.pass_reports().size() == 1);
  CHECK(s.pass_reports()[0].name == "compute_f16_in_f32");
  const auto a = run(s, feeds);
  const auto b = run_graph(mlp16(), feeds, on);
  CHECK(bits(a[0].as<half>()) == bits(b[0].as<half>()));
}

namespace {

// f16 in and out, no Casts: Conv, BatchNormalization, Clip, ConvTranspose, AveragePool,
// GlobalAveragePool, Flatten, Gemm, LayerNormalization, all f16 weights.
g::Graph head16() {
  g::Graph gr;
  gr.name = "head16";
  gr.inputs = {value("x", DType::f16, {2, 4, 6, 6})};
  gr.outputs = {value("y", DType::f16, {2, 5}), value("t", DType::f16, {2, 3, 6, 6})};
  gr.initializers = {f16_weight("W", {3, 4, 3, 3}, 41, 0.4f), f16_weight("s", {3}, 42, 1.0f), f16_weight("b", {3}, 43, 0.5f),
                     f16_weight("mu", {3}, 44, 0.3f),
                     g::TensorData::from_vector("var", {3}, to_half({0.5f, 1.25f, 2.0f})),
                     f16_weight("WT", {3, 3, 2, 2}, 45, 0.4f), f16_weight("G", {5, 3}, 46, 0.6f), f16_weight("GB", {5}, 47, 0.2f),
                     f16_weight("lo", {}, 48, 0.1f), g::TensorData::from_vector("hi", {}, to_half({1.5f})),
                     f16_weight("ls", {5}, 49, 1.0f), f16_weight("lb", {5}, 50, 0.3f)};
  gr.nodes = {
      node("Conv", {"x", "W"}, {"c"}, {Attribute::of_ints("pads", {1, 1, 1, 1})}),
      node("BatchNormalization", {"c", "s", "b", "mu", "var"}, {"n"}),
      node("Clip", {"n", "lo", "hi"}, {"k"}),
      node("ConvTranspose", {"k", "WT"}, {"u"}, {Attribute::of_ints("strides", {2, 2})}),
      node("AveragePool", {"u"}, {"t"}, {Attribute::of_ints("kernel_shape", {2, 2}), Attribute::of_ints("strides", {2, 2})}),
      node("GlobalAveragePool", {"t"}, {"gp"}),
      node("Flatten", {"gp"}, {"f"}),
      node("Gemm", {"f", "G", "GB"}, {"gm"}, {Attribute::of_int("transB", 1)}),
      node("LayerNormalization", {"gm", "ls", "lb"}, {"y"}, {Attribute::of_int("axis", -1)}),
  };
  return gr;
}

}  // namespace

TEST_CASE("compute_f16_in_f32: an f16 head (norms, Gemm, ConvTranspose, pools) agrees with ONNX Runtime") {
  const g::Graph gr = head16();
  const std::vector<half> x = to_half(random_floats(2 * 4 * 36, 51));
  const auto out = run_graph(gr, {Feed::of("x", {2, 4, 6, 6}, x)});
  REQUIRE(out.size() == 2);
  om::SessionOptions exact;
  exact.mode = om::ArithmeticMode::Exact;
  const auto got = run_graph(gr, {Feed::of("x", {2, 4, 6, 6}, x)}, exact);
  const auto ref = run_graph(f32_twin(gr), {Feed::of("x", {2, 4, 6, 6}, widen(x))}, exact);
  CHECK(bits(got[0].as<half>()) == bits(to_half(ref[0].as<float>())));
  CHECK(bits(got[1].as<half>()) == bits(to_half(ref[1].as<float>())));

  g::TensorData xin = g::TensorData::from_vector("x", {2, 4, 6, 6}, x);
  g::TensorData y = g::TensorData::copy_of("y", DType::f16, {2, 5}, out[0].bytes.data(), out[0].bytes.size());
  g::TensorData t = g::TensorData::copy_of("t", DType::f16, {2, 3, 6, 6}, out[1].bytes.data(), out[1].bytes.size());
  write_oracle_case("runtime_f16_head", gr, {xin}, {y, t});
  set_oracle_rtol("runtime_f16_head", 2e-3);
}

TEST_CASE("compute_f16_in_f32: f16 Constants, overridable f16 initializers and readers outside the list") {
  g::Graph gr;
  gr.inputs = {value("x", DType::f16, {2, 3}), value("k", DType::f16, {3})};
  gr.outputs = {value("y", DType::f16, {3, 2})};
  gr.initializers = {g::TensorData::from_vector("k", {3}, to_half({0.5f, -1.0f, 2.0f}))};  // backs input k
  g::Node c = node("Constant", {}, {"c"});
  c.attributes = {Attribute::of_tensor("value", g::TensorData::from_vector("c", {1}, to_half({0.25f})))};
  // Shape reads the f32 region's value through its f16 exit (it is outside the list).
  gr.nodes = {c, node("Mul", {"x", "k"}, {"m"}), node("Add", {"m", "c"}, {"a"}), node("Shape", {"a"}, {"sh"}),
              node("Gather", {"sh", "idx"}, {"rev"}, {Attribute::of_int("axis", 0)}), node("Reshape", {"a", "rev"}, {"y"})};
  gr.initializers.push_back(g::TensorData::from_vector("idx", {2}, std::vector<int64_t>{1, 0}));
  const std::vector<half> x = to_half(random_floats(6, 61));
  const std::vector<float> xf = widen(x);
  for (bool override_k : {false, true}) {
    const std::vector<half> k = override_k ? to_half({3.0f, 0.125f, -0.5f}) : to_half({0.5f, -1.0f, 2.0f});
    std::vector<Feed> feeds = {Feed::of("x", {2, 3}, x)};
    if (override_k) feeds.push_back(Feed::of("k", {3}, k));
    const auto out = run_graph(gr, feeds);
    REQUIRE(out[0].dims == std::vector<int64_t>{3, 2});
    const std::vector<float> kf = widen(k);
    std::vector<half> want(6);
    for (size_t i = 0; i < 6; ++i) {
      volatile float product = xf[i] * kf[i % 3];  // rounded to f32 as the Mul kernel does (no fma)
      want[i] = om::float_to_half(product + 0.25f);  // the one f16 rounding, at the output
    }
    CHECK(bits(out[0].as<half>()) == bits(want));
  }
}

TEST_CASE("compute_f16_in_f32: a 10,000-node f16 chain is one region, rewritten in linear time") {
  g::Graph gr;
  gr.inputs = {value("x", DType::f16, {4})};
  gr.outputs = {value("y", DType::f16, {4})};
  const int n = 10000;
  for (int i = 0; i < n; ++i)
    gr.nodes.push_back(node(i % 2 ? "Relu" : "Neg", {i ? "v" + std::to_string(i - 1) : std::string("x")}, {i + 1 < n ? "v" + std::to_string(i) : std::string("y")}));
  const auto start = std::chrono::steady_clock::now();
  const g::Graph p = after_pass(gr);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  CHECK(count_op(p, "Cast") == 2);
  CHECK(p.nodes.size() == size_t(n) + 2);
}

namespace {

std::vector<om::bfloat16> to_bf16(const std::vector<float>& v) {
  std::vector<om::bfloat16> h(v.size());
  for (size_t i = 0; i < v.size(); ++i) h[i] = om::float_to_bf16(v[i]);
  return h;
}

}  // namespace

TEST_CASE("compute_f16_in_f32: bf16 storage runs in f32 regions too, rounded once at the outputs") {
  // f32 x -> Cast(bf16) -> Conv(bf16 W, B) -> Relu -> MaxPool -> Add(Sigmoid) -> y (bf16) and
  // Cast(f32) -> z; the reference is the same graph in f32, its outputs rounded to bf16 once.
  auto weight = [](const std::string& name, std::vector<int64_t> dims, uint32_t seed) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return g::TensorData::from_vector(name, std::move(dims), to_bf16(random_floats(size_t(n), seed, -0.5f, 0.5f)));
  };
  g::Graph gr;
  gr.inputs = {value("x", DType::f32, {1, 3, 8, 8})};
  gr.outputs = {value("y", DType::bf16, {1, 4, 4, 4}), value("z", DType::f32, {1, 4, 4, 4})};
  gr.initializers = {weight("W", {4, 3, 3, 3}, 41), weight("B", {4}, 42)};
  gr.nodes = {node("Cast", {"x"}, {"xb"}, {Attribute::of_int("to", 16)}),
              node("Conv", {"xb", "W", "B"}, {"c"}, {Attribute::of_ints("pads", {1, 1, 1, 1}), Attribute::of_ints("kernel_shape", {3, 3})}),
              node("Relu", {"c"}, {"r"}),
              node("MaxPool", {"r"}, {"p"}, {Attribute::of_ints("kernel_shape", {2, 2}), Attribute::of_ints("strides", {2, 2})}),
              node("Sigmoid", {"p"}, {"s"}),
              node("Add", {"p", "s"}, {"y"}),
              node("Cast", {"y"}, {"z"}, {Attribute::of_int("to", 1)})};
  // The f32 twin: weights widened, x rounded to bf16 on entry as the model does, no other rounding.
  g::Graph twin = gr;
  twin.outputs[0].dtype = DType::f32;
  for (auto& t : twin.initializers) {
    std::vector<float> v(size_t(t.numel()));
    for (size_t k = 0; k < v.size(); ++k) {
      uint16_t b;
      std::memcpy(&b, t.bytes + 2 * k, 2);
      v[k] = om::bf16_to_float(om::bfloat16{b});
    }
    t = g::TensorData::from_vector(t.name, t.dims, v);
  }
  twin.nodes[0] = node("Cast", {"x"}, {"xh"}, {Attribute::of_int("to", 16)});
  twin.nodes.insert(twin.nodes.begin() + 1, node("Cast", {"xh"}, {"xb"}, {Attribute::of_int("to", 1)}));
  twin.nodes.back() = node("Identity", {"y"}, {"z"});
  const std::vector<float> x = random_floats(3 * 64, 43);
  for (om::ArithmeticMode mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
    om::SessionOptions opt;
    opt.mode = mode;
    om::Session s(gr, opt);
    const auto out = run(s, {Feed::of("x", {1, 3, 8, 8}, x)});
    REQUIRE(out[0].dtype == DType::bf16);
    const auto ref = run_graph(twin, {Feed::of("x", {1, 3, 8, 8}, x)}, opt);
    const std::vector<om::bfloat16> want = to_bf16(ref[0].as<float>());
    const std::vector<om::bfloat16> got = out[0].as<om::bfloat16>();
    REQUIRE(got.size() == want.size());
    size_t differ = 0;
    for (size_t i = 0; i < got.size(); ++i) differ += got[i].bits != want[i].bits;
    CHECK(differ == 0);
    // z is y widened: exact.
    const std::vector<float> z = out[1].as<float>();
    for (size_t i = 0; i < got.size(); ++i) CHECK(z[i] == om::bf16_to_float(got[i]));
  }
  // The ONNX round trip keeps bf16 tensors.
  const std::vector<uint8_t> bytes = om::onnx::write(gr);
  const g::Graph back = om::onnx::read(bytes);
  CHECK(back.initializers[0].dtype == DType::bf16);
  CHECK(om::onnx::write(back) == bytes);
}

TEST_CASE("bf16 conversions: round to nearest even, NaN and infinities kept, exact widening") {
  auto from = [](float f) { return om::float_to_bf16(f).bits; };
  CHECK(from(1.0f) == 0x3f80);
  CHECK(from(-2.0f) == 0xc000);
  CHECK(from(1.0f + 0x1p-8f) == 0x3f80);          // a tie: to the even neighbour (down)
  CHECK(from(1.0f + 3 * 0x1p-8f) == 0x3f82);      // a tie: to the even neighbour (up)
  CHECK(from(1.0f + 0x1p-8f + 0x1p-20f) == 0x3f81);  // above the tie: up
  CHECK(from(INFINITY) == 0x7f80);
  CHECK(from(-INFINITY) == 0xff80);
  CHECK(from(3.4e38f) == 0x7f80);                 // rounds past the largest bf16: infinity
  const uint16_t nan = from(NAN);
  CHECK((nan & 0x7f80) == 0x7f80);
  CHECK((nan & 0x007f) != 0);
  CHECK(std::isnan(om::bf16_to_float(om::bfloat16{nan})));
  for (uint32_t b = 0; b < 0x10000; b += 7) {
    const om::bfloat16 h{uint16_t(b)};
    const float f = om::bf16_to_float(h);
    if (!std::isnan(f)) CHECK(om::float_to_bf16(f).bits == h.bits);
  }
}
