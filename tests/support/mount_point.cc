// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/mount_point.h"

#include <stdexcept>
#include <vector>

#include "support/run_command.h"

namespace partalign::test {

MountPoint::MountPoint(const std::string& device, const std::string& directory,
                       const std::string& options)
    : directory_(directory) {
  std::vector<std::string> argv{"mount"};
  if (!options.empty()) argv.insert(argv.end(), {"-o", options});
  argv.insert(argv.end(), {device, directory});
  CommandResult r = RunCommand(argv);
  if (r.exit_code != 0) throw std::runtime_error(Describe(argv, r));
  mounted_ = true;
}

MountPoint::~MountPoint() { Unmount(); }

bool MountPoint::Unmount() {
  if (!mounted_) return true;
  mounted_ = RunCommand({"umount", directory_}).exit_code != 0;
  return !mounted_;
}

}  // namespace partalign::test
