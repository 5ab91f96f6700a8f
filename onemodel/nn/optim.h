// Optimizers (PyTorch's update rules). State buffers (momentum, Adam moments) are allocated at
// construction, in the store current then — create the optimizer where the parameters live,
// outside per-step scopes. step() updates parameters in place (bumping their storage versions)
// and skips parameters that have no gradient yet.
#pragma once
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "onemodel/core/tensor.h"

namespace om::optim {

// References to an optimizer's state, by name, for checkpoints (nn/checkpoint.h): the live
// tensors (moments, momentum buffers) and the addresses of its scalars (step counts, products of
// betas, the learning rate), so loading writes them in place.
struct StateRefs {
  std::vector<std::pair<std::string, Tensor>> tensors;
  std::vector<std::pair<std::string, double*>> reals;
  std::vector<std::pair<std::string, int64_t*>> ints;
};

class Optimizer {
 public:
  explicit Optimizer(std::vector<Tensor> params);
  virtual ~Optimizer() = default;
  virtual void step() = 0;
  void zero_grad();  // every parameter's gradient back to zero
  const std::vector<Tensor>& parameters() const { return params_; }
  // The learning rate the next step uses (schedules set it: nn/lr_schedule.h). An optimizer
  // defined outside the library that does not override them raises Unsupported when called.
  virtual double lr() const;
  virtual void set_lr(double lr);
  // The learning rate before any schedule changed it: read from lr() when the first schedule is
  // created and kept (PyTorch's "initial_lr"), so every schedule of this optimizer has one base.
  double initial_lr();
  // Names are "<kind>.<parameter index>" for per-parameter tensors ("exp_avg.0"). Default: none.
  virtual StateRefs state() { return {}; }

 protected:
  std::vector<Tensor> params_;

 private:
  bool has_initial_lr_ = false;
  double initial_lr_ = 0;
};

// libtorch's option style: `SGDOptions(0.1).momentum(0.9)` sets (and chains), `o.momentum()`
// reads. The optimizer reads the fields directly.
#define OM_OPTION(T, name, init)       \
 public:                               \
  auto& name(T v) {                    \
    name##_ = v;                       \
    return *this;                      \
  }                                    \
  T name() const { return name##_; }   \
                                       \
 private:                              \
  T name##_ = init;

class SGDOptions {
 public:
  SGDOptions(double lr) : lr_(lr) {}  // NOLINT: implicit, as libtorch's (SGD(params, 0.1))
  OM_OPTION(double, lr, 0.01)
  OM_OPTION(double, momentum, 0)
  OM_OPTION(double, dampening, 0)
  OM_OPTION(double, weight_decay, 0)
  OM_OPTION(bool, nesterov, false)
  friend class SGD;
};

// p -= lr * d, d = g + wd p (then momentum: buf = m buf + (1 - dampening) d, buf = d at the
// first step; d = buf, or d + m buf with nesterov).
class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, const SGDOptions& options);
  void step() override;
  SGDOptions& options() { return options_; }
  double lr() const override { return options_.lr_; }
  void set_lr(double lr) override { options_.lr_ = lr; }
  StateRefs state() override;

 private:
  SGDOptions options_;
  std::vector<Tensor> momentum_;
  std::vector<int64_t> started_;  // 1 once a parameter's momentum buffer holds its first step
};

using Betas = std::tuple<double, double>;  // Adam's (beta1, beta2), as libtorch's betas

// Adam's and AdamW's options, listed once: libtorch has both classes, and they differ only in the
// weight-decay default (0 for Adam, 1e-2 for AdamW) and in what the decay means (see the classes).
class AdamFields {
 protected:
  AdamFields(double lr, double weight_decay) : lr_(lr), weight_decay_(weight_decay) {}
  double lr_;
  Betas betas_ = Betas(0.9, 0.999);
  double eps_ = 1e-8;
  double weight_decay_;
  friend class Adam;
};

template <class Self>
class AdamOptionsOf : public AdamFields {
 public:
  Self& lr(double v) { return set(lr_, v); }
  Self& betas(Betas v) { return set(betas_, v); }
  Self& eps(double v) { return set(eps_, v); }
  Self& weight_decay(double v) { return set(weight_decay_, v); }
  double lr() const { return lr_; }
  Betas betas() const { return betas_; }
  double eps() const { return eps_; }
  double weight_decay() const { return weight_decay_; }

 protected:
  using AdamFields::AdamFields;
  explicit AdamOptionsOf(const AdamFields& fields) : AdamFields(fields) {}

 private:
  template <typename T> Self& set(T& field, T v) {
    field = v;
    return static_cast<Self&>(*this);
  }
};

class AdamOptions : public AdamOptionsOf<AdamOptions> {
 public:
  AdamOptions(double lr = 1e-3) : AdamOptionsOf(lr, 0) {}  // NOLINT: implicit, as libtorch's
  explicit AdamOptions(const AdamFields& fields) : AdamOptionsOf(fields) {}
};

// weight_decay: L2 added to the gradient (Adam), or decoupled, p -= lr * wd * p before the Adam
// step (AdamW, PyTorch's).
class AdamWOptions : public AdamOptionsOf<AdamWOptions> {
 public:
  AdamWOptions(double lr = 1e-3) : AdamOptionsOf(lr, 1e-2) {}  // NOLINT: implicit, as libtorch's
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, const AdamOptions& options = {});
  void step() override;
  AdamOptions& options() { return options_; }
  int64_t steps() const { return t_; }
  double lr() const override { return options_.lr_; }
  void set_lr(double lr) override { options_.lr_ = lr; }
  StateRefs state() override;

 protected:
  // One Adam step; `decoupled`: weight decay multiplies the parameter by (1 - lr wd) first (AdamW).
  void adam_step(const char* call, bool decoupled);

  AdamOptions options_;
  std::vector<Tensor> m_, v_;
  int64_t t_ = 0;
  double beta1_pow_ = 1, beta2_pow_ = 1;  // beta^t by repeated products: no pow(), same on every machine
};

class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, const AdamWOptions& options = {});
  void step() override;
};

class RMSpropOptions {
 public:
  RMSpropOptions(double lr = 1e-2) : lr_(lr) {}  // NOLINT: implicit, as libtorch's
  OM_OPTION(double, lr, 1e-2)
  OM_OPTION(double, alpha, 0.99)  // smoothing of the squared-gradient average
  OM_OPTION(double, eps, 1e-8)
  OM_OPTION(double, weight_decay, 0)  // L2 added to the gradient
  OM_OPTION(double, momentum, 0)
  OM_OPTION(bool, centered, false)  // divide by the gradient's estimated variance, not its second moment
  friend class RMSprop;
};

// PyTorch's RMSprop: v = a v + (1-a) g^2; centered: m = a m + (1-a) g and avg = sqrt(v - m^2) +
// eps, else avg = sqrt(v) + eps; momentum: buf = mu buf + g / avg, p -= lr buf; else p -= lr g / avg.
class RMSprop : public Optimizer {
 public:
  RMSprop(std::vector<Tensor> params, const RMSpropOptions& options = {});
  void step() override;
  RMSpropOptions& options() { return options_; }
  double lr() const override { return options_.lr_; }
  void set_lr(double lr) override { options_.lr_ = lr; }
  StateRefs state() override;

 private:
  RMSpropOptions options_;
  std::vector<Tensor> square_avg_, grad_avg_, momentum_;
  int64_t t_ = 0;
};

}  // namespace om::optim
