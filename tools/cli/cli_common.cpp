// Argument parsing, model loading and formatting shared by the subcommands.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cli.h"

namespace cli {

bool Args::has(const std::string& name) const {
  return std::any_of(options.begin(), options.end(), [&](const auto& o) { return o.first == name; });
}

std::string Args::get(const std::string& name, const std::string& fallback) const {
  for (auto it = options.rbegin(); it != options.rend(); ++it)
    if (it->first == name) return it->second;
  return fallback;
}

std::vector<std::string> Args::all(const std::string& name) const {
  std::vector<std::string> v;
  for (const auto& o : options)
    if (o.first == name) v.push_back(o.second);
  return v;
}

Args parse(int argc, char** argv, const std::vector<std::string>& with_value, const std::vector<std::string>& flags,
           const std::string& command) {
  Args a;
  for (int i = 0; i < argc; ++i) {
    std::string s = argv[i];
    if (s.size() < 2 || s.compare(0, 2, "--") != 0) {
      a.positional.push_back(s);
      continue;
    }
    std::string name = s.substr(2), value;
    const size_t eq = name.find('=');
    bool inline_value = eq != std::string::npos;
    if (inline_value) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (std::find(with_value.begin(), with_value.end(), name) != with_value.end()) {
      if (!inline_value) {
        if (i + 1 >= argc) throw UsageError{"option --" + name + " needs a value"};
        value = argv[++i];
      }
    } else if (std::find(flags.begin(), flags.end(), name) == flags.end()) {
      throw UsageError{"unknown option --" + name + " for `onemodel " + command + "`"};
    }
    a.options.emplace_back(name, value);
  }
  return a;
}

namespace {
bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
}  // namespace

om::graph::Graph load_graph(const std::string& path, std::string* format) {
  if (!std::ifstream(path, std::ios::binary))
    throw om::Error(om::ErrorKind::Io, "cannot open '" + path + "': no such file or it is not readable");
  if (ends_with(path, ".onnx")) {
    if (format) *format = "ONNX";
    return om::onnx::read(path);
  }
  if (ends_with(path, ".om")) {
    if (format) *format = "onemodel library format v1";
    return om::Model::load(path).graph();
  }
  throw om::Error(om::ErrorKind::InvalidArgument, "'" + path + "': the extension tells neither format; name the file *.om "
                                                  "(library format, om::Model::load) or *.onnx (om::onnx::read)");
}

om::ArithmeticMode parse_mode(const std::string& text, const std::string& command) {
  if (text == "fast" || text.empty()) return om::ArithmeticMode::Fast;
  if (text == "exact") return om::ArithmeticMode::Exact;
  throw UsageError{"--mode is 'fast' or 'exact', got '" + text + "' (onemodel " + command + ")"};
}

int parse_threads(const std::string& text, const std::string& command) {
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end || v < 0 || v > 64)
    throw UsageError{"--threads is a thread count from 0 (every core) to 64, got '" + text + "' (onemodel " + command + ")"};
  return int(v);
}

const std::vector<std::string> kSessionOptionFlags = {"mode", "threads", "max-arena", "max-folded"};

std::vector<std::string> with_session_options(std::vector<std::string> own) {
  own.insert(own.end(), kSessionOptionFlags.begin(), kSessionOptionFlags.end());
  return own;
}

ShapeMap parse_shapes(const Args& a, const std::string& option, const std::vector<std::string>& inputs) {
  ShapeMap shapes;
  for (const std::string& spec : a.all(option)) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos) throw UsageError{"--" + option + " " + spec + ": write NAME=D0,D1,..."};
    const std::string name = spec.substr(0, eq);
    if (std::find(inputs.begin(), inputs.end(), name) == inputs.end())
      throw UsageError{"--" + option + ": the model has no input named '" + name + "'"};
    std::vector<int64_t>& dims = shapes[name];
    std::stringstream ss(spec.substr(eq + 1));
    std::string item;
    while (std::getline(ss, item, ',')) {
      char* end = nullptr;
      const long long v = std::strtoll(item.c_str(), &end, 10);
      if (item.empty() || *end || v < 0)
        throw UsageError{"--" + option + " " + spec + ": '" + item + "' is not a size (write NAME=1,3,64,64)"};
      dims.push_back(v);
    }
  }
  return shapes;
}

