// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/at_boot/next_boot_dir.h"

#include "io/util/state_dir.h"
#include "partalign/at_boot/next_boot_stage.h"

namespace partalign {

NextBootDir NextBootDirOn(const std::string& mount_point) {
  std::string base = mount_point;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  return {(base == "/" ? "" : base) + "/" + std::string(kNextBootDirName)};
}

std::string NextBootConfPath() { return StateDir() + "/next-boot.conf"; }
std::string NextBootRecordPath() { return StateDir() + "/next-boot.json"; }

}  // namespace partalign
