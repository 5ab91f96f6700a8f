// The result of a trace: a verified graph that saves as ONNX or in the library format and runs in
// a Session (runtime/session.h takes it). Kept apart from the tracer so the runtime can accept
// a TracedModel without depending on the tracer.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "onemodel/graph/ir.h"

namespace om {

// The graph of a finished trace. Copyable; shares the graph.
class TracedModel {
 public:
  TracedModel() = default;
  explicit TracedModel(graph::Graph g) : graph_(std::make_shared<graph::Graph>(std::move(g))) {}
  const graph::Graph& graph() const;
  std::vector<uint8_t> to_onnx() const;
  void save_onnx(const std::string& path) const;
  void save(const std::string& path) const;  // library format v1

 private:
  std::shared_ptr<const graph::Graph> graph_;
};

}  // namespace om
