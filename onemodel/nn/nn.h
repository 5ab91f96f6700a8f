// The training package: modules, layers and optimizers (included by onemodel/onemodel.h).
#pragma once
#include "onemodel/nn/layers.h"
#include "onemodel/nn/conv_layers.h"
#include "onemodel/nn/conv1d_layers.h"
#include "onemodel/nn/module.h"
#include "onemodel/core/module_path.h"
#include "onemodel/nn/optim.h"
#include "onemodel/nn/clip_grad.h"
#include "onemodel/nn/recurrent.h"
#include "onemodel/nn/lr_schedule.h"
#include "onemodel/nn/checkpoint.h"
#include "onemodel/nn/transformer.h"
