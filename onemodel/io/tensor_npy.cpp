// om::save_npy / om::load_npy (onemodel/io/tensor_npy.h).
#include "onemodel/io/tensor_npy.h"

#include <cstring>

#include "onemodel/core/tensor_internal.h"
#include "onemodel/core/trace_hook.h"
#include "onemodel/io/npy.h"

namespace om {

Status try_save_npy(const std::string& path, const Tensor& tensor) {
  if (!tensor.defined())
    return Status::error(ErrorKind::InvalidArgument, msg("om::save_npy(", path, "): the tensor is undefined (default-constructed)"));
  if (detail::TraceHook* h = detail::trace_hook(); h && h->is_traced(*tensor.impl()))
    return Status::trace(TraceErrorKind::DataDependent,
                         msg("om::save_npy(", path, "): tensor ", tensor.to_string(),
                             " is being traced and has no values yet; save it after Tracer::finish, or save a Session output"));
  OM_TRY(detail::check_live(tensor, "om::save_npy"));
  OM_ASSIGN_OR_RETURN(Tensor dense, detail::dense(tensor));
  graph::TensorData td;
  td.dtype = dense.dtype();
  td.dims = dense.shape();
  td.bytes = static_cast<const uint8_t*>(detail::raw(dense));  // read in place, no copy
  td.nbytes = size_t(dense.numel()) * dtype_size(dense.dtype());
  return npy::write_file(td, path).with_context(msg("om::save_npy(", path, ")"));
}

Status try_load_npy(const std::string& path, Tensor* out) {
  auto read = npy::read_file(path);
  if (!read.is_ok()) return read.status().with_context(msg("om::load_npy(", path, ")"));
  const graph::TensorData& td = read.value();
  OM_ASSIGN_OR_RETURN(Tensor t, detail::make_tensor(td.dims, td.dtype));
  if (td.nbytes) std::memcpy(detail::raw(t), td.bytes, td.nbytes);
  *out = t;
  return Status::ok();
}

void save_npy(const std::string& path, const Tensor& tensor) { check(try_save_npy(path, tensor)); }

Tensor load_npy(const std::string& path) {
  Tensor t;
  check(try_load_npy(path, &t));
  return t;
}

}  // namespace om
