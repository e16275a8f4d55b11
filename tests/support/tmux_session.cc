// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/tmux_session.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "support/run_command.h"

namespace partalign::test {
namespace {

constexpr auto kPoll = std::chrono::milliseconds(50);
constexpr int kSessionSeconds = 600;  // the window outlives the command, for capture-pane
std::atomic<uint64_t> sessions{0};

}  // namespace

TmuxSession::TmuxSession(const std::string& shell_command, int width, int height)
    // A number of its own: a session made where the last one was (same address) must not
    // meet that one's server while it is still exiting.
    : socket_(fmt::format("partalign-test.{}.{}", ::getpid(), ++sessions)) {
  const std::string wrapped =
      fmt::format("TERM=xterm-256color {}; echo EXIT=$?; sleep {}", shell_command, kSessionSeconds);
  CommandResult r =
      RunCommand({"tmux", "-L", socket_, "-f", "/dev/null", "new-session", "-d", "-s", "s", "-x",
                  std::to_string(width), "-y", std::to_string(height), wrapped});
  if (r.exit_code != 0) throw std::runtime_error("tmux new-session failed: " + r.err);
  socket_path_ = RunCommand(Tmux({"display-message", "-p", "#{socket_path}"})).out;
  while (!socket_path_.empty() && socket_path_.back() == '\n') socket_path_.pop_back();
}

TmuxSession::~TmuxSession() {
  RunCommand({"tmux", "-L", socket_, "kill-server"});
  // tmux leaves its socket file behind; it goes by its own name (never a wildcard).
  if (!socket_path_.empty() && socket_path_.find(socket_) != std::string::npos) {
    std::error_code ignored;
    std::filesystem::remove(socket_path_, ignored);
  }
}

std::vector<std::string> TmuxSession::Tmux(std::vector<std::string> args) const {
  std::vector<std::string> argv{"tmux", "-L", socket_};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

void TmuxSession::Keys(const std::vector<std::string>& keys) {
  for (const std::string& k : keys) {
    RunCommand(Tmux({"send-keys", "-t", "s", k}));
    std::this_thread::sleep_for(kPoll);  // one key at a time, as a person types
  }
}

void TmuxSession::Type(const std::string& text) {
  RunCommand(Tmux({"send-keys", "-t", "s", "-l", text}));
  std::this_thread::sleep_for(kPoll);
}

std::string TmuxSession::Screen() const {
  return RunCommand(Tmux({"capture-pane", "-p", "-t", "s"})).out;
}

std::string TmuxSession::ScreenJoined() const {
  return RunCommand(Tmux({"capture-pane", "-p", "-J", "-t", "s"})).out;
}

bool TmuxSession::WaitFor(const std::string& needle, double seconds) const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (Screen().find(needle) != std::string::npos) return true;
    std::this_thread::sleep_for(kPoll);
  }
  return false;
}

int TmuxSession::WaitForExit(double seconds) const {
  if (!WaitFor("EXIT=", seconds)) return -1;
  const std::string s = Screen();
  return std::stoi(s.substr(s.find("EXIT=") + 5));
}

}  // namespace partalign::test
