// onemodel bench MODEL: latency percentiles, the activation arena and heap allocations per run.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "cli.h"

namespace cli {
namespace {
const char* kHelp =
    "usage: onemodel bench MODEL [--shape NAME=D0,D1,...] [--mode fast|exact] [--runs N] [--warmup N]\n"
    "                      [--threads N] [--max-arena BYTES] [--max-folded BYTES] [--profile]\n"
    "\n"
    "Times Session::run on inputs of the given shapes (symbolic axes default to 1; --shape sets\n"
    "an input's full shape) filled with uniform random values (integer inputs: zeros). Prints\n"
    "the p50, p90 and p99 latency, the plan's activation arena against its lower bound, and the\n"
    "heap allocations per run (counted by the tool's operator new; 0 once planned), and what creating\n"
    "the session and its first run (which plans for the shapes) took. Defaults:\n"
    "--runs 200 --warmup 10 --threads 0 (SessionOptions::threads: 0 = every core). --profile also times every kernel step (SessionOptions::profile) and\n"
    "prints each step's mean time per run and its share, in run order. --max-arena and --max-folded\n"
    "set SessionOptions::max_arena_bytes (default 256M) and max_folded_bytes (default 64M); BYTES\n"
    "takes a K, M or G suffix.\n";

int positive(const std::string& text, const char* option) {
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end || v <= 0 || v > 10000000) throw UsageError{std::string(option) + " needs a positive count, got '" + text + "'"};
  return int(v);
}
}  // namespace

int cmd_bench(int argc, char** argv) {
  Args a = parse(argc, argv, with_session_options({"shape", "runs", "warmup"}), {"help", "profile"}, "bench");
  if (a.has("help")) return std::fputs(kHelp, stdout), 0;
  if (a.positional.size() != 1) throw UsageError{"expected one MODEL (.om or .onnx)"};
  const int runs = positive(a.get("runs", "200"), "--runs");
  const int warmup = positive(a.get("warmup", "10"), "--warmup");
  om::SessionOptions options = session_options(a, "bench");
  options.profile = a.has("profile");
  const om::graph::Graph g = load_graph(a.positional[0]);
  const auto created0 = std::chrono::steady_clock::now();
  om::Session session(g, options);
  const int threads_used = session.options().thread_pool ? session.options().thread_pool->threads() : 1;
  const double create_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - created0).count();

  const std::vector<std::string> names = session.input_names();
  ShapeMap shapes = parse_shapes(a, "shape", names);

  // Inputs: shapes from --shape or the declared ones (symbolic axes 1), random values.
  om::Generator gen(1);
  std::vector<std::vector<int64_t>> dims;
  std::vector<om::Tensor> data;
  std::vector<om::TensorView> inputs;
  std::string signature;
  for (const std::string& n : names) {
    const om::graph::ValueInfo* vi = nullptr;
    for (const auto& v : g.inputs)
      if (v.name == n) vi = &v;
    std::vector<int64_t> d;
    if (shapes.count(n)) d = shapes[n];
    else if (vi)
      for (const auto& dim : vi->shape) d.push_back(dim.is_static() ? dim.size : 1);
    const om::DType dt = vi ? vi->dtype : om::DType::f32;
    om::Tensor t = dt == om::DType::f32 ? om::rand(d, gen) : om::zeros(d, dt);
    signature += (signature.empty() ? "" : " ") + n + "=" + om::dtype_name(dt) + "[";
    for (size_t k = 0; k < d.size(); ++k) signature += (k ? "," : "") + std::to_string(d[k]);
    signature += "]";
    dims.push_back(d);
    data.push_back(t);
  }
  for (size_t i = 0; i < names.size(); ++i) {
    om::TensorView v;
    v.name = names[i].c_str();
    v.dtype = data[i].dtype();
    v.dims = dims[i].data();
    v.rank = dims[i].size();
    v.data = const_cast<void*>(data[i].storage().data());  // fresh contiguous tensors, offset 0
    inputs.push_back(v);
  }
  std::vector<om::TensorView> outputs(session.output_names().size());
  // The first run plans for these shapes (inference, prepare, memory plan, weight packing).
  const auto first0 = std::chrono::steady_clock::now();
  session.run(inputs.data(), inputs.size(), outputs.data(), outputs.size());
  const double first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - first0).count();
  for (int i = 1; i < warmup; ++i) session.run(inputs.data(), inputs.size(), outputs.data(), outputs.size());

  std::vector<double> micros(static_cast<size_t>(runs), 0.0);
  const uint64_t allocs_before = allocation_count();
  for (int i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    session.run(inputs.data(), inputs.size(), outputs.data(), outputs.size());
    micros[size_t(i)] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  }
  const uint64_t allocs = allocation_count() - allocs_before;
  std::sort(micros.begin(), micros.end());
  auto pct = [&](double p) { return micros[std::min(micros.size() - 1, size_t(p * double(micros.size())))]; };
  const om::PlanStats st = session.last_plan_stats();
  std::printf("model: %s, %s mode, %d thread%s, inputs %s\n", a.positional[0].c_str(),
              options.mode == om::ArithmeticMode::Exact ? "Exact" : "Fast", threads_used, threads_used == 1 ? "" : "s",
              signature.c_str());
  std::printf("session creation: %.2f ms; first run (planning included): %.2f ms\n", create_ms, first_ms);
  std::printf("latency: p50 %.1f us  p90 %.1f us  p99 %.1f us  (%d runs after %d warm-up)\n", pct(0.50), pct(0.90), pct(0.99), runs, warmup);
  std::printf("arena: %zu bytes (lower bound %zu), %zu kernel steps, %zu folded, %zu packed weights\n", st.arena_bytes,
              st.lower_bound_bytes, st.steps, st.folded_nodes, st.packed_weights);
  if (st.batch_parts > 1)
    std::printf("batch split into %zu parts, one per thread (docs/threads.md): their arenas %zu bytes more\n", st.batch_parts,
                st.part_arena_bytes);
  std::printf("allocations per run: %.2f\n", double(allocs) / runs);
  if (options.profile) {
    const std::vector<om::StepProfile> steps = session.step_profile();
    double total = 0;
    for (const auto& s : steps) total += s.total_us;
    std::printf("steps (mean per run over %llu runs, warm-up included):\n",
                static_cast<unsigned long long>(steps.empty() ? 0 : steps[0].runs));
    for (size_t i = 0; i < steps.size(); ++i)
      std::printf("  %3zu  %-20s %-28s %10.2f us  %5.1f%%\n", i, steps[i].op.c_str(), steps[i].node.c_str(),
                  steps[i].total_us / double(std::max<uint64_t>(steps[i].runs, 1)),
                  total > 0 ? 100.0 * steps[i].total_us / total : 0.0);
  }
  return 0;
}

}  // namespace cli
