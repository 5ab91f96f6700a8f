// Every graph operator against a straightforward double-precision reference written here, at
// several shapes including broadcasting, symbolic input dims, and i64 shape arithmetic.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>

#include "onemodel/graph/op_registry.h"
#include "onemodel/kernels/kernels.h"
#include "runtime_helpers.h"

using namespace rt;
using om::graph::Attribute;

namespace {

int64_t numel(const std::vector<int64_t>& s) { return std::accumulate(s.begin(), s.end(), int64_t(1), std::multiplies<int64_t>()); }

std::vector<int64_t> bshape(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> o(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t x = i + a.size() >= r ? a[i + a.size() - r] : 1, y = i + b.size() >= r ? b[i + b.size() - r] : 1;
    o[i] = x == 1 ? y : x;
  }
  return o;
}

// Flat index into `in` for the output multi-index of flat position `flat` (numpy broadcasting).
int64_t bindex(int64_t flat, const std::vector<int64_t>& out, const std::vector<int64_t>& in) {
  int64_t idx = 0, stride = 1;
  for (size_t k = out.size(); k-- > 0;) {
    const int64_t c = flat % out[k];
    flat /= out[k];
    const size_t lead = out.size() - in.size();
    if (k >= lead) {
      const int64_t d = in[k - lead];
      if (d != 1) idx += c * stride;
      stride *= d;
    }
  }
  return idx;
}

void check_close(const std::vector<float>& got, const std::vector<double>& ref, double tol = 1e-5) {
  REQUIRE(got.size() == ref.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", reference " << ref[i]);
    if (std::isnan(ref[i])) CHECK(std::isnan(got[i]));
    else CHECK(std::fabs(double(got[i]) - ref[i]) <= tol * std::max(1.0, std::fabs(ref[i])));
  }
}

// One node, inputs all graph inputs (f32 unless told), output "y".
g::Graph single(const std::string& op, const std::vector<g::ValueInfo>& ins, std::vector<Attribute> attrs = {}, int n_out = 1) {
  g::Graph gr;
  std::vector<std::string> names;
  for (const auto& v : ins) {
    gr.inputs.push_back(v);
    names.push_back(v.name);
  }
  std::vector<std::string> outs{"y"};
  for (int i = 1; i < n_out; ++i) outs.push_back("y" + std::to_string(i));
  gr.nodes.push_back(node(op, names, outs, std::move(attrs)));
  for (const auto& o : outs) gr.outputs.push_back(value(o, DType::f32, {}));
  return gr;
}

void add_const_i64(g::Graph& gr, const std::string& name, std::vector<int64_t> v) {
  gr.initializers.push_back(g::TensorData::from_vector<int64_t>(name, {int64_t(v.size())}, v));
}

}  // namespace

TEST_CASE("binary f32 ops broadcast like numpy") {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{2, 3, 4}, {4}}, {{2, 1, 4}, {3, 1}}, {{}, {2, 2}}, {{5}, {5}}, {{3, 1}, {1, 3}}, {{2, 3}, {2, 1}}};
  const char* ops[] = {"Add", "Sub", "Mul", "Div"};
  for (const auto& sh : shapes)
    for (int oi = 0; oi < 4; ++oi) {
      CAPTURE(ops[oi]);
      auto a = random_floats(size_t(numel(sh.first)), 1), b = random_floats(size_t(numel(sh.second)), 2, 0.5f, 3.0f);
      auto gr = single(ops[oi], {value("a", DType::f32, sh.first), value("b", DType::f32, sh.second)});
      auto out = run_graph(gr, {Feed::of("a", sh.first, a), Feed::of("b", sh.second, b)});
      auto os = bshape(sh.first, sh.second);
      CHECK(out[0].dims == os);
      std::vector<double> ref(size_t(numel(os)));
      for (int64_t i = 0; i < numel(os); ++i) {
        double x = a[size_t(bindex(i, os, sh.first))], y = b[size_t(bindex(i, os, sh.second))];
        ref[size_t(i)] = oi == 0 ? x + y : oi == 1 ? x - y : oi == 2 ? x * y : x / y;
      }
      check_close(out[0].as<float>(), ref);
    }
}

TEST_CASE("binary ops on a symbolic batch dim, planned per batch size") {
  auto gr = single("Add", {sym_value("a", DType::f32, {"batch", "3"}), value("b", DType::f32, {3})});
  om::Session s(gr);
  for (int64_t batch : {1, 4, 2}) {
    auto a = random_floats(size_t(batch * 3), 3), b = random_floats(3, 4);
    auto out = run(s, {Feed::of("a", {batch, 3}, a), Feed::of("b", {3}, b)});
    std::vector<double> ref;
    for (int64_t i = 0; i < batch * 3; ++i) ref.push_back(double(a[size_t(i)]) + b[size_t(i % 3)]);
    CHECK(out[0].dims == std::vector<int64_t>{batch, 3});
    check_close(out[0].as<float>(), ref);
  }
  CHECK(s.cached_plan_count() == 3);
}

