#include "onemodel/nn/module.h"

#include <unordered_map>

#include "onemodel/core/grad_mode.h"
#include "onemodel/core/status.h"

namespace om::nn {

namespace {
std::string join(const std::string& prefix, const std::string& name) {
  if (prefix.empty()) return name;
  return name.empty() ? prefix : prefix + "." + name;
}

std::string list(const std::vector<std::string>& names, size_t max = 8) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < max; ++i) s += (i ? ", '" : "'") + names[i] + "'";
  if (names.size() > max) s += msg(", ... (", names.size(), " in all)");
  return s;
}
}  // namespace

// ---- NamedTensors ----

bool NamedTensors::contains(const std::string& name) const {
  for (const auto& e : *this)
    if (e.first == name) return true;
  return false;
}

Tensor NamedTensors::at(const std::string& name) const {
  for (const auto& e : *this)
    if (e.first == name) return e.second;
  raise(Status::error(ErrorKind::InvalidArgument, msg("om::nn::NamedTensors::at: no entry '", name, "'; the entries are ", list(names()))));
}

std::vector<std::string> NamedTensors::names() const {
  std::vector<std::string> out;
  for (const auto& e : *this) out.push_back(e.first);
  return out;
}

// ---- Module ----

Module::Module(std::string type_name) : type_name_(std::move(type_name)) {}

std::string Module::display_name() const { return path_.empty() ? "<root " + type_name_ + ">" : path_; }

Tensor Module::forward(const Tensor&) {
  raise(Status::error(ErrorKind::Unsupported, msg("om::nn::Module::forward: module ", display_name(), " of type ", type_name_,
                                                  " has no single-tensor forward; override forward(const Tensor&) or call its own methods")));
}

Tensor Module::operator()(const Tensor& x) {
  ModulePathGuard guard(path_);
  return forward(x);
}

void Module::check_new_name(const std::string& name, const char* call) const {
  if (name.empty() || name.find('.') != std::string::npos)
    raise(Status::error(ErrorKind::InvalidArgument, msg(call, ": name '", name, "' in module ", display_name(),
                                                        " must be non-empty and contain no '.' (dots separate state-dict path parts)")));
  auto taken = [&](const auto& v) {
    for (const auto& e : v)
      if (e.first == name) return true;
    return false;
  };
  if (taken(parameters_) || taken(buffers_) || taken(children_) || taken(generators_))
    raise(Status::error(ErrorKind::InvalidArgument, msg(call, ": module ", display_name(), " already has a parameter, buffer, generator or child named '",
                                                        name, "'; choose another name")));
}

Tensor Module::register_parameter(const std::string& name, Tensor tensor, bool requires_grad) {
  check_new_name(name, "om::nn::Module::register_parameter");
  if (!tensor.defined())
    raise(Status::error(ErrorKind::InvalidArgument, msg("om::nn::Module::register_parameter: '", join(path_, name), "' is undefined")));
  if (requires_grad && !tensor.requires_grad()) tensor.requires_grad_(true);
  parameters_.emplace_back(name, tensor);
  return tensor;
}

Tensor Module::register_buffer(const std::string& name, Tensor tensor) {
  check_new_name(name, "om::nn::Module::register_buffer");
  if (!tensor.defined())
    raise(Status::error(ErrorKind::InvalidArgument, msg("om::nn::Module::register_buffer: '", join(path_, name), "' is undefined")));
  buffers_.emplace_back(name, tensor);
  return tensor;
}

void Module::register_generator(const std::string& name, Generator& gen) {
  check_new_name(name, "om::nn::Module::register_generator");
  generators_.emplace_back(name, &gen);
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> module) {
  check_new_name(name, "om::nn::Module::register_module");
  if (!module)
    raise(Status::error(ErrorKind::InvalidArgument, msg("om::nn::Module::register_module: child '", join(path_, name), "' is null")));
  if (module.get() == this)
    raise(Status::error(ErrorKind::InvalidArgument, msg("om::nn::Module::register_module: module ", display_name(), " cannot contain itself")));
  module->set_path(join(path_, name));
  children_.emplace_back(name, std::move(module));
}

void Module::set_path(const std::string& path) {
  path_ = path;
  for (auto& c : children_) c.second->set_path(join(path_, c.first));
}

