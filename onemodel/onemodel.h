// onemodel: the one header users include.
#pragma once
#include "onemodel/autograd/grad_mode.h"
#include "onemodel/core/dtype.h"
#include "onemodel/core/error.h"
#include "onemodel/core/mode.h"
#include "onemodel/core/shape.h"
#include "onemodel/core/storage.h"
#include "onemodel/core/store.h"
#include "onemodel/core/tensor.h"
#include "onemodel/ops/ops.h"
#if __has_include("onemodel/nn/nn.h")
#include "onemodel/nn/nn.h"
#endif
#if __has_include("onemodel/trace/tracer.h")
#include "onemodel/trace/tracer.h"
#endif
#if __has_include("onemodel/runtime/session.h")
#include "onemodel/runtime/session.h"
#endif
#if __has_include("onemodel/io/onnx.h")
#include "onemodel/io/onnx.h"
#endif
#if __has_include("onemodel/io/npy.h")
#include "onemodel/io/npy.h"
#endif