TEST_CASE("integer arithmetic, comparisons and Where") {
  std::vector<int64_t> a{7, -8, 9, 10, 11, 12}, b{2, 3, -4};
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    CAPTURE(op);
    auto gr = single(op, {value("a", DType::i64, {2, 3}), value("b", DType::i64, {3})});
    auto out = run_graph(gr, {Feed::of("a", {2, 3}, a), Feed::of("b", {3}, b)});
    auto y = out[0].as<int64_t>();
    for (size_t i = 0; i < 6; ++i) {
      int64_t x = a[i], z = b[i % 3];
      int64_t r = op[0] == 'A' ? x + z : op[0] == 'S' ? x - z : op[0] == 'M' ? x * z : x / z;
      CHECK(y[i] == r);
    }
  }
  auto zero = single("Div", {value("a", DType::i64, {2}), value("b", DType::i64, {2})});
  CHECK_THROWS_WITH_AS(run_graph(zero, {Feed::of<int64_t>("a", {2}, {1, 2}), Feed::of<int64_t>("b", {2}, {1, 0})}),
                       doctest::Contains("division by zero"), om::Error);

  std::vector<float> x{1, 2, 3, 4}, y{2, 2, 2, 2};
  const char* cmps[] = {"Equal", "Less", "Greater"};
  for (int c = 0; c < 3; ++c) {
    auto gr = single(cmps[c], {value("x", DType::f32, {4}), value("z", DType::f32, {4})});
    auto out = run_graph(gr, {Feed::of("x", {4}, x), Feed::of("z", {4}, y)});
    CHECK(out[0].dtype == DType::boolean);
    auto r = out[0].as<uint8_t>();
    for (size_t i = 0; i < 4; ++i) CHECK(r[i] == uint8_t(c == 0 ? x[i] == y[i] : c == 1 ? x[i] < y[i] : x[i] > y[i]));
  }
  auto w = single("Where", {value("c", DType::boolean, {2, 1}), value("x", DType::f32, {2, 3}), value("z", DType::f32, {3})});
  std::vector<uint8_t> cond{1, 0};
  Feed fc;
  fc.name = "c"; fc.dtype = DType::boolean; fc.dims = {2, 1}; fc.bytes = cond;
  auto xs = random_floats(6, 5), ys = random_floats(3, 6);
  auto out = run_graph(w, {fc, Feed::of("x", {2, 3}, xs), Feed::of("z", {3}, ys)});
  auto r = out[0].as<float>();
  for (size_t i = 0; i < 6; ++i) CHECK(r[i] == (i < 3 ? xs[i] : ys[i % 3]));
}

TEST_CASE("unary activations match double references") {
  auto x = random_floats(257, 7, -6.0f, 6.0f);
  auto pos = random_floats(257, 8, 0.01f, 50.0f);
  struct U { const char* op; std::function<double(double)> f; bool positive; std::vector<Attribute> attrs; };
  const double s2 = std::sqrt(2.0), c = std::sqrt(2.0 / M_PI);
  std::vector<U> us = {
      {"Relu", [](double v) { return v > 0 ? v : 0; }, false, {}},
      {"Neg", [](double v) { return -v; }, false, {}},
      {"Sigmoid", [](double v) { return 1 / (1 + std::exp(-v)); }, false, {}},
      {"Tanh", [](double v) { return std::tanh(v); }, false, {}},
      {"Gelu", [=](double v) { return 0.5 * v * (1 + std::erf(v / s2)); }, false, {}},
      {"Gelu", [=](double v) { return 0.5 * v * (1 + std::tanh(c * (v + 0.044715 * v * v * v))); }, false,
       {Attribute::of_string("approximate", "tanh")}},
      {"Exp", [](double v) { return std::exp(v); }, false, {}},
      {"Erf", [](double v) { return std::erf(v); }, false, {}},
      {"Abs", [](double v) { return std::fabs(v); }, false, {}},
      {"Log", [](double v) { return std::log(v); }, true, {}},
      {"Sqrt", [](double v) { return std::sqrt(v); }, true, {}},
      {"Reciprocal", [](double v) { return 1 / v; }, true, {}},
      {"LeakyRelu", [](double v) { return v < 0 ? double(0.1f) * v : v; }, false, {Attribute::of_float("alpha", 0.1f)}},
  };
  for (auto mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact})
    for (const auto& u : us) {
      CAPTURE(u.op);
      const auto& in = u.positive ? pos : x;
      auto gr = single(u.op, {value("x", DType::f32, {257})}, u.attrs);
      auto out = run_graph(gr, {Feed::of("x", {257}, in)}, {mode});
      std::vector<double> ref;
      for (float v : in) ref.push_back(u.f(v));
      check_close(out[0].as<float>(), ref, 2e-6);
    }
  // Clip with optional bounds.
  g::Graph gr = single("Clip", {value("x", DType::f32, {257})});
  gr.initializers.push_back(g::TensorData::from_vector<float>("lo", {}, {-1.0f}));
  gr.nodes[0].inputs = {"x", "lo"};
  auto out = run_graph(gr, {Feed::of("x", {257}, x)});
  std::vector<double> ref;
  for (float v : x) ref.push_back(std::max(double(v), -1.0));
  check_close(out[0].as<float>(), ref, 0);
}

