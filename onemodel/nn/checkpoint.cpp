// The checkpoint file (docs/training.md, "Checkpoints"), all integers little-endian:
//   "OMCKPT01"; u64 entry count; per entry: u32 name length, name bytes, u8 kind (0 tensor,
//   1 f64, 2 i64); a tensor: u8 dtype (om::DType value), u32 rank, i64 dims[rank], u64 byte count,
//   the elements in row-major order; a scalar: its 8 bytes; then u64 FNV-1a of every byte before.
#include "onemodel/nn/checkpoint.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <type_traits>

#include "onemodel/core/grad_mode.h"
#include "onemodel/core/tensor_internal.h"

namespace om::nn {
namespace {

constexpr char kMagic[8] = {'O', 'M', 'C', 'K', 'P', 'T', '0', '1'};
enum Kind : uint8_t { kTensor = 0, kReal = 1, kInt = 2 };

uint64_t fnv1a(const uint8_t* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

struct Writer {
  std::vector<uint8_t> bytes;
  uint64_t entries = 0;  // patched into the header at the end
  void raw(const void* p, size_t n) { bytes.insert(bytes.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n); }
  template <typename T> void put(T v) { raw(&v, sizeof v); }  // the library targets little-endian machines
  void name(const std::string& s) {
    put(uint32_t(s.size()));
    raw(s.data(), s.size());
  }
};

struct Entry {
  Kind kind = kReal;
  DType dtype = DType::f32;
  Shape shape;
  const uint8_t* data = nullptr;  // into the file's bytes
  size_t nbytes = 0;
  double real = 0;
  int64_t integer = 0;
};

struct Reader {
  const std::vector<uint8_t>& b;
  size_t at = 0;
  const std::string& path;
  Status need(size_t n) const {
    if (n > b.size() - at)
      return Status::error(ErrorKind::InvalidArgument, msg("om::nn::load_checkpoint: '", path, "' ends early (at byte ", at, "); the file is truncated"));
    return Status::ok();
  }
  template <typename T> Result<T> get() {
    OM_TRY(need(sizeof(T)));
    T v;
    std::memcpy(&v, b.data() + at, sizeof v);
    at += sizeof v;
    return v;
  }
};

std::string describe(DType d, const Shape& s) { return msg(dtype_name(d), shape_str(s)); }

void write_tensor(Writer& w, const std::string& name, const Tensor& t) {
  Tensor d = unwrap(detail::dense(t));
  ++w.entries;
  w.name(name);
  w.put(uint8_t(kTensor));
  w.put(uint8_t(d.dtype()));
  w.put(uint32_t(d.dim()));
  for (int64_t s : d.shape()) w.put(s);
  const size_t n = size_t(d.numel()) * dtype_size(d.dtype());
  w.put(uint64_t(n));
  w.raw(detail::raw(d), n);
}

Result<std::map<std::string, Entry>> parse(const std::vector<uint8_t>& b, const std::string& path) {
  const char* call = "om::nn::load_checkpoint";
  if (b.size() < sizeof kMagic + 16 || std::memcmp(b.data(), kMagic, sizeof kMagic) != 0)
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": '", path, "' is not a onemodel checkpoint (no OMCKPT01 header); write one with om::nn::save_checkpoint"));
  uint64_t stored;
  std::memcpy(&stored, b.data() + b.size() - 8, 8);
  if (fnv1a(b.data(), b.size() - 8) != stored)
    return Status::error(ErrorKind::InvalidArgument, msg(call, ": '", path, "' fails its checksum; the file is corrupted or was cut short"));
  const std::vector<uint8_t> body(b.begin(), b.end() - 8);
  Reader r{body, sizeof kMagic, path};
  OM_ASSIGN_OR_RETURN(uint64_t count, r.get<uint64_t>());
  std::map<std::string, Entry> out;
  for (uint64_t i = 0; i < count; ++i) {
    OM_ASSIGN_OR_RETURN(uint32_t len, r.get<uint32_t>());
    OM_TRY(r.need(len));
    std::string name(reinterpret_cast<const char*>(body.data() + r.at), len);
    r.at += len;
    Entry e;
    OM_ASSIGN_OR_RETURN(uint8_t kind, r.get<uint8_t>());
    e.kind = Kind(kind);
    if (kind == kReal) {
      OM_ASSIGN_OR_RETURN(e.real, r.get<double>());
    } else if (kind == kInt) {
      OM_ASSIGN_OR_RETURN(e.integer, r.get<int64_t>());
    } else if (kind == kTensor) {
      OM_ASSIGN_OR_RETURN(uint8_t dt, r.get<uint8_t>());
      e.dtype = DType(dt);
      OM_ASSIGN_OR_RETURN(uint32_t rank, r.get<uint32_t>());
      if (rank > 64) return Status::error(ErrorKind::InvalidArgument, msg(call, ": entry '", name, "' in '", path, "' has rank ", rank));
      for (uint32_t k = 0; k < rank; ++k) {
        OM_ASSIGN_OR_RETURN(int64_t s, r.get<int64_t>());
        e.shape.push_back(s);
      }
      int64_t numel = 0;
      OM_TRY(check_shape(msg(call, ": entry '", name, "'"), e.shape, &numel));
      OM_ASSIGN_OR_RETURN(uint64_t nbytes, r.get<uint64_t>());
      if (nbytes != uint64_t(numel) * dtype_size(e.dtype))
        return Status::error(ErrorKind::InvalidArgument, msg(call, ": entry '", name, "' in '", path, "' holds ", nbytes, " bytes, not the ",
                                                             uint64_t(numel) * dtype_size(e.dtype), " of ", describe(e.dtype, e.shape)));
      OM_TRY(r.need(size_t(nbytes)));
      e.data = b.data() + r.at;  // the same offset in the full buffer
      e.nbytes = size_t(nbytes);
      r.at += size_t(nbytes);
    } else {
      return Status::error(ErrorKind::InvalidArgument, msg(call, ": entry '", name, "' in '", path, "' has unknown kind ", int(kind)));
    }
    out[name] = e;
  }
  return out;
}

// The entry `name` as a tensor of `want`'s dtype and shape, or an error naming it.
Status check_tensor(const std::map<std::string, Entry>& entries, const std::string& name, const Tensor& want, const std::string& path) {
  auto it = entries.find(name);
  if (it == entries.end())
    return Status::error(ErrorKind::InvalidArgument, msg("om::nn::load_checkpoint: '", path, "' has no entry '", name,
                                                         "'; was it saved from another model or optimizer?"));
  const Entry& e = it->second;
  if (e.kind != kTensor || e.dtype != want.dtype() || e.shape != want.shape())
    return Status::error(ErrorKind::ShapeMismatch, msg("om::nn::load_checkpoint: entry '", name, "' is ",
                                                       e.kind == kTensor ? describe(e.dtype, e.shape) : std::string("a scalar"), " in '", path,
                                                       "' but the target has ", describe(want.dtype(), want.shape())));
  return Status::ok();
}

Status check_scalar(const std::map<std::string, Entry>& entries, const std::string& name, Kind kind, const std::string& path) {
  auto it = entries.find(name);
  if (it == entries.end() || it->second.kind != kind)
    return Status::error(ErrorKind::InvalidArgument, msg("om::nn::load_checkpoint: '", path, "' has no ", kind == kReal ? "real" : "integer",
                                                         " entry '", name, "'; was it saved from other objects (another kind of optimizer, or without this schedule or loader)?"));
  return Status::ok();
}

template <typename T> void write_scalar(Writer& w, const std::string& name, T v) {
  ++w.entries;
  w.name(name);
  w.put(uint8_t(std::is_same_v<T, double> ? kReal : kInt));
  w.put(v);
}

// The generators a checkpoint carries: the module's own, then the default one on request.
std::vector<std::pair<std::string, Generator*>> generators_of(const Module& module, const CheckpointExtras& extras) {
  std::vector<std::pair<std::string, Generator*>> out;
  for (auto& [name, g] : module.named_generators()) out.emplace_back("generator.model." + name, g);
  if (extras.default_generator) out.emplace_back("generator.default", &default_generator());
  return out;
}

// A loader's options and dataset size as saved, so a resume with other ones is refused.
std::vector<std::pair<std::string, int64_t>> loader_facts(const data::DataLoader& l) {
  return {{"loader.epoch", l.epoch()},
          {"loader.position", l.position()},
          {"loader.dataset_size", l.dataset().size()},
          {"loader.batch_size", l.options().batch_size},
          {"loader.shuffle", l.options().shuffle ? 1 : 0},
          {"loader.drop_last", l.options().drop_last ? 1 : 0},
          {"loader.seed", int64_t(l.options().seed)}};
}

Status copy_into(const Entry& e, const Tensor& dst) {
  OM_ASSIGN_OR_RETURN(Tensor src, detail::make_tensor(e.shape, e.dtype, false, "om::nn::load_checkpoint"));
  if (e.nbytes) std::memcpy(detail::raw(src), e.data, e.nbytes);
  OM_TRY(detail::copy_elements(src, dst));
  detail::bump_version(dst);
  return Status::ok();
}

}  // namespace

