// The reverse pass: records form a DAG over tensor impls; gradients flow in reverse topological
// order and accumulate into leaves' .grad().
#include <unordered_map>
#include <unordered_set>

#include "onemodel/autograd/backward.h"
#include "onemodel/autograd/grad.h"
#include "onemodel/core/grad_mode.h"
#include "onemodel/core/tensor_internal.h"
#include "onemodel/core/trace_hook.h"
#include "onemodel/kernels/kernels.h"
#include "onemodel/ops/ops.h"

namespace om::autograd {

GradFn grad_fn(OpId op) {
  static const GradFn table[] = {
#define OM_OP(id, name, arity, traceable, attrs) &grad_##id,
#include "onemodel/ops/ops.def"
#undef OM_OP
  };
  return table[int(op)];
}

namespace {

Status accumulate(std::unordered_map<detail::TensorImpl*, Tensor>& grads, detail::TensorImpl* key, const Tensor& g) {
  auto it = grads.find(key);
  if (it == grads.end()) {
    grads.emplace(key, g);
    return Status::ok();
  }
  OM_ASSIGN_OR_RETURN(it->second, ops::add(it->second, g));
  return Status::ok();
}

Status accumulate_into_leaf(detail::TensorImpl& leaf, const Tensor& g) {
  OM_ASSIGN_OR_RETURN(Tensor gd, detail::dense(g));
  if (!leaf.grad) {
    if (leaf.grad_buffer) {
      leaf.grad = leaf.grad_buffer;
      Tensor buf(leaf.grad);
      OM_TRY(detail::check_live(buf, "om::Tensor::backward (gradient buffer)"));
      return detail::copy_elements(gd, buf);
    }
    OM_ASSIGN_OR_RETURN(Tensor fresh, detail::make_tensor(leaf.shape, DType::f32));
    OM_TRY(detail::copy_elements(gd, fresh));
    leaf.grad = fresh.impl_ptr();
    return Status::ok();
  }
  Tensor acc(leaf.grad);
  OM_TRY(detail::check_live(acc, "om::Tensor::backward (accumulated gradient)"));
  float* a = detail::raw_as<float>(acc);
  kernels::f32_binary(kernels::BinaryOp::Add, a, 1, detail::raw_as<float>(gd), 1, a, size_t(acc.numel()));
  return Status::ok();
}

// Stands in for the records of a graph a backward pass has consumed (retain_graph = false):
// reaching it again is an error instead of a silent second accumulation (as in PyTorch).
const std::shared_ptr<BackwardRecord>& consumed_record() {
  static const auto* rec = new std::shared_ptr<BackwardRecord>(std::make_shared<BackwardRecord>());
  return *rec;
}

Status consumed_error() {
  return Status::error(ErrorKind::InvalidArgument,
                       "om::Tensor::backward: this graph was already used by a backward pass, which released it "
                       "(gradients would be counted twice); to run backward through the same graph again, pass "
                       "retain_graph = true to the first call: loss.backward({}, true)");
}

}  // namespace

Status backward(const Tensor& root, const Tensor& seed) { return backward(root, seed, false); }

Status backward(const Tensor& root, const Tensor& seed, bool retain_graph) {
  if (!root.impl()->requires_grad)
    return Status::error(ErrorKind::InvalidArgument, "om::Tensor::backward: the tensor does not require gradients (no input had requires_grad_())");
  OM_TRY(detail::check_live(root, "om::Tensor::backward"));
  OM_TRY(detail::check_live(seed, "om::Tensor::backward"));
  detail::InternalNoGrad no_grad;
  // Reverse topological order by iterative DFS.
  std::vector<detail::TensorImpl*> order;
  std::unordered_set<detail::TensorImpl*> seen;
  std::unordered_map<detail::TensorImpl*, std::shared_ptr<detail::TensorImpl>> keep;
  std::vector<std::pair<detail::TensorImpl*, size_t>> stack{{root.impl(), 0}};
  seen.insert(root.impl());
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    const auto& rec = node->grad_fn;
    if (rec == consumed_record()) return consumed_error();
    if (rec && next < rec->inputs.size()) {
      const Tensor& in = rec->inputs[next++];
      if (in.defined() && in.impl()->requires_grad && seen.insert(in.impl()).second) {
        keep[in.impl()] = in.impl_ptr();
        stack.push_back({in.impl(), 0});
      }
      continue;
    }
    order.push_back(node);
    stack.pop_back();
  }
  std::unordered_map<detail::TensorImpl*, Tensor> grads;
  grads.emplace(root.impl(), seed);
  for (size_t i = order.size(); i-- > 0;) {
    detail::TensorImpl* node = order[i];
    auto it = grads.find(node);
    if (it == grads.end()) continue;
    Tensor g = it->second;
    if (!node->grad_fn) {
      OM_TRY(accumulate_into_leaf(*node, g));
      continue;
    }
    const BackwardRecord& rec = *node->grad_fn;
    // Gradient functions read inputs and saved values directly: refuse released ones.
    for (const Tensor& in : rec.inputs)
      if (in.defined()) OM_TRY(detail::check_live(in, "om::Tensor::backward"));
    if (rec.saved.defined()) OM_TRY(detail::check_live(rec.saved, "om::Tensor::backward"));
    std::vector<Tensor> gin(rec.inputs.size());
    OM_TRY(grad_fn(rec.op)(rec, g, &gin));
    for (size_t k = 0; k < rec.inputs.size(); ++k) {
      const Tensor& in = rec.inputs[k];
      if (!gin[k].defined() || !in.defined() || !in.impl()->requires_grad) continue;
      if (gin[k].shape() != in.shape())
        return Status::error(ErrorKind::Internal, msg("autograd: gradient of ", op_name(rec.op), " input ", k, " has shape ",
                                                      shape_str(gin[k].shape()), " but the input is ", in.to_string()));
      OM_TRY(accumulate(grads, in.impl(), gin[k]));
    }
    grads.erase(node);
  }
  // Release the graph: the records (and the activations they hold) go, so the store can reuse
  // their memory; a second pass through these tensors is refused by consumed_error().
  if (!retain_graph)
    for (detail::TensorImpl* node : order)
      if (node->grad_fn) node->grad_fn = consumed_record();
  return Status::ok();
}

}  // namespace om::autograd
