#include "onemodel/nn/optim.h"

#include <algorithm>
#include <cmath>

#include "onemodel/core/grad_mode.h"
#include "onemodel/core/status.h"
#include "onemodel/core/tensor_internal.h"

namespace om::optim {

namespace {
// Parameters are updated through raw pointers: they must be live, contiguous f32 leaves.
void check_param(const Tensor& p, size_t i, const char* call) {
  check(detail::check_live(p, call));
  if (p.dtype() != DType::f32 || !p.is_contiguous())
    raise(Status::error(ErrorKind::InvalidArgument, msg(call, ": parameter ", i, " is ", p.to_string(),
                                                        (p.is_contiguous() ? "" : " (non-contiguous)"), "; optimizers update contiguous f32 tensors")));
}

// The gradient as a dense f32 tensor, or undefined when the parameter has none yet.
Tensor dense_grad(const Tensor& p, const char* call) {
  Tensor g = p.grad();
  if (!g.defined()) return g;
  check(detail::check_live(g, call));
  return unwrap(detail::dense(g));
}
}  // namespace

Optimizer::Optimizer(std::vector<Tensor> params) : params_(std::move(params)) {
  for (size_t i = 0; i < params_.size(); ++i) check_param(params_[i], i, "om::optim::Optimizer");
}

double Optimizer::lr() const {
  raise(Status::error(ErrorKind::Unsupported, "om::optim::Optimizer::lr: this optimizer does not expose its learning rate; override lr() and set_lr()"));
  return 0;
}

void Optimizer::set_lr(double) {
  raise(Status::error(ErrorKind::Unsupported, "om::optim::Optimizer::set_lr: this optimizer does not expose its learning rate; override lr() and set_lr()"));
}

double Optimizer::initial_lr() {
  if (!has_initial_lr_) initial_lr_ = lr(), has_initial_lr_ = true;
  return initial_lr_;
}

void Optimizer::zero_grad() {
  for (Tensor& p : params_) p.zero_grad();
}

SGD::SGD(std::vector<Tensor> params, const SGDOptions& options) : Optimizer(std::move(params)), options_(options) {
  if (options.lr() < 0 || options.momentum() < 0 || options.weight_decay() < 0)
    raise(Status::error(ErrorKind::InvalidArgument, msg("om::optim::SGD: lr ", options.lr(), ", momentum ", options.momentum(), " and weight_decay ",
                                                        options.weight_decay(), " must not be negative")));
  if (options.nesterov() && (options.momentum() <= 0 || options.dampening() != 0))
    raise(Status::error(ErrorKind::InvalidArgument, "om::optim::SGD: nesterov needs momentum > 0 and dampening 0"));
  if (options.momentum() != 0)
    for (const Tensor& p : params_) momentum_.push_back(zeros(p.shape()));
  started_.assign(params_.size(), 0);
}

void SGD::step() {
  const char* call = "om::optim::SGD::step";
  detail::InternalNoGrad no_grad;
  const float lr = float(options_.lr_), wd = float(options_.weight_decay_), mom = float(options_.momentum_);
  const float damp = float(1.0 - options_.dampening_);
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor& p = params_[i];
    check_param(p, i, call);
    Tensor g = dense_grad(p, call);
    if (!g.defined()) continue;
    float* pp = detail::raw_as<float>(p);
    const float* pg = detail::raw_as<float>(g);
    float* pb = nullptr;
    if (mom != 0) {
      check(detail::check_live(momentum_[i], call));
      pb = detail::raw_as<float>(momentum_[i]);
    }
    for (int64_t k = 0; k < p.numel(); ++k) {
      float d = pg[k];
      if (wd != 0) d += wd * pp[k];
      if (pb) {
        pb[k] = started_[i] ? mom * pb[k] + damp * d : d;
        d = options_.nesterov_ ? d + mom * pb[k] : pb[k];
      }
      pp[k] -= lr * d;
    }
    started_[i] = 1;
    detail::bump_version(p);
  }
}

Adam::Adam(std::vector<Tensor> params, const AdamOptions& options) : Optimizer(std::move(params)), options_(options) {
  const auto [beta1, beta2] = options.betas();
  if (options.lr() < 0 || options.eps() < 0 || beta1 < 0 || beta1 >= 1 || beta2 < 0 || beta2 >= 1 || options.weight_decay() < 0)
    raise(Status::error(ErrorKind::InvalidArgument, msg("om::optim::Adam: invalid options lr ", options.lr(), ", betas (", beta1, ", ", beta2,
                                                        "), eps ", options.eps(), ", weight_decay ", options.weight_decay(),
                                                        "; betas must lie in [0, 1), the rest be non-negative")));
  for (const Tensor& p : params_) {
    m_.push_back(zeros(p.shape()));
    v_.push_back(zeros(p.shape()));
  }
}

void Adam::step() { adam_step("om::optim::Adam::step", false); }

