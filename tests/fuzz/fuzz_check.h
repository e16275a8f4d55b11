// SPDX-License-Identifier: GPL-3.0-or-later
// What a libFuzzer harness treats as a finding besides a crash or a sanitizer report: a broken
// invariant of the code under test, printed with the condition and aborted on.
#pragma once

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(condition)                                                                \
  do {                                                                                       \
    if (!(condition)) {                                                                      \
      std::fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #condition); \
      std::abort();                                                                          \
    }                                                                                        \
  } while (0)
