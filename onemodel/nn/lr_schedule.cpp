#include "onemodel/nn/lr_schedule.h"

#include <cmath>

#include "onemodel/core/status.h"

namespace om::optim {

LrSchedule::LrSchedule(Optimizer& optimizer) : optimizer_(optimizer), base_lr_(optimizer.initial_lr()) {}

void LrSchedule::step() {
  ++epoch_;
  optimizer_.set_lr(lr_at(epoch_));
}

void LrSchedule::set_epoch(int64_t epoch) {
  if (epoch < 0) raise(Status::error(ErrorKind::InvalidArgument, msg("om::optim::LrSchedule::set_epoch: epoch ", epoch, " must not be negative")));
  epoch_ = epoch;
  optimizer_.set_lr(lr_at(epoch_));
}

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma) : LrSchedule(optimizer), step_size_(step_size), gamma_(gamma) {
  if (step_size < 1) raise(Status::error(ErrorKind::InvalidArgument, msg("om::optim::StepLR: step_size ", step_size, " must be at least 1")));
}

double StepLR::lr_at(int64_t epoch) const {
  double lr = base_lr_;
  for (int64_t k = 0; k < epoch / step_size_; ++k) lr *= gamma_;  // repeated products: the same on every machine
  return lr;
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t t_max, double eta_min)
    : LrSchedule(optimizer), t_max_(t_max), eta_min_(eta_min) {
  if (t_max < 1) raise(Status::error(ErrorKind::InvalidArgument, msg("om::optim::CosineAnnealingLR: t_max ", t_max, " must be at least 1")));
}

double CosineAnnealingLR::lr_at(int64_t epoch) const {
  const double pi = 3.14159265358979323846;
  return eta_min_ + (base_lr_ - eta_min_) * (1 + std::cos(pi * double(epoch) / double(t_max_))) / 2;
}

LinearLR::LinearLR(Optimizer& optimizer, double start_factor, double end_factor, int64_t total_iters)
    : LrSchedule(optimizer), start_factor_(start_factor), end_factor_(end_factor), total_iters_(total_iters) {
  if (total_iters < 1 || !(start_factor > 0 && start_factor <= 1) || !(end_factor >= 0 && end_factor <= 1))
    raise(Status::error(ErrorKind::InvalidArgument, msg("om::optim::LinearLR: total_iters ", total_iters, " must be at least 1, start_factor ",
                                                        start_factor, " lie in (0, 1] and end_factor ", end_factor, " in [0, 1]")));
  optimizer_.set_lr(lr_at(0));
}

double LinearLR::lr_at(int64_t epoch) const {
  const double e = double(epoch < total_iters_ ? epoch : total_iters_);
  return base_lr_ * (start_factor_ + (end_factor_ - start_factor_) * e / double(total_iters_));
}

SequentialLR::SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LrSchedule>> schedules, std::vector<int64_t> milestones)
    : LrSchedule(optimizer), schedules_(std::move(schedules)), milestones_(std::move(milestones)) {
  const char* call = "om::optim::SequentialLR";
  if (schedules_.empty() || milestones_.size() + 1 != schedules_.size())
    raise(Status::error(ErrorKind::InvalidArgument, msg(call, ": ", schedules_.size(), " schedules need ", schedules_.size() ? schedules_.size() - 1 : 0,
                                                        " milestones, got ", milestones_.size())));
  for (size_t i = 0; i < schedules_.size(); ++i) {
    if (!schedules_[i]) raise(Status::error(ErrorKind::InvalidArgument, msg(call, ": schedule ", i, " is null")));
    if (&schedules_[i]->optimizer() != &optimizer)
      raise(Status::error(ErrorKind::InvalidArgument, msg(call, ": schedule ", i, " drives another optimizer; create it with the same one")));
  }
  for (size_t i = 0; i < milestones_.size(); ++i)
    if (milestones_[i] < 1 || (i > 0 && milestones_[i] <= milestones_[i - 1]))
      raise(Status::error(ErrorKind::InvalidArgument, msg(call, ": milestone ", i, " (", milestones_[i], ") must be at least 1 and above the one before")));
  optimizer_.set_lr(lr_at(0));
}

double SequentialLR::lr_at(int64_t epoch) const {
  size_t i = 0;
  while (i < milestones_.size() && epoch >= milestones_[i]) ++i;
  return schedules_[i]->lr_at(i == 0 ? epoch : epoch - milestones_[i - 1]);
}

}  // namespace om::optim
