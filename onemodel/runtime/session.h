// om::Session: runs a graph (traced, imported from ONNX, or loaded from the library format)
// with per-shape plans and a static activation arena.
//
// Creation validates the graph (every operator known — all unknown ones are listed; in Exact
// mode every operator has an exact kernel — all without one are listed) and runs the passes the
// mode allows (docs/graph-passes.md). The first run with a new input-shape signature plans
// (shape inference, plan-time constant evaluation, kernel choice, memory plan); the plan is
// cached, and every later run with that signature performs no heap allocation.
//
// Threads: run(), prepare() and the stats calls may be called from several threads on one
// Session. Runs execute in parallel, up to SessionOptions::max_concurrent_runs, each in an
// execution context of its own (arena and per-run arrays) sharing the graph, the plans and the
// packed weights; within a run, kernels split over SessionOptions::threads (docs/threads.md).
// An output returned as a view into the session (capacity == 0) is valid only until the next run
// by any thread: with several threads, pass output buffers (capacity > 0) or use the Tensor
// overload, which copy before the run's context is released. docs/memory.md.
//
// Limits (SessionOptions): planned activation bytes, bytes of constants folded at creation and
// when planning, and cached plans are bounded, with defaults a device can live with; a model
// that needs more fails with an error naming the option to raise.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include "onemodel/kernels/sync.h"
#include <string>
#include <utility>
#include <vector>

#include "onemodel/core/dtype.h"
#include "onemodel/core/mode.h"
#include "onemodel/core/status.h"
#include "onemodel/graph/ir.h"
#include "onemodel/kernels/thread_pool.h"

namespace om {

class TracedModel;  // onemodel/trace/traced_model.h
using ThreadPool = kernels::ThreadPool;
class Tensor;       // onemodel/core/tensor.h
class Value;        // onemodel/runtime/value.h
namespace runtime {
class SequenceRunner;  // runtime/sequence_lowering.cpp
}

struct SessionOptions {
  ArithmeticMode mode = ArithmeticMode::Fast;
  bool optimize = true;        // run the graph passes the mode allows (compute_f16_in_f32, which defines how f16 graphs run, runs either way)
  // Plans kept for different input-shape signatures (>= 1). Beyond it the least recently used
  // plan is dropped (its output views become invalid).
  size_t max_cached_plans = 8;
  // Pack constant GEMM weights once (at the first plan) instead of on every run; same bits.
  bool prepack_weights = true;
  // The activation arena one plan may need (bytes); planning above it fails naming this option.
  size_t max_arena_bytes = size_t(256) << 20;
  // Bytes of constants computed at creation (fold_constants) and per plan (plan-time folding),
  // each counted separately; above it creation/planning fails naming this option.
  size_t max_folded_bytes = size_t(64) << 20;
  // Iterations the Loops and Scans of one run() may take in all (nested ones counted each time):
  // loops that would run on past it fail the run naming this option, so a hostile model cannot
  // hang run() (docs/onnx.md, "Control flow").
  int64_t max_loop_iterations = 1000000;
  // Session::load only: map the file and read the weights in place (true), or copy the file
  // into memory once (false). A mapped file must not be truncated or rewritten while the
  // Session (or any graph loaded from it) is alive: truncation is a SIGBUS, a rewrite changes
  // the weights. docs/format.md.
  bool map_weights = true;
  // Time every kernel step of run() (two clock reads per step, nothing allocated while running);
  // Session::step_profile() reports the times. Off by default.
  bool profile = false;
  // Threads one run() may use (docs/threads.md): 0 = every core this process may run on (the
  // default, as ONNX Runtime's intra-op threads), 1 = none beside the caller's, n = n in all.
  // The thread count never changes a bit of any output.
  int threads = 0;
  // With k threads (k >= 2), a run over a batch of at least k items (axis 0 of every input) may
  // run as k runs over parts of it, each on its own thread and in its own arena, when every node
  // computes each item from the same items of its inputs (convolutions, pools, elementwise maps,
  // products over rows...; docs/threads.md, "Batches split between threads"). The same bits;
  // the parts' plans and arenas are made on the first run of a shape and kept with its plan.
  // false keeps every run in one arena, with the kernels split inside.
  bool split_batch = true;
  // Runs of this Session executing at once, from several threads (>= 1). The first run of a plan
  // uses the plan's arena; each further concurrent one gets an arena of its own, allocated when
  // first needed and kept with the plan. Callers beyond the bound wait for a run to finish.
  size_t max_concurrent_runs = 4;
  // A pool to share with other sessions (and the eager layer); when set, `threads` is ignored.
  // A shared pool runs one caller's kernel at a time; another caller meanwhile runs its kernel
  // on its own thread.
  std::shared_ptr<ThreadPool> thread_pool = nullptr;
  // A caller-owned activation arena (64-byte aligned; the caller keeps it alive for the
  // Session's life): every plan's activations and scratch are placed in it instead of a buffer
  // of the session's own. Plans of different shapes share it, so a caller arena means one run
  // at a time (max_concurrent_runs is taken as 1; further callers wait). A plan needing more
  // than arena_bytes fails naming the bytes needed and given; Session::arena_bytes_for tells
  // them beforehand. Prepacked weights are not placed in it (prepack_weights = false keeps the
  // heap out of planning entirely). docs/memory.md.
  void* arena = nullptr;
  size_t arena_bytes = 0;
};

// A tensor handed across the run() boundary without copies or allocation.
//  inputs:  name (matched against input_names(); nullptr = positional), dtype, dims/rank and
//           data (contiguous, row-major) are read.
//  outputs: when data is non-null and capacity > 0, the result is copied into it (capacity in
//           bytes must suffice); otherwise data is set to the session's own buffer, valid until
//           the next run() or the Session's destruction. name, dtype, dims and rank are always
//           set (dims point into the session, same validity).
struct TensorView {
  const char* name = nullptr;
  DType dtype = DType::f32;
  const int64_t* dims = nullptr;
  size_t rank = 0;
  void* data = nullptr;
  size_t capacity = 0;

