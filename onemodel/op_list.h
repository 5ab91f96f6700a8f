// Selective operator registration (docs/deploying.md, "Selective operator registration"): a
// program that names the operators it needs links only their kernels, as TensorFlow Lite Micro's
// op resolver or ONNX Runtime's reduced-operator builds do. Every operator is its own symbol,
// om::graph::op_defs::<op type> (one table entry), so the linker keeps only those named.
//
// In exactly one source file of the program, after `onemodel ops MODEL > model_ops.h` (or by
// hand, or with the CMake package's onemodel_register_ops):
//
//   #include <onemodel/op_list.h>
//   #define MODEL_OPS(X) X(Conv) X(FusedConv) X(Relu) X(MaxPool) X(Gemm)
//   OM_REGISTER_OPS(MODEL_OPS)
//
// This defines om::graph::registered_op_list(), which the library otherwise takes from its full
// registry (graph/registry_full.cpp). A model with an operator the list leaves out is refused
// when its Session is created, naming the operator. The library must be linked as an archive
// (not --whole-archive), and with --gc-sections for the size to drop.
#pragma once
#include <cstddef>

namespace om::runtime {
// Runs over a batch split into one part per thread (docs/threads.md, "Batches split between
// threads"; runtime/session.cpp). Reached only through an OpList: the full registry's, or an
// OM_REGISTER_OPS_SPLITTING_BATCHES list, so a program whose list leaves it out links none of it.
struct BatchSplit;
extern const BatchSplit batch_split;
}  // namespace om::runtime

namespace om::graph {

struct OpDef;

// The operators a program registers.
struct OpList {
  const OpDef* const* defs = nullptr;
  size_t count = 0;
  bool selective = false;  // a program's own list (OM_REGISTER_OPS), not the full registry
  const runtime::BatchSplit* batch_split = nullptr;  // null: runs over a batch stay whole
  const OpDef* const* begin() const { return defs; }
  const OpDef* const* end() const { return defs + count; }
  size_t size() const { return count; }
};

// The program's operators: its OM_REGISTER_OPS list, or the library's full registry.
OpList registered_op_list();

}  // namespace om::graph

#define OM_DECLARE_OP_(name) extern const ::om::graph::OpDef name;
#define OM_ADDRESS_OF_OP_(name) &::om::graph::op_defs::name,

// LIST(X) expands X(op type) once per operator (an X-list, as above). OM_REGISTER_OPS leaves
// batches whole (SessionOptions::split_batch has no effect: the smallest program);
// OM_REGISTER_OPS_SPLITTING_BATCHES links the split as the full registry does (a few KB).
#define OM_REGISTER_OPS(LIST) OM_REGISTER_OPS_(LIST, nullptr)
#define OM_REGISTER_OPS_SPLITTING_BATCHES(LIST) OM_REGISTER_OPS_(LIST, &::om::runtime::batch_split)
#define OM_REGISTER_OPS_(LIST, SPLIT)                                                      \
  namespace om::graph {                                                                    \
  namespace op_defs {                                                                      \
  LIST(OM_DECLARE_OP_)                                                                     \
  }                                                                                        \
  OpList registered_op_list() {                                                            \
    static const OpDef* const registered[] = {LIST(OM_ADDRESS_OF_OP_)};                    \
    return {registered, sizeof registered / sizeof registered[0], true, SPLIT};            \
  }                                                                                        \
  }