void Adam::adam_step(const char* call, bool decoupled) {
  detail::InternalNoGrad no_grad;
  ++t_;
  beta1_pow_ *= std::get<0>(options_.betas_);
  beta2_pow_ *= std::get<1>(options_.betas_);
  const double bc1 = 1 - beta1_pow_, bc2 = 1 - beta2_pow_;
  const float step_size = float(options_.lr_ / bc1);
  const float sqrt_bc2 = float(std::sqrt(bc2));
  const float b1 = float(std::get<0>(options_.betas_)), b2 = float(std::get<1>(options_.betas_)), eps = float(options_.eps_), wd = float(options_.weight_decay_);
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor& p = params_[i];
    check_param(p, i, call);
    Tensor g = dense_grad(p, call);
    if (!g.defined()) continue;
    check(detail::check_live(m_[i], call));
    check(detail::check_live(v_[i], call));
    float* pp = detail::raw_as<float>(p);
    const float* pg = detail::raw_as<float>(g);
    float* pm = detail::raw_as<float>(m_[i]);
    float* pv = detail::raw_as<float>(v_[i]);
    const float decay = float(1.0 - options_.lr_ * options_.weight_decay_);
    for (int64_t k = 0; k < p.numel(); ++k) {
      float d = pg[k];
      if (decoupled) {
        if (wd != 0) pp[k] *= decay;
      } else if (wd != 0) {
        d += wd * pp[k];
      }
      pm[k] = b1 * pm[k] + (1 - b1) * d;
      pv[k] = b2 * pv[k] + (1 - b2) * d * d;
      const float denom = std::sqrt(pv[k]) / sqrt_bc2 + eps;
      pp[k] -= step_size * pm[k] / denom;
    }
    detail::bump_version(p);
  }
}

StateRefs SGD::state() {
  StateRefs r;
  r.reals.push_back({"lr", &options_.lr_});
  for (size_t i = 0; i < momentum_.size(); ++i) r.tensors.push_back({msg("momentum_buffer.", i), momentum_[i]});
  for (size_t i = 0; i < started_.size(); ++i) r.ints.push_back({msg("started.", i), &started_[i]});
  return r;
}

StateRefs Adam::state() {
  StateRefs r;
  r.reals.push_back({"lr", &options_.lr_});
  r.ints.push_back({"step", &t_});
  r.reals.push_back({"beta1_pow", &beta1_pow_});
  r.reals.push_back({"beta2_pow", &beta2_pow_});
  for (size_t i = 0; i < m_.size(); ++i) r.tensors.push_back({msg("exp_avg.", i), m_[i]});
  for (size_t i = 0; i < v_.size(); ++i) r.tensors.push_back({msg("exp_avg_sq.", i), v_[i]});
  return r;
}

AdamW::AdamW(std::vector<Tensor> params, const AdamWOptions& o)
    : Adam(std::move(params), AdamOptions(o)) {}

void AdamW::step() { adam_step("om::optim::AdamW::step", true); }

RMSprop::RMSprop(std::vector<Tensor> params, const RMSpropOptions& o) : Optimizer(std::move(params)), options_(o) {
  if (o.lr() < 0 || o.eps() < 0 || o.alpha() < 0 || o.alpha() > 1 || o.momentum() < 0 || o.weight_decay() < 0)
    raise(Status::error(ErrorKind::InvalidArgument, msg("om::optim::RMSprop: invalid options lr ", o.lr(), ", alpha ", o.alpha(), ", eps ", o.eps(),
                                                        ", momentum ", o.momentum(), ", weight_decay ", o.weight_decay(),
                                                        "; alpha must lie in [0, 1], the rest be non-negative")));
  for (const Tensor& p : params_) {
    square_avg_.push_back(zeros(p.shape()));
    if (o.centered()) grad_avg_.push_back(zeros(p.shape()));
    if (o.momentum() > 0) momentum_.push_back(zeros(p.shape()));
  }
}

void RMSprop::step() {
  const char* call = "om::optim::RMSprop::step";
  detail::InternalNoGrad no_grad;
  ++t_;
  const float lr = float(options_.lr_), a = float(options_.alpha_), eps = float(options_.eps_), wd = float(options_.weight_decay_),
              mom = float(options_.momentum_);
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor& p = params_[i];
    check_param(p, i, call);
    Tensor g = dense_grad(p, call);
    if (!g.defined()) continue;
    check(detail::check_live(square_avg_[i], call));
    float* pp = detail::raw_as<float>(p);
    const float* pg = detail::raw_as<float>(g);
    float* sq = detail::raw_as<float>(square_avg_[i]);
    float* ga = options_.centered_ ? detail::raw_as<float>(grad_avg_[i]) : nullptr;
    float* buf = mom > 0 ? detail::raw_as<float>(momentum_[i]) : nullptr;
    for (int64_t k = 0; k < p.numel(); ++k) {
      float d = pg[k];
      if (wd != 0) d += wd * pp[k];
      sq[k] = a * sq[k] + (1 - a) * d * d;
      float avg;
      if (ga) {
        ga[k] = a * ga[k] + (1 - a) * d;
        avg = std::sqrt(sq[k] - ga[k] * ga[k]) + eps;
      } else {
        avg = std::sqrt(sq[k]) + eps;
      }
      if (buf) {
        buf[k] = mom * buf[k] + d / avg;
        pp[k] -= lr * buf[k];
      } else {
        pp[k] -= lr * (d / avg);
      }
    }
    detail::bump_version(p);
  }
}

StateRefs RMSprop::state() {
  StateRefs r;
  r.reals.push_back({"lr", &options_.lr_});
  r.ints.push_back({"step", &t_});
  for (size_t i = 0; i < square_avg_.size(); ++i) r.tensors.push_back({msg("square_avg.", i), square_avg_[i]});
  for (size_t i = 0; i < grad_avg_.size(); ++i) r.tensors.push_back({msg("grad_avg.", i), grad_avg_[i]});
  for (size_t i = 0; i < momentum_.size(); ++i) r.tensors.push_back({msg("momentum_buffer.", i), momentum_[i]});
  return r;
}

}  // namespace om::optim
