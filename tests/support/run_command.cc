// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/run_command.h"

#include <cstdlib>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace partalign::test {
namespace {

struct Pipe {
  int read_end = -1;
  int write_end = -1;
  Pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    read_end = fds[0];
    write_end = fds[1];
  }
};

}  // namespace

CommandResult RunCommand(const std::vector<std::string>& argv, const std::string& input,
                         const std::map<std::string, std::string>& env) {
  // A child that exits without reading its stdin must not kill the test with SIGPIPE.
  static const bool sigpipe_ignored = (::signal(SIGPIPE, SIG_IGN), true);
  (void)sigpipe_ignored;
  Pipe in, out, err;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.read_end, 0);
  posix_spawn_file_actions_adddup2(&actions, out.write_end, 1);
  posix_spawn_file_actions_adddup2(&actions, err.write_end, 2);

  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    std::string entry(*e);
    std::string key = entry.substr(0, entry.find('='));
    if (env.count(key) == 0) env_strings.push_back(entry);
  }
  for (const auto& [key, value] : env) env_strings.push_back(key + "=" + value);
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> c_argv;
  for (std::string& a : args) c_argv.push_back(a.data());
  c_argv.push_back(nullptr);

  pid_t pid = 0;
  int rc = ::posix_spawnp(&pid, c_argv[0], &actions, nullptr, c_argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(in.read_end);
  ::close(out.write_end);
  ::close(err.write_end);
  CommandResult result;
  if (rc != 0) {
    ::close(in.write_end);
    ::close(out.read_end);
    ::close(err.read_end);
    result.exit_code = 127;
    result.err = std::string("cannot run ") + argv[0] + ": " + std::strerror(rc);
    return result;
  }

  // Feed stdin and drain stdout/stderr together so that no pipe fills up and blocks.
  size_t written = 0;
  int in_fd = in.write_end;
  if (input.empty()) {
    ::close(in_fd);
    in_fd = -1;
  } else {
    ::fcntl(in_fd, F_SETFL, O_NONBLOCK);
  }
  int out_fd = out.read_end, err_fd = err.read_end;
  char buffer[65536];
  while (out_fd >= 0 || err_fd >= 0 || in_fd >= 0) {
    pollfd fds[3];
    int n = 0;
    if (out_fd >= 0) fds[n++] = {out_fd, POLLIN, 0};
    if (err_fd >= 0) fds[n++] = {err_fd, POLLIN, 0};
    if (in_fd >= 0) fds[n++] = {in_fd, POLLOUT, 0};
    if (::poll(fds, n, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == in_fd) {
        ssize_t w = ::write(in_fd, input.data() + written, input.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        if (w < 0 && errno != EAGAIN) written = input.size();
        if (written >= input.size()) {
          ::close(in_fd);
          in_fd = -1;
        }
        continue;
      }
      ssize_t r = ::read(fds[i].fd, buffer, sizeof(buffer));
      if (r > 0) {
        (fds[i].fd == out_fd ? result.out : result.err).append(buffer, static_cast<size_t>(r));
      } else if (r == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        (fds[i].fd == out_fd ? out_fd : err_fd) = -1;
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

void RunOrThrow(const std::vector<std::string>& argv, const std::string& input) {
  CommandResult r = RunCommand(argv, input);
  if (r.exit_code != 0) throw std::runtime_error(Describe(argv, r));
}

CommandResult RunPartalign(const std::vector<std::string>& args, const std::string& input,
                           const std::map<std::string, std::string>& env) {
  std::vector<std::string> argv{PARTALIGN_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, input, env);
}

CommandResult RunAdvice(const std::string& command, const std::string& directory,
                        const std::string& input) {
  const std::string binary = PARTALIGN_BINARY;
  const std::string bin_dir = binary.substr(0, binary.find_last_of('/'));
  const char* path = std::getenv("PATH");
  // partalign's state (the registry, the default journal and backup places) in the test's own
  // directory, never the machine's /var/lib/partalign: tests running side by side must not see
  // each other's journals.
  return RunCommand({"sh", "-c", "cd \"$1\" && " + command, "sh", directory}, input,
                    {{"PATH", bin_dir + ":" + (path ? path : "/usr/sbin:/usr/bin:/sbin:/bin")},
                     {"PARTALIGN_STATE_DIR", directory + "/partalign-state"}});
}

std::string Describe(const std::vector<std::string>& argv, const CommandResult& result) {
  std::string text;
  for (const std::string& a : argv) text += a + " ";
  text += "-> exit " + std::to_string(result.exit_code) + "\n--- stdout:\n" + result.out +
          "--- stderr:\n" + result.err;
  return text;
}

}  // namespace partalign::test
