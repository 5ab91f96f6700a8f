// om::nn::Module: the base of every layer and model, in the style of PyTorch's C++ frontend.
// Modules are held by std::shared_ptr. A module owns named parameters (tensors that require
// gradients), buffers (state without gradients, e.g. running statistics) and child modules;
// their state-dict paths ("fc1.weight", "encoder.layers.1.bias") come from the registration
// names. Parameters and buffers live in the om::Store that was current when they were created.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "onemodel/core/tensor.h"
#include "onemodel/core/module_path.h"
#include "onemodel/trace/tracer.h"

namespace om::nn {

// An ordered list of (path, tensor), as returned by named_parameters() and state_dict().
class NamedTensors : public std::vector<std::pair<std::string, Tensor>> {
 public:
  using std::vector<std::pair<std::string, Tensor>>::vector;
  bool contains(const std::string& name) const;
  // The tensor stored under `name`; throws om::Error (InvalidArgument) listing the names.
  Tensor at(const std::string& name) const;
  std::vector<std::string> names() const;
};
using StateDict = NamedTensors;

class Module : public std::enable_shared_from_this<Module> {
 public:
  explicit Module(std::string type_name = "Module");
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // The computation of a single-tensor module. Layers override it; the default throws
  // (Unsupported) naming the module. A generic trace(model, example) calls this.
  virtual Tensor forward(const Tensor& x);
  // forward() with this module's path pushed for error messages: call children through it.
  Tensor operator()(const Tensor& x);

  // Registration (names must be non-empty, without '.', unique within this module).
  // A parameter is made to require gradients when `requires_grad` (f32 only).
  Tensor register_parameter(const std::string& name, Tensor tensor, bool requires_grad = true);
  Tensor register_buffer(const std::string& name, Tensor tensor);
  // A generator the module draws from (Dropout's mask): listed by named_generators() and saved
  // in checkpoints, so a resumed run draws what an uninterrupted one would. It must live as
  // long as the module (a member of it).
  void register_generator(const std::string& name, Generator& gen);
  template <typename M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    add_child(name, module);
    return module;
  }

  // Recursive listings with paths relative to this module, in registration order
  // (own entries first, then each child's).
  NamedTensors named_parameters(bool recurse = true) const;
  NamedTensors named_buffers(bool recurse = true) const;
  std::vector<Tensor> parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_children() const;
  std::vector<std::pair<std::string, Generator*>> named_generators(bool recurse = true) const;
  // This module ("") and every descendant, depth first.
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_modules();

  // Parameters, then buffers, per module, depth first — the same order as PyTorch.
  StateDict state_dict() const;
  // Copies values into the existing tensors (so references held by layers stay valid). Every
  // entry is checked before anything is written: shape and dtype must match; with `strict`,
  // missing and unexpected names are errors too. Throws om::Error naming the entries.
  void load_state_dict(const StateDict& state, bool strict = true);

  // Traces forward() on `example` (docs/tracing.md): one graph input `input_name` whose axes are
  // named by `axis_names` ("" = static), every parameter and buffer named by its state-dict
  // path, one output `output_name` (module_trace.cpp).
  TracedModel trace(const Tensor& example, const std::vector<std::string>& axis_names = {}, const std::string& input_name = "input",
                    const std::string& output_name = "output", const TracerOptions& options = {});
  // Traces a forward taking several tensors and returning several (a method of this module
  // called through `forward`, e.g. [&](auto& x) { return std::vector<Tensor>{m->forward(x[0], x[1])}; }):
  // one graph input per TraceInput (name, example, axis names), outputs named by `output_names`
  // (default "output" for one, "output_0", "output_1", ... for more); parameters and buffers by
  // state-dict path, verified like the one-input form.
  struct TraceInput {
    std::string name;
    Tensor example;
    std::vector<std::string> axis_names;
  };
  using TraceForward = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
  TracedModel trace(const std::vector<TraceInput>& inputs, const TraceForward& forward, const std::vector<std::string>& output_names = {},
                    const TracerOptions& options = {});

  void train(bool on = true);  // recursive
  void eval() { train(false); }
  bool is_training() const { return training_; }
  void zero_grad();  // every parameter's accumulated gradient back to zero

  // The module's state-dict path from the root it is registered in ("" for a root).
  const std::string& path() const { return path_; }
  // A readable name for messages: the path, or "<root Type>" for a root.
  std::string display_name() const;
  const std::string& type_name() const { return type_name_; }

 protected:
  void add_child(const std::string& name, std::shared_ptr<Module> module);

 private:
  void check_new_name(const std::string& name, const char* call) const;
  void set_path(const std::string& path);
  void collect(const std::string& prefix, bool params, bool buffers, bool recurse, NamedTensors* out) const;

  std::string type_name_;
  std::string path_;
  bool training_ = true;
  std::vector<std::pair<std::string, Tensor>> parameters_;
  std::vector<std::pair<std::string, Tensor>> buffers_;
  std::vector<std::pair<std::string, Generator*>> generators_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
};

// Pushes a module's path around a call into it (what Module::operator() does).
class ModuleCallGuard {
 public:
  explicit ModuleCallGuard(const Module& m) : guard_(m.path()) {}

 private:
  ModulePathGuard guard_;
};

}  // namespace om::nn
