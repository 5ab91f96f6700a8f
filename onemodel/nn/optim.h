// Optimizers (PyTorch's update rules). State buffers (momentum, Adam moments) are allocated at
// construction, in the store current then — create the optimizer where the parameters live,
// outside per-step scopes. step() updates parameters in place (bumping their storage versions)
// and skips parameters that have no gradient yet.
#pragma once
#include <vector>

#include "onemodel/core/tensor.h"

namespace om::optim {

class Optimizer {
 public:
  explicit Optimizer(std::vector<Tensor> params);
  virtual ~Optimizer() = default;
  virtual void step() = 0;
  void zero_grad();  // every parameter's gradient back to zero
  const std::vector<Tensor>& parameters() const { return params_; }

 protected:
  std::vector<Tensor> params_;
};

struct SgdOptions {
  double lr = 0.01;
  double momentum = 0;
  double dampening = 0;
  double weight_decay = 0;
  bool nesterov = false;
};

// p -= lr * d, d = g + wd p (then momentum: buf = m buf + (1 - dampening) d, buf = d at the
// first step; d = buf, or d + m buf with nesterov).
class Sgd : public Optimizer {
 public:
  Sgd(std::vector<Tensor> params, const SgdOptions& options);
  Sgd(std::vector<Tensor> params, double lr) : Sgd(std::move(params), SgdOptions{lr}) {}
  void step() override;
  SgdOptions& options() { return options_; }

 private:
  SgdOptions options_;
  std::vector<Tensor> momentum_;
  std::vector<bool> started_;
};

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0;  // L2 added to the gradient (Adam, not AdamW)
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, const AdamOptions& options = {});
  void step() override;
  AdamOptions& options() { return options_; }
  int64_t steps() const { return t_; }

 private:
  AdamOptions options_;
  std::vector<Tensor> m_, v_;
  int64_t t_ = 0;
  double beta1_pow_ = 1, beta2_pow_ = 1;  // beta^t by repeated products: no pow(), same on every machine
};

}  // namespace om::optim
