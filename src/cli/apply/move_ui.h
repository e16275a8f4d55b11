// SPDX-License-Identifier: GPL-3.0-or-later
// What `move`, `resume` and `apply` share on the command line: the confirmation,
// Ctrl-C as "stop at the next batch", the progress line on stderr, and the report of a
// MoveOutcome with its exit status.
#pragma once

#include <chrono>
#include <functional>
#include <iosfwd>
#include <mutex>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "io/device/target.h"
#include "io/move/move_engine.h"
#include "partalign/move/move_plan.h"

namespace partalign {

/// --yes, or "yes" typed on a terminal. False (and a message) otherwise.
bool Confirm(Streams io, bool yes, const std::string& what);

/// While alive, SIGINT, SIGTERM, SIGHUP (a closed SSH session) and SIGPIPE (a reader gone from a
/// pipe) ask the mover to stop at the next batch boundary; so does a second signal: the person
/// always gets the line that says where the disk is (SIGKILL still kills, which the journal
/// covers too).
class StopOnSignal {
 public:
  StopOnSignal();
  ~StopOnSignal();
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;
  static bool Requested();
};

/// PrintError, and, when stderr is gone (closed, or its terminal hung up), the same line on the
/// controlling terminal if there is one: for what must not be lost (the resume line).
void PrintErrorOrToTerminal(Streams io, const std::string& message);

/// Progress on stderr: redrawn in place on a terminal (at most kRedrawsPerSecond), one line per
/// second with --progress elsewhere, nothing otherwise.
class ProgressPrinter {
 public:
  ProgressPrinter(std::ostream& err, bool forced);
  void Update(const MoveProgress& progress);
  /// Ends the redrawn line.
  void Finish();
  bool enabled() const { return enabled_; }

 private:
  using Clock = std::chrono::steady_clock;
  std::ostream& err_;
  bool terminal_ = false;
  bool enabled_ = false;
  std::mutex mutex_;
  std::string phase_;
  Clock::time_point phase_start_;
  Clock::time_point last_print_;
  bool drawn_ = false;
};

/// Hooks that feed `printer` and stop on a signal.
MoverHooks MakeHooks(ProgressPrinter& printer);

/// -y/--yes and --progress, for every command that moves data.
void AddMoveWriteOptions(CLI::App* command, bool* yes, bool* progress);

/// The part every data-moving command shares once it is confirmed: opens `device_path` for
/// writing (exclusively), runs `run` with Ctrl-C and the progress line wired in, and reports the
/// outcome (ReportOutcome). `status`, when given, receives the outcome's status.
ExitCode RunMoveOperation(
    Streams io, const std::string& device_path, bool progress,
    const std::function<Result<MoveOutcome>(const Target&, const MoverHooks&)>& run,
    const MoveGeometry& move, size_t table_updates, const std::string& journal_path,
    std::optional<MoveStatus>* status = nullptr);

/// The same on a target the caller opened (apply holds the disk from its checks to its last
/// write), without installing the Ctrl-C handler: the caller keeps a StopOnSignal alive.
ExitCode RunMoveOn(Streams io, const Target& target, bool progress,
                   const std::function<Result<MoveOutcome>(const Target&, const MoverHooks&)>& run,
                   const MoveGeometry& move, size_t table_updates, const std::string& journal_path,
                   std::optional<MoveStatus>* status = nullptr);

/// Prints what happened (stdout), notes (stderr) and returns the exit status.
ExitCode ReportOutcome(Streams io, const MoveOutcome& outcome, const MoveGeometry& move,
                       size_t table_updates, const std::string& journal_path,
                       const std::string& device_path);

}  // namespace partalign
