// om::Session: runs a graph (traced, imported from ONNX, or loaded from the library format)
// with per-shape plans and a static activation arena.
//
// Creation validates the graph (every operator known — all unknown ones are listed; in Exact
// mode every operator has an exact kernel — all without one are listed) and runs the passes the
// mode allows (docs/graph-passes.md). The first run with a new input-shape signature plans
// (shape inference, plan-time constant evaluation, kernel choice, memory plan); the plan is
// cached, and every later run with that signature performs no heap allocation.
//
// A Session is not safe to run from two threads at once (runs share the plan's arena); use one
// Session per thread.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "onemodel/core/dtype.h"
#include "onemodel/core/mode.h"
#include "onemodel/core/status.h"
#include "onemodel/graph/ir.h"

namespace om {

class TracedModel;  // onemodel/trace/traced_model.h
class Tensor;       // onemodel/core/tensor.h

struct SessionOptions {
  ArithmeticMode mode = ArithmeticMode::Fast;
  bool optimize = true;        // run the graph passes the mode allows
  size_t max_cached_plans = 8; // the oldest plan is dropped beyond this
  // Pack constant GEMM weights once (at the first plan) instead of on every run; same bits.
  bool prepack_weights = true;
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

  int64_t numel() const {
    int64_t n = 1;
    for (size_t i = 0; i < rank; ++i) n *= dims[i];
    return n;
  }
};

struct PlanStats {
  size_t arena_bytes = 0;        // the activation arena of the plan
  size_t lower_bound_bytes = 0;  // the largest sum of live activation bytes at one step
  size_t steps = 0;              // kernels run per call
  size_t folded_nodes = 0;       // nodes evaluated once when planning
  size_t aliased_nodes = 0;      // reshape-type nodes that share their input's bytes
  size_t packed_weights = 0;     // steps reading a constant GEMM operand packed once
};

struct PassReport {
  std::string name;
  bool exact_safe = false;
  size_t changes = 0;
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

  std::vector<std::string> input_names() const;
  std::vector<std::string> output_names() const;
  const graph::Graph& graph() const;  // after the passes
  const std::vector<PassReport>& pass_reports() const;
  const SessionOptions& options() const;

  // The zero-allocation path (once the signature is planned). Outputs are positional.
  Status try_run(const TensorView* inputs, size_t num_inputs, TensorView* outputs, size_t num_outputs);
  void run(const TensorView* inputs, size_t num_inputs, TensorView* outputs, size_t num_outputs);
  // Convenience: inputs by name, outputs as new tensors (in output_names() order). Allocates the
  // result tensors; use the TensorView overload for allocation-free runs.
  std::vector<Tensor> run(const std::vector<std::pair<std::string, Tensor>>& inputs);
  // Plans for these inputs' shapes now (data is not read), so the first run allocates nothing.
  Status try_prepare(const TensorView* inputs, size_t num_inputs);
  // Stats of the plan used by the last run or prepare.
  PlanStats last_plan_stats() const;
  size_t cached_plan_count() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace om
