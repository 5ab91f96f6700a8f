// Calibration for quantize_static: runs the float model over every calibration batch and records
// the range of each named value (library-internal).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "onemodel/core/status.h"
#include "onemodel/graph/ir.h"
#include "onemodel/quant/quantize.h"

namespace om::quant::detail {

// What the batches showed of one value.
struct ObservedRange {
  DType dtype = DType::f32;  // as the Session produced it; only f32 values get a range
  bool seen = false;         // false until a batch produced it
  double lo = 0, hi = 0;     // the range QuantOptions::range_method chose, over finite elements
  int64_t count = 0;         // elements seen over every batch
  int64_t nonfinite = 0;     // NaN and infinite elements seen
  int first_nonfinite_batch = -1;
  bool saw_nan = false;
};

// Checks every batch against the model's inputs (names, dtypes, ranks, static sizes), then runs
// the model in a Session (Fast, no graph passes: every value observed is the unfused graph's)
// with `values` added as outputs, once per batch (twice for RangeMethod::Percentile: min and max
// first, then a histogram between them). ranges->at(k) describes values[k].
Status calibrate(const graph::Graph& model, const std::vector<std::string>& values, const CalibrationSet& batches,
                 const QuantOptions& options, std::vector<ObservedRange>* ranges);

}  // namespace om::quant::detail
