// om::Value: a graph input or output of any kind for Session::run_values (graph::ValueKind): a
// tensor, a sequence of tensors, or an optional that is none or holds a tensor or a sequence
// (ONNX's tensor, sequence and optional types; docs/onnx.md, "Sequences and optionals").
#pragma once
#include <utility>
#include <vector>

#include "onemodel/core/tensor.h"
#include "onemodel/graph/ir.h"

namespace om {

class Value {
 public:
  Value() = default;  // an empty optional (none)
  explicit Value(Tensor t) : kind_(graph::ValueKind::Tensor), present_(true), elements_{std::move(t)} {}
  static Value sequence(std::vector<Tensor> elements) { return Value(graph::ValueKind::Sequence, true, std::move(elements)); }
  static Value none() { return Value(); }
  // An optional holding a tensor, or (optional_sequence) a sequence.
  static Value optional(Tensor t) { return Value(graph::ValueKind::Optional, true, {std::move(t)}); }
  static Value optional_sequence(std::vector<Tensor> elements) {
    return Value(graph::ValueKind::OptionalSequence, true, std::move(elements));
  }

  graph::ValueKind kind() const { return kind_; }
  bool is_tensor() const { return kind_ == graph::ValueKind::Tensor; }
  bool is_sequence() const { return kind_ == graph::ValueKind::Sequence || kind_ == graph::ValueKind::OptionalSequence; }
  bool is_none() const { return !present_; }
  // The tensor (of a tensor, or of an optional holding one); throws om::Error otherwise.
  const Tensor& tensor() const;
  // The elements: a sequence's in order, a tensor's or an optional's (0 or 1) otherwise.
  const std::vector<Tensor>& elements() const { return elements_; }

 private:
  Value(graph::ValueKind kind, bool present, std::vector<Tensor> elements)
      : kind_(kind), present_(present), elements_(std::move(elements)) {}
  graph::ValueKind kind_ = graph::ValueKind::Optional;
  bool present_ = false;
  std::vector<Tensor> elements_;
};

}  // namespace om