namespace {
std::vector<double> ref_matmul(const std::vector<float>& a, std::vector<int64_t> as, const std::vector<float>& b, std::vector<int64_t> bs,
                               std::vector<int64_t>* out_shape) {
  const bool a1 = as.size() == 1, b1 = bs.size() == 1;
  if (a1) as.insert(as.begin(), 1);
  if (b1) bs.push_back(1);
  const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  std::vector<int64_t> ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  auto ob = bshape(ab, bb);
  std::vector<double> y;
  for (int64_t o = 0; o < numel(ob); ++o) {
    const int64_t ai = bindex(o, ob, ab), bi = bindex(o, ob, bb);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) s += double(a[size_t(ai * M * K + m * K + k)]) * b[size_t(bi * K * N + k * N + n)];
        y.push_back(s);
      }
  }
  *out_shape = ob;
  if (!a1) out_shape->push_back(M);
  if (!b1) out_shape->push_back(N);
  return y;
}
}  // namespace

TEST_CASE("MatMul: numpy semantics incl. 1-D and broadcast batches, fast and exact") {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{3, 4}, {4, 5}}, {{2, 3, 4}, {4, 5}}, {{4}, {4, 5}}, {{2, 3, 4}, {4}}, {{2, 1, 3, 4}, {5, 4, 2}}, {{1, 3, 4}, {2, 4, 5}},
      {{4}, {4}}, {{17, 33}, {33, 19}}};
  for (auto mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact})
    for (const auto& c : cases) {
      auto a = random_floats(size_t(numel(c.first)), 11), b = random_floats(size_t(numel(c.second)), 12);
      auto gr = single("MatMul", {value("a", DType::f32, c.first), value("b", DType::f32, c.second)});
      auto out = run_graph(gr, {Feed::of("a", c.first, a), Feed::of("b", c.second, b)}, {mode});
      std::vector<int64_t> os;
      auto ref = ref_matmul(a, c.first, b, c.second, &os);
      CHECK(out[0].dims == os);
      check_close(out[0].as<float>(), ref, 1e-5);
    }
}

TEST_CASE("Gemm: transposes, alpha, beta, broadcast C") {
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (int cshape = 0; cshape < 3; ++cshape) {
        const int64_t M = 3, K = 5, N = 4;
        std::vector<int64_t> as = ta ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K};
        std::vector<int64_t> bs = tb ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N};
        std::vector<int64_t> cs = cshape == 0 ? std::vector<int64_t>{N} : cshape == 1 ? std::vector<int64_t>{M, N} : std::vector<int64_t>{M, 1};
        auto a = random_floats(15, 21), b = random_floats(20, 22), cv = random_floats(size_t(numel(cs)), 23);
        const float alpha = cshape == 0 ? 1.0f : 0.5f, beta = cshape == 0 ? 1.0f : 2.0f;
        auto gr = single("Gemm", {value("a", DType::f32, as), value("b", DType::f32, bs), value("c", DType::f32, cs)},
                         {Attribute::of_int("transA", ta), Attribute::of_int("transB", tb), Attribute::of_float("alpha", alpha),
                          Attribute::of_float("beta", beta)});
        auto out = run_graph(gr, {Feed::of("a", as, a), Feed::of("b", bs, b), Feed::of("c", cs, cv)});
        std::vector<double> ref;
        for (int64_t m = 0; m < M; ++m)
          for (int64_t n = 0; n < N; ++n) {
            double s = 0;
            for (int64_t k = 0; k < K; ++k) s += double(a[size_t(ta ? k * M + m : m * K + k)]) * b[size_t(tb ? n * K + k : k * N + n)];
            ref.push_back(alpha * s + beta * cv[size_t(bindex(m * N + n, {M, N}, cs))]);
          }
        check_close(out[0].as<float>(), ref);
      }
}

