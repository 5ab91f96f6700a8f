// Session (Fast and Exact, one thread) against ONNX Runtime (one thread, graph optimizations
// "all", same machine, same run) on an MLP and on a self-attention block written from core ops.
//
//   bench_session [repo-dir] [--seconds S] [--work DIR] [--no-ort]
//
// repo-dir locates tools/trace_oracle/bench_ort.js (default: the checkout this file was compiled
// from). The models are traced with symbolic axes and written with .npy inputs and Session's
// Fast outputs into the work folder (default: bench_session_work next to this program);
// bench_ort.js times ONNX Runtime there, checks that its outputs agree with Session's within
// 1e-4 scaled (so both sides do the same work), and also times an empty model (one Identity on
// a one-element input): that median is the Node binding's per-call overhead, which is
// subtracted from ONNX Runtime's figures before the ratios are formed.
//
// Latencies are medians of many run() calls after a warm-up. Exit status 1 when an output
// disagrees or a tool fails; missed targets are reported, not failed (timings are noisy).
#include <onemodel/onemodel.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <sys/wait.h>

// The checkout this program was built from: this file is <repo>/bench/bench_session.cpp.
#define OM_BENCH_SOURCE_FILE __FILE__

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  std::string repo;
  std::string work;
  double seconds = 0.6;  // of timed runs per model, shape and mode (after the warm-up)
  bool ort = true;
};

struct Shape {
  std::string label;  // "b32", "b1s64", ...
  om::Tensor x;
};

struct Model {
  std::string name;
  std::string input = "x";
  std::string output = "y";
  om::TracedModel traced;
  std::vector<Shape> shapes;
};

struct Row {
  std::string model, shape, dims;
  double fast_us = 0, exact_us = 0;
  om::PlanStats fast_stats, exact_stats;
  double exact_vs_fast = 0;  // scaled difference of the outputs
  double ort_us = -1, ort_rel = -1;
  bool ort_agree = false;
};

om::TensorView view_of(const std::string& name, const om::Tensor& t) {
  om::TensorView v;
  v.name = name.c_str();
  v.dtype = t.dtype();
  v.dims = t.shape().data();
  v.rank = t.shape().size();
  v.data = const_cast<float*>(t.data<float>());
  return v;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// Median latency of one run(): a warm-up of about a tenth of the budget, then runs until the
// budget is spent (at least 30 runs).
double time_session(om::Session& s, const om::TensorView& in, double seconds) {
  om::TensorView out;
  const auto warm = Clock::now();
  for (int i = 0; i < 5 || std::chrono::duration<double>(Clock::now() - warm).count() < seconds * 0.1; ++i) s.run(&in, 1, &out, 1);
  std::vector<double> times;
  const auto start = Clock::now();
  while (times.size() < 30 || (std::chrono::duration<double>(Clock::now() - start).count() < seconds && times.size() < 200000)) {
    const auto t0 = Clock::now();
    s.run(&in, 1, &out, 1);
    times.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  return median(times);
}

std::vector<float> run_once(om::Session& s, const om::TensorView& in, om::PlanStats* stats) {
  om::TensorView out;
  s.run(&in, 1, &out, 1);
  *stats = s.last_plan_stats();
  const float* p = static_cast<const float*>(out.data);
  return std::vector<float>(p, p + out.numel());
}

// max |a - b| / max(1, max |a|), the oracle's measure.
double scaled_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0, scale = 1;
  for (size_t i = 0; i < a.size(); ++i) {
    m = std::max(m, double(std::fabs(a[i] - b[i])));
    scale = std::max(scale, double(std::fabs(a[i])));
  }
  return a.size() == b.size() ? m / scale : INFINITY;
}

void write_npy(const fs::path& file, const std::string& name, const std::vector<int64_t>& dims, const float* data) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  om::npy::write(om::graph::TensorData::copy_of(name, om::DType::f32, dims, data, size_t(n) * sizeof(float)), file.string());
}