void save_checkpoint(const std::string& path, const Module& module, optim::Optimizer* optimizer, const optim::LrSchedule* schedule,
                     const CheckpointExtras& extras) {
  Writer w;
  w.raw(kMagic, sizeof kMagic);
  w.put(uint64_t(0));  // the entry count, patched below
  for (const auto& [name, t] : module.state_dict()) write_tensor(w, "model." + name, t);
  for (const auto& [name, g] : generators_of(module, extras)) write_tensor(w, name, g->get_state());
  if (optimizer) {
    const optim::StateRefs refs = optimizer->state();
    for (const auto& [name, t] : refs.tensors) write_tensor(w, "optimizer." + name, t);
    for (const auto& [name, p] : refs.reals) write_scalar(w, "optimizer." + name, *p);
    for (const auto& [name, p] : refs.ints) write_scalar(w, "optimizer." + name, *p);
  }
  if (schedule) write_scalar(w, "schedule.epoch", schedule->epoch());
  if (extras.loader)
    for (const auto& [name, v] : loader_facts(*extras.loader)) write_scalar(w, name, v);
  std::memcpy(w.bytes.data() + sizeof kMagic, &w.entries, sizeof w.entries);
  w.put(fnv1a(w.bytes.data(), w.bytes.size()));
  FILE* fp = std::fopen(path.c_str(), "wb");
  if (!fp) raise(Status::error(ErrorKind::InvalidArgument, msg("om::nn::save_checkpoint: cannot open '", path, "' for writing: ", std::strerror(errno))));
  const bool ok = std::fwrite(w.bytes.data(), 1, w.bytes.size(), fp) == w.bytes.size();
  const bool closed = std::fclose(fp) == 0;
  if (!ok || !closed) raise(Status::error(ErrorKind::InvalidArgument, msg("om::nn::save_checkpoint: writing '", path, "' failed (disk full?)")));
}

