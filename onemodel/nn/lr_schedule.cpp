#include "onemodel/nn/lr_schedule.h"

#include <cmath>

#include "onemodel/core/status.h"

namespace om::optim {

LrSchedule::LrSchedule(Optimizer& optimizer) : optimizer_(optimizer), base_lr_(optimizer.lr()) {}

void LrSchedule::step() {
  ++epoch_;
  optimizer_.set_lr(lr_at(epoch_));
}

void LrSchedule::set_epoch(int64_t epoch) {
  if (epoch < 0) raise(Status::error(ErrorKind::InvalidArgument, msg("om::optim::LrSchedule::set_epoch: epoch ", epoch, " must not be negative")));
  epoch_ = epoch;
  optimizer_.set_lr(lr_at(epoch_));
}

StepLr::StepLr(Optimizer& optimizer, int64_t step_size, double gamma) : LrSchedule(optimizer), step_size_(step_size), gamma_(gamma) {
  if (step_size < 1) raise(Status::error(ErrorKind::InvalidArgument, msg("om::optim::StepLr: step_size ", step_size, " must be at least 1")));
}

double StepLr::lr_at(int64_t epoch) const {
  double lr = base_lr_;
  for (int64_t k = 0; k < epoch / step_size_; ++k) lr *= gamma_;  // repeated products: the same on every machine
  return lr;
}

CosineAnnealingLr::CosineAnnealingLr(Optimizer& optimizer, int64_t t_max, double eta_min)
    : LrSchedule(optimizer), t_max_(t_max), eta_min_(eta_min) {
  if (t_max < 1) raise(Status::error(ErrorKind::InvalidArgument, msg("om::optim::CosineAnnealingLr: t_max ", t_max, " must be at least 1")));
}

double CosineAnnealingLr::lr_at(int64_t epoch) const {
  const double pi = 3.14159265358979323846;
  return eta_min_ + (base_lr_ - eta_min_) * (1 + std::cos(pi * double(epoch) / double(t_max_))) / 2;
}

LinearWarmup::LinearWarmup(Optimizer& optimizer, int64_t warmup_epochs, double start_factor, std::unique_ptr<LrSchedule> after)
    : LrSchedule(optimizer), warmup_(warmup_epochs), start_factor_(start_factor), after_(std::move(after)) {
  if (warmup_epochs < 1 || !(start_factor > 0 && start_factor <= 1))
    raise(Status::error(ErrorKind::InvalidArgument, msg("om::optim::LinearWarmup: warmup_epochs ", warmup_epochs, " must be at least 1 and start_factor ",
                                                        start_factor, " lie in (0, 1]")));
  if (after_ && &after_->optimizer() != &optimizer)
    raise(Status::error(ErrorKind::InvalidArgument, "om::optim::LinearWarmup: the schedule after the warm-up drives another optimizer"));
  optimizer_.set_lr(lr_at(0));
}

double LinearWarmup::lr_at(int64_t epoch) const {
  if (epoch < warmup_ || !after_) {
    const double e = double(epoch < warmup_ ? epoch : warmup_);
    return base_lr_ * (start_factor_ + (1 - start_factor_) * e / double(warmup_));
  }
  return after_->lr_at(epoch - warmup_);
}

}  // namespace om::optim
