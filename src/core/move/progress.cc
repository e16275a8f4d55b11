// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/move/progress.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "partalign/util/units.h"

namespace partalign {

std::string FormatDuration(double seconds) {
  if (!(seconds >= 0)) seconds = 0;
  if (seconds < 60) return fmt::format("{:.1f} s", seconds);
  const uint64_t total = static_cast<uint64_t>(std::llround(seconds));
  const uint64_t h = total / 3600, m = total / 60 % 60, s = total % 60;
  if (h > 0) return fmt::format("{}:{:02}:{:02}", h, m, s);
  return fmt::format("{}:{:02}", m, s);
}

std::string FormatRate(double bytes_per_second) {
  if (!(bytes_per_second >= 0)) bytes_per_second = 0;
  return fmt::format("{:.0f} MB/s", bytes_per_second / 1e6);
}

std::string FormatProgress(const ProgressSample& sample) {
  const uint64_t total = sample.total_bytes;
  const uint64_t done = std::min(sample.done_bytes, total);
  const unsigned percent = total == 0 ? 100 : static_cast<unsigned>(done * 100 / total);
  std::string line = fmt::format("{:<10} {} of {}  {:>3}%", sample.phase, FormatSize(done),
                                 FormatSize(total), percent);
  if (sample.elapsed_seconds > 0 && done > 0) {
    const double rate = static_cast<double>(done) / sample.elapsed_seconds;
    line += "  " + FormatRate(rate);
    if (done < total)
      line += "  " + FormatDuration(static_cast<double>(total - done) / rate) + " left";
  }
  return line;
}

}  // namespace partalign
