// The full operator registry: every family of graph/ops/families.def, in that order. A program
// with its own list (OM_REGISTER_OPS, onemodel/op_list.h) defines registered_op_list() itself,
// so the linker never takes this file from the archive, nor the families it alone references.
// It must therefore hold nothing else (it also links the batch split, runtime/session.cpp).
#include <vector>

#include "onemodel/graph/ops/op_util.h"

namespace om::graph {

OpList registered_op_list() {
  static const std::vector<const OpDef*> table = [] {
    std::vector<const OpDef*> v;
    const ops::OpTable families[] = {
#define OM_OP_FAMILY(name) ops::name##_ops(),
#include "onemodel/graph/ops/families.def"
#undef OM_OP_FAMILY
    };
    for (ops::OpTable t : families) v.insert(v.end(), t.defs, t.defs + t.count);
    return v;
  }();
  return {table.data(), table.size(), false, &runtime::batch_split};
}

}  // namespace om::graph
