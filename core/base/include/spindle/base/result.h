// Status and Result<T>: what fallible loaders and parsers return instead of throwing.
//
// Usage:
//
//   spindle::core::Status load(const char* path) {
//     if (!exists(path)) return spindle::core::Status::error(std::string(path) + ": not found");
//     return {};                                    // success
//   }
//   if (spindle::core::Status s = load("a.ini"); !s) SPINDLE_LOG_ERROR(Core, "%s", s.c_str());
//
//   spindle::core::Result<int> r = parse_int("42");
//   if (r) use(r.value()); else report(r.status().message());
//
// A success carries no message and allocates nothing; only errors build a string.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include <spindle/base/assert.h>

namespace spindle::core {

class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status error(std::string message) {
    Status s;
    s.ok_ = false;
    s.message_ = std::move(message);
    return s;
  }

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  // Empty on success; "where: what is wrong" on failure.
  const std::string& message() const { return message_; }
  const char* c_str() const { return message_.c_str(); }

 private:
  bool ok_ = true;
  std::string message_;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit on purpose, `return value;`
  Result(Status status) : status_(std::move(status)) {  // NOLINT: `return Status::error(...);`
    SPINDLE_ASSERT(!status_.ok(), "a Result built from a Status must carry an error");
  }

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Status& status() const { return status_; }
  const std::string& message() const { return status_.message(); }

  T& value() & {
    SPINDLE_ASSERT(ok(), "Result::value() called on an error result");
    return *value_;
  }
  const T& value() const& {
    SPINDLE_ASSERT(ok(), "Result::value() called on an error result");
    return *value_;
  }
  // From a temporary Result the value moves out, so a move-only value (a Texture) can be passed
  // on directly: r.add_texture(Texture::create(image).value()).
  T&& value() && {
    SPINDLE_ASSERT(ok(), "Result::value() called on an error result");
    return std::move(*value_);
  }
  T value_or(T fallback) const { return ok() ? *value_ : std::move(fallback); }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace spindle::core
