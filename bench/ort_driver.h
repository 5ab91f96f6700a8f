// What the benchmark programs that compare with ONNX Runtime share (bench_session on models
// traced here, bench_real on third-party ONNX files): bench_ort.js --serve as a child process,
// interleaved timing blocks, .npy writing, the empty model whose latency is the Node binding's
// per-call overhead, and the machine's description.
#pragma once
#include <onemodel/onemodel.h>

#include "fma_peak.h"
#include "onemodel/kernels/kernels.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace bench {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;


inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}


inline void warm_session(om::Session& s, const om::TensorView* in, size_t n_in, double seconds) {
  std::vector<om::TensorView> out(s.output_names().size());
  const auto start = Clock::now();
  for (int i = 0; i < 5 || std::chrono::duration<double>(Clock::now() - start).count() < seconds; ++i) s.run(in, n_in, out.data(), out.size());
}
inline void warm_session(om::Session& s, const om::TensorView& in, double seconds) { warm_session(s, &in, 1, seconds); }


// Median latency of one run() over a block of about `seconds` (at least 15 runs).
inline double time_session(om::Session& s, const om::TensorView* in, size_t n_in, double seconds) {
  std::vector<om::TensorView> out(s.output_names().size());
  std::vector<double> times;
  const auto start = Clock::now();
  while (times.size() < 15 || (std::chrono::duration<double>(Clock::now() - start).count() < seconds && times.size() < 200000)) {
    const auto t0 = Clock::now();
    s.run(in, n_in, out.data(), out.size());
    times.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  return median(times);
}
inline double time_session(om::Session& s, const om::TensorView& in, double seconds) { return time_session(s, &in, 1, seconds); }


// max |a - b| / max(1, max |a|) over the finite a, the oracle's measure (bench_ort.js maxRel):
// infinite when the sizes differ or a difference is NaN.
inline double scaled_diff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  double m = 0, scale = 1;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(double(a[i]) - double(b[i]));
    m = std::isnan(d) ? INFINITY : std::max(m, d);
    if (std::isfinite(a[i])) scale = std::max(scale, double(std::fabs(a[i])));
  }
  return m / scale;
}

inline void write_npy(const fs::path& file, const std::string& name, const std::vector<int64_t>& dims, const float* data) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  om::npy::write(om::graph::TensorData::copy_of(name, om::DType::f32, dims, data, size_t(n) * sizeof(float)), file.string());
}


// One Identity node: on a one-element input it measures what ONNX Runtime's Node binding costs
// per call (subtracted); on the largest output's shape it shows what copying such a tensor across
// the binding adds (printed for scale only: part of it is ONNX Runtime's own Identity copy).
inline void write_identity_model(const fs::path& dir, const std::string& set, const std::vector<int64_t>& dims) {
  om::graph::Graph g;
  g.name = "identity";
  std::vector<om::graph::Dim> shape;
  for (int64_t d : dims) shape.push_back(om::graph::Dim::fixed(d));
  g.inputs.push_back({"x", om::DType::f32, true, shape});
  g.outputs.push_back({"y", om::DType::f32, true, shape});
  om::graph::Node n;
  n.op_type = "Identity";
  n.name = "identity";
  n.inputs = {"x"};
  n.outputs = {"y"};
  g.nodes.push_back(n);
  fs::create_directories(dir / set);
  om::onnx::write(g, (dir / "model.onnx").string());
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  const std::vector<float> values(size_t(count), 1.0f);
  write_npy(dir / set / "input_x.npy", "x", dims, values.data());
  write_npy(dir / set / "expected_y.npy", "y", dims, values.data());
}

