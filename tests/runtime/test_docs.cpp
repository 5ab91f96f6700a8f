// docs/operators.md must list every registry operator with its exact-kernel status.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "onemodel/graph/op_registry.h"

TEST_CASE("docs/operators.md matches the operator registry") {
  std::ifstream f(std::string(OM_SOURCE_DIR) + "/docs/operators.md");
  REQUIRE(f.good());
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string doc = ss.str();
  for (const om::graph::OpDef* op : om::graph::all_ops()) {
    CAPTURE(op->op_type);
    const std::string row = std::string("| ") + op->op_type + " | " + (*op->domain ? op->domain : "ai.onnx") + " | " +
                            (runs_in(*op, om::ArithmeticMode::Fast) ? "yes" : "no") + " | " +
                            (runs_in(*op, om::ArithmeticMode::Exact) ? "yes" : "no") + " |";
    CHECK(doc.find(row) != std::string::npos);
  }
}