  // For dims Session::run accepted (each >= 0, at most 2^48 elements: no overflow).
  int64_t numel() const {
    int64_t n = 1;
    for (size_t i = 0; i < rank; ++i) n *= dims[i];
    return n;
  }
};

// A graph input or output of any kind (graph::ValueKind: docs/onnx.md, "Sequences and
// optionals"), across Session::try_run_values: a tensor is one element; a sequence its elements
// in order (count may be 0); an optional either none (present false, no elements) or its tensor
// (one element) or sequence. name as in TensorView (nullptr = positional, for inputs).
struct ValueView {
  const char* name = nullptr;
  graph::ValueKind kind = graph::ValueKind::Tensor;
  bool present = true;
  const TensorView* elements = nullptr;
  size_t count = 0;
};
// Receives a run's outputs, one ValueView per graph output: their element views point into the
// session and are valid only during the call.
using ValueSink = void (*)(void* ctx, const ValueView* outputs, size_t num_outputs);

struct PlanStats {
  size_t arena_bytes = 0;        // the activation arena of the plan
  size_t lower_bound_bytes = 0;  // the largest sum of live activation bytes at one step
  size_t steps = 0;              // kernels run per call
  size_t folded_nodes = 0;       // nodes evaluated once when planning
  size_t aliased_nodes = 0;      // reshape-type nodes that share their input's bytes
  size_t packed_weights = 0;     // steps reading a constant GEMM operand packed once
  size_t plan_number = 0;        // 1 for the session's first plan, 2 for the next built...: a
                                 // signature planned again after eviction gets a new number
  // k > 1 when its runs split the batch into k parts, one per thread (SessionOptions::split_batch),
  // 1 when they run whole, 0 before its first run decided; the parts' arenas, one per part, add
  // part_arena_bytes to arena_bytes.
  size_t batch_parts = 0;
  size_t part_arena_bytes = 0;
};

// One kernel step of a plan and the time spent in it (SessionOptions::profile).
struct StepProfile {
  std::string node;  // the node's name (its op type when unnamed)
  std::string op;    // the op type after the passes (e.g. FusedConv)
  double total_us = 0;  // over `runs` runs
  uint64_t runs = 0;
};

struct PassReport {
  std::string name;
  bool exact_safe = false;
  size_t changes = 0;
};

// A graph input or output as a Session describes it (ONNX Runtime's GetInputTypeInfo): dims -1
// where the extent is symbolic or unknown, dim_names the symbol ("" where static or unnamed).
// has_shape false: the model does not say the rank (dims empty).
struct ValueInfo {
  std::string name;
  DType dtype = DType::f32;             // a sequence's or optional's tensors' dtype
  graph::ValueKind kind = graph::ValueKind::Tensor;
  bool has_shape = true;
  std::vector<int64_t> dims;
  std::vector<std::string> dim_names;
};

class Session {
 public:
  Session();  // empty; run() fails until a graph is assigned
  explicit Session(const graph::Graph& graph, SessionOptions options = {});
  // A traced model's graph (defined with the tracer, in trace/traced_model.cpp).
  explicit Session(const TracedModel& model, SessionOptions options = {});
  ~Session();
  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;