void load_checkpoint(const std::string& path, Module& module, optim::Optimizer* optimizer, optim::LrSchedule* schedule,
                     const CheckpointExtras& extras) {
  const char* call = "om::nn::load_checkpoint";
  std::vector<uint8_t> bytes;
  {
    FILE* fp = std::fopen(path.c_str(), "rb");
    if (!fp) raise(Status::error(ErrorKind::InvalidArgument, msg(call, ": cannot open '", path, "': ", std::strerror(errno))));
    uint8_t buf[1 << 16];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, fp)) > 0) bytes.insert(bytes.end(), buf, buf + n);
    std::fclose(fp);
  }
  const std::map<std::string, Entry> entries = unwrap(parse(bytes, path));
  // Check everything first, so a failed load changes nothing.
  const StateDict state = module.state_dict();
  for (const auto& [name, t] : state) check(check_tensor(entries, "model." + name, t, path));
  for (const auto& [name, e] : entries) {
    if (name.rfind("model.", 0) != 0) continue;
    if (!state.contains(name.substr(6)))
      raise(Status::error(ErrorKind::InvalidArgument, msg(call, ": entry '", name, "' in '", path, "' is not in the module's state dict (",
                                                          module.type_name(), "); was it saved from another model?")));
  }
  optim::StateRefs refs;
  if (optimizer) {
    refs = optimizer->state();
    for (const auto& [name, t] : refs.tensors) check(check_tensor(entries, "optimizer." + name, t, path));
    for (const auto& [name, p] : refs.reals) check(check_scalar(entries, "optimizer." + name, kReal, path));
    for (const auto& [name, p] : refs.ints) check(check_scalar(entries, "optimizer." + name, kInt, path));
  }
  if (schedule) check(check_scalar(entries, "schedule.epoch", kInt, path));
  const auto generators = generators_of(module, extras);
  const Tensor state_shape = zeros({Generator::kStateBytes}, DType::u8);
  std::vector<Tensor> generator_states;
  for (const auto& [name, g] : generators) {
    check(check_tensor(entries, name, state_shape, path));
    const Entry& e = entries.at(name);
    Tensor st = zeros({Generator::kStateBytes}, DType::u8);
    std::memcpy(st.mutable_data<uint8_t>(), e.data, e.nbytes);
    Generator probe;
    probe.set_state(st);  // refuses a state get_state() could not have written, before anything changes
    generator_states.push_back(st);
  }
  if (extras.loader) {
    for (const auto& [name, v] : loader_facts(*extras.loader)) {
      check(check_scalar(entries, name, kInt, path));
      const int64_t saved = entries.at(name).integer;
      if (name != "loader.epoch" && name != "loader.position" && saved != v)
        raise(Status::error(ErrorKind::InvalidArgument, msg(call, ": '", path, "' was saved from a loader with ", name.substr(7), " ", saved,
                                                            ", this one has ", v, "; resume with the dataset and options of the saved run")));
    }
  }
  detail::InternalNoGrad no_grad;
  for (const auto& [name, t] : state) check(copy_into(entries.at("model." + name), t));
  for (const auto& [name, t] : refs.tensors) check(copy_into(entries.at("optimizer." + name), t));
  for (const auto& [name, p] : refs.reals) *p = entries.at("optimizer." + name).real;
  for (const auto& [name, p] : refs.ints) *p = entries.at("optimizer." + name).integer;
  for (size_t i = 0; i < generators.size(); ++i) generators[i].second->set_state(generator_states[i]);
  if (extras.loader) extras.loader->set_place(entries.at("loader.epoch").integer, entries.at("loader.position").integer);
  if (schedule) {
    const double lr = optimizer ? optimizer->lr() : 0;
    schedule->set_epoch(entries.at("schedule.epoch").integer);
    if (optimizer) optimizer->set_lr(lr);  // the saved learning rate is the one in effect
  }
}

}  // namespace om::nn
