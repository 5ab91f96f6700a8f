// Checkpoints: a module's state dict, an optimizer's state and a schedule's epoch in one file
// (the format is described in docs/training.md). Loading checks every entry — name, dtype and
// shape — before writing anything, and an error names the entry that does not match. A run
// resumed from a checkpoint continues bit-identically to an uninterrupted one.
#pragma once
#include <string>

#include "onemodel/data/dataloader.h"
#include "onemodel/nn/lr_schedule.h"
#include "onemodel/nn/module.h"
#include "onemodel/nn/optim.h"

namespace om::nn {

// What else a checkpoint may carry, beyond the module, optimizer and schedule.
struct CheckpointExtras {
  data::DataLoader* loader = nullptr;  // its place (epoch, batches handed out) and options
  bool default_generator = false;      // om::default_generator()'s state (code drawing from it)
};

// Writes `module`'s state dict ("model.<path>") and the state of every generator it owns
// ("generator.model.<path>": Dropout's), the optimizer's state ("optimizer.<name>"), the
// schedule's epoch ("schedule.epoch") and the extras ("loader.*", "generator.default") when
// given. Throws om::Error naming the file.
void save_checkpoint(const std::string& path, const Module& module, optim::Optimizer* optimizer = nullptr,
                     const optim::LrSchedule* schedule = nullptr, const CheckpointExtras& extras = {});

// Reads a checkpoint written by save_checkpoint into the same kinds of objects. Every entry the
// targets expect must be present with the dtype and shape they have, and no other "model."
// entry may be in the file; a loader must have the options and dataset size it was saved with;
// a corrupted file (checksum) is refused.
void load_checkpoint(const std::string& path, Module& module, optim::Optimizer* optimizer = nullptr, optim::LrSchedule* schedule = nullptr,
                     const CheckpointExtras& extras = {});

}  // namespace om::nn
