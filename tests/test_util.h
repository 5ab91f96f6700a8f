// Small helpers shared by every test suite.
#pragma once
#include <doctest/doctest.h>

#include <string>

#include "onemodel/core/error.h"

namespace testutil {

// The om::Error `fn` throws (the test fails when it throws none).
template <typename Fn>
om::Error error_of(Fn fn) {
  try {
    fn();
  } catch (const om::Error& e) {
    return e;
  }
  FAIL("expected an om::Error");
  return om::Error(om::ErrorKind::Internal, "unreachable");
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace testutil
