// SPDX-License-Identifier: GPL-3.0-or-later
// A full-screen program under tmux, for end-to-end tests of `plan --interactive`: a private tmux
// server (its own socket name, no user configuration) with one detached session of a given
// size running a command; keys go in with send-keys, the screen comes out with capture-pane.
// The server is killed, by its own socket name, and its socket file removed when the session
// object goes.
#pragma once

#include <string>
#include <vector>

namespace partalign::test {

class TmuxSession {
 public:
  /// Starts `shell_command` (run by tmux through sh -c) in a `width` x `height` window. The
  /// command's exit status is printed as "EXIT=N" when it ends, and the window stays.
  TmuxSession(const std::string& shell_command, int width = 100, int height = 30);
  TmuxSession(const TmuxSession&) = delete;
  TmuxSession& operator=(const TmuxSession&) = delete;
  ~TmuxSession();

  /// tmux key names: "Enter", "Down", "Up", "Escape", "BSpace", or single characters.
  void Keys(const std::vector<std::string>& keys);
  /// Literal text (send-keys -l).
  void Type(const std::string& text);
  /// The screen as text.
  std::string Screen() const;
  /// The screen as text, each line the terminal wrapped joined again (capture-pane -J): what a
  /// program printed after leaving full-screen mode, one line as it printed it.
  std::string ScreenJoined() const;
  /// Waits until the screen contains `needle`; false (after `seconds`) when it never does.
  bool WaitFor(const std::string& needle, double seconds = 10) const;
  /// The command's exit status once it has ended ("EXIT=N" on the screen), or -1 after
  /// `seconds`.
  int WaitForExit(double seconds = 10) const;

 private:
  std::vector<std::string> Tmux(std::vector<std::string> args) const;
  std::string socket_;
  std::string socket_path_;  ///< the server's socket file, removed with the server
};

}  // namespace partalign::test