TEST_CASE("Softmax and LogSoftmax along any axis") {
  const std::vector<int64_t> sh{2, 3, 4};
  auto x = random_floats(24, 31, -5, 5);
  for (int log = 0; log < 2; ++log)
    for (int64_t axis : {-1, 0, 1, 2})
      for (auto mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
        auto gr = single(log ? "LogSoftmax" : "Softmax", {value("x", DType::f32, sh)}, {Attribute::of_int("axis", axis)});
        auto out = run_graph(gr, {Feed::of("x", sh, x)}, {mode});
        const int64_t ax = axis < 0 ? axis + 3 : axis;
        int64_t st[3] = {12, 4, 1};
        std::vector<double> ref(24);
        for (int64_t i = 0; i < 24; ++i) {
          const int64_t base = i - ((i / st[ax]) % sh[size_t(ax)]) * st[ax];
          double mx = -1e30, sum = 0;
          for (int64_t j = 0; j < sh[size_t(ax)]; ++j) mx = std::max(mx, double(x[size_t(base + j * st[ax])]));
          for (int64_t j = 0; j < sh[size_t(ax)]; ++j) sum += std::exp(double(x[size_t(base + j * st[ax])]) - mx);
          ref[size_t(i)] = log ? x[size_t(i)] - mx - std::log(sum) : std::exp(x[size_t(i)] - mx) / sum;
        }
        check_close(out[0].as<float>(), ref, 1e-5);
      }
}

TEST_CASE("ReduceSum, ReduceMean, ReduceMax: axes, keepdims, noop_with_empty_axes") {
  const std::vector<int64_t> sh{2, 3, 4};
  auto x = random_floats(24, 41);
  struct C { std::vector<int64_t> axes; int keep; int noop; };
  std::vector<C> cases = {{{1}, 1, 0}, {{0, 2}, 0, 0}, {{-1}, 0, 0}, {{}, 1, 0}, {{}, 0, 1}, {{0, 1}, 1, 0}, {{2, 0}, 1, 0}};
  for (int kind = 0; kind < 3; ++kind)
    for (auto mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact})
      for (const auto& c : cases) {
        const char* op = kind == 0 ? "ReduceSum" : kind == 1 ? "ReduceMean" : "ReduceMax";
        CAPTURE(op);
        g::Graph gr = single(op, {value("x", DType::f32, sh)}, {Attribute::of_int("keepdims", c.keep), Attribute::of_int("noop_with_empty_axes", c.noop)});
        if (!c.axes.empty()) {
          add_const_i64(gr, "axes", c.axes);
          gr.nodes[0].inputs.push_back("axes");
        }
        auto out = run_graph(gr, {Feed::of("x", sh, x)}, {mode});
        bool red[3] = {c.axes.empty() && !c.noop, c.axes.empty() && !c.noop, c.axes.empty() && !c.noop};
        for (int64_t a : c.axes) red[a < 0 ? a + 3 : a] = true;
        std::vector<int64_t> os;
        for (int i = 0; i < 3; ++i) if (!red[i]) os.push_back(sh[size_t(i)]); else if (c.keep) os.push_back(1);
        CHECK(out[0].dims == os);
        std::vector<double> acc, cnt;
        std::vector<int64_t> full(3);
        for (int i = 0; i < 3; ++i) full[size_t(i)] = red[i] ? 1 : sh[size_t(i)];
        acc.assign(size_t(numel(full)), kind == 2 ? -1e30 : 0.0);
        cnt.assign(acc.size(), 0);
        for (int64_t i = 0; i < 24; ++i) {
          int64_t idx[3] = {i / 12, (i / 4) % 3, i % 4}, o = 0;
          for (int d = 0; d < 3; ++d) o = o * full[size_t(d)] + (red[d] ? 0 : idx[d]);
          acc[size_t(o)] = kind == 2 ? std::max(acc[size_t(o)], double(x[size_t(i)])) : acc[size_t(o)] + x[size_t(i)];
          cnt[size_t(o)] += 1;
        }
        if (kind == 1) for (size_t i = 0; i < acc.size(); ++i) acc[i] /= cnt[i];
        check_close(out[0].as<float>(), acc, 1e-5);
      }
}

TEST_CASE("ReduceSum over an empty axis gives zeros (an empty input may have no storage)") {
  for (auto mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
    g::Graph gr = single("ReduceSum", {value("x", DType::f32, {2, 0, 3})}, {Attribute::of_int("keepdims", 0)});
    add_const_i64(gr, "axes", {1});
    gr.nodes[0].inputs.push_back("axes");
    auto out = run_graph(gr, {Feed::of("x", {2, 0, 3}, std::vector<float>{})}, {mode});
    CHECK(out[0].dims == std::vector<int64_t>{2, 3});
    CHECK(out[0].as<float>() == std::vector<float>(6, 0.0f));
  }
}

