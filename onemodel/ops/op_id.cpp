#include "onemodel/ops/op_id.h"

namespace om {
namespace {
struct OpInfo {
  const char* name;
  const char* enum_name;
  int arity;
  bool traceable;
};
constexpr OpInfo kOps[] = {
#define OM_OP(id, name, arity, traceable, attrs) {name, #id, arity, traceable},
#include "onemodel/ops/ops.def"
#undef OM_OP
};
}  // namespace

const char* op_name(OpId op) { return kOps[int(op)].name; }
const char* op_enum_name(OpId op) { return kOps[int(op)].enum_name; }
int op_arity(OpId op) { return kOps[int(op)].arity; }
bool op_traceable(OpId op) { return kOps[int(op)].traceable; }

}  // namespace om
