// SPDX-License-Identifier: GPL-3.0-or-later
// Gate for tests that need root and loop devices. They skip with a visible reason when not
// root; under PARTALIGN_REQUIRE_DEVICE_TESTS=1 (CI) a skip is a failure.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace partalign::test {

/// Why device tests cannot run here, or nullopt when they can.
std::optional<std::string> WhyNoDeviceTests();

/// True when PARTALIGN_REQUIRE_DEVICE_TESTS=1 is set.
bool DeviceTestsRequired();

}  // namespace partalign::test

/// Skips the test with the reason `why_expr` gives (a std::optional<std::string>) when it gives
/// one, or fails it under PARTALIGN_REQUIRE_DEVICE_TESTS=1.
#define PARTALIGN_SKIP_WITH_REASON(why_expr)                                           \
  do {                                                                                 \
    if (std::optional<std::string> why_ = (why_expr)) {                                \
      if (::partalign::test::DeviceTestsRequired()) {                                  \
        FAIL() << *why_ << " (and PARTALIGN_REQUIRE_DEVICE_TESTS=1 forbids skipping)"; \
      } else {                                                                         \
        GTEST_SKIP() << *why_;                                                         \
      }                                                                                \
    }                                                                                  \
  } while (0)

#define PARTALIGN_REQUIRE_DEVICES() \
  PARTALIGN_SKIP_WITH_REASON(::partalign::test::WhyNoDeviceTests())
