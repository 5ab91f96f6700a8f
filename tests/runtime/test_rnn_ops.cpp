// LSTM, GRU and RNN graph kernels against a double reference (rnn_reference.h): every direction,
// both layouts, sequence_lens, initial states, linear_before_reset, any subset of outputs; Exact
// mode bit-equal across ISAs; malformed nodes refused naming the node.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>

#include "onemodel/kernels/kernels.h"
#include "oracle_case.h"
#include "rnn_reference.h"
#include "runtime_helpers.h"

namespace {

using namespace rt;
using g::Attribute;
using Isa = om::kernels::Isa;

struct Built {
  g::Graph graph;
  std::vector<Feed> feeds;
};

rnnref::Case make_case(const std::string& op, int dirs, bool reverse, int layout, bool lens, bool init, int lbr, uint32_t seed) {
  rnnref::Case c;
  c.op = op;
  c.T = 5;
  c.B = 3;
  c.I = 4;
  c.H = 6;
  c.dirs = dirs;
  c.reverse = reverse;
  c.layout = layout;
  c.lbr = lbr;
  const int64_t G = rnnref::gates(op), D = dirs;
  c.x = random_floats(size_t(c.T * c.B * c.I), seed, -1, 1);
  c.W = random_floats(size_t(D * G * c.H * c.I), seed + 1, -0.6f, 0.6f);
  c.R = random_floats(size_t(D * G * c.H * c.H), seed + 2, -0.6f, 0.6f);
  c.Bias = random_floats(size_t(D * 2 * G * c.H), seed + 3, -0.5f, 0.5f);
  if (init) {
    c.h0 = random_floats(size_t(D * c.B * c.H), seed + 4, -1, 1);
    if (op == "LSTM") c.c0 = random_floats(size_t(D * c.B * c.H), seed + 5, -1, 1);
  }
  if (lens) c.lens = {5, 2, 0};
  return c;
}

Built build(const rnnref::Case& c, std::vector<std::string> outs) {
  Built b;
  const int64_t G = rnnref::gates(c.op), D = c.dirs;
  const std::vector<int64_t> xd = c.layout ? std::vector<int64_t>{c.B, c.T, c.I} : std::vector<int64_t>{c.T, c.B, c.I};
  const std::vector<int64_t> sd = c.layout ? std::vector<int64_t>{c.B, D, c.H} : std::vector<int64_t>{D, c.B, c.H};
  b.graph.inputs.push_back(value("x", DType::f32, xd));
  b.feeds.push_back(Feed::of("x", xd, c.x));
  b.graph.initializers.push_back(g::TensorData::from_vector("W", {D, G * c.H, c.I}, c.W));
  b.graph.initializers.push_back(g::TensorData::from_vector("R", {D, G * c.H, c.H}, c.R));
  b.graph.initializers.push_back(g::TensorData::from_vector("B", {D, 2 * G * c.H}, c.Bias));
  std::vector<std::string> ins = {"x", "W", "R", "B", "", "", ""};
  if (!c.lens.empty()) {
    b.graph.inputs.push_back(value("lens", DType::i32, {c.B}));
    b.feeds.push_back(Feed::of("lens", {c.B}, c.lens));
    ins[4] = "lens";
  }
  if (!c.h0.empty()) {
    b.graph.inputs.push_back(value("h0", DType::f32, sd));
    b.feeds.push_back(Feed::of("h0", sd, c.h0));
    ins[5] = "h0";
  }
  if (!c.c0.empty()) {
    b.graph.inputs.push_back(value("c0", DType::f32, sd));
    b.feeds.push_back(Feed::of("c0", sd, c.c0));
    ins[6] = "c0";
  }
  while (!ins.empty() && ins.back().empty()) ins.pop_back();
  std::vector<Attribute> attrs = {Attribute::of_int("hidden_size", c.H), Attribute::of_int("layout", c.layout)};
  attrs.push_back(Attribute::of_string("direction", D == 2 ? "bidirectional" : c.reverse ? "reverse" : "forward"));
  if (c.op == "GRU") attrs.push_back(Attribute::of_int("linear_before_reset", c.lbr));
  g::Node n = node(c.op, ins, outs, attrs);
  n.name = "rnn_node";
  b.graph.nodes.push_back(n);
  for (const auto& o : outs)
    if (!o.empty()) b.graph.outputs.push_back(value(o, DType::f32, {}));
  return b;
}

void check_close(const std::vector<float>& got, const std::vector<double>& want, const char* what) {
  CAPTURE(what);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(std::fabs(double(got[i]) - want[i]) <= 2e-5 * std::max(1.0, std::fabs(want[i])));
  }
}

