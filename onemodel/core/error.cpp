#include <cstdio>
#include <cstdlib>

#include "onemodel/core/status.h"

namespace om {

const char* to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::InvalidArgument: return "InvalidArgument";
    case ErrorKind::ShapeMismatch: return "ShapeMismatch";
    case ErrorKind::DTypeMismatch: return "DTypeMismatch";
    case ErrorKind::OutOfMemory: return "OutOfMemory";
    case ErrorKind::UseAfterRelease: return "UseAfterRelease";
    case ErrorKind::Format: return "Format";
    case ErrorKind::Io: return "Io";
    case ErrorKind::Unsupported: return "Unsupported";
    case ErrorKind::Internal: return "Internal";
    case ErrorKind::Trace: return "Trace";
  }
  return "?";
}

const char* to_string(TraceErrorKind kind) {
  switch (kind) {
    case TraceErrorKind::UnsupportedOperation: return "UnsupportedOperation";
    case TraceErrorKind::DataDependent: return "DataDependent";
    case TraceErrorKind::InPlaceMutation: return "InPlaceMutation";
    case TraceErrorKind::NoGradInTrace: return "NoGradInTrace";
    case TraceErrorKind::SymbolicShape: return "SymbolicShape";
    case TraceErrorKind::InvalidUsage: return "InvalidUsage";
  }
  return "?";
}

namespace {
void default_handler(const Status& status) {
  std::fprintf(stderr, "onemodel error (%s): %s\n", to_string(status.kind()), status.message().c_str());
  std::abort();
}
ErrorHandler g_handler = &default_handler;
}  // namespace

ErrorHandler set_error_handler(ErrorHandler handler) {
  ErrorHandler old = g_handler;
  g_handler = handler ? handler : &default_handler;
  return old;
}

void raise(const Status& status) {
#if defined(ONEMODEL_NO_EXCEPTIONS)
  g_handler(status);
  // A handler must not return; one that does still leaves the reason on stderr.
  std::fprintf(stderr, "onemodel error (%s): %s\nonemodel: the error handler returned; aborting "
               "(a handler must not return: reset, loop or abort in it)\n", to_string(status.kind()), status.message().c_str());
  std::abort();
#else
  if (status.is_ok()) throw Error(ErrorKind::Internal, "om::raise called with an OK status");
  if (status.is_trace()) throw TraceException(status.trace_kind(), status.message());
  throw Error(status.kind(), status.message());
#endif
}

}  // namespace om
