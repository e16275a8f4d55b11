// SPDX-License-Identifier: GPL-3.0-or-later
// What apply says when it stops after a part of the plan is written. The rest of a plan that
// makes room (shrink_steps.h) is proven and ordered like a plan file, and each refusal on the
// way says "nothing was written" - true of the rest, false of the disk: the shrinks are written.
// While a WrittenBefore lives, every line written to its stream has that phrase replaced by
// what was written and that nothing else was (docs/apply.md, "Plans that make room").
#pragma once

#include <ostream>
#include <streambuf>
#include <string>

namespace partalign {

class WrittenBefore {
 public:
  /// From now on, lines written to `stream` reach its destination with every "nothing was
  /// written" replaced by `written`; the destructor passes on the last partial line and gives
  /// `stream` its own buffer back.
  WrittenBefore(std::ostream& stream, std::string written);
  ~WrittenBefore();
  WrittenBefore(const WrittenBefore&) = delete;
  WrittenBefore& operator=(const WrittenBefore&) = delete;

 private:
  class Buffer : public std::streambuf {
   public:
    Buffer(std::streambuf* target, std::string written)
        : target_(target), written_(std::move(written)) {}
    /// Passes the pending text on (at the end: a last line without its newline).
    void Drain();

   protected:
    int_type overflow(int_type c) override;
    std::streamsize xsputn(const char* s, std::streamsize n) override;
    int sync() override;

   private:
    bool Emit(std::string text);

    std::streambuf* target_;
    std::string written_;
    std::string pending_;  ///< the current line, not yet passed on
    bool failed_ = false;
  };

  std::ostream& stream_;
  std::streambuf* original_;
  Buffer buffer_;
};

/// The text that replaces "nothing was written" once the shrinks `what` (e.g. "partition 1
/// (ext4, 23.50 MiB -> 21.50 MiB by resize2fs)"), `count` of them, are written.
std::string ShrinksWrittenText(const std::string& what, size_t count);

}  // namespace partalign
