// The operator enum and names, generated from ops.def.
#pragma once
#include <cstddef>

namespace om {

enum class OpId : int {
#define OM_OP(id, name, arity, traceable, attrs) id,
#include "onemodel/ops/ops.def"
#undef OM_OP
};

constexpr size_t kOpCount = 0
#define OM_OP(id, name, arity, traceable, attrs) +1
#include "onemodel/ops/ops.def"
#undef OM_OP
    ;

const char* op_name(OpId op);  // the user-facing call, e.g. "om::relu"
const char* op_enum_name(OpId op);  // "Relu"
int op_arity(OpId op);
bool op_traceable(OpId op);

}  // namespace om
