// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/tools/tool_versions.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "io/util/unique_fd.h"

extern char** environ;

namespace partalign {
namespace {

// `--version` answers in milliseconds; a tool that takes longer is treated as missing rather
// than holding up explain.
constexpr int kVersionTimeoutMs = 2000;
// The first line is all ParseVersionOutput() reads.
constexpr size_t kMaxOutput = 4096;

int64_t NowMs() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

}  // namespace

std::optional<std::string> RunVersionCommand(const std::string& command) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::string arg0 = command, arg1 = "--version";
  char* argv[] = {arg0.data(), arg1.data(), nullptr};
  pid_t pid = 0;
  int rc = ::posix_spawnp(&pid, command.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  write_end = UniqueFd();
  if (rc != 0) return std::nullopt;

  std::string out;
  const int64_t deadline = NowMs() + kVersionTimeoutMs;
  bool timed_out = false;
  while (true) {
    int64_t left = deadline - NowMs();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{read_end.get(), POLLIN, 0};
    int n = ::poll(&p, 1, static_cast<int>(left));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      timed_out = n == 0;
      break;
    }
    char buffer[1024];
    ssize_t got = ::read(read_end.get(), buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    if (out.size() < kMaxOutput) out.append(buffer, static_cast<size_t>(got));
  }
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return out;
}

std::optional<ToolVersion> InstalledToolVersion(Tool tool) {
  std::optional<std::string> out = RunVersionCommand(std::string(CommandName(tool)));
  if (!out) return std::nullopt;
  return ParseVersionOutput(tool, *out);
}

ToolVersions DetectToolVersions() {
  ToolVersions versions = NewestKnownVersions();
  for (Tool tool : {Tool::kParted, Tool::kUtilLinux, Tool::kGptfdisk, Tool::kSystemd}) {
    std::optional<ToolVersion> v = InstalledToolVersion(tool);
    // An installed version older than anything modelled is reported by the models themselves.
    if (v) versions.For(tool) = ResolvedVersion{*v, VersionSource::kInstalled};
  }
  return versions;
}

}  // namespace partalign
