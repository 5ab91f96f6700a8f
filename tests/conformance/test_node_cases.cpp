// The ONNX backend node tests (Debian package libonnx-testdata, installed by tools/bootstrap.sh)
// run in-process: every case in Fast mode, and in Exact mode when every operator of the model
// has an exact kernel. Outputs are compared with the ONNX backend tolerance
// (|got - want| <= 1e-7 + 1e-3 |want|, shapes and dtypes exact, NaN equals NaN).
//
// tests/conformance/skip.txt lists the cases out of scope, one group per reason. A listed case
// that passes, or an unlisted case that fails, fails this test: the list always says exactly
// what does not run (docs/onnx.md, "Conformance").
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "doctest/doctest.h"
#include "onemodel/graph/op_registry.h"
#include "onemodel/io/onnx.h"
#include "onemodel/runtime/session.h"
#include "split_check.h"

namespace {

using om::DType;
using om::Status;

const char* kDataRoot = "/usr/share/libonnx-testdata/data";

bool is_dir(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<std::string> list_dir(const std::string& p) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(p.c_str())) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') names.push_back(e->d_name);
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool read_all(const std::string& path, std::vector<uint8_t>* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  out->assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return true;
}

// A skip pattern: an exact case name, or a prefix ending in '*'.
struct SkipEntry {
  std::string pattern;
  std::string reason;
};

bool matches(const std::string& pattern, const std::string& name) {
  if (!pattern.empty() && pattern.back() == '*') return name.compare(0, pattern.size() - 1, pattern, 0, pattern.size() - 1) == 0;
  return pattern == name;
}

// skip.txt: "== reason" starts a group; other non-empty lines that do not start with '#' are
// patterns of that group.
std::vector<SkipEntry> read_skip_list(const std::string& path) {
  std::vector<SkipEntry> out;
  std::ifstream f(path);
  std::string line, reason;
  while (std::getline(f, line)) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    if (line.compare(0, 3, "== ") == 0) {
      reason = line.substr(3);
      continue;
    }
    out.push_back({line, reason});
  }
  return out;
}

double value_at(const void* p, DType dt, int64_t i) {
  switch (dt) {
    case DType::f32: return static_cast<const float*>(p)[i];
    case DType::f16: return om::half_to_float(static_cast<const om::half*>(p)[i]);
    case DType::bf16: return om::bf16_to_float(static_cast<const om::bfloat16*>(p)[i]);
    case DType::u8: return static_cast<const uint8_t*>(p)[i];
    case DType::i8: return static_cast<const int8_t*>(p)[i];
    case DType::i32: return static_cast<const int32_t*>(p)[i];
    case DType::i64: return double(static_cast<const int64_t*>(p)[i]);
    case DType::boolean: return static_cast<const uint8_t*>(p)[i] ? 1 : 0;
    case DType::f64: return static_cast<const double*>(p)[i];
    case DType::i16: return static_cast<const int16_t*>(p)[i];
    case DType::u16: return static_cast<const uint16_t*>(p)[i];
    case DType::u32: return static_cast<const uint32_t*>(p)[i];
    case DType::u64: return double(static_cast<const uint64_t*>(p)[i]);
  }
  return 0;
}

