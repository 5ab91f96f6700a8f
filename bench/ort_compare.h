// The comparison of Session with ONNX Runtime on ONNX files that bench_real (third-party models)
// and bench_int8 (the quantized forms) share: per model deterministic random inputs of the
// listed shapes, a Fast and (where the operators allow) an Exact Session, the Fast outputs written
// with the inputs into the work folder in the oracle layout, and ONNX Runtime (bench_ort.js
// --serve, the same intra-op thread count) run on them: agreement is max |ORT - Fast| /
// max(1, max |Fast|) over all outputs within the case's tolerance. Then rounds of back-to-back
// blocks (Session Fast, Session Exact, ONNX Runtime with its default memory settings and without
// its CPU arena, the empty model whose latency is the Node binding's per-call overhead), each
// block the median of its runs; a figure is the median over the rounds (ONNX Runtime: its better
// configuration, minus the overhead). --check-only stops after the agreement check.
//
//   PROGRAM [MODELS-DIR] [repo-dir] [--seconds S] [--rounds N] [--threads N] [--only TEXT] [--check-only]
//
// compare_main's status: 0 every model loads and agrees, 1 a model fails or disagrees, 2 bad
// usage (exits), 77 ONNX Runtime (onnxruntime-node) is not installed.
#pragma once
#include <onemodel/onemodel.h>

#include "ort_driver.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace bench {

struct InputSpec {
  const char* name;
  std::vector<int64_t> dims;
  float lo, hi;  // uniform values in [lo, hi)
  // An i64 input holds `value` in every element (a sample rate) instead of random floats.
  om::DType dtype = om::DType::f32;
  int64_t value = 0;
  // A recurrent state: zeros in the first chunk, then the previous chunk's output of this name.
  const char* state_of = nullptr;
};

struct Case {
  const char* label;
  const char* file;  // under MODELS-DIR
  std::vector<InputSpec> inputs;
  double rtol;
  bool small;  // part of the test suite's check (tools/fetch_real_models.sh small)
  // Runs in a stream: this many chunks, each with new random inputs and the states carried
  // (InputSpec::state_of); each chunk is an input set ONNX Runtime checks. Timing runs chunk 0.
  int chunks = 1;
};

// One model's figures (microseconds; -1 where not measured).
struct Row {
  const char* label;
  double rel = -1, fast = -1, exact = -1, ort = -1, overhead = -1;
  bool agree = false;
};

inline const Case* case_of(const std::vector<Case>& all, const char* label) {
  for (const Case& c : all)
    if (std::string(c.label) == label) return &c;
  return nullptr;
}

struct Options {
  std::string models, repo, work, only;
  double seconds = 6.0;  // per model and side, over all rounds
  int rounds = 7, threads = 1;
  bool check_only = false;
};

inline Options parse(int argc, char** argv, const char* program, const char* models_dir, const char* source_file) {
  Options o;
  o.repo = fs::path(source_file).parent_path().parent_path().string();
  o.work = (fs::absolute(fs::path(argv[0])).parent_path() / (std::string(program) + "_work")).string();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seconds" && i + 1 < argc) o.seconds = std::atof(argv[++i]);
    else if (a == "--rounds" && i + 1 < argc) o.rounds = std::atoi(argv[++i]);
    else if (a == "--threads" && i + 1 < argc) o.threads = std::atoi(argv[++i]);
    else if (a == "--only" && i + 1 < argc) o.only = argv[++i];
    else if (a == "--check-only") o.check_only = true;
    else if (!a.empty() && a[0] != '-' && o.models.empty()) o.models = fs::absolute(a).string();
    else if (!a.empty() && a[0] != '-') o.repo = a;
    else {
      std::fprintf(stderr, "usage: %s [MODELS-DIR] [repo-dir] [--seconds S] [--rounds N] [--threads N] [--only TEXT] [--check-only]\n", program);
      std::exit(2);
    }
  }
  if (o.models.empty()) o.models = (fs::absolute(fs::path(argv[0])).parent_path() / models_dir).string();
  if (o.rounds < 1) o.rounds = 1;
  if (o.threads < 1) o.threads = 1;
  return o;
}

// bench_ort.js reads input_<name>.npy with the name URI-encoded (decodeURIComponent).
inline std::string file_name(const std::string& name) {
  static const char* keep = "-_.!~*'()";
  std::string s;
  for (unsigned char ch : name) {
    if (std::isalnum(ch) || std::strchr(keep, ch)) s += char(ch);
    else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", ch);
      s += buf;
    }
  }
  return s;
}

