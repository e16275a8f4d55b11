// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/ssd_sim.h"

#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign::test {
namespace {

// Unmounting right after a benchmark can meet EBUSY while the kernel still tears down the
// exiting process's io_uring, which holds the file; this is how long to keep retrying.
constexpr int kUnmountAttempts = 50;
constexpr useconds_t kUnmountRetryUs = 100'000;

}  // namespace

SsdSim::SsdSim(const std::string& dir, const SsdSimOptions& options)
    : mountpoint_(dir + "/mnt"), backing_(dir + "/backing.img") {
  std::filesystem::create_directories(mountpoint_);
  if (!std::filesystem::exists(backing_)) CreateSparseFile(backing_, options.size_bytes);
  // Without -f, fuse_main() returns to us only after the mount is in place.
  std::vector<std::string> argv{SSD_SIM_BINARY,
                                mountpoint_,
                                "--backing=" + backing_,
                                "--read-us=" + std::to_string(options.read_us),
                                "--program-us=" + std::to_string(options.program_us),
                                "--page-size=" + std::to_string(options.page_size),
                                "--dies=" + std::to_string(options.dies)};
  CommandResult r = RunCommand(argv);
  if (r.exit_code != 0)
    throw std::runtime_error("cannot mount the SSD simulator: " + Describe(argv, r));
}

SsdSim::~SsdSim() {
  for (int i = 0; i < kUnmountAttempts; ++i) {
    if (RunCommand({"fusermount3", "-u", mountpoint_}).exit_code == 0) return;
    ::usleep(kUnmountRetryUs);
  }
  RunCommand({"fusermount3", "-u", "-z", mountpoint_});  // lazy: detach now, free when unused
}

std::string SsdSim::Stats() const { return ReadFile(mountpoint_ + "/stats"); }

unsigned long long SsdSim::Stat(const std::string& name) const {
  std::istringstream in(Stats());
  std::string key;
  unsigned long long value = 0;
  while (in >> key >> value) {
    if (key == name) return value;
  }
  throw std::runtime_error("no counter '" + name + "' in the simulator's stats: " + Stats());
}

}  // namespace partalign::test
