// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/bench/bench_progress.h"

#include <unistd.h>

#include <ostream>

#include <fmt/format.h>

namespace partalign {

BenchProgressLine::BenchProgressLine(std::ostream& err, std::string what, double seconds)
    : err_(err),
      what_(std::move(what)),
      seconds_(seconds),
      terminal_(::isatty(STDERR_FILENO) != 0) {}

BenchProgressLine::~BenchProgressLine() {
  if (terminal_ && width_ > 0) err_ << '\n' << std::flush;
}

BenchProgressFn BenchProgressLine::Callback() {
  return [this](const BenchProgress& p) {
    // The first round says what is measured: a run refused before it measures anything (the
    // target in use, locked) prints its one line of refusal and nothing else.
    if (!started_) {
      started_ = true;
      const std::string line =
          fmt::format("partalign: measuring {} for about {:g} s", what_, seconds_);
      err_ << line << (terminal_ ? "" : "\n") << std::flush;
      width_ = line.size();
    }
    if (!terminal_) return;
    std::string line = fmt::format("partalign: measuring {}: {}", what_, BenchProgressText(p));
    const size_t width = line.size();
    if (width < width_) line.append(width_ - width, ' ');
    width_ = width;
    err_ << '\r' << line << std::flush;
  };
}

}  // namespace partalign
