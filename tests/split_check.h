// The split test's one comparison: a session run again with every kernel's work cut into
// consecutive sub-ranges (graph::set_work_split_for_testing) must write exactly the bits the
// whole-range run wrote (docs/adding-an-operator.md, "Work units"). Used by the runtime tests'
// run helper and the ONNX node tests, so every registered kernel they reach is split.
#pragma once
#include <cstring>
#include <string>
#include <vector>

#include "onemodel/graph/op_registry.h"
#include "onemodel/runtime/session.h"

namespace split_check {

// "" when runs split in 2 and in 3 give `outs`' bytes again (outs: the whole-range run's
// views); else which output differed under which split.
inline std::string mismatch(om::Session& s, const om::TensorView* in, size_t num_in, const om::TensorView* outs, size_t num_out) {
  std::vector<std::vector<unsigned char>> want(num_out);
  for (size_t i = 0; i < num_out; ++i) {
    const size_t bytes = size_t(outs[i].numel()) * om::dtype_size(outs[i].dtype);
    if (bytes) want[i].assign(static_cast<const unsigned char*>(outs[i].data), static_cast<const unsigned char*>(outs[i].data) + bytes);
  }
  std::string why;
  for (int parts : {2, 3}) {
    std::vector<om::TensorView> again(num_out);
    om::graph::set_work_split_for_testing(parts);
    const om::Status st = s.try_run(in, num_in, again.data(), again.size());
    om::graph::set_work_split_for_testing(1);
    if (!st.is_ok()) return "split in " + std::to_string(parts) + ": run failed: " + st.message();
    for (size_t i = 0; i < num_out && why.empty(); ++i) {
      const size_t bytes = size_t(again[i].numel()) * om::dtype_size(again[i].dtype);
      if (bytes != want[i].size() || (bytes && std::memcmp(again[i].data, want[i].data(), bytes) != 0))
        why = "split in " + std::to_string(parts) + ": output " + std::to_string(i) + " differs from the whole-range run";
    }
    if (!why.empty()) return why;
  }
  return "";
}

}  // namespace split_check
