// Error handling without exceptions across module boundaries.
//
// Every fallible function returns Result<T>. An Error carries one message that
// already names what failed (file, record, JSON path, node...), built up as it
// propagates: callers prepend context with Error::context().
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "lathe/core/printable.h"

namespace lathe {

// The message is escaped as it is made (printable_text): it names things
// read from files, and whoever shows it (the CLI, a Python traceback, an
// embedder's log) must not have to remember to.
class Error {
 public:
  explicit Error(std::string message)
      : message_(is_printable_text(message) ? std::move(message) : printable_text(message)) {}
  const std::string& message() const { return message_; }
  // Returns a copy whose message is "<prefix>: <message>".
  Error context(const std::string& prefix) const { return Error(prefix + ": " + message_); }

 private:
  std::string message_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(implicit)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(implicit)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Result<void>.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)) {}  // NOLINT(implicit)
  static Status Ok() { return Status(); }
  bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return *error_; }

 private:
  std::optional<Error> error_;
};

inline Error make_error(std::string message) { return Error(std::move(message)); }

}  // namespace lathe

// Propagate an error from a Status or Result expression.
#define LATHE_CONCAT_INNER(a, b) a##b
#define LATHE_CONCAT(a, b) LATHE_CONCAT_INNER(a, b)

#define LATHE_RETURN_IF_ERROR(expr)              \
  do {                                           \
    auto&& lathe_status_ = (expr);               \
    if (!lathe_status_.ok()) return lathe_status_.error(); \
  } while (0)

#define LATHE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.error();                 \
  lhs = std::move(tmp).value()

#define LATHE_ASSIGN_OR_RETURN(lhs, expr) \
  LATHE_ASSIGN_OR_RETURN_IMPL(LATHE_CONCAT(lathe_result_, __LINE__), lhs, expr)
