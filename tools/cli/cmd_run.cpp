// onemodel run MODEL --input x=in.npy ...: runs a model once and writes its outputs.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <map>

#include "cli.h"

namespace cli {
namespace {
const char* kHelp =
    "usage: onemodel run MODEL --input NAME=FILE.npy [--input ...] [--mode fast|exact] [--threads N]\n"
    "                    [--max-arena BYTES] [--max-folded BYTES] [--out DIR]\n"
    "\n"
    "Runs MODEL once in a Session (Fast by default; --mode exact for the bit-exact kernels,\n"
    "docs/exactness.md). Each input comes from a .npy file (a model with one input also takes\n"
    "--input FILE.npy). Every output is written to DIR/<output name>.npy (DIR defaults to the\n"
    "current directory; in the name every byte outside [A-Za-z0-9._-] becomes %XX, so 'a/b'\n"
    "is written as a%2Fb.npy) and listed with the file and its FNV-1a 64-bit hash; the last\n"
    "line hashes all outputs in order, so Exact runs can be compared across machines.\n"
    "--threads N sets SessionOptions::threads (0 = every core, the default); no thread count\n"
    "changes a bit. --max-arena and --max-folded raise (or lower) SessionOptions::max_arena_bytes\n"
    "(default 256M) and max_folded_bytes (default 64M); BYTES takes a K, M or G suffix.\n";
}  // namespace

int cmd_run(int argc, char** argv) {
  Args a = parse(argc, argv, with_session_options({"input", "out"}), {"help"}, "run");
  if (a.has("help")) return std::fputs(kHelp, stdout), 0;
  if (a.positional.size() != 1) throw UsageError{"expected one MODEL (.om or .onnx)"};
  const om::SessionOptions options = session_options(a, "run");
  om::Session session(load_graph(a.positional[0]), options);
  const std::vector<std::string> names = session.input_names();
  std::string listed;  // "image f32[batch,3,h,w], mask bool[batch]" for messages
  for (const om::ValueInfo& v : session.inputs())
    listed += (listed.empty() ? "" : ", ") + v.name + " " + om::dtype_name(v.dtype) + dims_str(v);

  std::map<std::string, om::graph::TensorData> given;
  for (const std::string& spec : a.all("input")) {
    const size_t eq = spec.find('=');
    std::string name = eq == std::string::npos ? "" : spec.substr(0, eq);
    const std::string file = eq == std::string::npos ? spec : spec.substr(eq + 1);
    if (name.empty()) {
      if (names.size() != 1)
        throw UsageError{"--input " + spec + ": the model has " + std::to_string(names.size()) + " inputs; write --input NAME=FILE.npy"};
      name = names[0];
    }
    if (std::find(names.begin(), names.end(), name) == names.end())
      throw UsageError{"--input " + spec + ": the model has no input '" + name + "'; its inputs are: " + listed + " (--input NAME=FILE.npy)"};
    given[name] = om::npy::read(file);
  }
  std::vector<om::TensorView> inputs;
  for (const std::string& n : names) {
    auto it = given.find(n);
    if (it == given.end()) throw UsageError{"input '" + n + "' was not given; the model's inputs are: " + listed + " (--input NAME=FILE.npy)"};
    om::TensorView v;
    v.name = it->first.c_str();
    v.dtype = it->second.dtype;
    v.dims = it->second.dims.data();
    v.rank = it->second.dims.size();
    v.data = const_cast<uint8_t*>(it->second.bytes);
    inputs.push_back(v);
  }

  std::vector<om::TensorView> outputs(session.output_names().size());
  session.run(inputs.data(), inputs.size(), outputs.data(), outputs.size());

  const std::filesystem::path dir = a.get("out", ".");
  std::filesystem::create_directories(dir);
  uint64_t all = kFnvOffset;
  for (const om::TensorView& o : outputs) {
    const size_t nbytes = size_t(o.numel()) * om::dtype_size(o.dtype);
    om::graph::TensorData td = om::graph::TensorData::copy_of(o.name, o.dtype, std::vector<int64_t>(o.dims, o.dims + o.rank), o.data, nbytes);
    const std::string path = (dir / (om::npy::file_name_of(o.name) + ".npy")).string();
    om::npy::write(td, path);
    const uint64_t h = fnv1a(kFnvOffset, o.data, nbytes);
    all = fnv1a(all, o.data, nbytes);
    om::graph::ValueInfo vi;
    for (size_t k = 0; k < o.rank; ++k) vi.shape.push_back(om::graph::Dim::fixed(o.dims[k]));
    std::printf("output %s %s%s -> %s fnv1a=%016" PRIx64 "\n", o.name, om::dtype_name(o.dtype), dims_str(vi).c_str(), path.c_str(), h);
  }
  std::printf("hash %s fnv1a=%016" PRIx64 "\n", options.mode == om::ArithmeticMode::Exact ? "exact" : "fast", all);
  return 0;
}

}  // namespace cli
