// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/apply/written_before.h"

#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace partalign {
namespace {

constexpr std::string_view kNothingWritten = "nothing was written";

}  // namespace

WrittenBefore::WrittenBefore(std::ostream& stream, std::string written)
    : stream_(stream), original_(stream.rdbuf()), buffer_(original_, std::move(written)) {
  stream_.rdbuf(&buffer_);
}

WrittenBefore::~WrittenBefore() {
  buffer_.Drain();
  stream_.rdbuf(original_);
}

bool WrittenBefore::Buffer::Emit(std::string text) {
  for (size_t at = text.find(kNothingWritten); at != std::string::npos;) {
    // "nothing was written to 'DISK'" is one move's own account (the mover's), not the plan's.
    const size_t end = at + kNothingWritten.size();
    if (text.compare(end, 4, " to ") == 0) {
      at = text.find(kNothingWritten, end);
      continue;
    }
    text.replace(at, kNothingWritten.size(), written_);
    at = text.find(kNothingWritten, at + written_.size());
  }
  const auto n = static_cast<std::streamsize>(text.size());
  if (target_ == nullptr || target_->sputn(text.data(), n) != n) failed_ = true;
  return !failed_;
}

void WrittenBefore::Buffer::Drain() {
  if (!pending_.empty()) Emit(std::exchange(pending_, {}));
  if (target_ != nullptr) target_->pubsync();
}

WrittenBefore::Buffer::int_type WrittenBefore::Buffer::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  const char ch = traits_type::to_char_type(c);
  pending_.push_back(ch);
  // A whole line (or a progress line that ends in a carriage return) goes on at once, so that
  // the phrase is never cut between two writes.
  if ((ch == '\n' || ch == '\r') && !Emit(std::exchange(pending_, {}))) return traits_type::eof();
  return c;
}

std::streamsize WrittenBefore::Buffer::xsputn(const char* s, std::streamsize n) {
  for (std::streamsize i = 0; i < n; ++i) {
    if (traits_type::eq_int_type(overflow(traits_type::to_int_type(s[i])), traits_type::eof())) {
      return i;
    }
  }
  return n;
}

int WrittenBefore::Buffer::sync() {
  // The current line waits for its end; what was passed on is flushed.
  if (failed_ || target_ == nullptr) return -1;
  return target_->pubsync();
}

std::string ShrinksWrittenText(const std::string& what, size_t count) {
  return fmt::format(
      "the shrink{} of {} {} written, with {} table entr{}; the rest of the plan was not started "
      "('partalign plan' plans it on the disk as it is now), nothing else was written",
      count == 1 ? "" : "s", what, count == 1 ? "is" : "are", count == 1 ? "its" : "their",
      count == 1 ? "y" : "ies");
}

}  // namespace partalign
