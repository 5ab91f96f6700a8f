// Internal error transport: functions return Status or Result<T> and never throw. The public
// API converts a failed Status into om::Error / om::TraceException in one place (raise()).
#pragma once
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "onemodel/core/error.h"

namespace om {

class Status {
 public:
  Status() = default;  // OK
  static Status ok() { return Status(); }
  static Status error(ErrorKind kind, std::string message) {
    Status s;
    s.rep_ = std::make_shared<Rep>(Rep{kind, TraceErrorKind::InvalidUsage, std::move(message)});
    return s;
  }
  static Status trace(TraceErrorKind kind, std::string message) {
    Status s;
    s.rep_ = std::make_shared<Rep>(Rep{ErrorKind::Trace, kind, std::move(message)});
    return s;
  }
  bool is_ok() const { return rep_ == nullptr; }
  explicit operator bool() const { return is_ok(); }
  ErrorKind kind() const { return rep_ ? rep_->kind : ErrorKind::Internal; }
  bool is_trace() const { return rep_ && rep_->kind == ErrorKind::Trace; }
  TraceErrorKind trace_kind() const { return rep_ ? rep_->trace_kind : TraceErrorKind::InvalidUsage; }
  const std::string& message() const {
    static const std::string empty;
    return rep_ ? rep_->message : empty;
  }
  // Prefixes context ("while loading x.onnx: ...") keeping the kind.
  Status with_context(const std::string& context) const {
    if (is_ok()) return *this;
    Status s = *this;
    s.rep_ = std::make_shared<Rep>(Rep{rep_->kind, rep_->trace_kind, context + ": " + rep_->message});
    return s;
  }

 private:
  struct Rep {
    ErrorKind kind;
    TraceErrorKind trace_kind;
    std::string message;
  };
  std::shared_ptr<const Rep> rep_;
};

template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}  // NOLINT
  bool is_ok() const { return status_.is_ok(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  T& operator*() { return *value_; }

 private:
  Status status_;
  // optional without <optional> overhead concerns; T need not be default-constructible
  struct Holder {
    alignas(T) unsigned char buf[sizeof(T)];
    bool full = false;
    Holder() = default;
    explicit Holder(T v) { new (buf) T(std::move(v)); full = true; }
    Holder(Holder&& o) noexcept(std::is_nothrow_move_constructible<T>::value) {
      if (o.full) { new (buf) T(std::move(*o)); full = true; }
    }
    Holder(const Holder& o) { if (o.full) { new (buf) T(*o); full = true; } }
    Holder& operator=(Holder o) { reset(); if (o.full) { new (buf) T(std::move(*o)); full = true; } return *this; }
    ~Holder() { reset(); }
    void reset() { if (full) { (**this).~T(); full = false; } }
    T& operator*() { return *reinterpret_cast<T*>(buf); }
    const T& operator*() const { return *reinterpret_cast<const T*>(buf); }
  } value_;
};

namespace detail {
// One part of a message, written as an ostream would (integers in decimal, characters as
// themselves, bool as 1 or 0, floating point as %g, pointers as %p) but without streams: they
// would bring iostream and the locale into every program (on a microcontroller, most of its
// flash).
template <typename T>
void append_part(std::string& s, const T& v) {
  using D = std::decay_t<T>;
  if constexpr (std::is_same_v<D, bool>) {
    s += v ? '1' : '0';
  } else if constexpr (std::is_same_v<D, char> || std::is_same_v<D, signed char> || std::is_same_v<D, unsigned char>) {
    s += char(v);
  } else if constexpr (std::is_integral_v<D>) {
    char buf[24];
    s.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
  } else if constexpr (std::is_enum_v<D>) {
    append_part(s, static_cast<std::underlying_type_t<D>>(v));
  } else if constexpr (std::is_floating_point_v<D>) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", double(v));
    s += buf;
  } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    if constexpr (std::is_pointer_v<T>) {  // not an array: a pointer may be null
      if (v) s += v;  // a null string writes nothing
    } else {
      s += std::string_view(v);
    }
  } else {
    static_assert(std::is_pointer_v<D>, "om::msg takes strings, numbers, characters, enums and pointers");
    char buf[32];
    std::snprintf(buf, sizeof buf, "%p", static_cast<const void*>(v));
    s += buf;
  }
}
}  // namespace detail

// Formats a message from parts: om::msg("om::add: shapes ", a, " and ", b).
template <typename... Args>
std::string msg(const Args&... args) {
  std::string s;
  (detail::append_part(s, args), ...);
  return s;
}

// The API edge: throws om::Error / om::TraceException for a failed status (or calls the
// installed handler in builds without exceptions). Defined once, in error.cpp.
[[noreturn]] void raise(const Status& status);
inline void check(const Status& status) {
  if (!status.is_ok()) raise(status);
}
template <typename T>
T unwrap(Result<T>&& result) {
  if (!result.is_ok()) raise(result.status());
  return std::move(result).value();
}

}  // namespace om

#define OM_CONCAT_INNER(a, b) a##b
#define OM_CONCAT(a, b) OM_CONCAT_INNER(a, b)

// Propagates a failed Status out of the current function.
#define OM_TRY(expr)                              \
  do {                                            \
    ::om::Status om_try_status_ = (expr);         \
    if (!om_try_status_.is_ok()) return om_try_status_; \
  } while (0)

// Declares `lhs` from a Result<T>, propagating its failure.
#define OM_ASSIGN_OR_RETURN(lhs, expr) OM_ASSIGN_OR_RETURN_IMPL(OM_CONCAT(om_result_, __LINE__), lhs, expr)
#define OM_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.is_ok()) return tmp.status();         \
  lhs = std::move(tmp).value()