std::string msg_name(const std::string& op, int dirs, bool reverse, int layout, bool lens, bool init, int lbr) {
  std::string n = "runtime_rnn_" + op + (dirs == 2 ? "_bidir" : reverse ? "_reverse" : "_forward") + "_layout" + std::to_string(layout);
  if (lens) n += "_lens";
  if (init) n += "_init";
  if (op == "GRU") n += "_lbr" + std::to_string(lbr);
  return n;
}

uint64_t hash_outs(const std::vector<Out>& outs) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const auto& o : outs) h = fnv1a(o.bytes.data(), o.bytes.size(), h);
  return h;
}

}  // namespace

TEST_CASE("LSTM, GRU and RNN nodes agree with the double reference in every configuration") {
  uint32_t seed = 100;
  for (const char* op : {"LSTM", "GRU", "RNN"})
    for (int dirs : {1, 2})
      for (bool reverse : {false, true}) {
        if (dirs == 2 && reverse) continue;
        for (int layout : {0, 1})
          for (bool lens : {false, true})
            for (bool init : {false, true})
              for (int lbr : {0, 1}) {
                if (std::string(op) != "GRU" && lbr) continue;
                CAPTURE(op); CAPTURE(dirs); CAPTURE(reverse); CAPTURE(layout); CAPTURE(lens); CAPTURE(init); CAPTURE(lbr);
                const rnnref::Case c = make_case(op, dirs, reverse, layout, lens, init, lbr, seed += 10);
                const rnnref::Result want = rnnref::run(c);
                std::vector<std::string> outs = {"Y", "Y_h"};
                if (std::string(op) == "LSTM") outs.push_back("Y_c");
                const Built b = build(c, outs);
                for (auto mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
                  const auto got = run_graph(b.graph, b.feeds, {mode});
                  REQUIRE(got.size() == outs.size());
                  check_close(got[0].as<float>(), want.Y, "Y");
                  check_close(got[1].as<float>(), want.Yh, "Y_h");
                  if (outs.size() == 3) check_close(got[2].as<float>(), want.Yc, "Y_c");
                }
                // ONNX Runtime judges the same node against the same double reference (its CPU
                // kernels support layout 0 only).
                if (layout != 0) continue;
                std::vector<g::TensorData> in_data, out_data;
                for (const Feed& f : b.feeds) in_data.push_back(g::TensorData::copy_of(f.name, f.dtype, f.dims, f.bytes.data(), f.bytes.size()));
                auto expected = [](const std::string& name, const std::vector<double>& v, std::vector<int64_t> dims) {
                  std::vector<float> f(v.begin(), v.end());
                  return g::TensorData::from_vector(name, dims, f);
                };
                const int64_t D = c.dirs;
                out_data.push_back(expected("Y", want.Y, c.layout ? std::vector<int64_t>{c.B, c.T, D, c.H} : std::vector<int64_t>{c.T, D, c.B, c.H}));
                const std::vector<int64_t> sd = c.layout ? std::vector<int64_t>{c.B, D, c.H} : std::vector<int64_t>{D, c.B, c.H};
                out_data.push_back(expected("Y_h", want.Yh, sd));
                if (outs.size() == 3) out_data.push_back(expected("Y_c", want.Yc, sd));
                oracle::write_oracle_case(msg_name(op, dirs, reverse, layout, lens, init, lbr), b.graph, in_data, out_data);
              }
      }
}

TEST_CASE("LSTM outputs: any subset, unnamed ones skipped") {
  const rnnref::Case c = make_case("LSTM", 1, false, 0, false, true, 0, 7);
  const rnnref::Result want = rnnref::run(c);
  {
    const Built b = build(c, {"", "", "Y_c"});
    const auto got = run_graph(b.graph, b.feeds);
    REQUIRE(got.size() == 1);
    check_close(got[0].as<float>(), want.Yc, "Y_c only");
  }
  {
    const Built b = build(c, {"", "Y_h"});
    const auto got = run_graph(b.graph, b.feeds);
    REQUIRE(got.size() == 1);
    CHECK(got[0].dims == std::vector<int64_t>{1, c.B, c.H});
    check_close(got[0].as<float>(), want.Yh, "Y_h only");
  }
}