// bench_ort.js --serve as a child process: it loads and checks every model once, then times
// one set per command, so its blocks can alternate with Session's under the same load.
class OrtServer {
 public:
  // Returns false (and sets *status: 77 when ONNX Runtime is missing) when it cannot start.
  // rtol: bench_ort.js's agreement bound (its exit status); callers may judge max_rel themselves.
  bool start(const std::string& repo, const std::string& work, int threads, double rtol, std::map<std::string, double>* max_rel,
             std::map<std::string, bool>* agree, int* status) {
    const fs::path script = fs::path(repo) / "tools" / "trace_oracle" / "bench_ort.js";
    if (!fs::exists(script)) {
      std::printf("ONNX Runtime: %s not found (pass the repository folder as the first argument)\n", script.string().c_str());
      *status = 77;
      return false;
    }
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0) return false;
    std::fflush(stdout);
    pid_ = fork();
    if (pid_ < 0) return false;
    if (pid_ == 0) {
      dup2(to_child[0], 0);
      dup2(from_child[1], 1);
      close(to_child[1]);
      close(from_child[0]);
      const std::string threads_text = std::to_string(threads), rtol_text = std::to_string(rtol);
      execlp("node", "node", script.c_str(), work.c_str(), "--serve", "--rtol", rtol_text.c_str(), "--threads", threads_text.c_str(),
             static_cast<char*>(nullptr));
      std::fprintf(stderr, "bench: cannot run node: %s\n", std::strerror(errno));
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    to_ = fdopen(to_child[1], "w");
    from_ = fdopen(from_child[0], "r");
    std::string line;
    while (read_line(&line)) {
      char label[512], yes[8];
      double rel = 0;
      if (line == "ready") return true;
      if (std::sscanf(line.c_str(), "check %511s max_rel %lf agree %7s", label, &rel, yes) == 3) {
        (*max_rel)[label] = rel;
        (*agree)[label] = std::strcmp(yes, "yes") == 0;
      } else {
        std::printf("  bench_ort: %s\n", line.c_str());
      }
    }
    *status = finish();
    return false;
  }

  void warm(const std::string& label, double seconds) {
    std::string reply;
    command("warm " + label + " " + std::to_string(seconds), &reply);
  }

  double time(const std::string& label, double seconds) {
    std::string reply;
    double us = -1;
    int runs = 0;
    char got[512];
    if (!command("time " + label + " " + std::to_string(seconds), &reply) ||
        std::sscanf(reply.c_str(), "ort %511s median_us %lf runs %d", got, &us, &runs) != 3) {
      std::printf("  bench_ort: %s\n", reply.c_str());
      return -1;
    }
    return us;
  }

  // Closes its stdin (it then exits) and returns its exit status.
  int finish() {
    if (to_) std::fclose(to_);
    to_ = nullptr;
    std::string line;
    while (from_ && read_line(&line)) std::printf("  bench_ort: %s\n", line.c_str());
    if (from_) std::fclose(from_);
    from_ = nullptr;
    int status = 0;
    if (pid_ > 0 && waitpid(pid_, &status, 0) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    }
    return 1;
  }

  ~OrtServer() {
    if (pid_ > 0) finish();
  }

 private:
  bool read_line(std::string* line) {
    char buf[1024];
    if (!from_ || !std::fgets(buf, sizeof buf, from_)) return false;
    *line = buf;
    while (!line->empty() && (line->back() == '\n' || line->back() == '\r')) line->pop_back();
    return true;
  }
  bool command(const std::string& cmd, std::string* reply) {
    if (!to_ || std::fprintf(to_, "%s\n", cmd.c_str()) < 0 || std::fflush(to_) != 0) return false;
    return read_line(reply);
  }

  pid_t pid_ = -1;
  FILE* to_ = nullptr;
  FILE* from_ = nullptr;
};


inline void print_machine() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const bool avx512 = __builtin_cpu_supports("avx512f");
  std::printf("CPU: AVX2+FMA %s, AVX-512F %s; onemodel kernels: %s", avx2 ? "yes" : "no", avx512 ? "yes" : "no",
              om::kernels::isa_name(om::kernels::active_isa()));
  const Peaks peaks = fma_peaks();
  if (avx2) std::printf("; FMA peak 256-bit %.1f GFLOP/s", peaks.p256);
  if (avx512) std::printf(", 512-bit %.1f GFLOP/s", peaks.p512);
  std::printf("\n");
#endif
}


// The machine is shared: the load average goes into the output so a reader can judge the figures.
inline std::string load_average() {
  FILE* f = std::fopen("/proc/loadavg", "r");
  char buf[64] = "unknown";
  if (f) {
    if (!std::fgets(buf, sizeof buf, f)) std::snprintf(buf, sizeof buf, "unknown");
    std::fclose(f);
  }
  std::string s = buf;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s.substr(0, s.find(' ', s.find(' ', s.find(' ') + 1) + 1));
}

}  // namespace bench
