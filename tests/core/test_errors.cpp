#include <doctest/doctest.h>

#include "onemodel/core/status.h"

namespace {
om::Status fails() { return om::Status::error(om::ErrorKind::ShapeMismatch, "om::add: shapes [2,3] and [4,3] do not broadcast"); }
om::Status propagates() {
  OM_TRY(fails());
  return om::Status::ok();
}
om::Result<int> value_or_error(bool ok) {
  if (!ok) return om::Status::error(om::ErrorKind::InvalidArgument, "bad");
  return 7;
}
om::Status uses_assign(int* out) {
  OM_ASSIGN_OR_RETURN(int v, value_or_error(true));
  *out = v;
  OM_ASSIGN_OR_RETURN(int w, value_or_error(false));
  *out = w;
  return om::Status::ok();
}
}  // namespace

TEST_CASE("status propagates and converts to om::Error at the edge") {
  om::Status s = propagates();
  CHECK_FALSE(s.is_ok());
  CHECK(s.kind() == om::ErrorKind::ShapeMismatch);
  try {
    om::raise(s);
    FAIL("raise returned");
  } catch (const om::Error& e) {
    CHECK(e.kind() == om::ErrorKind::ShapeMismatch);
    CHECK(std::string(e.what()).find("do not broadcast") != std::string::npos);
  }
  int out = 0;
  om::Status t = uses_assign(&out);
  CHECK(out == 7);
  CHECK(t.kind() == om::ErrorKind::InvalidArgument);
}

TEST_CASE("trace statuses become TraceException, which is an om::Error") {
  om::Status s = om::Status::trace(om::TraceErrorKind::DataDependent, "om::Tensor::to_vector: traced");
  try {
    om::raise(s);
  } catch (const om::TraceException& e) {
    CHECK(e.kind() == om::TraceErrorKind::DataDependent);
    CHECK(static_cast<const om::Error&>(e).kind() == om::ErrorKind::Trace);
  }
  CHECK_THROWS_AS(om::raise(s), om::Error);
}
