// Losses (docs/training.md). Every one is a training operator: the tracer refuses it with
// UnsupportedOperation naming it (docs/tracing.md). Reductions follow PyTorch: Mean, Sum, None.
#pragma once
#include <vector>

#include "onemodel/ops/ops.h"

namespace om {

struct CrossEntropyOptions {
  Reduction reduction = Reduction::Mean;
  Tensor weight;               // f32 [classes] class weights, or undefined (all 1)
  int64_t ignore_index = -100;
  double label_smoothing = 0;  // in [0, 1]
};
// logits f32 [N, C], target i64 [N]. PyTorch's definition, including the weighted mean (divided
// by the sum of the targets' weights) and label smoothing.
Tensor cross_entropy(const Tensor& logits, const Tensor& target, const CrossEntropyOptions& options);

// prediction and target of one shape (both may require gradients).
Tensor l1_loss(const Tensor& prediction, const Tensor& target, Reduction reduction = Reduction::Mean);
// 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (beta 0: the L1 loss).
Tensor smooth_l1_loss(const Tensor& prediction, const Tensor& target, Reduction reduction = Reduction::Mean, double beta = 1.0);
// 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta).
Tensor huber_loss(const Tensor& prediction, const Tensor& target, Reduction reduction = Reduction::Mean, double delta = 1.0);
// -[pos_weight y log sigmoid(x) + (1 - y) log(1 - sigmoid(x))], computed stably. pos_weight
// (optional) broadcasts against the logits (usually [classes]); it gets no gradient.
Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& target, Reduction reduction = Reduction::Mean,
                                        const Tensor& pos_weight = Tensor());

struct CtcOptions {
  int64_t blank = 0;
  Reduction reduction = Reduction::Mean;  // Mean: each loss divided by its target length, then averaged
  bool zero_infinity = false;             // infeasible alignments give loss 0 and gradient 0
};
// log_probs f32 [T, N, C] (log-softmax outputs); targets i64 [N, S] (padded) or the
// concatenation [sum(target_lengths)]; one input and one target length per batch entry.
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const std::vector<int64_t>& input_lengths,
                const std::vector<int64_t>& target_lengths, const CtcOptions& options = {});

}  // namespace om
