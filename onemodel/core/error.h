// Public errors of onemodel. Every failure of the public API throws om::Error (or its
// subclass om::TraceException while tracing); inside the library errors travel as om::Status.
#pragma once
#include <exception>
#include <string>

#include "onemodel/config.h"  // generated: how the library was built (exceptions or not)

namespace om {

enum class ErrorKind {
  InvalidArgument,
  ShapeMismatch,
  DTypeMismatch,
  OutOfMemory,
  UseAfterRelease,
  Format,
  Io,
  Unsupported,
  Internal,
  Trace,  // the error is a TraceException; see TraceErrorKind
};

enum class TraceErrorKind {
  UnsupportedOperation,
  DataDependent,
  InPlaceMutation,
  NoGradInTrace,
  SymbolicShape,
  InvalidUsage,
};

const char* to_string(ErrorKind kind);
const char* to_string(TraceErrorKind kind);

class Error : public std::exception {
 public:
  Error(ErrorKind kind, std::string message) : kind_(kind), message_(std::move(message)) {}
  ErrorKind kind() const noexcept { return kind_; }
  const char* what() const noexcept override { return message_.c_str(); }
  const std::string& message() const noexcept { return message_; }

 private:
  ErrorKind kind_;
  std::string message_;
};

class TraceException : public Error {
 public:
  TraceException(TraceErrorKind kind, std::string message)
      : Error(ErrorKind::Trace, std::move(message)), trace_kind_(kind) {}
  TraceErrorKind kind() const noexcept { return trace_kind_; }
  ErrorKind error_kind() const noexcept { return Error::kind(); }

 private:
  TraceErrorKind trace_kind_;
};

class Status;

// Builds without exceptions (ONEMODEL_NO_EXCEPTIONS) send every API-edge error here instead of
// throwing. The default handler prints the message and aborts; firmware installs its own (which
// must not return) or uses the Status-returning runtime calls.
using ErrorHandler = void (*)(const Status& status);
ErrorHandler set_error_handler(ErrorHandler handler);

}  // namespace om