void Module::collect(const std::string& prefix, bool params, bool bufs, bool recurse, NamedTensors* out) const {
  if (params)
    for (const auto& p : parameters_) out->emplace_back(join(prefix, p.first), p.second);
  if (bufs)
    for (const auto& b : buffers_) out->emplace_back(join(prefix, b.first), b.second);
  if (!recurse) return;
  for (const auto& c : children_) c.second->collect(join(prefix, c.first), params, bufs, true, out);
}

NamedTensors Module::named_parameters(bool recurse) const {
  NamedTensors out;
  collect("", true, false, recurse, &out);
  return out;
}

NamedTensors Module::named_buffers(bool recurse) const {
  NamedTensors out;
  collect("", false, true, recurse, &out);
  return out;
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& p : named_parameters(recurse)) out.push_back(p.second);
  return out;
}

std::vector<Tensor> Module::buffers(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& b : named_buffers(recurse)) out.push_back(b.second);
  return out;
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_children() const { return children_; }

std::vector<std::pair<std::string, Generator*>> Module::named_generators(bool recurse) const {
  std::vector<std::pair<std::string, Generator*>> out;
  for (const auto& g : generators_) out.emplace_back(g.first, g.second);
  if (!recurse) return out;
  for (const auto& c : children_)
    for (auto& g : c.second->named_generators(true)) out.emplace_back(join(c.first, g.first), g.second);
  return out;
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_modules() {
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> out;
  std::shared_ptr<Module> self = weak_from_this().lock();
  // Not held by a shared_ptr (a module on the stack): list it without ownership.
  if (!self) self = std::shared_ptr<Module>(this, [](Module*) {});
  out.emplace_back("", self);
  for (const auto& c : children_) {
    for (auto& d : c.second->named_modules()) out.emplace_back(join(c.first, d.first), d.second);
  }
  return out;
}

StateDict Module::state_dict() const {
  StateDict out;
  collect("", true, true, true, &out);
  return out;
}

void Module::load_state_dict(const StateDict& state, bool strict) {
  const char* call = "om::nn::Module::load_state_dict";
  const StateDict mine = state_dict();
  std::unordered_map<std::string, const Tensor*> given;
  for (const auto& e : state) given[e.first] = &e.second;
  std::vector<std::string> missing, unexpected, mismatched;
  std::unordered_map<std::string, bool> known;
  for (const auto& e : mine) {
    known[e.first] = true;
    auto it = given.find(e.first);
    if (it == given.end()) {
      missing.push_back(e.first);
      continue;
    }
    const Tensor& src = *it->second;
    if (!src.defined() || src.shape() != e.second.shape() || src.dtype() != e.second.dtype())
      mismatched.push_back(msg("'", e.first, "': the state dict has ", src.to_string(), " but the model has ", e.second.to_string()));
  }
  for (const auto& e : state)
    if (!known.count(e.first)) unexpected.push_back(e.first);
  // Check everything first, so a failed load leaves the model unchanged.
  const std::string where = msg(" (loading into module ", display_name(), " of type ", type_name_, ")");
  if (!mismatched.empty()) {
    std::string all;
    for (const auto& m : mismatched) all += (all.empty() ? "" : "; ") + m;
    raise(Status::error(ErrorKind::ShapeMismatch, msg(call, ": ", mismatched.size(), " entr", mismatched.size() == 1 ? "y does" : "ies do",
                                                      " not match", where, ": ", all, ". Was the state saved from a model with other sizes?")));
  }
  if (strict && (!missing.empty() || !unexpected.empty())) {
    std::string m = msg(call, where, ":");
    if (!missing.empty()) m += msg(" missing ", list(missing), ";");
    if (!unexpected.empty()) m += msg(" unexpected ", list(unexpected), ";");
    m += " pass strict = false to load the entries that match";
    raise(Status::error(ErrorKind::InvalidArgument, m));
  }
  detail::InternalNoGrad no_grad;
  for (const auto& e : mine) {
    auto it = given.find(e.first);
    if (it == given.end()) continue;
    Tensor dst = e.second;
    dst.copy_from(*it->second);
  }
}

void Module::train(bool on) {
  training_ = on;
  for (auto& c : children_) c.second->train(on);
}

void Module::zero_grad() {
  for (Tensor& p : parameters()) p.zero_grad();
}

}  // namespace om::nn
