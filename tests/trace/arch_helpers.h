// Helpers for the architecture tests (issue-style models written the PyTorch way): run a traced
// model at several input sets in the Session, compare with eager, and hand every set to the ONNX
// Runtime oracle.
#pragma once
#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

#include "onemodel/onemodel.h"
#include "trace_helpers.h"
#if __has_include("oracle_case.h")
#include "oracle_case.h"
#define OM_HAVE_ORACLE 1
#endif

namespace archtest {

using Eager = std::function<std::vector<om::Tensor>(const std::vector<om::Tensor>&)>;

// One SGD step on the mean squared output, then eval(): models are traced as users trace them,
// trained (weights moved off their initial values, BatchNorm statistics updated), not fresh.
inline void train_one_step(om::nn::Module& model, const om::Tensor& input) {
  model.train();
  std::vector<om::Tensor> params = model.parameters();
  REQUIRE(!params.empty());
  const std::vector<float> before = params[0].to_vector<float>();
  om::optim::SGD opt(params, 0.05);
  opt.zero_grad();
  om::Tensor out = model(input);
  om::mean(om::mul(out, out)).backward();
  opt.step();
  CHECK(params[0].to_vector<float>() != before);
  model.eval();
}

inline om::graph::TensorData data_of(const std::string& name, const om::Tensor& x) {
  om::Tensor c = x.clone();  // fresh storage: offset 0
  return om::graph::TensorData::copy_of(name, c.dtype(), c.shape(), c.storage().data(), size_t(c.numel()) * om::dtype_size(c.dtype()));
}

// For each input set: Session (Fast) within `tol` scaled of eager, same shapes; oracle cases
// "trace_<case_name>" with one subfolder per further set.
inline void agree_at(const std::string& case_name, const om::TracedModel& traced, const Eager& eager,
                     const std::vector<std::string>& input_names, const std::vector<std::vector<om::Tensor>>& sets,
                     double tol = 1e-5) {
  om::Session session(traced.graph());
  const std::vector<std::string> output_names = session.output_names();
  for (size_t t = 0; t < sets.size(); ++t) {
    CAPTURE(case_name);
    CAPTURE(t);
    std::vector<std::pair<std::string, om::Tensor>> feeds;
    for (size_t i = 0; i < input_names.size(); ++i) feeds.push_back({input_names[i], sets[t][i]});
    std::vector<om::Tensor> want;
    {
      om::NoGradGuard no_grad;
      want = eager(sets[t]);
    }
    const std::vector<om::Tensor> got = tracetest::run_graph(session, feeds);
    REQUIRE(got.size() == want.size());
    for (size_t k = 0; k < got.size(); ++k) {
      REQUIRE(got[k].shape() == want[k].shape());
      if (want[k].dtype() == om::DType::f32) CHECK(tracetest::scaled_error(got[k], want[k]) < tol);
      else CHECK(got[k].to_vector<int64_t>() == want[k].to_vector<int64_t>());
    }
#ifdef OM_HAVE_ORACLE
    std::vector<om::graph::TensorData> in_data, out_data;
    for (const auto& [name, x] : feeds) in_data.push_back(data_of(name, x));
    for (size_t k = 0; k < want.size(); ++k) out_data.push_back(data_of(output_names[k], want[k]));
    if (t == 0) oracle::write_oracle_case("trace_" + case_name, traced.graph(), in_data, out_data);
    else oracle::add_oracle_inputs("trace_" + case_name, "set" + std::to_string(t), in_data, out_data);
#endif
  }
}

}  // namespace archtest
