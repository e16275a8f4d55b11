// SPDX-License-Identifier: GPL-3.0-or-later
// Elapsed time on the monotonic clock: the mover's and the bench session's timings.
#pragma once

#include <chrono>

namespace partalign {

/// Seconds from `start` to now on std::chrono::steady_clock.
inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace partalign
