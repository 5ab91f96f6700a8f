// LayerNormalization in the Session: against a double-precision reference in both modes, the
// optional Mean / InvStdDev outputs, axis forms, and Exact bits equal on every ISA the machine
// runs (docs/exactness.md: fixed-order sums, mean first, then the variance).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "onemodel/kernels/kernels.h"
#include "runtime/runtime_helpers.h"

namespace {

using namespace rt;
using g::Attribute;

g::Graph ln_graph(std::vector<int64_t> dims, int64_t axis, float eps, bool with_bias, bool stats) {
  g::Graph gr;
  gr.name = "layer_norm";
  gr.inputs.push_back(value("x", DType::f32, dims));
  std::vector<int64_t> norm(dims.begin() + (axis < 0 ? int64_t(dims.size()) + axis : axis), dims.end());
  size_t n = 1;
  for (int64_t d : norm) n *= size_t(d);
  gr.initializers.push_back(g::TensorData::from_vector("scale", norm, random_floats(n, 7, 0.5f, 1.5f)));
  std::vector<std::string> ins = {"x", "scale"};
  if (with_bias) {
    gr.initializers.push_back(g::TensorData::from_vector("bias", norm, random_floats(n, 8)));
    ins.push_back("bias");
  }
  std::vector<std::string> outs = {"y"};
  if (stats) outs = {"y", "mean", "inv"};
  gr.nodes.push_back(node("LayerNormalization", ins, outs, {Attribute::of_int("axis", axis), Attribute::of_float("epsilon", eps)}));
  for (const auto& o : outs) gr.outputs.push_back(value(o, DType::f32, {}));
  return gr;
}

// y, mean, inv_std in double.
void reference(const std::vector<float>& x, int64_t rows, int64_t n, const std::vector<float>& s, const std::vector<float>* b,
               float eps, std::vector<double>* y, std::vector<double>* mean, std::vector<double>* inv) {
  y->resize(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double m = 0, v = 0;
    for (int64_t i = 0; i < n; ++i) m += x[size_t(r * n + i)];
    m /= double(n);
    for (int64_t i = 0; i < n; ++i) v += (x[size_t(r * n + i)] - m) * (x[size_t(r * n + i)] - m);
    v /= double(n);
    const double is = 1.0 / std::sqrt(v + double(eps));
    for (int64_t i = 0; i < n; ++i)
      (*y)[size_t(r * n + i)] = (x[size_t(r * n + i)] - m) * is * s[size_t(i)] + (b ? (*b)[size_t(i)] : 0.0);
    mean->push_back(m);
    inv->push_back(is);
  }
}

}  // namespace

TEST_CASE("LayerNormalization agrees with a double reference in Fast and Exact, with its statistics outputs") {
  struct Case { std::vector<int64_t> dims; int64_t axis; bool bias; };
  for (const Case& c : {Case{{3, 5, 16}, -1, true}, Case{{2, 4, 3, 7}, 2, true}, Case{{4, 37}, 1, false}, Case{{2, 3, 300}, -1, true}}) {
    CAPTURE(c.axis);
    const g::Graph gr = ln_graph(c.dims, c.axis, 1e-5f, c.bias, true);
    size_t total = 1;
    for (int64_t d : c.dims) total *= size_t(d);
    const int64_t axis = c.axis < 0 ? int64_t(c.dims.size()) + c.axis : c.axis;
    int64_t rows = 1, n = 1;
    for (size_t i = 0; i < c.dims.size(); ++i) (int64_t(i) < axis ? rows : n) *= c.dims[i];
    const std::vector<float> x = random_floats(total, 11, -3.0f, 5.0f);
    const auto& si = gr.initializers[0];
    const std::vector<float> s(si.data<float>(), si.data<float>() + si.numel());
    std::vector<float> b;
    if (c.bias) b.assign(gr.initializers[1].data<float>(), gr.initializers[1].data<float>() + n);
    std::vector<double> ry, rm, ri;
    reference(x, rows, n, s, c.bias ? &b : nullptr, 1e-5f, &ry, &rm, &ri);
    for (om::ArithmeticMode mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
      auto out = run_graph(gr, {Feed::of("x", c.dims, x)}, {mode});
      REQUIRE(out.size() == 3);
      CHECK(out[0].dims == c.dims);
      std::vector<int64_t> stat_dims = c.dims;
      for (size_t i = size_t(axis); i < stat_dims.size(); ++i) stat_dims[i] = 1;
      CHECK(out[1].dims == stat_dims);
      const auto y = out[0].as<float>(), m = out[1].as<float>(), inv = out[2].as<float>();
      for (size_t i = 0; i < y.size(); ++i) CHECK(std::fabs(y[i] - ry[i]) <= 2e-5 * std::max(1.0, std::fabs(ry[i])));
      for (size_t i = 0; i < m.size(); ++i) {
        CHECK(std::fabs(m[i] - rm[i]) <= 1e-5 * std::max(1.0, std::fabs(rm[i])));
        CHECK(std::fabs(inv[i] - ri[i]) <= 1e-5 * std::max(1.0, std::fabs(ri[i])));
      }
    }
  }
}

TEST_CASE("LayerNormalization refuses what it cannot compute, naming the node") {
  g::Graph gr = ln_graph({2, 8}, -1, 1e-5f, true, false);
  gr.nodes[0].attributes[0] = Attribute::of_int("axis", 5);
  CHECK_THROWS_WITH_AS(run_graph(gr, {Feed::of("x", {2, 8}, random_floats(16, 1))}), doctest::Contains("axis 5"), om::Error);
  g::Graph wrong = ln_graph({2, 8}, -1, 1e-5f, true, false);
  wrong.initializers[0] = g::TensorData::from_vector("scale", {3}, std::vector<float>{1, 2, 3});
  CHECK_THROWS_WITH_AS(run_graph(wrong, {Feed::of("x", {2, 8}, random_floats(16, 1))}), doctest::Contains("normalised shape"),
                       om::Error);
}

TEST_CASE("LayerNormalization in Exact mode gives the same bits on every ISA") {
  using om::kernels::Isa;
  const Isa original = om::kernels::active_isa();
  const g::Graph gr = ln_graph({3, 7, 67}, -1, 1e-5f, true, true);
  const std::vector<Feed> feeds = {Feed::of("x", {3, 7, 67}, random_floats(3 * 7 * 67, 21, -4.0f, 9.0f))};
  std::vector<uint64_t> hashes;
  for (Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512, Isa::Neon}) {
    if (!om::kernels::isa_supported(isa)) continue;
    REQUIRE(om::kernels::force_isa(isa));
    auto exact = run_graph(gr, feeds, {om::ArithmeticMode::Exact});
    uint64_t h = 0xcbf29ce484222325ull;
    for (const Out& o : exact) h = fnv1a(o.bytes.data(), o.bytes.size(), h);
    hashes.push_back(h);
    std::printf("EXACT_HASH runtime_layer_norm %s %016llx\n", om::kernels::isa_name(isa), static_cast<unsigned long long>(h));
  }
  om::kernels::force_isa(original);
  REQUIRE(!hashes.empty());
  for (uint64_t h : hashes) CHECK(h == hashes[0]);
}