std::string shape_text(const int64_t* d, size_t r) {
  std::string s = "[";
  for (size_t i = 0; i < r; ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

// Empty when equal; else what differs.
std::string compare(const om::TensorView& got, om::graph::TensorData want, size_t k) {
  const std::string which = "output " + std::to_string(k);
  if (got.dtype == DType::bf16 && want.dtype == DType::u16) want.dtype = DType::bf16;  // bf16 test data is written as u16 (run_case)
  if (got.dtype != want.dtype)
    return which + ": dtype " + om::dtype_name(got.dtype) + ", expected " + om::dtype_name(want.dtype);
  if (got.rank != want.dims.size() || !std::equal(want.dims.begin(), want.dims.end(), got.dims))
    return which + ": shape " + shape_text(got.dims, got.rank) + ", expected " + shape_text(want.dims.data(), want.dims.size());
  const int64_t n = want.numel();
  const bool floating = want.dtype == DType::f32 || want.dtype == DType::f16 || want.dtype == DType::bf16 || want.dtype == DType::f64;
  if (want.dtype == DType::i64 || want.dtype == DType::u64) {  // beyond 2^53 a double would round
    for (int64_t i = 0; i < n; ++i)
      if (std::memcmp(static_cast<const int64_t*>(got.data) + i, want.data<int64_t>() + i, 8) != 0)
        return which + ": element " + std::to_string(i) + " differs";
    return "";
  }
  for (int64_t i = 0; i < n; ++i) {
    const double g = value_at(got.data, got.dtype, i), w = value_at(want.bytes, want.dtype, i);
    if (std::isnan(w) && std::isnan(g)) continue;
    const bool ok = floating ? (g == w || std::fabs(g - w) <= 1e-7 + 1e-3 * std::fabs(w)) : g == w;
    if (!ok) {
      std::ostringstream os;
      os.precision(9);
      os << which << ": element " << i << " is " << g << ", expected " << w;
      return os.str();
    }
  }
  return "";
}

// A SequenceProto or OptionalProto (onnx.proto: both have elem_type = 2 and the tensor(s) in
// field 3, an optional's sequence in field 5), decoded by hand: the library reads models, not
// these test-data wrappers. present false: an optional without a value.
struct DecodedValue {
  bool present = false;
  std::vector<om::graph::TensorData> elements;
};

bool read_varint(const uint8_t*& p, const uint8_t* end, uint64_t* v) {
  *v = 0;
  for (int shift = 0; p < end && shift < 64; shift += 7) {
    const uint8_t b = *p++;
    *v |= uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

std::string decode_value(const uint8_t* p, size_t size, int depth, DecodedValue* out) {
  const uint8_t* end = p + size;
  while (p < end) {
    uint64_t key = 0, len = 0;
    if (!read_varint(p, end, &key)) return "bad field key";
    const uint64_t field = key >> 3, wire = key & 7;
    if (wire == 0) {
      if (!read_varint(p, end, &len)) return "bad varint";
      continue;
    }
    if (wire != 2 || !read_varint(p, end, &len) || len > uint64_t(end - p)) return "unexpected wire type or length";
    if (field == 3) {
      auto t = om::onnx::read_tensor_bytes(p, size_t(len));
      if (!t.is_ok()) return t.status().message();
      out->elements.push_back(std::move(t).value());
      out->present = true;
    } else if (field == 5 && depth == 0) {
      DecodedValue inner;
      const std::string e = decode_value(p, size_t(len), 1, &inner);
      if (!e.empty()) return e;
      out->elements = std::move(inner.elements);
      out->present = true;
    }
    p += len;
  }
  return "";
}

std::string compare(const om::TensorView& got, om::graph::TensorData want, size_t k);

// A case whose inputs or outputs are sequences or optionals, through Session::try_run_values.
std::string run_values_case(const std::string& dir, om::Session& session, const std::vector<om::ValueInfo>& in_info,
                            const std::vector<om::ValueInfo>& out_info) {
  size_t sets = 0;
  for (const std::string& set : list_dir(dir)) {
    if (set.compare(0, 14, "test_data_set_") != 0) continue;
    ++sets;
    const std::string sd = dir + "/" + set;
    auto read = [&](const std::string& file, om::graph::ValueKind kind, DecodedValue* v) -> std::string {
      std::vector<uint8_t> bytes;
      if (!read_all(file, &bytes)) return "missing " + file;
      if (kind == om::graph::ValueKind::Tensor) {
        auto t = om::onnx::read_tensor_bytes(bytes.data(), bytes.size());
        if (!t.is_ok()) return t.status().message();
        v->present = true;
        v->elements.push_back(std::move(t).value());
        return "";
      }
      const std::string e = decode_value(bytes.data(), bytes.size(), 0, v);
      if (kind == om::graph::ValueKind::Sequence) v->present = true;  // an empty sequence is a value
      return e;
    };
    std::vector<DecodedValue> ins(in_info.size()), wants(out_info.size());
    for (size_t k = 0; k < in_info.size(); ++k) {
      const std::string e = read(sd + "/input_" + std::to_string(k) + ".pb", in_info[k].kind, &ins[k]);
      if (!e.empty()) return set + " input " + std::to_string(k) + ": " + e;
    }
    for (size_t k = 0; k < out_info.size(); ++k) {
      const std::string e = read(sd + "/output_" + std::to_string(k) + ".pb", out_info[k].kind, &wants[k]);
      if (!e.empty()) return set + " output " + std::to_string(k) + ": " + e;
    }
    std::vector<std::vector<om::TensorView>> elems(ins.size());
    std::vector<om::ValueView> views(ins.size());
    for (size_t k = 0; k < ins.size(); ++k) {
      for (const auto& t : ins[k].elements) {
        om::TensorView v;
        v.dtype = t.dtype;
        v.dims = t.dims.data();
        v.rank = t.dims.size();
        v.data = const_cast<uint8_t*>(t.bytes);
        elems[k].push_back(v);
      }
      views[k].name = in_info[k].name.c_str();
      // A sequence's or optional's data says which it is; a tensor given to an optional input is its value.
      views[k].kind = in_info[k].kind;
      views[k].present = ins[k].present;
      views[k].elements = elems[k].data();
      views[k].count = elems[k].size();
    }
    struct Ctx {
      const std::vector<DecodedValue>* wants;
      std::string diff;
    } c{&wants, ""};
    Status st = session.try_run_values(views.data(), views.size(), [](void* p, const om::ValueView* outs, size_t n) {
      Ctx& c = *static_cast<Ctx*>(p);
      for (size_t k = 0; k < n && c.diff.empty(); ++k) {
        const DecodedValue& want = (*c.wants)[k];
        if (outs[k].present != want.present || outs[k].count != want.elements.size()) {
          c.diff = "output " + std::to_string(k) + ": " + std::to_string(outs[k].count) + " elements (present " +
                   std::to_string(outs[k].present) + "), expected " + std::to_string(want.elements.size()) + " (present " +
                   std::to_string(want.present) + ")";
          return;
        }
        for (size_t e = 0; e < outs[k].count && c.diff.empty(); ++e) c.diff = compare(outs[k].elements[e], want.elements[e], k);
      }
    }, &c);
    if (!st.is_ok()) return set + ": run: " + st.message();
    if (!c.diff.empty()) return set + ": " + c.diff;
  }
  if (sets == 0) return "no test_data_set_N";
  return "";
}

// Runs one case in one mode: "" on success, else the reason.
std::string run_case(const std::string& dir, const std::vector<uint8_t>& model, om::ArithmeticMode mode) {
  om::SessionOptions opts;
  opts.mode = mode;
  om::Session session;
  Status st = om::Session::try_from_onnx(model.data(), model.size(), opts, &session);
  if (!st.is_ok()) return "create: " + st.message();
  const std::vector<std::string> names = session.input_names();
  const std::vector<om::ValueInfo> in_info = session.inputs(), out_info = session.outputs();
  bool values = false;  // sequences or optionals among the inputs or outputs: run_values
  for (const auto& v : in_info) values = values || v.kind != om::graph::ValueKind::Tensor;
  for (const auto& v : out_info) values = values || v.kind != om::graph::ValueKind::Tensor;
  if (values) return run_values_case(dir, session, in_info, out_info);
  size_t sets = 0;
  for (const std::string& set : list_dir(dir)) {
    if (set.compare(0, 14, "test_data_set_") != 0) continue;
    ++sets;
    const std::string sd = dir + "/" + set;
    std::vector<om::graph::TensorData> ins, wants;
    for (size_t k = 0;; ++k) {
      std::vector<uint8_t> bytes;
      if (!read_all(sd + "/input_" + std::to_string(k) + ".pb", &bytes)) break;
      auto t = om::onnx::read_tensor_bytes(bytes.data(), bytes.size());
      if (!t.is_ok()) return set + " input " + std::to_string(k) + ": " + t.status().message();
      ins.push_back(std::move(t).value());
    }
    for (size_t k = 0;; ++k) {
      std::vector<uint8_t> bytes;
      if (!read_all(sd + "/output_" + std::to_string(k) + ".pb", &bytes)) break;
      auto t = om::onnx::read_tensor_bytes(bytes.data(), bytes.size());
      if (!t.is_ok()) return set + " output " + std::to_string(k) + ": " + t.status().message();
      wants.push_back(std::move(t).value());
    }
    if (ins.size() != names.size())
      return set + ": " + std::to_string(ins.size()) + " inputs given, the session takes " + std::to_string(names.size());
    // The ONNX test generator writes bfloat16 data as UINT16 tensors of the same bits (numpy has no
    // bfloat16): such a tensor fed to a bf16 input, or expected from a bf16 output, is read as bf16.
    const std::vector<om::ValueInfo> declared = session.inputs();
    for (size_t k = 0; k < ins.size() && k < declared.size(); ++k)
      if (declared[k].dtype == DType::bf16 && ins[k].dtype == DType::u16) ins[k].dtype = DType::bf16;
    std::vector<om::TensorView> views(ins.size());
    for (size_t k = 0; k < ins.size(); ++k) {
      views[k].name = names[k].c_str();
      views[k].dtype = ins[k].dtype;
      views[k].dims = ins[k].dims.data();
      views[k].rank = ins[k].dims.size();
      views[k].data = const_cast<uint8_t*>(ins[k].bytes);
    }
    std::vector<om::TensorView> outs(session.output_names().size());
    if (outs.size() != wants.size())
      return set + ": the model has " + std::to_string(outs.size()) + " outputs, the data " + std::to_string(wants.size());
    st = session.try_run(views.data(), views.size(), outs.data(), outs.size());
    if (!st.is_ok()) return set + ": run: " + st.message();
    for (size_t k = 0; k < outs.size(); ++k) {
      const std::string diff = compare(outs[k], wants[k], k);
      if (!diff.empty()) return set + ": " + diff;
    }
    const std::string split = split_check::mismatch(session, views.data(), views.size(), outs.data(), outs.size());
    if (!split.empty()) return set + ": " + split;
  }
  if (sets == 0) return "no test_data_set_N";
  return "";
}

// Whether every operator of the graph and its subgraphs runs in Exact mode (then Exact runs too).
bool all_exact(const om::graph::Graph& g) {
  for (const om::graph::Node& n : g.nodes) {
    const om::graph::OpDef* op = om::graph::find_op(n.domain, n.op_type);
    if (!op || !om::graph::runs_in(*op, om::ArithmeticMode::Exact)) return false;
    for (const om::graph::Attribute& a : n.attributes)
      if (a.type == om::graph::AttrType::Graph && !all_exact(*a.g)) return false;
  }
  return true;
}
bool all_exact(const std::vector<uint8_t>& model) {
  auto g = om::onnx::read_bytes(model.data(), model.size());
  return g.is_ok() && all_exact(g.value());
}

// Runs every case of one folder of the test data against its skip list; `min_total` guards
// against a partly installed package.
void run_group(const std::string& group, const std::string& skip_file, size_t min_total) {
  const std::string data_dir = std::string(kDataRoot) + "/" + group;
  if (!is_dir(data_dir)) {
    FAIL("the ONNX backend tests are not installed (" << data_dir << "): run tools/bootstrap.sh (Debian package libonnx-testdata)");
    return;
  }
  const std::string skip_path = std::string(OM_SOURCE_DIR) + "/tests/conformance/" + skip_file;
  REQUIRE_MESSAGE(std::ifstream(skip_path).good(), "cannot read " << skip_path);  // an empty list is fine: every case passes
  const std::vector<SkipEntry> skips = read_skip_list(skip_path);
  const char* only = std::getenv("OM_CONFORMANCE_ONLY");  // a prefix, for working on one operator
  const bool verbose = std::getenv("OM_CONFORMANCE_VERBOSE") != nullptr;  // also why listed cases fail
  size_t total = 0, passed = 0, exact_runs = 0, skipped = 0;
  std::vector<std::string> wrong;  // failures not listed, and listed cases that pass
  std::map<std::string, size_t> skipped_by_reason;
  for (const std::string& name : list_dir(data_dir)) {
    const std::string dir = data_dir + "/" + name;
    if (only && name.compare(0, std::strlen(only), only) != 0) continue;
    std::vector<uint8_t> model;
    if (!read_all(dir + "/model.onnx", &model)) continue;
    ++total;
    std::string why = run_case(dir, model, om::ArithmeticMode::Fast);
    if (why.empty() && all_exact(model)) {
      ++exact_runs;
      const std::string e = run_case(dir, model, om::ArithmeticMode::Exact);
      if (!e.empty()) why = "Exact mode: " + e;
    }
    const SkipEntry* skip = nullptr;
    for (const SkipEntry& s : skips)
      if (matches(s.pattern, name)) { skip = &s; break; }
    if (why.empty()) ++passed;
    if (skip) {
      ++skipped;
      ++skipped_by_reason[skip->reason];
      if (why.empty()) wrong.push_back(name + ": passes but is listed in " + skip_file + " (" + skip->reason + "); remove it from the list");
      else if (verbose) std::printf("  listed %s: %s\n", name.c_str(), why.substr(0, 300).c_str());
    } else if (!why.empty()) {
      wrong.push_back(name + ": " + why.substr(0, 400));
    }
  }
  std::printf("ONNX backend tests, %s: %zu of %zu cases pass (%zu also in Exact mode); %zu listed in %s\n", group.c_str(), passed,
              total, exact_runs, skipped, skip_file.c_str());
  for (const auto& [reason, n] : skipped_by_reason) std::printf("  skipped %4zu  %s\n", n, reason.c_str());
  for (const std::string& w : wrong) std::printf("  WRONG %s\n", w.c_str());
  CHECK(wrong.empty());
  if (!only) CHECK(total >= min_total);
}

}  // namespace

TEST_CASE("ONNX backend node tests") { run_group("node", "skip.txt", 900); }

// The models PyTorch exported (at opset 6 and older, the forms the reader converts:
// docs/onnx.md, "Opsets 1 to 6"), whole layers and operator compositions.
TEST_CASE("ONNX backend pytorch-converted tests") { run_group("pytorch-converted", "skip_pytorch_converted.txt", 82); }
TEST_CASE("ONNX backend pytorch-operator tests") { run_group("pytorch-operator", "skip_pytorch_operator.txt", 35); }
