// Shared pieces of the `onemodel` command-line tool: argument parsing, loading a model by its
// extension, formatting shapes. The tool uses the public API only (<onemodel/onemodel.h>).
#pragma once
#include <onemodel/onemodel.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cli {

// A usage mistake: printed with the subcommand's help hint, exit code 2.
struct UsageError {
  std::string message;
};

// Options of one subcommand: positional arguments and --flags (with or without a value).
struct Args {
  std::vector<std::string> positional;
  std::vector<std::pair<std::string, std::string>> options;  // (name, value) in order; value "" for flags
  bool has(const std::string& name) const;
  std::string get(const std::string& name, const std::string& fallback = "") const;
  std::vector<std::string> all(const std::string& name) const;
};
// `with_value` lists the options that take a value (--input x=a.npy or --input=x=a.npy).
Args parse(int argc, char** argv, const std::vector<std::string>& with_value, const std::vector<std::string>& flags,
           const std::string& command);

// A graph from a library-format (.om) or ONNX (.onnx) file; another extension is an error
// naming the two that work.
om::graph::Graph load_graph(const std::string& path, std::string* format = nullptr);
om::ArithmeticMode parse_mode(const std::string& text, const std::string& command);
// --threads N: SessionOptions::threads (0 = every core, the default).
int parse_threads(const std::string& text, const std::string& command);

// The SessionOptions flags run, bench and info share (each --help says them): --mode fast|exact,
// --threads N, --max-arena BYTES, --max-folded BYTES. BYTES is a count with an optional K, M or
// G suffix (powers of 1024).
extern const std::vector<std::string> kSessionOptionFlags;
om::SessionOptions session_options(const Args& a, const std::string& command);
uint64_t parse_bytes(const std::string& text, const std::string& option, const std::string& command);
// The options of a subcommand plus the session ones, for parse().
std::vector<std::string> with_session_options(std::vector<std::string> own);
// Every `--<option> NAME=D0,D1,...` given (bench's --shape, info's --arena): input name -> its
// full shape. A name the model's inputs (`inputs`) do not have is a usage error.
using ShapeMap = std::map<std::string, std::vector<int64_t>>;
ShapeMap parse_shapes(const Args& a, const std::string& option, const std::vector<std::string>& inputs);
std::string dims_str(const om::graph::ValueInfo& v);  // [batch,4], ? for unknown axes
std::string dims_str(const om::ValueInfo& v);         // the same for a Session's inputs() / outputs()
std::string human_bytes(uint64_t bytes);
uint64_t fnv1a(uint64_t h, const void* data, size_t n);
// Heap allocations of the whole process so far (alloc_count.cpp replaces operator new).
uint64_t allocation_count();
constexpr uint64_t kFnvOffset = 1469598103934665603ULL;

int cmd_info(int argc, char** argv);
int cmd_run(int argc, char** argv);
int cmd_convert(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_dot(int argc, char** argv);
int cmd_quantize(int argc, char** argv);
int cmd_ops(int argc, char** argv);

}  // namespace cli
