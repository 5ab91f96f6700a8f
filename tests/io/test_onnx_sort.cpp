// The reader sorts node lists that are out of topological order (an fp16 converter appends its
// Casts at the end), keeps the file's order wherever it is valid, and refuses a cycle naming
// its nodes (onemodel/io/onnx_sort.cpp).
#include <doctest/doctest.h>

#include <string>

#include "io_helpers.h"
#include "onemodel/core/tensor.h"
#include "onemodel/io/onnx.h"
#include "onemodel/runtime/session.h"

using namespace om;
using iotest::Pb;

namespace {

Result<graph::Graph> read_pb(const Pb& p) { return onnx::read_bytes(p.b.data(), p.b.size()); }

Pb named(Pb node, const std::string& name) { return node.str(3, name); }

// Nodes over input x (f32 [2,3]) to output y, in the order given.
Pb graph_of(const std::vector<Pb>& nodes) {
  Pb g;
  for (const Pb& n : nodes) g.msg(1, n);
  g.str(2, "g").msg(11, iotest::value_info("x", 1, {2, 3})).msg(12, iotest::value_info("y", 1, {2, 3}));
  return iotest::model(g);
}

std::vector<std::string> op_order(const graph::Graph& g) {
  std::vector<std::string> v;
  for (const graph::Node& n : g.nodes) v.push_back(n.name);
  return v;
}

Pb cast_attr() { return iotest::attr_int("to", 1); }

}  // namespace

TEST_CASE("onnx reader: a converter's Cast appended at the end is sorted before its reader") {
  // The fp16 converter's shape: node #0 reads 'graph_input_cast_0', which the Cast at the end of
  // the list produces. Unsorted, graph::verify refuses exactly this.
  Pb m = graph_of({named(iotest::node("Relu", {"graph_input_cast_0"}, {"r"}), "relu"),
                   named(iotest::node("Neg", {"r"}, {"graph_output_cast_0"}), "neg"),
                   named(iotest::node("Cast", {"x"}, {"graph_input_cast_0"}, {cast_attr()}), "cast_in"),
                   named(iotest::node("Cast", {"graph_output_cast_0"}, {"y"}, {cast_attr()}), "cast_out")});
  Result<graph::Graph> g = read_pb(m);
  REQUIRE_MESSAGE(g.is_ok(), g.status().message());
  CHECK(op_order(*g) == std::vector<std::string>{"cast_in", "relu", "neg", "cast_out"});

  // The unsorted list as the reader received it is what verify would refuse.
  graph::Graph unsorted = *g;
  std::swap(unsorted.nodes[0], unsorted.nodes[1]);
  std::swap(unsorted.nodes[1], unsorted.nodes[2]);  // relu, neg, cast_in, cast_out
  Status st = graph::verify(unsorted);
  REQUIRE(!st.is_ok());
  CHECK_MESSAGE(st.message().find("node #0 'relu' (Relu) reads 'graph_input_cast_0', which is not defined before it") != std::string::npos,
                st.message());

  Session s = Session::from_onnx(m.b);
  Tensor y = s.run({{"x", om::from_vector<float>({-2, -1, 0, 1, 2, 3}, {2, 3})}})[0];
  CHECK(y.to_vector<float>() == std::vector<float>{0, 0, 0, -1, -2, -3});
}

TEST_CASE("onnx reader: the sort is stable (the file's order wherever it is valid)") {
  // a and b are independent of each other; c needs b, which the file lists after it. The sort
  // moves only what it must: a first (earliest ready), then b, then c, then d.
  Pb m = graph_of({named(iotest::node("Relu", {"x"}, {"a"}), "a"), named(iotest::node("Add", {"a", "b"}, {"c"}), "c"),
                   named(iotest::node("Neg", {"x"}, {"b"}), "b"), named(iotest::node("Relu", {"c"}, {"y"}), "d")});
  Result<graph::Graph> g = read_pb(m);
  REQUIRE_MESSAGE(g.is_ok(), g.status().message());
  CHECK(op_order(*g) == std::vector<std::string>{"a", "b", "c", "d"});

  // Already sorted, interleaved branches: the order is kept as it is.
  Pb sorted = graph_of({named(iotest::node("Neg", {"x"}, {"b"}), "b"), named(iotest::node("Relu", {"x"}, {"a"}), "a"),
                        named(iotest::node("Sub", {"a", "b"}, {"c"}), "c"), named(iotest::node("Relu", {"c"}, {"y"}), "d")});
  Result<graph::Graph> s = read_pb(sorted);
  REQUIRE_MESSAGE(s.is_ok(), s.status().message());
  CHECK(op_order(*s) == std::vector<std::string>{"b", "a", "c", "d"});
}

TEST_CASE("onnx reader: sorted files stay byte-identical through read and write") {
  const std::vector<uint8_t> bytes = onnx::write(iotest::sample_graph());
  const graph::Graph g = onnx::read(bytes);
  CHECK(onnx::write(g) == bytes);

  // An unsorted file, once read and written, is the sorted file: reading that again changes
  // nothing.
  Pb m = graph_of({named(iotest::node("Relu", {"t"}, {"y"}), "late"), named(iotest::node("Neg", {"x"}, {"t"}), "early")});
  const std::vector<uint8_t> once = onnx::write(onnx::read(m.b));
  CHECK(onnx::write(onnx::read(once)) == once);
  CHECK(op_order(onnx::read(once)) == std::vector<std::string>{"early", "late"});
}

TEST_CASE("onnx reader: a cycle is a Format error naming its nodes") {
  // p reads q's output and q reads p's; 'tail' only depends on the cycle and is not named.
  Pb m = graph_of({named(iotest::node("Add", {"x", "q_out"}, {"p_out"}), "p"), named(iotest::node("Relu", {"p_out"}, {"q_out"}), "q"),
                   named(iotest::node("Relu", {"p_out"}, {"y"}), "tail")});
  Result<graph::Graph> r = read_pb(m);
  REQUIRE(!r.is_ok());
  CHECK(r.status().kind() == ErrorKind::Format);
  const std::string& e = r.status().message();
  CHECK_MESSAGE(e.find("cycle") != std::string::npos, e);
  CHECK_MESSAGE(e.find("node[0] Add 'p' -> node[1] Relu 'q' -> node[0] Add 'p'") != std::string::npos, e);
  CHECK_MESSAGE(e.find("'tail'") == std::string::npos, e);
  CHECK_MESSAGE(e.find("3 nodes cannot be ordered") != std::string::npos, e);

  // A node reading its own output.
  Pb self = graph_of({named(iotest::node("Add", {"x", "y"}, {"y"}), "self")});
  Result<graph::Graph> s = read_pb(self);
  REQUIRE(!s.is_ok());
  CHECK(s.status().kind() == ErrorKind::Format);
  CHECK_MESSAGE(s.status().message().find("node[0] Add 'self' -> node[0] Add 'self'") != std::string::npos, s.status().message());
}

TEST_CASE("onnx reader: an input defined nowhere is still verify's error after the sort") {
  Pb m = graph_of({named(iotest::node("Relu", {"t"}, {"y"}), "late"), named(iotest::node("Neg", {"nowhere"}, {"t"}), "early")});
  Result<graph::Graph> r = read_pb(m);
  REQUIRE(!r.is_ok());
  CHECK(r.status().kind() == ErrorKind::Format);
  CHECK_MESSAGE(r.status().message().find("reads 'nowhere', which is not defined before it") != std::string::npos, r.status().message());
}
