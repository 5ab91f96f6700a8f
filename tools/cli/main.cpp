// onemodel: inspect, run, convert, benchmark, draw and quantize models from the command line.
//   onemodel <info|run|convert|bench|dot|quantize|ops> [options]      (onemodel <command> --help)
#include <cstdio>
#include <cstring>
#include <string>

#include "cli.h"

namespace {

const char* kUsage =
    "usage: onemodel <command> [options]\n"
    "\n"
    "commands:\n"
    "  info MODEL                      inputs and outputs, operators, parameters, passes\n"
    "  run MODEL --input x=in.npy      run the model; outputs as .npy files and a hash line\n"
    "  convert IN OUT                  .onnx -> .om (library format) or .om -> .onnx\n"
    "  bench MODEL [--shape x=1,4]     latency percentiles, arena bytes, allocations per run\n"
    "  dot MODEL [--after-passes]      Graphviz DOT of the graph (--svg renders it with dot)\n"
    "  quantize MODEL --calibration DIR OUT\n"
    "                                  int8 weights and Q/DQ activations from calibration batches\n"
    "  ops MODEL... > model_ops.h      the operators to register (selective registration)\n"
    "\n"
    "MODEL is a library-format file (.om) or an ONNX file (.onnx).\n"
    "`onemodel <command> --help` describes a command's options.\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  int (*fn)(int, char**) = nullptr;
  if (command == "info") fn = cli::cmd_info;
  else if (command == "run") fn = cli::cmd_run;
  else if (command == "convert") fn = cli::cmd_convert;
  else if (command == "bench") fn = cli::cmd_bench;
  else if (command == "dot") fn = cli::cmd_dot;
  else if (command == "quantize") fn = cli::cmd_quantize;
  else if (command == "ops") fn = cli::cmd_ops;
  if (!fn) {
    std::fprintf(stderr, "onemodel: unknown command '%s'\n\n%s", command.c_str(), kUsage);
    return 2;
  }
  try {
    return fn(argc - 2, argv + 2);
  } catch (const cli::UsageError& e) {
    std::fprintf(stderr, "onemodel %s: %s\n(see `onemodel %s --help`)\n", command.c_str(), e.message.c_str(), command.c_str());
    return 2;
  } catch (const om::Error& e) {
    std::fprintf(stderr, "onemodel %s: error (%s): %s\n", command.c_str(), om::to_string(e.kind()), e.what());
    // The library names the SessionOptions field; here the option that sets it is the fix.
    const std::string m = e.what();
    if (m.find("max_arena_bytes") != std::string::npos) std::fprintf(stderr, "(the tool sets it with --max-arena BYTES, e.g. --max-arena 512M)\n");
    if (m.find("max_folded_bytes") != std::string::npos) std::fprintf(stderr, "(the tool sets it with --max-folded BYTES, e.g. --max-folded 256M)\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "onemodel %s: error: %s\n", command.c_str(), e.what());
    return 1;
  }
}
