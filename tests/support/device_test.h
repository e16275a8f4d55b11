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

#define PARTALIGN_REQUIRE_DEVICES()                                                    \
  do {                                                                                 \
    if (std::optional<std::string> why_ = ::partalign::test::WhyNoDeviceTests()) {     \
      if (::partalign::test::DeviceTestsRequired()) {                                  \
        FAIL() << *why_ << " (and PARTALIGN_REQUIRE_DEVICE_TESTS=1 forbids skipping)"; \
      } else {                                                                         \
        GTEST_SKIP() << *why_;                                                         \
      }                                                                                \
    }                                                                                  \
  } while (0)