// The largest per-output scaled difference (bench_ort.js takes the same maximum).
inline double scaled(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  double m = a.size() == b.size() ? 0 : INFINITY;
  for (size_t o = 0; o < a.size() && o < b.size(); ++o) m = std::max(m, scaled_diff(a[o], b[o]));
  return m;
}

struct Loaded {
  const Case* c;
  std::vector<std::vector<float>> data;  // per input: f32 values (chunk 0's for a stream)
  std::vector<std::vector<int64_t>> ints;  // per input: i64 values
  std::vector<om::TensorView> in;
  std::unique_ptr<om::Session> fast, exact;
  std::string exact_why;  // why there is no Exact session
  std::vector<std::vector<float>> fast_out;
  double exact_rel = -1;
};

inline std::vector<std::vector<float>> run_outputs(om::Session& s, const Loaded& l, std::vector<std::vector<int64_t>>* dims) {
  std::vector<om::TensorView> out(s.output_names().size());
  s.run(l.in.data(), l.in.size(), out.data(), out.size());
  std::vector<std::vector<float>> r;
  for (const om::TensorView& v : out) {
    const float* p = static_cast<const float*>(v.data);
    r.emplace_back(p, p + v.numel());
    if (dims) dims->emplace_back(v.dims, v.dims + v.rank);
  }
  return r;
}

