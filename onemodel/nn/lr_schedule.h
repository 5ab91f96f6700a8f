// Learning-rate schedules (docs/training.md). A schedule owns no optimizer state: its base is
// the optimizer's initial learning rate (Optimizer::initial_lr: the rate before the first
// schedule changed it, so several schedules of one optimizer share one base) and an epoch counter, and each step()
// advances the counter and sets the optimizer's learning rate from the closed form of PyTorch's
// scheduler of the same name. Call it once per epoch (or per iteration), after optimizer.step().
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

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
class StepLR : public LrSchedule {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);
  double lr_at(int64_t epoch) const override;

 private:
  int64_t step_size_;
  double gamma_;
};

// eta_min + (base - eta_min) (1 + cos(pi epoch / t_max)) / 2: PyTorch's CosineAnnealingLR
// (closed form); past t_max the cosine continues (as PyTorch's does).
class CosineAnnealingLR : public LrSchedule {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t t_max, double eta_min = 0);
  double lr_at(int64_t epoch) const override;

 private:
  int64_t t_max_;
  double eta_min_;
};

// base * (start + (end - start) min(epoch, total_iters) / total_iters): PyTorch's LinearLR
// (a warm-up when start < end). Sets the optimizer's learning rate to its epoch-0 value at
// construction, as PyTorch's does.
class LinearLR : public LrSchedule {
 public:
  LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0, int64_t total_iters = 5);
  double lr_at(int64_t epoch) const override;

 private:
  double start_factor_, end_factor_;
  int64_t total_iters_;
};

// PyTorch's SequentialLR: schedules[0] until epoch milestones[0], then schedules[1] from its own
// epoch 0 until milestones[1], and so on (milestones.size() == schedules.size() - 1, increasing).
// Warm-up then cosine: SequentialLR(opt, {make_shared<LinearLR>(opt, 0.1, 1, 100),
// make_shared<CosineAnnealingLR>(opt, 900)}, {100}). Every schedule must drive `optimizer`; the
// sub-schedules' own step() is not called (this one's is).
class SequentialLR : public LrSchedule {
 public:
  SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LrSchedule>> schedules, std::vector<int64_t> milestones);
  double lr_at(int64_t epoch) const override;

 private:
  std::vector<std::shared_ptr<LrSchedule>> schedules_;
  std::vector<int64_t> milestones_;
};

}  // namespace om::optim