std::string dims_text(const om::Tensor& t) {
  std::string s;
  for (int64_t d : t.shape()) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

// 256-512-512-10 with ReLU and GELU (erf form), symbolic batch.
Model make_mlp() {
  om::Generator gen(101);
  auto net = std::make_shared<om::nn::Sequential>(std::initializer_list<std::shared_ptr<om::nn::Module>>{
      std::make_shared<om::nn::Linear>(256, 512, true, gen), std::make_shared<om::nn::ReLU>(),
      std::make_shared<om::nn::Linear>(512, 512, true, gen), std::make_shared<om::nn::GELU>(),
      std::make_shared<om::nn::Linear>(512, 10, true, gen)});
  net->eval();
  Model m;
  m.name = "mlp";
  m.traced = net->trace(om::randn({8, 256}, gen), {"batch", ""}, m.input, m.output);
  for (int64_t b : {32, 1}) m.shapes.push_back({"b" + std::to_string(b), om::randn({b, 256}, gen)});
  return m;
}

// Multi-head self-attention on [batch, seq, d] from core ops (linear, reshape, permute, matmul,
// scale, softmax), with output projection and residual; batch and seq symbolic.
Model make_attention() {
  om::Generator gen(202);
  const int64_t d = 128, heads = 4, dh = d / heads;
  const double w_scale = 1.0 / std::sqrt(double(d));
  auto weight = [&] { return om::mul(om::randn({d, d}, gen), w_scale); };
  om::Tensor wq = weight(), wk = weight(), wv = weight(), wo = weight();
  om::Tensor bq = om::mul(om::randn({d}, gen), 0.1), bk = om::mul(om::randn({d}, gen), 0.1);
  om::Tensor bv = om::mul(om::randn({d}, gen), 0.1), bo = om::mul(om::randn({d}, gen), 0.1);
  auto block = [&](const om::Tensor& in) {
    const int64_t b = in.shape()[0], s = in.shape()[1];
    auto split = [&](const om::Tensor& t) { return t.reshape({b, s, heads, dh}).permute({0, 2, 1, 3}); };
    om::Tensor q = split(om::linear(in, wq, bq)), k = split(om::linear(in, wk, bk)), v = split(om::linear(in, wv, bv));
    om::Tensor scores = om::mul(om::matmul(q, k.transpose(-1, -2)), 1.0 / std::sqrt(double(dh)));
    om::Tensor attn = om::matmul(om::softmax(scores, -1), v);
    om::Tensor merged = attn.permute({0, 2, 1, 3}).reshape({b, s, d});
    return om::add(in, om::linear(merged, wo, bo));
  };
  Model m;
  m.name = "attention";
  {
    auto tracer = om::Tracer::begin();
    om::Tensor x = tracer.input(m.input, om::randn({2, 16, d}, gen), {"batch", "seq", ""});
    m.traced = tracer.finish({{m.output, block(x)}});
  }
  for (auto [b, s] : {std::pair<int64_t, int64_t>{1, 64}, {1, 128}, {4, 128}})
    m.shapes.push_back({"b" + std::to_string(b) + "s" + std::to_string(s), om::randn({b, s, d}, gen)});
  return m;
}

// One Identity on a one-element input: what ONNX Runtime's Node binding costs per call.
void write_empty_model(const fs::path& dir) {
  om::graph::Graph g;
  g.name = "empty";
  g.inputs.push_back({"x", om::DType::f32, true, {om::graph::Dim::fixed(1)}});
  g.outputs.push_back({"y", om::DType::f32, true, {om::graph::Dim::fixed(1)}});
  om::graph::Node n;
  n.op_type = "Identity";
  n.name = "identity";
  n.inputs = {"x"};
  n.outputs = {"y"};
  g.nodes.push_back(n);
  fs::create_directories(dir / "tiny");
  om::onnx::write(g, (dir / "model.onnx").string());
  const float one = 1.0f;
  write_npy(dir / "tiny" / "input_x.npy", "x", {1}, &one);
  write_npy(dir / "tiny" / "expected_y.npy", "y", {1}, &one);
}

// Runs bench_ort.js and collects "ort <case>/<set> median_us <t> runs <n> max_rel <r> agree <yes|no>".
struct OrtResult {
  double us = -1, rel = -1;
  bool agree = false;
};

int run_ort(const Options& o, std::map<std::string, OrtResult>* results) {
  const fs::path script = fs::path(o.repo) / "tools" / "trace_oracle" / "bench_ort.js";
  if (!fs::exists(script)) {
    std::printf("ONNX Runtime: %s not found (pass the repository folder as the first argument)\n", script.string().c_str());
    return 77;
  }
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%g", o.seconds);
  const std::string cmd = "node '" + script.string() + "' '" + o.work + "' --seconds " + seconds + " --rtol 1e-4";
  std::fflush(stdout);
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return 1;
  char line[1024];
  while (std::fgets(line, sizeof line, p)) {
    char label[512], agree[8];
    OrtResult r;
    int runs = 0;
    if (std::sscanf(line, "ort %511s median_us %lf runs %d max_rel %lf agree %7s", label, &r.us, &runs, &r.rel, agree) == 5) {
      r.agree = std::strcmp(agree, "yes") == 0;
      (*results)[label] = r;
    } else {
      std::printf("  bench_ort: %s", line);
    }
  }
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

Options parse(int argc, char** argv) {
  Options o;
  o.repo = fs::path(OM_BENCH_SOURCE_FILE).parent_path().parent_path().string();
  o.work = (fs::absolute(fs::path(argv[0])).parent_path() / "bench_session_work").string();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seconds" && i + 1 < argc) o.seconds = std::atof(argv[++i]);
    else if (a == "--work" && i + 1 < argc) o.work = fs::absolute(argv[++i]).string();
    else if (a == "--no-ort") o.ort = false;
    else if (!a.empty() && a[0] != '-') o.repo = a;
    else {
      std::fprintf(stderr, "usage: bench_session [repo-dir] [--seconds S] [--work DIR] [--no-ort]\n");
      std::exit(2);
    }
  }
  if (!(o.seconds > 0)) o.seconds = 0.6;
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    std::printf("bench_session: Session (1 thread) vs ONNX Runtime (1 thread), median latency per run\n");
    fs::remove_all(o.work);
    fs::create_directories(o.work);
    write_empty_model(fs::path(o.work) / "empty");

    bool ok = true;
    std::vector<Row> rows;
    for (Model m : {make_mlp(), make_attention()}) {
      const fs::path dir = fs::path(o.work) / m.name;
      fs::create_directories(dir);
      m.traced.save_onnx((dir / "model.onnx").string());
      om::SessionOptions fast_opt, exact_opt;
      exact_opt.mode = om::ArithmeticMode::Exact;
      om::Session fast(m.traced, fast_opt), exact(m.traced, exact_opt);
      for (const Shape& sh : m.shapes) {
        Row r;
        r.model = m.name;
        r.shape = sh.label;
        r.dims = dims_text(sh.x);
        const om::TensorView in = view_of(m.input, sh.x);
        const std::vector<float> yf = run_once(fast, in, &r.fast_stats);
        const std::vector<float> ye = run_once(exact, in, &r.exact_stats);
        r.exact_vs_fast = scaled_diff(yf, ye);
        ok = ok && r.exact_vs_fast <= 1e-4;
        fs::create_directories(dir / sh.label);
        write_npy(dir / sh.label / ("input_" + m.input + ".npy"), m.input, sh.x.shape(), sh.x.data<float>());
        om::TensorView out;
        fast.run(&in, 1, &out, 1);
        write_npy(dir / sh.label / ("expected_" + m.output + ".npy"), m.output, std::vector<int64_t>(out.dims, out.dims + out.rank), yf.data());
        r.fast_us = time_session(fast, in, o.seconds);
        r.exact_us = time_session(exact, in, o.seconds);
        rows.push_back(r);
        std::printf("  session %-9s %-7s fast %9.2f us  exact %9.2f us  steps %zu/%zu  exact vs fast %.2e\n", r.model.c_str(), r.shape.c_str(),
                    r.fast_us, r.exact_us, r.fast_stats.steps, r.exact_stats.steps, r.exact_vs_fast);
        std::fflush(stdout);
      }
    }

    std::map<std::string, OrtResult> ort;
    double overhead = -1;
    if (o.ort) {
      const int rc = run_ort(o, &ort);
      if (rc == 77) std::printf("ONNX Runtime is not installed (tools/bootstrap.sh installs it): Session figures only\n");
      else if (rc != 0) {
        std::printf("bench_ort.js failed (exit status %d)\n", rc);
        ok = false;
      }
      if (ort.count("empty/tiny")) overhead = ort["empty/tiny"].us;
      for (Row& r : rows) {
        auto it = ort.find(r.model + "/" + r.shape);
        if (it == ort.end()) continue;
        r.ort_us = it->second.us;
        r.ort_rel = it->second.rel;
        r.ort_agree = it->second.agree;
        ok = ok && r.ort_agree;
      }
    }

    std::printf("\nONNX Runtime figures: raw = median of session.run() from Node; adjusted = raw minus the binding's\n"
                "per-call overhead, measured as the median of an empty model (one Identity on 1 element): %.2f us\n\n",
                overhead);
    std::printf("| model | input | fast us | exact us | ORT raw us | ORT adj us | fast/ORT adj | exact/fast | arena KiB | lower bound KiB | arena/lb | ORT agrees (rel) |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    bool mlp_ok = true, attn_ok = true, exact_ok = true, arena_ok = true, have_ort = overhead >= 0;
    for (const Row& r : rows) {
      const double adj = r.ort_us >= 0 && overhead >= 0 ? r.ort_us - overhead : -1;
      const double ratio = adj > 0 ? r.fast_us / adj : -1;
      const double arena_ratio = r.fast_stats.lower_bound_bytes ? double(r.fast_stats.arena_bytes) / double(r.fast_stats.lower_bound_bytes) : 1.0;
      const double exact_arena_ratio =
          r.exact_stats.lower_bound_bytes ? double(r.exact_stats.arena_bytes) / double(r.exact_stats.lower_bound_bytes) : 1.0;
      char ort_raw[32] = "-", ort_adj[32] = "-", ratio_s[32] = "-", agree[48] = "-";
      if (r.ort_us >= 0) std::snprintf(ort_raw, sizeof ort_raw, "%.2f", r.ort_us);
      if (adj >= 0) std::snprintf(ort_adj, sizeof ort_adj, "%.2f", adj);
      if (ratio >= 0) std::snprintf(ratio_s, sizeof ratio_s, "%.3f", ratio);
      if (r.ort_rel >= 0) std::snprintf(agree, sizeof agree, "%s (%.1e)", r.ort_agree ? "yes" : "NO", r.ort_rel);
      std::printf("| %s | %s | %.2f | %.2f | %s | %s | %s | %.3f | %.1f | %.1f | %.3f | %s |\n", r.model.c_str(), r.dims.c_str(), r.fast_us,
                  r.exact_us, ort_raw, ort_adj, ratio_s, r.exact_us / r.fast_us, r.fast_stats.arena_bytes / 1024.0,
                  r.fast_stats.lower_bound_bytes / 1024.0, arena_ratio, agree);
      if (r.model == "mlp") mlp_ok = mlp_ok && ratio >= 0 && ratio <= 0.8;
      else attn_ok = attn_ok && ratio >= 0 && ratio <= 1.0;
      exact_ok = exact_ok && r.exact_us <= 2.0 * r.fast_us;
      arena_ok = arena_ok && arena_ratio <= 1.1 && exact_arena_ratio <= 1.1;
    }
    auto verdict = [](bool measured, bool met) { return !measured ? "not measured" : met ? "met" : "MISSED"; };
    std::printf("\ntargets (every input shape):\n");
    std::printf("  Session Fast / ORT adjusted <= 0.8 on the MLP:       %s\n", verdict(have_ort, mlp_ok));
    std::printf("  Session Fast / ORT adjusted <= 1.0 on the attention: %s\n", verdict(have_ort, attn_ok));
    std::printf("  Exact <= 2x Fast:                                    %s\n", verdict(true, exact_ok));
    std::printf("  arena <= 1.1x live-bytes lower bound (Fast, Exact):  %s\n", verdict(true, arena_ok));
    std::printf("outputs: Exact vs Fast and ONNX Runtime vs Session Fast within 1e-4 scaled: %s\n", ok ? "yes" : "NO");
    return ok ? 0 : 1;
  } catch (const om::Error& e) {
    std::fprintf(stderr, "bench_session failed: %s\n", e.what());
    return 1;
  }
}
