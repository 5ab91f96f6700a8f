// The body of fuzz/fuzz_session.cpp, shared with the corpus replay test (tests/io): decode the
// bytes as an ONNX model, create a Session in Fast and in Exact mode, and run each on small
// inputs derived from the declared input shapes (a symbol gets one size in 1..3 for the whole
// model, an unknown dim 2), twice (the second run uses the cached plan). Any outcome must be a
// Status: never a crash, a hang, or a sanitizer report. The limits are small so a hostile model
// is refused quickly instead of computing for long.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "onemodel/io/onnx.h"
#include "onemodel/runtime/session.h"

namespace om::fuzz {

inline int64_t symbol_size(const std::string& param) {
  uint32_t h = 2166136261u;
  for (char c : param) h = (h ^ uint8_t(c)) * 16777619u;
  return 1 + int64_t(h % 3);
}

// Returns how many runs succeeded (for the replay test's statistics).
inline int run_session_case(const uint8_t* data, size_t size) {
  Result<graph::Graph> read = onnx::read_bytes(data, size);
  if (!read.is_ok()) return 0;
  const graph::Graph& g = read.value();
  if (g.nodes.size() > 512 || g.inputs.size() > 16) return 0;
  int ok = 0;
  for (ArithmeticMode mode : {ArithmeticMode::Fast, ArithmeticMode::Exact}) {
    SessionOptions opt;
    opt.mode = mode;
    opt.max_arena_bytes = size_t(1) << 20;
    opt.max_folded_bytes = size_t(1) << 20;
    opt.max_cached_plans = 2;
    Session s;
    if (!Session::create(g, opt, &s).is_ok()) continue;
    const std::vector<std::string> names = s.input_names();
    std::vector<std::vector<int64_t>> dims(names.size());
    std::vector<std::vector<uint8_t>> bytes(names.size());
    std::vector<TensorView> in(names.size());
    bool small = true;
    for (size_t i = 0; i < names.size() && small; ++i) {
      const graph::ValueInfo* vi = nullptr;
      for (const auto& v : g.inputs)
        if (v.name == names[i]) vi = &v;
      if (!vi) return ok;
      int64_t n = 1;
      for (const auto& d : vi->shape) {
        const int64_t size = d.is_static() ? d.size : d.is_symbolic() ? symbol_size(d.param) : 2;
        dims[i].push_back(size);
        if (size > 4096 || (n *= size) > 4096) small = false;
      }
      if (!small) break;
      const size_t es = dtype_size(vi->dtype);
      bytes[i].resize(size_t(n) * es + 1);
      for (size_t b = 0; b < bytes[i].size(); ++b) {
        // Small values of every dtype: bool bytes 0/1, integers -1..2 (shape-like), floats near 1.
        const uint8_t v = uint8_t((b * 37 + i * 11) % 4);
        if (vi->dtype == DType::boolean) bytes[i][b] = v & 1;
        else if (es == 1 || b % es == 0) bytes[i][b] = v;
        else if (vi->dtype == DType::f32 && b % es == es - 1) bytes[i][b] = 0x3f;
        else bytes[i][b] = 0;
      }
      in[i].name = names[i].c_str();
      in[i].dtype = vi->dtype;
      in[i].dims = dims[i].data();
      in[i].rank = dims[i].size();
      in[i].data = bytes[i].data();
    }
    if (!small) continue;
    // Sequences and optionals: each sequence input gets two elements (the same data), each
    // optional its value, through try_run_values.
    bool values = false;
    for (const auto& v : g.inputs) values = values || v.kind != graph::ValueKind::Tensor;
    for (const auto& v : g.outputs) values = values || v.kind != graph::ValueKind::Tensor;
    if (values) {
      std::vector<TensorView> twice;
      for (const TensorView& t : in) twice.insert(twice.end(), {t, t});
      std::vector<ValueView> vin(in.size());
      for (size_t i = 0; i < in.size(); ++i) {
        vin[i].name = in[i].name;
        vin[i].kind = g.inputs[g.find_input(names[i])].kind;
        const bool seq = vin[i].kind == graph::ValueKind::Sequence || vin[i].kind == graph::ValueKind::OptionalSequence;
        vin[i].elements = &twice[2 * i];
        vin[i].count = seq ? 2 : 1;
      }
      for (int rep = 0; rep < 2; ++rep)
        if (s.try_run_values(vin.data(), vin.size(), [](void*, const ValueView* outs, size_t n) {
              uint8_t sum = 0;  // every output byte touched, so a wrong size or pointer shows under ASan
              for (size_t k = 0; k < n; ++k)
                for (size_t e = 0; e < outs[k].count; ++e) {
                  const TensorView& o = outs[k].elements[e];
                  const size_t nb = size_t(o.numel()) * dtype_size(o.dtype);
                  for (size_t b = 0; b < nb; ++b) sum = uint8_t(sum + static_cast<const uint8_t*>(o.data)[b]);
                }
              volatile uint8_t sink = sum;
              (void)sink;
            }, nullptr).is_ok())
          ++ok;
      continue;
    }
    std::vector<TensorView> out(s.output_names().size());
    for (int rep = 0; rep < 2; ++rep)
      if (s.try_run(in.data(), in.size(), out.data(), out.size()).is_ok()) {
        ++ok;
        // Touch every output byte, so a wrong size or pointer shows under ASan.
        uint8_t sum = 0;
        for (const TensorView& o : out) {
          int64_t count = 1;
          for (size_t d = 0; d < o.rank; ++d) count *= o.dims[d];
          const size_t nb = size_t(count) * dtype_size(o.dtype);
          for (size_t b = 0; b < nb; ++b) sum = uint8_t(sum + static_cast<const uint8_t*>(o.data)[b]);
        }
        volatile uint8_t sink = sum;
        (void)sink;
      }
  }
  return ok;
}

}  // namespace om::fuzz
