// SPDX-License-Identifier: GPL-3.0-or-later
// Progress lines of long operations (the data mover): bytes done, rate, time left. The caller
// reads the clock and decides how often to print; this only formats.
#pragma once

#include <cstdint>
#include <string>

namespace partalign {

struct ProgressSample {
  std::string phase;  ///< "scanning", "moving", "verifying"
  uint64_t done_bytes = 0;
  uint64_t total_bytes = 0;
  double elapsed_seconds = 0;
};

/// "moving     512 MiB of 1 GiB  50%  812 MB/s  0:01 left". The rate is decimal MB/s like dd's;
/// time left appears once a rate is known.
std::string FormatProgress(const ProgressSample& sample);

/// "0.4 s" under a minute, else "m:ss" / "h:mm:ss".
std::string FormatDuration(double seconds);

/// "812 MB/s" (decimal, as dd and fio print it).
std::string FormatRate(double bytes_per_second);

}  // namespace partalign
