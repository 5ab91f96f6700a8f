// Sessions from ONNX: the reader builds the graph IR, the Session validates and plans it.
#include "onemodel/io/onnx.h"
#include "onemodel/runtime/session.h"

namespace om {

Status Session::try_from_onnx(const uint8_t* data, size_t size, SessionOptions options, Session* out) {
  OM_ASSIGN_OR_RETURN(graph::Graph g, onnx::read_bytes(data, size));
  return create(g, options, out, graph::GraphCheck::AlreadyVerified);  // the reader verified it
}

Session Session::from_onnx(const std::vector<uint8_t>& bytes, SessionOptions options) {
  Session s;
  check(try_from_onnx(bytes.data(), bytes.size(), options, &s));
  return s;
}

Session Session::from_onnx_file(const std::string& path, SessionOptions options) {
  Session s;
  graph::Graph g = unwrap(onnx::read_file(path));
  check(create(g, options, &s, graph::GraphCheck::AlreadyVerified));
  return s;
}

}  // namespace om
