// Calibration: the float model runs once per batch (twice for percentiles) with the values to
// observe added as graph outputs, and each value's range is folded in as the batches go, so
// memory stays one histogram per value whatever the number of batches.
#include "onemodel/quant/calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "onemodel/core/tensor_internal.h"
#include "onemodel/runtime/session.h"

namespace om::quant::detail {
namespace {

constexpr const char* kCall = "om::quant::quantize_static";
// Histogram bins between a value's min and max (RangeMethod::Percentile). A percentile bound is
// a bin edge, so it lies within (max - min) / kBins of the exact order statistic, on the side
// that widens the range.
constexpr size_t kBins = 4096;

// Where each observed value comes from in one run: a graph input given in the batch, or an
// output of the calibration session.
struct Source {
  int input = -1;   // index into the batch
  int output = -1;  // index into the session's outputs
};

// A batch as the Session takes it: dense tensors (kept alive here) and their views.
struct BatchViews {
  std::vector<Tensor> dense;
  std::vector<TensorView> views;
};

Status views_of(const CalibrationBatch& batch, size_t b, BatchViews* out) {
  out->dense.clear();
  out->views.clear();
  out->dense.reserve(batch.size());
  for (const auto& [name, t] : batch) {
    if (!t.defined())
      return Status::error(ErrorKind::InvalidArgument, msg(kCall, ": calibration batch ", b, ", input '", name,
                                                           "': the tensor is undefined (default-constructed); give it values"));
    OM_TRY(om::detail::check_live(t, kCall));
    OM_ASSIGN_OR_RETURN(Tensor d, om::detail::dense(t));
    out->dense.push_back(d);
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    const Tensor& d = out->dense[i];
    TensorView v;
    v.name = batch[i].first.c_str();
    v.dtype = d.dtype();
    v.dims = d.shape().data();
    v.rank = d.shape().size();
    v.data = om::detail::raw(d);
    out->views.push_back(v);
  }
  return Status::ok();
}

struct Elements {
  const float* data = nullptr;
  int64_t n = 0;
  DType dtype = DType::f32;
};

Elements elements_of(const Source& s, const BatchViews& in, const std::vector<TensorView>& outputs) {
  const TensorView& v = s.input >= 0 ? in.views[size_t(s.input)] : outputs[size_t(s.output)];
  return Elements{static_cast<const float*>(v.data), v.numel(), v.dtype};
}

// Min and max over the finite elements; NaN and infinities are counted, never folded in.
void fold_minmax(const Elements& e, int batch, ObservedRange* r) {
  r->dtype = e.dtype;
  r->seen = true;
  if (e.dtype != DType::f32) return;
  float lo = std::numeric_limits<float>::infinity(), hi = -lo;
  int64_t bad = 0;
  bool nan = false;
  for (int64_t i = 0; i < e.n; ++i) {
    const float x = e.data[i];
    if (!std::isfinite(x)) {
      ++bad;
      nan = nan || x != x;
      continue;
    }
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  if (bad && r->first_nonfinite_batch < 0) r->first_nonfinite_batch = batch;
  r->saw_nan = r->saw_nan || nan;
  r->nonfinite += bad;
  if (e.n - bad > 0) {
    r->lo = r->count ? std::min(r->lo, double(lo)) : double(lo);
    r->hi = r->count ? std::max(r->hi, double(hi)) : double(hi);
  }
  r->count += e.n - bad;
}

struct Histogram {
  double lo = 0, width = 0;
  std::vector<uint64_t> bins;
};

void fold_histogram(const Elements& e, Histogram* h) {
  if (e.dtype != DType::f32 || h->bins.empty()) return;
  for (int64_t i = 0; i < e.n; ++i) {
    const float x = e.data[i];
    if (!std::isfinite(x)) continue;
    double k = h->width > 0 ? std::floor((double(x) - h->lo) / h->width) : 0;
    k = std::min(std::max(k, 0.0), double(kBins - 1));
    ++h->bins[size_t(k)];
  }
}

// The percentile bounds: the lower edge of the bin holding the (100 - p)-th percentile and the
// upper edge of the one holding the p-th, clamped to the values' own min and max.
void percentile_bounds(const Histogram& h, double p, ObservedRange* r) {
  if (h.bins.empty() || r->count == 0) return;
  const auto tail = uint64_t(std::ceil(double(r->count) * (100.0 - p) / 100.0));
  uint64_t below = 0;
  size_t lo_bin = 0;
  for (; lo_bin + 1 < kBins && below + h.bins[lo_bin] <= tail; ++lo_bin) below += h.bins[lo_bin];
  uint64_t above = 0;
  size_t hi_bin = kBins - 1;
  for (; hi_bin > lo_bin && above + h.bins[hi_bin] <= tail; --hi_bin) above += h.bins[hi_bin];
  r->lo = std::max(r->lo, h.lo + double(lo_bin) * h.width);
  r->hi = std::min(r->hi, h.lo + double(hi_bin + 1) * h.width);
}

}  // namespace

Status calibrate(const graph::Graph& model, const std::vector<std::string>& values, const CalibrationSet& batches,
                 const QuantOptions& options, std::vector<ObservedRange>* ranges) {
  if (batches.empty())
    return Status::error(ErrorKind::InvalidArgument,
                         msg(kCall, ": the calibration set is empty; give at least one batch, a list of (input name, Tensor) pairs "
                                    "covering every model input, drawn from the data the model will see"));
  // The observed values become outputs of a copy of the model (those already outputs stay
  // where they are); graph inputs are read from the batches themselves.
  graph::Graph g = model;
  std::vector<Source> sources(values.size());
  std::vector<std::string> input_names;
  for (const auto& v : model.inputs) input_names.push_back(v.name);
  for (size_t k = 0; k < values.size(); ++k) {
    const std::string& name = values[k];
    if (std::find(input_names.begin(), input_names.end(), name) != input_names.end()) continue;  // resolved per batch
    auto it = std::find_if(g.outputs.begin(), g.outputs.end(), [&](const graph::ValueInfo& o) { return o.name == name; });
    if (it == g.outputs.end()) {
      graph::ValueInfo vi;
      vi.name = name;
      vi.has_shape = false;  // the Session infers it; only the elements are read
      g.outputs.push_back(vi);
      it = g.outputs.end() - 1;
    }
    sources[k].output = int(it - g.outputs.begin());
  }
  SessionOptions so;
  so.optimize = false;  // no fusion may hide a value this calibration observes
  so.threads = options.threads;
  Session session;
  OM_TRY(Session::create(g, so, &session).with_context(msg(kCall, ": the calibration Session")));

  ranges->assign(values.size(), ObservedRange{});
  std::vector<TensorView> outputs(g.outputs.size());
  BatchViews in;
  // One run of batch b: the graph-input sources found by name, outputs as the session's views
  // (read before the next run).
  auto run = [&](size_t b) -> Status {
    const CalibrationBatch& batch = batches[b];
    OM_TRY(views_of(batch, b, &in));
    for (size_t k = 0; k < values.size(); ++k) {
      if (sources[k].output >= 0) continue;
      sources[k].input = -1;
      for (size_t i = 0; i < batch.size(); ++i)
        if (batch[i].first == values[k]) sources[k].input = int(i);
      // An input left out is refused by the session just below, naming it.
    }
    for (TensorView& o : outputs) o = TensorView{};
    return session.try_run(in.views.data(), in.views.size(), outputs.data(), outputs.size())
        .with_context(msg(kCall, ": calibration batch ", b));
  };
  for (size_t b = 0; b < batches.size(); ++b) {
    OM_TRY(run(b));
    for (size_t k = 0; k < values.size(); ++k)
      if (sources[k].input >= 0 || sources[k].output >= 0) fold_minmax(elements_of(sources[k], in, outputs), int(b), &(*ranges)[k]);
  }
  if (options.range_method != RangeMethod::Percentile) return Status::ok();

  // Percentiles: a second pass bins every finite element between the first pass's min and max.
  std::vector<Histogram> hist(values.size());
  for (size_t k = 0; k < values.size(); ++k) {
    const ObservedRange& r = (*ranges)[k];
    if (r.dtype != DType::f32 || r.count == 0 || r.nonfinite) continue;  // nothing to bin, or refused later
    hist[k].lo = r.lo;
    hist[k].width = (r.hi - r.lo) / double(kBins);
    hist[k].bins.assign(kBins, 0);
  }
  for (size_t b = 0; b < batches.size(); ++b) {
    OM_TRY(run(b));
    for (size_t k = 0; k < values.size(); ++k)
      if (sources[k].input >= 0 || sources[k].output >= 0) fold_histogram(elements_of(sources[k], in, outputs), &hist[k]);
  }
  for (size_t k = 0; k < values.size(); ++k) percentile_bounds(hist[k], options.percentile, &(*ranges)[k]);
  return Status::ok();
}

}  // namespace om::quant::detail
