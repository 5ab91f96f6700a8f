// Graphs with sequences and optionals (docs/onnx.md, "Sequences and optionals"). A Session over
// such a graph lowers it, once per input structure, into a graph of tensors only, run by an inner
// Session with the same options:
// - the structure: each sequence input's length, whether each optional input is present, and the
//   values of the graph inputs the lowering had to read (the integer or bool ones deciding a
//   position, a trip count or a condition);
// - a sequence becomes the list of its elements' tensors, an optional its value or none; the
//   sequence operators become that list's bookkeeping (SequenceAt an alias, ConcatFromSequence a
//   Concat...), an If whose branches give sequences is inlined on its condition, a Loop carrying
//   a sequence and a SequenceMap are unrolled, so positions, counts and conditions must be known
//   when planning (constants, or computed from constants, lengths and integer/bool inputs);
// - a sequence input's elements become inputs of the lowered graph, a sequence output's elements
//   outputs.
// The lowered graphs are cached (at most SessionOptions::max_cached_plans; the least recently
// used dropped), each planning its shapes as any Session does. Reached only through the sequence
// operators' records (OpDef::sequences), so a program registering none of them links none of it.
#pragma once
#include <memory>
#include <string>

#include "onemodel/core/status.h"
#include "onemodel/graph/ir.h"
#include "onemodel/runtime/session.h"

namespace om::runtime {

class SequenceRunner;

struct SequenceHooks {
  // unroll_loops: unroll every Loop, not only those carrying sequences (a graph whose Loop body
  // has a shape decided by the iteration number, which one plan cannot hold; `why` says so in
  // the errors of a lowering that cannot unroll it).
  Result<std::shared_ptr<SequenceRunner>> (*create)(const graph::Graph& g, const SessionOptions& options, bool unroll_loops,
                                                    const std::string& why);
  Status (*run)(SequenceRunner& r, const ValueView* inputs, size_t num_inputs, ValueSink sink, void* sink_ctx);
  // The number of lowered graphs cached, and the stats of the last one's last plan.
  size_t (*cached)(const SequenceRunner& r);
  PlanStats (*last_stats)(const SequenceRunner& r);
};

// Whether g (or a subgraph) has a value of another kind than tensor among its inputs and outputs,
// or a sequence operator: then a Session runs it through the lowering.
bool uses_sequences(const graph::Graph& g);
// The lowering's hooks, from the records of the sequence operators g uses or, for a graph that
// only passes sequences through, of SequenceConstruct; null when this program registers none.
const SequenceHooks* sequence_hooks(const graph::Graph& g);

}  // namespace om::runtime
