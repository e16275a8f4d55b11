// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/sim/simulated_ssd.h"

#include <spawn.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "io/device/loop_device.h"
#include "io/util/text_file.h"

extern char** environ;

namespace partalign {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSimulatorName = "partalign-ssd-sim";
// Unmounting right after the last I/O can meet EBUSY while the kernel still lets go of the
// file (a closing io_uring, the loop device's last reference): retry for up to 5 s.
constexpr int kUnmountAttempts = 50;
constexpr useconds_t kUnmountRetryUs = 100'000;

}  // namespace

std::string SsdSimulatorPath() {
  if (const char* env = std::getenv("PARTALIGN_SSD_SIM"); env && *env) return env;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(kSimulatorName) : (self.parent_path() / kSimulatorName).string();
}

Result<SimulatedSsd> SimulatedSsd::Start(const std::string& backing, const std::string& mountpoint,
                                         const std::vector<std::string>& options) {
  std::error_code ec;
  fs::create_directories(mountpoint, ec);
  if (ec) return MakeError(fmt::format("cannot create '{}': {}", mountpoint, ec.message()));
  std::vector<std::string> args{SsdSimulatorPath(), mountpoint, "--backing=" + backing};
  args.insert(args.end(), options.begin(), options.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // Without -f the simulator returns once its file system is mounted, leaving the daemon.
  pid_t pid = 0;
  if (int rc = ::posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ); rc != 0) {
    return ErrnoError(rc, fmt::format("cannot run '{}'", args[0]));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return MakeError(
        fmt::format("'{}' could not mount the simulated SSD on '{}'", args[0], mountpoint));
  }
  SimulatedSsd ssd(mountpoint, "");
  Result<std::string> device = AttachLoop(mountpoint + "/disk.img");
  if (!device) return device.error();  // ~SimulatedSsd unmounts
  ssd.device_ = *device;
  return ssd;
}

SimulatedSsd::SimulatedSsd(SimulatedSsd&& other) noexcept
    : mountpoint_(std::exchange(other.mountpoint_, {})),
      device_(std::exchange(other.device_, {})) {}

SimulatedSsd::~SimulatedSsd() { (void)Stop(); }

Result<std::string> SimulatedSsd::Stats() const {
  return ReadWholeFile(mountpoint_ + "/stats", "the simulated SSD's statistics");
}

Status SimulatedSsd::Stop() {
  if (!device_.empty()) {
    if (Status s = DetachLoop(device_); !s) return s;
    device_.clear();
  }
  if (mountpoint_.empty()) return {};
  for (int attempt = 0; attempt < kUnmountAttempts; ++attempt) {
    if (::umount2(mountpoint_.c_str(), 0) == 0 || errno == EINVAL) {
      mountpoint_.clear();
      return {};
    }
    if (errno != EBUSY) break;
    ::usleep(kUnmountRetryUs);
  }
  const int err = errno;
  ::umount2(mountpoint_.c_str(), MNT_DETACH);  // detach now, the kernel frees it when unused
  Status failed = ErrnoError(err, fmt::format("cannot unmount '{}'", mountpoint_));
  mountpoint_.clear();
  return failed;
}

}  // namespace partalign
