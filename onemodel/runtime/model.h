// om::Model: a graph loaded from a library-format v1 file (docs/format.md), for inspection or
// for creating sessions. The initializers point into the mapped file.
#pragma once
#include <string>

#include "onemodel/core/status.h"
#include "onemodel/graph/ir.h"

namespace om {

class Model {
 public:
  Model() = default;
  explicit Model(graph::Graph g) : graph_(std::move(g)) {}

  static Model load(const std::string& path);
  static Status try_load(const std::string& path, Model* out);
  void save(const std::string& path) const;  // library format v1

  const graph::Graph& graph() const { return graph_; }

 private:
  graph::Graph graph_;
};

}  // namespace om
