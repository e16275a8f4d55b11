#include "support/penalty_fs.h"

#include <unistd.h>

#include <filesystem>
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

PenaltyFs::PenaltyFs(const std::string& mountpoint, unsigned penalty_us,
                     unsigned long long size_bytes)
    : mountpoint_(mountpoint) {
  std::filesystem::create_directories(mountpoint_);
  // Without -f, fuse_main() returns to us only after the mount is in place.
  std::vector<std::string> argv{PENALTY_FS_BINARY, mountpoint_,
                                "--size=" + std::to_string(size_bytes),
                                "--penalty-us=" + std::to_string(penalty_us)};
  CommandResult r = RunCommand(argv);
  if (r.exit_code != 0) throw std::runtime_error("cannot mount penalty_fs: " + Describe(argv, r));
}

PenaltyFs::~PenaltyFs() {
  for (int i = 0; i < kUnmountAttempts; ++i) {
    if (RunCommand({"fusermount3", "-u", mountpoint_}).exit_code == 0) return;
    ::usleep(kUnmountRetryUs);
  }
  RunCommand({"fusermount3", "-u", "-z", mountpoint_});  // lazy: detach now, free when unused
}

std::string PenaltyFs::Stats() const { return ReadFile(mountpoint_ + "/stats"); }

}  // namespace partalign::test
