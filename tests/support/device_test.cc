// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/device_test.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace partalign::test {

std::optional<std::string> WhyNoDeviceTests() {
  if (::geteuid() != 0) return "device test skipped: needs root to attach loop devices";
  if (::access("/dev/loop-control", F_OK) != 0) {
    return "device test skipped: /dev/loop-control does not exist";
  }
  return std::nullopt;
}

bool DeviceTestsRequired() {
  const char* value = std::getenv("PARTALIGN_REQUIRE_DEVICE_TESTS");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

}  // namespace partalign::test
