// SPDX-License-Identifier: GPL-3.0-or-later
// Writing a partition table with the real sfdisk (the oracle) to an image or a loop device,
// without asking the kernel to re-read it. Header-only.
#pragma once

#include <string>

#include "support/run_command.h"

namespace partalign::test {

inline CommandResult WriteWithSfdisk(const std::string& target, const std::string& script) {
  return RunCommand({"sfdisk", "--no-reread", "--no-tell-kernel", target}, script);
}

}  // namespace partalign::test
