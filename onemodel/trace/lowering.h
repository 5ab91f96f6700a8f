// The lowering table (docs/tracing.md, "The operator mapping"), one entry per operator of ops.def. An operator without a
// specialisation of Lowering<> is refused with UnsupportedOperation, so operators added to
// ops.def later fail loudly until they get a mapping.
#pragma once
#include "onemodel/ops/op_id.h"

namespace om::trace {
// True when `op` has a lowering (traceable operators only).
bool has_lowering(OpId op);
}  // namespace om::trace
