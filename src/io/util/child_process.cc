// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/util/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "io/util/unique_fd.h"
#include "partalign/util/shell_quote.h"

extern char** environ;

namespace partalign {
namespace {

int64_t NowMs() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// The environment with LC_ALL=C: the tools' messages in English, numbers without grouping.
std::vector<std::string> CLocaleEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, "LC_ALL=", 7) != 0 && std::strncmp(*e, "LANGUAGE=", 9) != 0) {
      env.emplace_back(*e);
    }
  }
  env.emplace_back("LC_ALL=C");
  return env;
}

}  // namespace

std::string CommandLine(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& arg : argv) line += (line.empty() ? "" : " ") + ShellQuote(arg);
  return line;
}

Result<ProgramRun> RunProgram(const std::vector<std::string>& argv, const ProgramOptions& options) {
  if (argv.empty()) return MakeError("no program to run");
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return ErrnoError(errno, "cannot make a pipe");
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), 1);
  if (options.discard_stderr) {
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  } else {
    posix_spawn_file_actions_adddup2(&actions, write_end.get(), 2);
  }
  std::vector<std::string> args = argv;
  std::vector<char*> c_args;
  for (std::string& a : args) c_args.push_back(a.data());
  c_args.push_back(nullptr);
  std::vector<std::string> env = CLocaleEnvironment();
  std::vector<char*> c_env;
  for (std::string& e : env) c_env.push_back(e.data());
  c_env.push_back(nullptr);
  pid_t pid = 0;
  const int rc =
      ::posix_spawnp(&pid, argv[0].c_str(), &actions, nullptr, c_args.data(), c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  write_end = UniqueFd();
  if (rc != 0) return ErrnoError(rc, fmt::format("cannot run '{}'", argv[0]));

  ProgramRun run;
  const int64_t deadline = options.timeout_ms > 0 ? NowMs() + options.timeout_ms : 0;
  while (true) {
    int wait_ms = -1;
    if (deadline != 0) {
      const int64_t left = deadline - NowMs();
      if (left <= 0) {
        run.timed_out = true;
        break;
      }
      wait_ms = static_cast<int>(left);
    }
    pollfd p{read_end.get(), POLLIN, 0};
    const int n = ::poll(&p, 1, wait_ms);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) {
      run.timed_out = true;
      break;
    }
    if (n < 0) break;
    char buffer[4096];
    const ssize_t got = ::read(read_end.get(), buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    const size_t room =
        options.max_output_bytes - std::min(options.max_output_bytes, run.output.size());
    run.output.append(buffer, std::min(room, static_cast<size_t>(got)));
  }
  if (run.timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!run.timed_out && WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  return run;
}

}  // namespace partalign