TEST_CASE("Add, Sub, Mul and Div over f64: IEEE double per element, broadcasting") {
  const std::vector<double> a{0.1, -2.5, 1e300, 3.0, -0.0, 7.0};
  const std::vector<double> b{0.2, 1e-300, 4.0};
  for (auto mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact})
    for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
      CAPTURE(op);
      g::Graph gr = single(op, {value("a", DType::f64, {2, 3}), value("b", DType::f64, {3})});
      auto out = run_graph(gr, {Feed::of("a", {2, 3}, a), Feed::of("b", {3}, b)}, {mode});
      REQUIRE(out[0].dtype == DType::f64);
      CHECK(out[0].dims == std::vector<int64_t>{2, 3});
      const auto y = out[0].as<double>();
      for (size_t i = 0; i < 6; ++i) {
        const double x = a[i], w = b[i % 3];
        const double want = op[0] == 'A' ? x + w : op[0] == 'S' ? x - w : op[0] == 'M' ? x * w : x / w;
        CHECK(std::memcmp(&y[i], &want, sizeof(double)) == 0);  // the same bits (0.1 + 0.2 too)
      }
    }
}

TEST_CASE("Reductions over f64: f64 results, element order, LogSumExp max-shifted") {
  // Rows of 3 over axis 1; the second row's exp would overflow without the shift, the third
  // holds -inf (its exp is 0) and the fourth a NaN.
  const std::vector<int64_t> sh{4, 3};
  const std::vector<double> x{0.5, -1.25, 2.0, 1000.0, 1000.0, 999.0, -INFINITY, 1.0, 1.0, 3.0, NAN, 1.0};
  auto run = [&](const char* op, om::ArithmeticMode mode) {
    g::Graph gr = single(op, {value("x", DType::f64, sh)}, {Attribute::of_int("keepdims", 0)});
    add_const_i64(gr, "axes", {1});
    gr.nodes[0].inputs.push_back("axes");
    auto out = run_graph(gr, {Feed::of("x", sh, x)}, {mode});
    REQUIRE(out[0].dtype == DType::f64);
    CHECK(out[0].dims == std::vector<int64_t>{4});
    return out[0].as<double>();
  };
  for (auto mode : {om::ArithmeticMode::Fast, om::ArithmeticMode::Exact}) {
    auto lse = run("ReduceLogSumExp", mode);
    CHECK(lse[0] == doctest::Approx(std::log(std::exp(0.5) + std::exp(-1.25) + std::exp(2.0))).epsilon(1e-15));
    CHECK(lse[1] == doctest::Approx(1000.0 + std::log(2.0 + std::exp(-1.0))).epsilon(1e-15));
    CHECK(lse[2] == doctest::Approx(1.0 + std::log(2.0)).epsilon(1e-15));
    CHECK(std::isnan(lse[3]));
    auto sum = run("ReduceSum", mode);
    CHECK(sum[0] == 0.5 + -1.25 + 2.0);  // exact in f64
    CHECK(sum[1] == 2999.0);
    auto mean = run("ReduceMean", mode);
    CHECK(mean[1] == 2999.0 / 3.0);
    auto mx = run("ReduceMax", mode);
    CHECK(mx[0] == 2.0);
    CHECK(std::isnan(mx[3]));
    auto ls = run("ReduceLogSum", mode);
    CHECK(ls[0] == doctest::Approx(std::log(1.25)).epsilon(1e-15));
  }
  // The library's exp and log against the C library's, within a few ulp over a wide range.
  for (double v = -700.0; v < 700.0; v += 0.37) {
    CHECK(om::kernels::exp_f64(v) == doctest::Approx(std::exp(v)).epsilon(4e-16).scale(0));
    const double p = std::exp(v / 2.0);
    CHECK(om::kernels::log_f64(p) == doctest::Approx(std::log(p)).epsilon(4e-16));
  }
}

