// What verification of a finished trace needs from the recording (docs/tracing.md,
// "Verification"): the inputs with their symbolic axes, every static extent, and the reshape or
// expand that was given a symbol's example size. The tracer records it; runtime/trace_verify.h
// runs the check, since that needs Sessions.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "onemodel/core/tensor.h"

namespace om::trace {

struct VerifyInput {
  std::string name;
  Tensor example;
  std::vector<std::string> axes;  // "" = static; empty = all static
};

struct VerifyPlan {
  std::vector<VerifyInput> inputs;
  std::set<int64_t> static_sizes;  // every static extent of every traced value
  std::map<std::string, std::string> suspects;  // symbol -> the first reshape/expand given its example size
};

}  // namespace om::trace