uint64_t parse_bytes(const std::string& text, const std::string& option, const std::string& command) {
  const std::string usage = "--" + option + " is a byte count with an optional K, M or G suffix (powers of 1024), e.g. 512M; got '" +
                            text + "' (onemodel " + command + ")";
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 19) throw UsageError{usage};
  uint64_t shift = 0;
  const std::string suffix = text.substr(digits);
  if (suffix == "K" || suffix == "k" || suffix == "KiB") shift = 10;
  else if (suffix == "M" || suffix == "MiB") shift = 20;
  else if (suffix == "G" || suffix == "GiB") shift = 30;
  else if (!suffix.empty()) throw UsageError{usage};
  const unsigned long long v = std::strtoull(text.substr(0, digits).c_str(), nullptr, 10);
  // size_t holds the option: on a 32-bit target the limit is 4 GiB - 1.
  const uint64_t max = uint64_t(SIZE_MAX);
  if (v == 0 || v > (max >> shift)) throw UsageError{"--" + option + " " + text + ": must be from 1 byte to " + std::to_string(max) + " bytes (onemodel " + command + ")"};
  return uint64_t(v) << shift;
}

om::SessionOptions session_options(const Args& a, const std::string& command) {
  om::SessionOptions o;
  o.mode = parse_mode(a.get("mode", "fast"), command);
  o.threads = parse_threads(a.get("threads", "0"), command);
  if (a.has("max-arena")) o.max_arena_bytes = size_t(parse_bytes(a.get("max-arena"), "max-arena", command));
  if (a.has("max-folded")) o.max_folded_bytes = size_t(parse_bytes(a.get("max-folded"), "max-folded", command));
  return o;
}

// A sequence's or optional's tensors' dims after its kind ("sequence [?rank]").
static std::string kind_prefix(om::graph::ValueKind k) {
  return k == om::graph::ValueKind::Tensor ? std::string() : std::string(om::graph::value_kind_name(k)) + " ";
}

std::string dims_str(const om::graph::ValueInfo& v) {
  if (v.kind != om::graph::ValueKind::Tensor) {
    om::graph::ValueInfo t = v;
    t.kind = om::graph::ValueKind::Tensor;
    return kind_prefix(v.kind) + dims_str(t);
  }
  if (!v.has_shape) return "[?rank]";
  std::string s = "[";
  for (size_t i = 0; i < v.shape.size(); ++i) {
    if (i) s += ",";
    const om::graph::Dim& d = v.shape[i];
    s += d.is_symbolic() ? d.param : d.is_static() ? std::to_string(d.size) : "?";
  }
  return s + "]";
}

std::string dims_str(const om::ValueInfo& v) {
  if (v.kind != om::graph::ValueKind::Tensor) {
    om::ValueInfo t = v;
    t.kind = om::graph::ValueKind::Tensor;
    return kind_prefix(v.kind) + dims_str(t);
  }
  if (!v.has_shape) return "[?rank]";
  std::string s = "[";
  for (size_t i = 0; i < v.dims.size(); ++i) {
    if (i) s += ",";
    s += v.dims[i] >= 0 ? std::to_string(v.dims[i]) : v.dim_names[i].empty() ? "?" : v.dim_names[i];
  }
  return s + "]";
}

std::string human_bytes(uint64_t bytes) {
  char buf[64];
  if (bytes < 10 * 1024) std::snprintf(buf, sizeof buf, "%" PRIu64 " B", bytes);
  else if (bytes < 10 * 1024 * 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", double(bytes) / 1024);
  else std::snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / (1024.0 * 1024.0));
  return buf;
}

uint64_t fnv1a(uint64_t h, const void* data, size_t n) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ULL;
  return h;
}

}  // namespace cli
