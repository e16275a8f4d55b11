// SPDX-License-Identifier: GPL-3.0-or-later
// The benchmark's clock: CLOCK_MONOTONIC in nanoseconds (a vDSO call, no syscall). It lives at
// the edge; the core only sees the durations the engines report.
#pragma once

#include <time.h>

#include <cstdint>

namespace partalign {

inline uint64_t MonotonicNs() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace partalign
