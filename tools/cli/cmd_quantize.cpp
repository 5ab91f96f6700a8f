// onemodel quantize MODEL --calibration DIR OUT: post-training static quantization to a QDQ
// model (om::quant::quantize_static, docs/quantization.md).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "cli.h"

namespace cli {
namespace {
const char* kHelp =
    "usage: onemodel quantize MODEL --calibration DIR OUT [--per-tensor] [--s8] [--percentile P]\n"
    "                         [--keep NODE] [--keep-op TYPE] [--inputs-only] [--threads N]\n"
    "\n"
    "Quantizes MODEL (.om or .onnx) after training: the weights of Conv, Gemm and MatMul become\n"
    "int8 (symmetric, one scale per output channel), their activations get QuantizeLinear ->\n"
    "DequantizeLinear pairs (u8, asymmetric) with ranges from running MODEL on the calibration\n"
    "batches. OUT (.om or .onnx) is the QDQ model; biases stay float. docs/quantization.md.\n"
    "\n"
    "DIR holds the calibration batches, in name order:\n"
    "  DIR/<batch>/<input>.npy   one folder per batch, one .npy per model input (by input name)\n"
    "  DIR/<batch>.npy           for a model with one input: one file per batch\n"
    "Input names with bytes outside [A-Za-z0-9._-] are written %XX in file names (y:0 -> y%3A0).\n"
    "\n"
    "  --per-tensor      one scale per weight tensor instead of per output channel\n"
    "  --s8              i8 activations (asymmetric) instead of u8\n"
    "  --percentile P    activation ranges from the P-th and (100-P)-th percentiles (P in (50, 100],\n"
    "                    e.g. 99.99) instead of min and max\n"
    "  --keep NODE       leave the node named NODE in float (repeatable)\n"
    "  --keep-op TYPE    leave every Conv, Gemm or MatMul node in float (repeatable)\n"
    "  --inputs-only     quantize only the inputs of the quantized nodes, not their outputs\n"
    "  --threads N       threads of the calibration session (0 = every core, the default)\n";

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// "%XX" back to the byte it stands for; the rest as it is.
std::string decode_name(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit((unsigned char)s[i + 1]) && std::isxdigit((unsigned char)s[i + 2])) {
      out.push_back(char(std::strtol(s.substr(i + 1, 2).c_str(), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::vector<std::filesystem::path> sorted_entries(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> v;
  for (const auto& e : std::filesystem::directory_iterator(dir)) v.push_back(e.path());
  std::sort(v.begin(), v.end());
  return v;
}

om::quant::CalibrationSet read_batches(const std::string& dir, const om::graph::Graph& g) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw om::Error(om::ErrorKind::Io, "--calibration '" + dir + "' is not a directory; give a folder of .npy batches (onemodel quantize --help)");
  std::vector<std::string> inputs;
  for (const auto& v : g.inputs)
    if (!g.find_initializer(v.name)) inputs.push_back(v.name);
  om::quant::CalibrationSet set;
  for (const fs::path& p : sorted_entries(dir)) {
    if (fs::is_directory(p)) {
      om::quant::CalibrationBatch batch;
      for (const fs::path& f : sorted_entries(p))
        if (f.extension() == ".npy") batch.emplace_back(decode_name(f.stem().string()), om::load_npy(f.string()));
      if (batch.empty()) throw om::Error(om::ErrorKind::InvalidArgument, "calibration batch folder '" + p.string() + "' holds no .npy file");
      set.push_back(std::move(batch));
    } else if (p.extension() == ".npy") {
      if (inputs.size() != 1)
        throw om::Error(om::ErrorKind::InvalidArgument,
                        "'" + p.string() + "': a batch given as one file needs a model with one input, this one has " +
                            std::to_string(inputs.size()) + "; write DIR/<batch>/<input>.npy instead");
      set.push_back({{inputs[0], om::load_npy(p.string())}});
    }
  }
  if (set.empty())
    throw om::Error(om::ErrorKind::InvalidArgument, "--calibration '" + dir + "' holds no batches: give DIR/<batch>/<input>.npy "
                                                    "(or DIR/<batch>.npy for a one-input model)");
  return set;
}

}  // namespace

int cmd_quantize(int argc, char** argv) {
  Args a = parse(argc, argv, {"calibration", "percentile", "keep", "keep-op", "threads"},
                 {"help", "per-tensor", "s8", "inputs-only"}, "quantize");
  if (a.has("help")) return std::fputs(kHelp, stdout), 0;
  if (a.positional.size() != 2) throw UsageError{"expected MODEL and OUT files"};
  if (!a.has("calibration")) throw UsageError{"--calibration DIR is required (a folder of .npy batches)"};
  const std::string& in = a.positional[0];
  const std::string& out = a.positional[1];
  if (!ends_with(out, ".om") && !ends_with(out, ".onnx"))
    throw UsageError{"OUT '" + out + "' must end in .om (library format) or .onnx"};

  om::quant::QuantOptions o;
  o.per_channel = !a.has("per-tensor");
  o.activation_dtype = a.has("s8") ? om::DType::i8 : om::DType::u8;
  o.quantize_outputs = !a.has("inputs-only");
  if (a.has("percentile")) {
    const std::string text = a.get("percentile");
    char* end = nullptr;
    o.percentile = std::strtod(text.c_str(), &end);
    if (text.empty() || *end) throw UsageError{"--percentile takes a number in (50, 100], e.g. 99.99; got '" + text + "'"};
    o.range_method = om::quant::RangeMethod::Percentile;
  }
  o.keep_nodes = a.all("keep");
  o.keep_op_types = a.all("keep-op");
  o.threads = parse_threads(a.get("threads", "0"), "quantize");

  const om::graph::Graph g = load_graph(in);
  const om::quant::CalibrationSet batches = read_batches(a.get("calibration"), g);
  const om::graph::Graph q = om::quant::quantize_static(g, batches, o);
  if (ends_with(out, ".om")) om::Model(q).save(out);
  else om::onnx::write(q, out);

  std::map<std::string, int> kinds;
  size_t weights = 0, pairs = 0;
  for (const auto& n : q.nodes) {
    if (n.op_type == "QuantizeLinear") ++pairs;
    if (n.op_type != "DequantizeLinear") continue;
    const om::graph::TensorData* t = q.find_initializer(n.inputs[0]);
    weights += t != nullptr;  // a weight: its DequantizeLinear reads an int8 initializer
  }
  for (const auto& n : q.nodes) {
    if (n.op_type != "Conv" && n.op_type != "Gemm" && n.op_type != "MatMul") continue;
    bool fed = false;  // a quantized node reads some DequantizeLinear output
    for (const auto& m : q.nodes)
      if (m.op_type == "DequantizeLinear" && std::find(n.inputs.begin(), n.inputs.end(), m.outputs[0]) != n.inputs.end()) fed = true;
    kinds[std::string(fed ? "quantized " : "float ") + n.op_type] += 1;
  }
  std::string summary;
  for (const auto& [k, c] : kinds) summary += (summary.empty() ? "" : ", ") + std::to_string(c) + " " + k;
  std::printf("calibrated on %zu batches; %s\n", batches.size(), summary.empty() ? "no Conv, Gemm or MatMul node" : summary.c_str());
  std::printf("%zu int8 weights, %zu activation Q/DQ pairs (%s, %s)\n", weights, pairs, o.activation_dtype == om::DType::i8 ? "s8" : "u8",
              o.per_channel ? "per-channel weights" : "per-tensor weights");
  std::printf("wrote %s (%zu nodes, %zu initializers)\n", out.c_str(), q.nodes.size(), q.initializers.size());
  return 0;
}

}  // namespace cli
