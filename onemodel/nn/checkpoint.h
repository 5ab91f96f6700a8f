// Checkpoints: a module's state dict, an optimizer's state and a schedule's epoch in one file
// (the format is described in docs/training.md). Loading checks every entry — name, dtype and
// shape — before writing anything, and an error names the entry that does not match. A run
// resumed from a checkpoint continues bit-identically to an uninterrupted one.
#pragma once
#include <string>

#include "onemodel/nn/lr_schedule.h"
#include "onemodel/nn/module.h"
#include "onemodel/nn/optim.h"

namespace om::nn {

// Writes `module`'s state dict ("model.<path>"), the optimizer's state ("optimizer.<name>") and
// the schedule's epoch ("schedule.epoch") when given. Throws om::Error naming the file.
void save_checkpoint(const std::string& path, const Module& module, optim::Optimizer* optimizer = nullptr,
                     const optim::LrSchedule* schedule = nullptr);

// Reads a checkpoint written by save_checkpoint into the same kinds of objects. Every entry the
// targets expect must be present with the dtype and shape they have, and no other "model."
// entry may be in the file; a corrupted file (checksum) is refused.
void load_checkpoint(const std::string& path, Module& module, optim::Optimizer* optimizer = nullptr, optim::LrSchedule* schedule = nullptr);

}  // namespace om::nn
