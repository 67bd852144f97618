// Status and Result<T>: how every fallible call at a module edge reports failure.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace abacus {

// Error categories; each maps to one HTTP status at the API edge.
enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // 400: the caller sent something malformed
  kUnauthenticated,     // 401
  kPermissionDenied,    // 403
  kNotFound,            // 404
  kAlreadyExists,       // 409
  kFailedPrecondition,  // 409: legal request, wrong state (e.g. illegal transition)
  kAborted,             // 409: lost a race (e.g. fencing token)
  kOutOfRange,          // 400: a value beyond what can be represented
  kResourceExhausted,   // 429/413: limits, quota
  kUnavailable,         // 503
  kDeadlineExceeded,    // 504
  kInternal,            // 500: a broken invariant
};

// Returns the stable lower_snake name of `code` ("invalid_argument").
std::string_view StatusCodeName(StatusCode code);

// A success or an error code with a human-readable message.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status OK() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns "OK" or "<code>: <message>".
  std::string ToString() const;

  // Returns a copy whose message is prefixed with `context` and ": ".
  Status WithContext(std::string_view context) const;

  bool operator==(const Status& other) const = default;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Convenience constructors, one per code.
Status InvalidArgument(std::string message);
Status NotFound(std::string message);
Status AlreadyExists(std::string message);
Status FailedPrecondition(std::string message);
Status PermissionDenied(std::string message);
Status Unauthenticated(std::string message);
Status ResourceExhausted(std::string message);
Status Unavailable(std::string message);
Status Internal(std::string message);
Status OutOfRange(std::string message);
Status Aborted(std::string message);
Status DeadlineExceeded(std::string message);

// A value of T or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : data_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(data_).ok() && "Result built from an OK status");
  }

  bool ok() const { return std::holds_alternative<T>(data_); }
  // Returns OK when a value is held, else the error.
  Status status() const { return ok() ? Status::OK() : std::get<Status>(data_); }

  T& value() & { return std::get<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  T value_or(T fallback) const { return ok() ? std::get<T>(data_) : std::move(fallback); }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> data_;
};

}  // namespace abacus

#define ABACUS_CONCAT_INNER(a, b) a##b
#define ABACUS_CONCAT(a, b) ABACUS_CONCAT_INNER(a, b)

// Returns the status from the enclosing function when `expr` is not OK.
#define ABACUS_RETURN_IF_ERROR(expr)              \
  do {                                            \
    ::abacus::Status abacus_status_ = (expr);     \
    if (!abacus_status_.ok()) return abacus_status_; \
  } while (0)

#define ABACUS_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()

// Declares/assigns `lhs` from a Result, or returns its error.
#define ABACUS_ASSIGN_OR_RETURN(lhs, expr) \
  ABACUS_ASSIGN_OR_RETURN_IMPL(ABACUS_CONCAT(abacus_result_, __LINE__), lhs, expr)