TEST_CASE("Transpose, Reshape, Flatten, Squeeze, Unsqueeze, Expand") {
  auto x = random_floats(24, 51);
  {
    auto gr = single("Transpose", {value("x", DType::f32, {2, 3, 4})}, {Attribute::of_ints("perm", {2, 0, 1})});
    auto y = run_graph(gr, {Feed::of("x", {2, 3, 4}, x)})[0];
    CHECK(y.dims == std::vector<int64_t>{4, 2, 3});
    auto v = y.as<float>();
    for (int64_t k = 0; k < 4; ++k) for (int64_t i = 0; i < 2; ++i) for (int64_t j = 0; j < 3; ++j)
      CHECK(v[size_t(k * 6 + i * 3 + j)] == x[size_t(i * 12 + j * 4 + k)]);
    auto rev = single("Transpose", {value("x", DType::f32, {2, 3, 4})});
    CHECK(run_graph(rev, {Feed::of("x", {2, 3, 4}, x)})[0].dims == std::vector<int64_t>{4, 3, 2});
  }
  {
    g::Graph gr = single("Reshape", {value("x", DType::f32, {2, 3, 4})});
    add_const_i64(gr, "shape", {0, -1, 2});
    gr.nodes[0].inputs.push_back("shape");
    auto y = run_graph(gr, {Feed::of("x", {2, 3, 4}, x)})[0];
    CHECK(y.dims == std::vector<int64_t>{2, 6, 2});
    CHECK(y.as<float>() == x);
    g::Graph bad = gr;
    bad.initializers[0] = g::TensorData::from_vector<int64_t>("shape", {1}, {5});
    CHECK_THROWS_WITH_AS(run_graph(bad, {Feed::of("x", {2, 3, 4}, x)}), doctest::Contains("cannot reshape [2, 3, 4]"), om::Error);
  }
  {
    auto gr = single("Flatten", {value("x", DType::f32, {2, 3, 4})}, {Attribute::of_int("axis", 2)});
    CHECK(run_graph(gr, {Feed::of("x", {2, 3, 4}, x)})[0].dims == std::vector<int64_t>{6, 4});
  }
  {
    g::Graph gr = single("Unsqueeze", {value("x", DType::f32, {2, 3, 4})});
    add_const_i64(gr, "axes", {0, -1});
    gr.nodes[0].inputs.push_back("axes");
    auto y = run_graph(gr, {Feed::of("x", {2, 3, 4}, x)})[0];
    CHECK(y.dims == std::vector<int64_t>{1, 2, 3, 4, 1});
    g::Graph sq = single("Squeeze", {value("x", DType::f32, {1, 2, 1, 12})});
    CHECK(run_graph(sq, {Feed::of("x", {1, 2, 1, 12}, x)})[0].dims == std::vector<int64_t>{2, 12});
    add_const_i64(sq, "axes", {2});
    sq.nodes[0].inputs.push_back("axes");
    CHECK(run_graph(sq, {Feed::of("x", {1, 2, 1, 12}, x)})[0].dims == std::vector<int64_t>{1, 2, 12});
  }
  {
    g::Graph gr = single("Expand", {value("x", DType::f32, {3, 1})});
    add_const_i64(gr, "shape", {2, 1, 4});
    gr.nodes[0].inputs.push_back("shape");
    auto y = run_graph(gr, {Feed::of<float>("x", {3, 1}, {1, 2, 3})})[0];
    CHECK(y.dims == std::vector<int64_t>{2, 3, 4});
    auto v = y.as<float>();
    for (size_t i = 0; i < 24; ++i) CHECK(v[i] == float((i / 4) % 3 + 1));
  }
}