TEST_CASE("recurrent nodes in Exact mode give the same bits on every ISA; Fast is within tolerance") {
  const Isa original = om::kernels::active_isa();
  struct M { const char* name; rnnref::Case c; };
  std::vector<M> models = {{"lstm_bidir", make_case("LSTM", 2, false, 0, true, true, 0, 301)},
                           {"gru_lbr1_layout1", make_case("GRU", 1, true, 1, false, true, 1, 311)},
                           {"gru_lbr0", make_case("GRU", 2, false, 0, true, false, 0, 321)},
                           {"rnn", make_case("RNN", 1, false, 0, false, true, 0, 331)}};
  // A wider one: tiles and the small-M path both used (batch 9, hidden 40).
  rnnref::Case wide = make_case("LSTM", 1, false, 0, false, true, 0, 341);
  wide.B = 9; wide.H = 40; wide.I = 20; wide.T = 4;
  wide.x = random_floats(size_t(wide.T * wide.B * wide.I), 342, -1, 1);
  wide.W = random_floats(size_t(4 * 40 * 20), 343, -0.3f, 0.3f);
  wide.R = random_floats(size_t(4 * 40 * 40), 344, -0.3f, 0.3f);
  wide.Bias = random_floats(size_t(8 * 40), 345, -0.3f, 0.3f);
  wide.h0 = random_floats(size_t(9 * 40), 346, -1, 1);
  wide.c0 = random_floats(size_t(9 * 40), 347, -1, 1);
  models.push_back({"lstm_wide", wide});
  for (auto& m : models) {
    CAPTURE(m.name);
    std::vector<std::string> outs = {"Y", "Y_h"};
    if (m.c.op == "LSTM") outs.push_back("Y_c");
    const Built b = build(m.c, outs);
    const auto fast = run_graph(b.graph, b.feeds, {om::ArithmeticMode::Fast});
    check_close(fast[0].as<float>(), rnnref::run(m.c).Y, "Y");
    std::vector<uint64_t> hashes;
    for (Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512, Isa::Neon}) {
      if (!om::kernels::isa_supported(isa)) continue;
      REQUIRE(om::kernels::force_isa(isa));
      for (bool prepack : {true, false}) {
        om::SessionOptions opt{om::ArithmeticMode::Exact};
        opt.prepack_weights = prepack;
        const auto exact = run_graph(b.graph, b.feeds, opt);
        hashes.push_back(hash_outs(exact));
      }
      std::printf("EXACT_HASH runtime_rnn_%s %s %016llx\n", m.name, om::kernels::isa_name(isa),
                  static_cast<unsigned long long>(hashes.back()));
    }
    for (uint64_t h : hashes) CHECK(h == hashes[0]);
  }
  om::kernels::force_isa(original);
}

TEST_CASE("malformed recurrent nodes are refused naming the node") {
  auto refused = [](const Built& b, const char* needle) {
    bool threw = false;
    try {
      om::Session s(b.graph, {});
      run(s, b.feeds);
    } catch (const om::Error& e) {
      threw = true;
      const std::string m = e.what();
      CHECK_MESSAGE(m.find("rnn_node") != std::string::npos, m);
      CHECK_MESSAGE(m.find(needle) != std::string::npos, m);
    }
    CHECK_MESSAGE(threw, needle);
  };
  const rnnref::Case c = make_case("LSTM", 1, false, 0, true, false, 0, 401);
  {  // hidden_size inconsistent with W
    Built b = build(c, {"Y"});
    for (auto& a : b.graph.nodes[0].attributes)
      if (a.name == "hidden_size") a.i = 5;
    refused(b, "hidden_size");
  }
  {  // sequence_lens of the wrong dtype
    Built b = build(c, {"Y"});
    b.graph.inputs[1] = value("lens", DType::i64, {c.B});
    b.feeds[1] = Feed::of("lens", {c.B}, std::vector<int64_t>{1, 2, 3});
    refused(b, "sequence_lens must be i32");
  }
  {  // sequence_lens beyond the sequence
    Built b = build(c, {"Y"});
    b.feeds[1] = Feed::of("lens", {c.B}, std::vector<int32_t>{1, 6, 3});
    refused(b, "sequence_lens[1] = 6");
  }
  {  // W of the wrong rank
    Built b = build(c, {"Y"});
    auto& w = b.graph.initializers[0];
    w = g::TensorData::from_vector("W", {4 * c.H, c.I}, c.W);
    refused(b, "W must be 3-D");
  }
  {  // non-default activations, clip and input_forget are refused by name
    Built b = build(c, {"Y"});
    Attribute a;
    a.name = "activations";
    a.type = g::AttrType::Strings;
    a.strings = {"Relu", "Tanh", "Tanh"};
    b.graph.nodes[0].attributes.push_back(a);
    refused(b, "activations");
    b = build(c, {"Y"});
    b.graph.nodes[0].attributes.push_back(Attribute::of_float("clip", 3.0f));
    refused(b, "clip");
    b = build(c, {"Y"});
    b.graph.nodes[0].attributes.push_back(Attribute::of_int("input_forget", 1));
    refused(b, "input_forget");
  }
}
