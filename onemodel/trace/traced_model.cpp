// A finished trace's graph, verified once by Tracer::finish; saving it does not check it again.
#include "onemodel/io/format_v1.h"
#include "onemodel/io/onnx.h"
#include "onemodel/trace/traced_model.h"

namespace om {

const graph::Graph& TracedModel::graph() const {
  if (!graph_) raise(Status::error(ErrorKind::InvalidArgument, "om::TracedModel: empty model (default-constructed); obtain one from Tracer::finish"));
  return *graph_;
}

std::vector<uint8_t> TracedModel::to_onnx() const { return unwrap(onnx::write_bytes(graph(), graph::GraphCheck::AlreadyVerified)); }

void TracedModel::save_onnx(const std::string& path) const { check(onnx::write_file(graph(), path, graph::GraphCheck::AlreadyVerified)); }

void TracedModel::save(const std::string& path) const { check(format_v1::write_file(graph(), path, graph::GraphCheck::AlreadyVerified)); }

}  // namespace om
