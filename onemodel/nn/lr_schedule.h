// Learning-rate schedules (docs/training.md). A schedule owns no optimizer state: it remembers
// the optimizer's learning rate at construction (the base) and an epoch counter, and each step()
// advances the counter and sets the optimizer's learning rate from the closed form of PyTorch's
// scheduler of the same name. Call it once per epoch (or per iteration), after optimizer.step().
#pragma once
#include <cstdint>
#include <memory>

#include "onemodel/nn/optim.h"

namespace om::optim {

class LrSchedule {
 public:
  explicit LrSchedule(Optimizer& optimizer);
  virtual ~LrSchedule() = default;
  // epoch + 1, then the optimizer's learning rate = lr_at(epoch).
  void step();
  int64_t epoch() const { return epoch_; }
  // Restores a saved counter (checkpoints) and sets the learning rate for it.
  void set_epoch(int64_t epoch);
  double base_lr() const { return base_lr_; }
  Optimizer& optimizer() const { return optimizer_; }
  // The learning rate at `epoch` (epoch 0 = the base learning rate unless a warm-up starts lower).
  virtual double lr_at(int64_t epoch) const = 0;

 protected:
  Optimizer& optimizer_;
  double base_lr_;
  int64_t epoch_ = 0;
};

// base * gamma^(epoch / step_size) (integer division): PyTorch's StepLR.
class StepLr : public LrSchedule {
 public:
  StepLr(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);
  double lr_at(int64_t epoch) const override;

 private:
  int64_t step_size_;
  double gamma_;
};

// eta_min + (base - eta_min) (1 + cos(pi epoch / t_max)) / 2: PyTorch's CosineAnnealingLR
// (closed form); past t_max the cosine continues (as PyTorch's does).
class CosineAnnealingLr : public LrSchedule {
 public:
  CosineAnnealingLr(Optimizer& optimizer, int64_t t_max, double eta_min = 0);
  double lr_at(int64_t epoch) const override;

 private:
  int64_t t_max_;
  double eta_min_;
};

// Linear warm-up: base * (start_factor + (1 - start_factor) min(epoch, warmup) / warmup), then
// `after` (if given) from its own epoch 0 — PyTorch's LinearLR followed by SequentialLR. The
// schedule set the optimizer's learning rate to the warm-up's first value at construction.
class LinearWarmup : public LrSchedule {
 public:
  LinearWarmup(Optimizer& optimizer, int64_t warmup_epochs, double start_factor = 1.0 / 3, std::unique_ptr<LrSchedule> after = nullptr);
  double lr_at(int64_t epoch) const override;

 private:
  int64_t warmup_;
  double start_factor_;
  std::unique_ptr<LrSchedule> after_;
};

}  // namespace om::optim