TEST_CASE("Transpose: every permutation of a 4-D tensor, including axes of size 1, an NHWC image and u8 elements") {
  // The views merge neighbouring axes x walks as one run and drop axes of size 1; a view whose
  // last axis is strided over one of stride 1 copies in blocks of 64 columns (strided_view.h).
  // Planes of 67 and 130 elements cross those blocks; run() also splits the rows in 2 and 3.
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{2, 13, 10, 3}, {1, 67, 2, 5}, {3, 1, 130, 2}}) {
    const int64_t n = numel(shape);
    const auto x = random_floats(size_t(n), uint32_t(n));
    std::vector<uint8_t> xb(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) xb[size_t(i)] = uint8_t(i * 7);
    std::vector<int64_t> perm{0, 1, 2, 3};
    do {
      CAPTURE(perm[0]);
      CAPTURE(perm[1]);
      CAPTURE(perm[2]);
      CAPTURE(perm[3]);
      std::vector<int64_t> ydims(4), xstr(4, 1);
      for (size_t d = 4; d-- > 1;) xstr[d - 1] = xstr[d] * shape[d];
      for (size_t d = 0; d < 4; ++d) ydims[d] = shape[size_t(perm[d])];
      const auto yf = run_graph(single("Transpose", {value("x", DType::f32, shape)}, {Attribute::of_ints("perm", perm)}),
                                {Feed::of("x", shape, x)})[0];
      const auto yu = run_graph(single("Transpose", {value("x", DType::u8, shape)}, {Attribute::of_ints("perm", perm)}),
                                {Feed::of("x", shape, xb)})[0];
      REQUIRE(yf.dims == ydims);
      const auto vf = yf.as<float>();
      const auto vu = yu.as<uint8_t>();
      int64_t o = 0;
      bool same = true;
      for (int64_t a = 0; a < ydims[0]; ++a)
        for (int64_t b = 0; b < ydims[1]; ++b)
          for (int64_t c = 0; c < ydims[2]; ++c)
            for (int64_t d = 0; d < ydims[3]; ++d, ++o) {
              const int64_t at = a * xstr[size_t(perm[0])] + b * xstr[size_t(perm[1])] + c * xstr[size_t(perm[2])] +
                                 d * xstr[size_t(perm[3])];
              same = same && vf[size_t(o)] == x[size_t(at)] && vu[size_t(o)] == xb[size_t(at)];
            }
      CHECK(same);
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

TEST_CASE("Slice: axes, negative steps, clamping") {
  auto x = random_floats(60, 61);
  const std::vector<int64_t> sh{3, 4, 5};
  struct C { std::vector<int64_t> starts, ends, axes, steps; };
  std::vector<C> cases = {{{1}, {3}, {1}, {}},
                          {{0, 1}, {2, 100}, {0, 2}, {1, 2}},
                          {{-1}, {-1000}, {2}, {-1}},
                          {{3, 4}, {0, -100}, {1, 2}, {-2, -3}},
                          {{10}, {20}, {0}, {1}},
                          {{0, 0, 0}, {3, 4, 5}, {}, {}}};
  for (const auto& c : cases) {
    g::Graph gr = single("Slice", {value("x", DType::f32, sh)});
    add_const_i64(gr, "starts", c.starts);
    add_const_i64(gr, "ends", c.ends);
    gr.nodes[0].inputs = {"x", "starts", "ends"};
    if (!c.axes.empty()) { add_const_i64(gr, "axes", c.axes); gr.nodes[0].inputs.push_back("axes"); }
    else if (!c.steps.empty()) gr.nodes[0].inputs.push_back("");
    if (!c.steps.empty()) { add_const_i64(gr, "steps", c.steps); gr.nodes[0].inputs.push_back("steps"); }
    auto y = run_graph(gr, {Feed::of("x", sh, x)})[0];
    // Reference: per-axis index lists by the ONNX rules.
    std::vector<std::vector<int64_t>> idx(3);
    for (int d = 0; d < 3; ++d) for (int64_t i = 0; i < sh[size_t(d)]; ++i) idx[size_t(d)].push_back(i);
    for (size_t j = 0; j < c.starts.size(); ++j) {
      int64_t ax = c.axes.empty() ? int64_t(j) : c.axes[j];
      int64_t dim = sh[size_t(ax)], st = c.steps.empty() ? 1 : c.steps[j], s = c.starts[j], e = c.ends[j];
      if (s < 0) s += dim;
      if (e < 0) e += dim;
      std::vector<int64_t> l;
      if (st > 0) { s = std::clamp<int64_t>(s, 0, dim); e = std::clamp<int64_t>(e, 0, dim); for (int64_t i = s; i < e; i += st) l.push_back(i); }
      else { s = std::clamp<int64_t>(s, 0, dim - 1); e = std::clamp<int64_t>(e, -1, dim - 1); for (int64_t i = s; i > e; i += st) l.push_back(i); }
      idx[size_t(ax)] = l;
    }
    CHECK(y.dims == std::vector<int64_t>{int64_t(idx[0].size()), int64_t(idx[1].size()), int64_t(idx[2].size())});
    std::vector<double> ref;
    for (int64_t a : idx[0]) for (int64_t b : idx[1]) for (int64_t cc : idx[2]) ref.push_back(x[size_t(a * 20 + b * 5 + cc)]);
    check_close(y.as<float>(), ref, 0);
  }
}

TEST_CASE("Gather: axes, scalar and tensor indices, negative indices; Concat; Cast") {
  auto x = random_floats(12, 71);
  {
    g::Graph gr = single("Gather", {value("x", DType::f32, {3, 4})}, {Attribute::of_int("axis", 1)});
    gr.initializers.push_back(g::TensorData::from_vector<int64_t>("i", {2, 2}, {0, -1, 2, 1}));
    gr.nodes[0].inputs.push_back("i");
    auto y = run_graph(gr, {Feed::of("x", {3, 4}, x)})[0];
    CHECK(y.dims == std::vector<int64_t>{3, 2, 2});
    auto v = y.as<float>();
    const int64_t ind[4] = {0, 3, 2, 1};
    for (int64_t r = 0; r < 3; ++r) for (int64_t j = 0; j < 4; ++j) CHECK(v[size_t(r * 4 + j)] == x[size_t(r * 4 + ind[j])]);
  }
  {
    auto gr = single("Gather", {value("x", DType::f32, {3, 4}), value("i", DType::i64, {})});
    auto y = run_graph(gr, {Feed::of("x", {3, 4}, x), Feed::of<int64_t>("i", {}, {-2})})[0];
    CHECK(y.dims == std::vector<int64_t>{4});
    for (size_t j = 0; j < 4; ++j) CHECK(y.as<float>()[j] == x[4 + j]);
    CHECK_THROWS_WITH_AS(run_graph(gr, {Feed::of("x", {3, 4}, x), Feed::of<int64_t>("i", {}, {3})}), doctest::Contains("out of range"), om::Error);
  }
  {
    auto gr = single("Concat", {value("a", DType::f32, {2, 1}), value("b", DType::f32, {2, 3})}, {Attribute::of_int("axis", -1)});
    auto y = run_graph(gr, {Feed::of<float>("a", {2, 1}, {1, 2}), Feed::of<float>("b", {2, 3}, {3, 4, 5, 6, 7, 8})})[0];
    CHECK(y.dims == std::vector<int64_t>{2, 4});
    CHECK(y.as<float>() == std::vector<float>{1, 3, 4, 5, 2, 6, 7, 8});
  }
  {
    std::vector<float> v{-2.7f, -0.5f, 0.0f, 1.5f, 3.9f, 250.0f};
    auto to = [&](DType dt) {
      auto gr = single("Cast", {value("x", DType::f32, {6})}, {Attribute::of_int("to", int64_t(dt))});
      return run_graph(gr, {Feed::of("x", {6}, v)})[0];
    };
    CHECK(to(DType::i64).as<int64_t>() == std::vector<int64_t>{-2, 0, 0, 1, 3, 250});
    CHECK(to(DType::i32).as<int32_t>() == std::vector<int32_t>{-2, 0, 0, 1, 3, 250});
    CHECK(to(DType::u8).as<uint8_t>() == std::vector<uint8_t>{254, 0, 0, 1, 3, 250});
    CHECK(to(DType::boolean).as<uint8_t>() == std::vector<uint8_t>{1, 1, 0, 1, 1, 1});
    auto h = to(DType::f16).as<uint16_t>();
    for (size_t i = 0; i < 6; ++i) CHECK(om::half_to_float(om::half{h[i]}) == doctest::Approx(v[i]).epsilon(1e-3));
    // And back: i64 -> f32, bool -> i64.
    auto gr = single("Cast", {value("x", DType::i64, {3})}, {Attribute::of_int("to", int64_t(DType::f32))});
    CHECK(run_graph(gr, {Feed::of<int64_t>("x", {3}, {-3, 0, 7})})[0].as<float>() == std::vector<float>{-3, 0, 7});
  }
}

TEST_CASE("shape chains in i64 fold when planning (Shape -> Gather -> Mul -> Concat -> Reshape)") {
  // y = reshape(x, [batch * 3, -1]) with the target computed from Shape(x), as the tracer writes it.
  g::Graph gr;
  gr.inputs.push_back(sym_value("x", DType::f32, {"batch", "3", "4"}));
  gr.initializers.push_back(g::TensorData::from_vector<int64_t>("zero", {}, {0}));
  gr.initializers.push_back(g::TensorData::from_vector<int64_t>("three", {1}, {3}));
  gr.initializers.push_back(g::TensorData::from_vector<int64_t>("minus1", {1}, {-1}));
  add_const_i64(gr, "unsq_axes", {0});
  gr.nodes.push_back(node("Shape", {"x"}, {"shp"}));
  gr.nodes.push_back(node("Gather", {"shp", "zero"}, {"b"}));
  gr.nodes.push_back(node("Unsqueeze", {"b", "unsq_axes"}, {"b1"}));
  gr.nodes.push_back(node("Mul", {"b1", "three"}, {"b3"}));
  gr.nodes.push_back(node("Concat", {"b3", "minus1"}, {"target"}, {Attribute::of_int("axis", 0)}));
  gr.nodes.push_back(node("Reshape", {"x", "target"}, {"r"}));
  gr.nodes.push_back(node("Relu", {"r"}, {"y"}));
  gr.outputs.push_back(value("y", DType::f32, {}));
  om::Session s(gr);
  for (int64_t batch : {2, 5}) {
    auto x = random_floats(size_t(batch * 12), 81);
    auto y = run(s, {Feed::of("x", {batch, 3, 4}, x)})[0];
    CHECK(y.dims == std::vector<int64_t>{batch * 3, 4});
    auto st = s.last_plan_stats();
    CHECK(st.steps == 1);          // only the Relu runs
    CHECK(st.folded_nodes == 5);   // Shape, Gather, Unsqueeze, Mul, Concat
    CHECK(st.aliased_nodes == 1);  // the Reshape shares x's bytes
    for (size_t i = 0; i < x.size(); ++i) CHECK(y.as<float>()[i] == std::max(x[i], 0.0f));
  }
}

TEST_CASE("Shape start/end and Constant") {
  auto gr = single("Shape", {value("x", DType::f32, {2, 3, 4, 5})}, {Attribute::of_int("start", 1), Attribute::of_int("end", -1)});
  auto y = run_graph(gr, {Feed::of("x", {2, 3, 4, 5}, random_floats(120, 1))})[0];
  CHECK(y.as<int64_t>() == std::vector<int64_t>{3, 4});
  g::Graph c;
  c.inputs.push_back(value("x", DType::f32, {2}));
  c.nodes.push_back(node("Constant", {}, {"k"}, {Attribute::of_tensor("value", g::TensorData::from_vector<float>("", {2}, {10, 20}))}));
  c.nodes.push_back(node("Add", {"x", "k"}, {"y"}));
  c.outputs.push_back(value("y", DType::f32, {}));
  CHECK(run_graph(c, {Feed::of<float>("x", {2}, {1, 2})})[0].as<float>() == std::vector<float>{11, 22});
}