  // Status-returning creation for builds without exceptions.
  static Status create(const graph::Graph& graph, SessionOptions options, Session* out);
  // The same for a graph the caller has already verified (GraphCheck::AlreadyVerified skips it).
  static Status create(const graph::Graph& graph, SessionOptions options, Session* out, graph::GraphCheck check);
  // ONNX bytes or file (onemodel/io/onnx.h reads and checks them; session_onnx.cpp).
  static Session from_onnx(const std::vector<uint8_t>& bytes, SessionOptions options = {});
  static Session from_onnx_file(const std::string& path, SessionOptions options = {});
  static Status try_from_onnx(const uint8_t* data, size_t size, SessionOptions options, Session* out);
  // Library format v1 (docs/format.md).
  static Session load(const std::string& path, SessionOptions options = {});
  static Status try_load(const std::string& path, SessionOptions options, Session* out);
  // A library-format model already in memory (an array in the program, a mapping the caller
  // made), used in place: the weights are read from `data`, not copied; only the session's own
  // tables are allocated. The caller keeps the bytes alive and unchanged for the Session's life.
  // `data` must be 64-byte aligned (format_v1::kTensorAlignment; e.g. alignas(64) on the array):
  // a misplaced tensor is refused naming it. Checksums and bounds are checked as Session::load
  // checks a file.
  static Session from_bytes(const void* data, size_t size, SessionOptions options = {});
  static Status try_from_bytes(const void* data, size_t size, SessionOptions options, Session* out);

  std::vector<std::string> input_names() const;  // the inputs a run must give
  // Graph inputs backed by an initializer: a run may give them by name (overriding the
  // initializer for that run, as ONNX Runtime does) or leave them out.
  std::vector<std::string> overridable_input_names() const;
  std::vector<std::string> output_names() const;
  // Names, dtypes and shapes of the inputs a run must give (input_names() order) and of the
  // outputs (output_names() order), as the model declares them.
  std::vector<ValueInfo> inputs() const;
  std::vector<ValueInfo> outputs() const;
  const graph::Graph& graph() const;  // after the passes
  const std::vector<PassReport>& pass_reports() const;
  const SessionOptions& options() const;

  // The zero-allocation path (once the signature is planned). Outputs are positional.
  Status try_run(const TensorView* inputs, size_t num_inputs, TensorView* outputs, size_t num_outputs);
  void run(const TensorView* inputs, size_t num_inputs, TensorView* outputs, size_t num_outputs);
  // Convenience: inputs by name, outputs as new tensors (in output_names() order). Allocates the
  // result tensors; use the TensorView overload for allocation-free runs.
  std::vector<Tensor> run(const std::vector<std::pair<std::string, Tensor>>& inputs);
  // Any graph, its inputs and outputs of any kind: sequences and optionals too (docs/onnx.md,
  // "Sequences and optionals"). A graph with sequences or optionals runs through a plan per input
  // structure (sequence lengths, which optionals are present, the integer/bool inputs the
  // structure depends on), each cached, and per shape signature within it as usual; these runs
  // allocate their small per-run arrays. `sink` sees the outputs during the call.
  Status try_run_values(const ValueView* inputs, size_t num_inputs, ValueSink sink, void* sink_ctx);
  // The same with om::Value in and out (copies; needs the eager layer).
  std::vector<Value> run_values(const std::vector<std::pair<std::string, Value>>& inputs);
  // Plans for these inputs' shapes now (data is not read), so the first run allocates nothing.
  Status try_prepare(const TensorView* inputs, size_t num_inputs);
  // The activation arena a plan for these inputs' shapes needs (bytes; data is not read), to
  // size SessionOptions::arena. Plans them as try_prepare does.
  Status try_arena_bytes_for(const TensorView* inputs, size_t num_inputs, size_t* bytes);
  // Stats of the plan used by the last run or prepare.
  PlanStats last_plan_stats() const;
  // Per step of the plan used by the last run, in run order: the time spent in it over the runs of
  // that plan so far. Empty unless SessionOptions::profile is set.
  std::vector<StepProfile> step_profile() const;
  size_t cached_plan_count() const;

  struct Impl;

 private:
  // try_run's body; `sink` (when given) sees the outputs before the run's arena is free for
  // another run (the Tensor overload copies them there).
  using OutputSink = void (*)(void* ctx, const TensorView* outputs, size_t num_outputs);
  Status run_with(const TensorView* inputs, size_t num_inputs, TensorView* outputs, size_t num_outputs, OutputSink sink,
                  void* sink_ctx);
  std::unique_ptr<Impl> impl_;
  friend class runtime::SequenceRunner;  // runs its lowered graphs' sessions through run_with
};

}  // namespace om
