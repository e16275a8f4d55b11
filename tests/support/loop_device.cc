// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/loop_device.h"

#include <fcntl.h>
#include <linux/blkpg.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "support/run_command.h"

namespace partalign::test {

LoopDevice::LoopDevice(const std::string& image, unsigned sector_size, bool direct_io) {
  // --partscan: without it BLKRRPART fails with EINVAL and libfdisk (sfdisk) complains
  // "Re-reading the partition table failed"; this kernel parses no tables either way.
  std::vector<std::string> argv{"losetup",    "--find",        "--show",
                                "--partscan", "--sector-size", std::to_string(sector_size)};
  if (direct_io) argv.push_back("--direct-io=on");
  argv.push_back(image);
  CommandResult r = RunCommand(argv);
  if (r.exit_code != 0) throw std::runtime_error(Describe(argv, r));
  path_ = r.out.substr(0, r.out.find('\n'));
  // A loop device that was detached with partitions still on it keeps stale nodes.
  DeletePartitions();
}

LoopDevice::~LoopDevice() {
  if (path_.empty()) return;
  DeletePartitions();
  RunCommand({"losetup", "-d", path_});
}

std::string LoopDevice::name() const { return path_.substr(path_.rfind('/') + 1); }

std::string LoopDevice::PartitionPath(int number) const {
  return path_ + "p" + std::to_string(number);
}

int LoopDevice::DeletePartitions() const { return DeletePartitionNodes(path_); }

int DeletePartitionNodes(const std::string& device) {
  namespace fs = std::filesystem;
  const fs::path sys = fs::path("/sys/block") / device.substr(device.rfind('/') + 1);
  int fd = ::open(device.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  int deleted = 0;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(sys, ec)) {
    std::ifstream in(entry.path() / "partition");
    int number = 0;
    if (!(in >> number)) continue;
    blkpg_partition part{};
    part.pno = number;
    blkpg_ioctl_arg arg{};
    arg.op = BLKPG_DEL_PARTITION;
    arg.datalen = sizeof(part);
    arg.data = &part;
    // A partition another program has open (a blkid or mkinitramfs scanning every device while
    // tests run in parallel) cannot be deleted: EBUSY, for as long as it holds it. Tried again
    // for up to 5 s, or the next partx --add of that number fails.
    for (int tries = 0;; ++tries) {
      if (::ioctl(fd, BLKPG, &arg) == 0) {
        ++deleted;
        break;
      }
      if (errno != EBUSY || tries == 100) break;
      ::usleep(50000);
    }
  }
  ::close(fd);
  return deleted;
}

}  // namespace partalign::test