// Loads, checks and times every case (what the file comment says); `what` names the models in
// the first line. The rows (one per loaded model) go to *rows_out.
inline int compare_main(const Options& o, const char* program, const char* what, const std::vector<Case>& all,
                        std::vector<Row>* rows_out) {
  std::printf("%s: Session (%d thread%s) vs ONNX Runtime (as many intra-op threads) on %s%s\n", program, o.threads,
              o.threads == 1 ? "" : "s", what, o.check_only ? ", agreement only" : "");
  print_machine();
  std::printf("load average at start: %s\n", load_average().c_str());
  fs::remove_all(o.work);
  fs::create_directories(o.work);
  write_identity_model(fs::path(o.work) / "empty", "tiny", {1});
  bool ok = true;
  std::vector<std::unique_ptr<Loaded>> models;
  for (const Case& c : all) {
    if (o.check_only && !c.small) continue;
    if (!o.only.empty() && std::string(c.label).find(o.only) == std::string::npos) continue;
    const fs::path file = fs::path(o.models) / c.file;
    auto l = std::make_unique<Loaded>();
    l->c = &c;
    std::mt19937 rng(7);
    // Chunk k's inputs; states are filled from the previous chunk's outputs (run_stream).
    auto fill = [&](std::vector<std::vector<float>>* data) {
      data->clear();
      for (const InputSpec& spec : c.inputs) {
        int64_t n = 1;
        for (int64_t d : spec.dims) n *= d;
        std::uniform_real_distribution<float> u(spec.lo, spec.hi);
        std::vector<float> v(static_cast<size_t>(n), 0.0f);
        if (spec.dtype == om::DType::f32 && !spec.state_of)
          for (float& x : v) x = u(rng);
        data->push_back(std::move(v));
      }
    };
    std::vector<std::vector<std::vector<float>>> chunk_data(size_t(std::max(1, c.chunks)));
    for (auto& d : chunk_data) fill(&d);
    l->data = chunk_data[0];
    for (const InputSpec& spec : c.inputs) {
      int64_t n = 1;
      for (int64_t d : spec.dims) n *= d;
      l->ints.emplace_back(spec.dtype == om::DType::i64 ? size_t(n) : 0, spec.value);
    }
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      om::TensorView v;
      v.name = c.inputs[i].name;
      v.dtype = c.inputs[i].dtype;
      v.dims = c.inputs[i].dims.data();
      v.rank = c.inputs[i].dims.size();
      v.data = c.inputs[i].dtype == om::DType::i64 ? static_cast<void*>(l->ints[i].data()) : l->data[i].data();
      l->in.push_back(v);
    }
    om::SessionOptions fo, eo;
    fo.threads = eo.threads = o.threads;
    eo.mode = om::ArithmeticMode::Exact;
    std::vector<uint8_t> bytes;
    if (FILE* f = std::fopen(file.string().c_str(), "rb")) {
      bytes.resize(size_t(fs::file_size(file)));
      if (std::fread(bytes.data(), 1, bytes.size(), f) != bytes.size()) bytes.clear();
      std::fclose(f);
    }
    if (bytes.empty()) {
      std::printf("  %-18s missing: %s (tools/fetch_real_models.sh fetches it)\n", c.label, file.string().c_str());
      ok = false;
      continue;
    }
    l->fast = std::make_unique<om::Session>();
    om::Status st = om::Session::try_from_onnx(bytes.data(), bytes.size(), fo, l->fast.get());
    // The stream: per chunk its inputs (states from the chunk before) and the outputs.
    auto run_stream = [&](om::Session& s, std::vector<std::vector<std::vector<float>>>* ins,
                          std::vector<std::vector<std::vector<float>>>* outs, std::vector<std::vector<int64_t>>* dims) {
      Loaded view;
      view.c = &c;
      view.in = l->in;
      const std::vector<std::string> names = s.output_names();
      for (size_t k = 0; k < chunk_data.size(); ++k) {
        std::vector<std::vector<float>> data = chunk_data[k];
        for (size_t i = 0; i < c.inputs.size(); ++i) {
          if (!c.inputs[i].state_of || k == 0) continue;
          for (size_t o = 0; o < names.size(); ++o)
            if (names[o] == c.inputs[i].state_of && (*outs)[k - 1][o].size() == data[i].size()) data[i] = (*outs)[k - 1][o];
        }
        for (size_t i = 0; i < c.inputs.size(); ++i)
          if (c.inputs[i].dtype == om::DType::f32) view.in[i].data = data[i].data();
        outs->push_back(run_outputs(s, view, k == 0 ? dims : nullptr));
        if (ins) ins->push_back(std::move(data));
      }
    };
    std::vector<std::vector<int64_t>> dims;
    std::vector<std::vector<std::vector<float>>> stream_in, stream_out;
    if (st) {
      try {
        run_stream(*l->fast, &stream_in, &stream_out, &dims);
        l->fast_out = stream_out[0];
      } catch (const om::Error& e) {
        st = om::Status::error(om::ErrorKind::Internal, e.what());
      }
    }
    if (!st) {
      std::printf("  %-18s FAILS in Session: %s\n", c.label, st.message().c_str());
      ok = false;
      continue;
    }
    l->exact = std::make_unique<om::Session>();
    const om::Status es = om::Session::try_from_onnx(bytes.data(), bytes.size(), eo, l->exact.get());
    if (es) {
      try {
        std::vector<std::vector<std::vector<float>>> exact_out;
        run_stream(*l->exact, nullptr, &exact_out, nullptr);
        l->exact_rel = 0;
        for (size_t k = 0; k < exact_out.size(); ++k) l->exact_rel = std::max(l->exact_rel, scaled(stream_out[k], exact_out[k]));
      } catch (const om::Error& e) {
        l->exact_why = e.what();
      }
    } else {
      l->exact_why = es.message();
    }
    if (!l->exact_why.empty()) {
      l->exact.reset();
      const std::string first = l->exact_why.substr(0, l->exact_why.find('\n'));
      l->exact_why = first.size() > 160 ? first.substr(0, 160) + "..." : first;
    }
    const fs::path dir = fs::path(o.work) / c.label;
    fs::create_directories(dir);
    fs::copy_file(file, dir / "model.onnx", fs::copy_options::overwrite_existing);
    const std::vector<std::string> names = l->fast->output_names();
    for (size_t k = 0; k < stream_out.size(); ++k) {
      const std::string set = k == 0 ? "set" : "set_" + std::to_string(k);
      fs::create_directories(dir / set);
      for (size_t i = 0; i < c.inputs.size(); ++i) {
        const fs::path f = dir / set / ("input_" + file_name(c.inputs[i].name) + ".npy");
        if (c.inputs[i].dtype == om::DType::i64)
          om::npy::write(om::graph::TensorData::copy_of(c.inputs[i].name, om::DType::i64, c.inputs[i].dims, l->ints[i].data(),
                                                        l->ints[i].size() * sizeof(int64_t)), f.string());
        else
          write_npy(f, c.inputs[i].name, c.inputs[i].dims, stream_in[k][i].data());
      }
      for (size_t i = 0; i < names.size(); ++i)
        write_npy(dir / set / ("expected_" + file_name(names[i]) + ".npy"), names[i], dims[i], stream_out[k][i].data());
    }
    models.push_back(std::move(l));
  }

  OrtServer ort;
  std::map<std::string, double> rel;
  std::map<std::string, bool> agree_unused;
  int status = 0;
  // ONNX Runtime's own bound is loose: each case's tolerance is applied here.
  if (!ort.start(o.repo, o.work, o.threads, 1.0, &rel, &agree_unused, &status)) {
    if (status == 77) {
      std::printf("ONNX Runtime is not installed (tools/bootstrap.sh installs it)\n");
      return 77;
    }
    std::printf("bench_ort.js failed (exit status %d)\n", status);
    return 1;
  }
  std::vector<Row>& rows = *rows_out;
  for (const auto& l : models) {
    Row r{l->c->label};
    const std::string label = std::string(l->c->label) + "/set";
    if (rel.count(label) && rel.count(label + "@noarena")) r.rel = std::max(rel[label], rel[label + "@noarena"]);
    for (int k = 1; k < l->c->chunks && r.rel >= 0; ++k) {  // every chunk of a stream agrees
      const std::string chunk = label + "_" + std::to_string(k);
      if (!rel.count(chunk) || !rel.count(chunk + "@noarena")) r.rel = -1;
      else r.rel = std::max({r.rel, rel[chunk], rel[chunk + "@noarena"]});
    }
    r.agree = r.rel >= 0 && r.rel <= l->c->rtol;
    ok = ok && r.agree;
    char exact_text[64];
    std::snprintf(exact_text, sizeof exact_text, "within %.1e of Fast (scaled)", l->exact_rel);
    std::printf("  %-18s ONNX Runtime agrees: %s (max scaled difference %.1e, tolerance %.0e); Exact: %s\n", l->c->label,
                r.agree ? "yes" : "NO", r.rel, l->c->rtol, l->exact ? exact_text : ("unsupported (" + l->exact_why + ")").c_str());
    std::fflush(stdout);
    if (!o.check_only && r.agree) {
      const double block = o.seconds / o.rounds;
      warm_session(*l->fast, l->in.data(), l->in.size(), 0.1 * o.seconds);
      if (l->exact) warm_session(*l->exact, l->in.data(), l->in.size(), 0.1 * o.seconds);
      ort.warm(label, 0.1 * o.seconds);
      ort.warm(label + "@noarena", 0.1 * o.seconds);
      std::vector<double> f, e, t, tn, z;
      for (int round = 0; round < o.rounds; ++round) {
        f.push_back(time_session(*l->fast, l->in.data(), l->in.size(), block));
        if (l->exact) e.push_back(time_session(*l->exact, l->in.data(), l->in.size(), block));
        t.push_back(ort.time(label, block));
        tn.push_back(ort.time(label + "@noarena", block));
        z.push_back(ort.time("empty/tiny", std::min(block, 0.2)));
      }
      r.fast = median(f);
      if (!e.empty()) r.exact = median(e);
      r.ort = std::min(median(t), median(tn));
      r.overhead = median(z);
      char exact_us[48] = "";
      if (r.exact >= 0) std::snprintf(exact_us, sizeof exact_us, ", Exact %.1f us", r.exact);
      std::printf("  %-18s medians of %d blocks: Session Fast %.1f us%s; ONNX Runtime default %.1f us, no arena %.1f us, empty model %.1f us\n",
                  l->c->label, o.rounds, r.fast, exact_us, median(t), median(tn), r.overhead);
      std::fflush(stdout);
    }
    rows.push_back(r);
  }
  status = ort.finish();
  if (status != 0 && status != 1) {  // 1: a difference above bench_ort.js's loose bound, judged above
    std::printf("bench_ort.js reported a failure (exit status %d)\n", status);
    ok = false;
  }
  if (!o.check_only) {
    std::printf("\nmedian over %d interleaved rounds; ONNX Runtime = the better of its two memory settings minus the empty model's latency; load "
                "average: %s\n\n",
                o.rounds, load_average().c_str());
    std::printf("| model | input | agrees (scaled diff) | Session Fast us | Session Exact us | ONNX Runtime us | Fast / ORT |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    double log_sum = 0;
    int n = 0;
    for (const Row& r : rows) {
      std::string dims;
      for (const InputSpec& s : case_of(all, r.label)->inputs)
        for (size_t i = 0; i < s.dims.size(); ++i) dims += (i ? "x" : dims.empty() ? "" : ", ") + std::to_string(s.dims[i]);
      const double adj = r.ort - r.overhead;
      const double ratio = r.fast > 0 && adj > 0 ? r.fast / adj : -1;
      if (ratio > 0) {
        log_sum += std::log(ratio);
        ++n;
      }
      char exact[48] = "unsupported", ortus[32] = "-", rat[32] = "-";
      if (r.exact >= 0) std::snprintf(exact, sizeof exact, "%.1f", r.exact);
      if (adj > 0) std::snprintf(ortus, sizeof ortus, "%.1f", adj);
      if (ratio > 0) std::snprintf(rat, sizeof rat, "%.2f", ratio);
      std::printf("| %s | %s | %s (%.1e) | %.1f | %s | %s | %s |\n", r.label, dims.c_str(), r.agree ? "yes" : "NO", r.rel, r.fast,
                  exact, ortus, rat);
    }
    if (n > 0) std::printf("\ngeometric mean of Fast / ORT over %d models: %.2f\n", n, std::exp(log_sum / n));
  }
  std::printf("every model loads and agrees with ONNX Runtime: %s\n", ok ? "yes" : "NO");
  return ok ? 0 : 1;
}

}  // namespace bench
