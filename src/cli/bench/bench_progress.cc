// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/bench/bench_progress.h"

#include <unistd.h>

#include <ostream>

#include <fmt/format.h>

namespace partalign {

BenchProgressLine::BenchProgressLine(std::ostream& err, std::string what, double seconds)
    : err_(err), what_(std::move(what)), terminal_(::isatty(STDERR_FILENO) != 0) {
  const std::string line = fmt::format("partalign: measuring {} for about {:g} s", what_, seconds);
  err_ << line << (terminal_ ? "" : "\n") << std::flush;
  width_ = line.size();
}

BenchProgressLine::~BenchProgressLine() {
  if (terminal_) err_ << '\n' << std::flush;
}

BenchProgressFn BenchProgressLine::Callback() {
  if (!terminal_) return {};
  return [this](const BenchProgress& p) {
    std::string line = fmt::format("partalign: measuring {}: {}", what_, BenchProgressText(p));
    const size_t width = line.size();
    if (width < width_) line.append(width_ - width, ' ');
    width_ = width;
    err_ << '\r' << line << std::flush;
  };
}

}  // namespace partalign
