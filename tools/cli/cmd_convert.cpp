// onemodel convert IN OUT: ONNX <-> the library format, by the files' extensions.
#include <cstdio>

#include "cli.h"

namespace cli {
namespace {
const char* kHelp =
    "usage: onemodel convert IN OUT\n"
    "\n"
    "Converts by the extensions: IN.onnx -> OUT.om (library format v1, docs/format.md) or\n"
    "IN.om -> OUT.onnx (opset 20, IR 9). The graph is written as read: no passes run, so Exact\n"
    "results are the same from either file.\n";

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
}  // namespace

int cmd_convert(int argc, char** argv) {
  Args a = parse(argc, argv, {}, {"help"}, "convert");
  if (a.has("help")) return std::fputs(kHelp, stdout), 0;
  if (a.positional.size() != 2) throw UsageError{"expected IN and OUT files"};
  const std::string& in = a.positional[0];
  const std::string& out = a.positional[1];
  if (!ends_with(out, ".om") && !ends_with(out, ".onnx"))
    throw UsageError{"OUT '" + out + "' must end in .om (library format) or .onnx"};
  const om::graph::Graph g = load_graph(in);
  if (ends_with(out, ".om")) om::Model(g).save(out);
  else om::onnx::write(g, out);
  std::printf("wrote %s (%zu nodes, %zu initializers)\n", out.c_str(), g.nodes.size(), g.initializers.size());
  return 0;
}

}  // namespace cli
