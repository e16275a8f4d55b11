// SPDX-License-Identifier: GPL-3.0-or-later
// Result<T> and Error: explicit, exception-free error handling for the whole project.
//
// std::expected is C++23 and GCC 12 guards it behind -std=c++2b, so this is a small stand-in
// with std::expected's member names (has_value, value, error, operator bool, *, ->). Moving to
// C++23 later means swapping an alias. Errors never cross C callbacks as exceptions.
#pragma once

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <variant>

namespace partalign {

/// What went wrong and where. `message` is a complete one-line sentence fragment in the err(3)
/// style ("cannot open '/dev/sdz': No such file or directory"); the CLI prefixes "partalign: ".
struct Error {
  std::string message;
  /// errno value when the error came from a system or C-library call, else 0.
  int errno_value = 0;
};

/// Builds an Error from a negative or positive errno, appending strerror like err(3).
inline Error ErrnoError(int err, std::string context) {
  if (err < 0) err = -err;
  return Error{std::move(context) + ": " + std::strerror(err), err};
}

/// An error with no errno (bad input, inconsistent data).
inline Error MakeError(std::string message) { return Error{std::move(message), 0}; }

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT: implicit by design, like expected
  Result(Error error) : state_(std::move(error)) {}  // NOLINT

  bool has_value() const { return state_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  const Error& error() const { return std::get<1>(state_); }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Error> state_;
};

/// Result of an operation that yields nothing but can fail.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT

  bool has_value() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

using Status = Result<void>;

}  // namespace partalign
