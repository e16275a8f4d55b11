// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/apply/move_ui.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "io/device/in_use.h"
#include "io/move/journal_file.h"
#include "io/move/mover.h"
#include "io/util/unique_fd.h"
#include "partalign/move/progress.h"
#include "partalign/util/shell_quote.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

/// Redraws of the progress line per second on a terminal: smooth enough, cheap.
constexpr double kRedrawsPerSecond = 4;
/// With --progress on a pipe or file: one line per second keeps logs short.
constexpr double kLinesPerSecond = 1;

// Set from a signal handler, read by the mover's reader thread.
std::atomic<bool> g_stop_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void OnStopSignal(int) { g_stop_requested.store(true); }

// PARTALIGN_TEST_SIGINT_AFTER_BATCHES=N (N >= 1), or nothing.
std::optional<uint64_t> TestSigintAfterBatches() {
  const char* value = std::getenv("PARTALIGN_TEST_SIGINT_AFTER_BATCHES");
  if (value == nullptr || *value == '\0') return std::nullopt;
  Result<uint64_t> n = ParseUint(value);
  if (!n || *n == 0) return std::nullopt;
  return *n;
}

// Every signal that ends a move from outside: Ctrl-C (again and again), kill, a closed SSH
// session (SIGHUP), a reader gone from a pipe (SIGPIPE: `apply ... | head`).
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
struct sigaction g_old_actions[std::size(kStopSignals)]{};

// What PARTALIGN_TEST_SIGNALS names (comma-separated INT, TERM, HUP, PIPE; default INT): the
// signals the test hook sends, in order, at the batch PARTALIGN_TEST_SIGINT_AFTER_BATCHES names.
std::vector<int> TestSignals() {
  const char* value = std::getenv("PARTALIGN_TEST_SIGNALS");
  std::vector<int> signals;
  std::string names = value != nullptr && *value != '\0' ? value : "INT";
  names += ',';
  for (size_t at = 0, comma = 0; (comma = names.find(',', at)) != std::string::npos;
       at = comma + 1) {
    const std::string name = names.substr(at, comma - at);
    if (name == "INT") signals.push_back(SIGINT);
    if (name == "TERM") signals.push_back(SIGTERM);
    if (name == "HUP") signals.push_back(SIGHUP);
    if (name == "PIPE") signals.push_back(SIGPIPE);
  }
  return signals;
}

// Sends `signal` the way the world does: SIGPIPE by writing to a pipe whose reader is gone (the
// kernel's own signal), the others with raise().
void SendTestSignal(int signal) {
  if (signal != SIGPIPE) {
    ::raise(signal);
    return;
  }
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) return;
  ::close(ends[0]);
  (void)!::write(ends[1], "x", 1);
  ::close(ends[1]);
}

// "stages (each on its own thread, times overlap, within the copy and read-back's 1.250 s):
// read 1.200 s 324 MiB; journal 0.400 s 324 MiB (12 flushes 0.300 s); ..." - where a move's
// time went (MoveStats::stages); empty when no stage ran. The pass's own time, to the
// millisecond, tells the time around it from the run's (scripts/bench-move).
std::string StageProfileLine(const MoveStats& stats) {
  std::vector<std::string> parts;
  for (size_t k = 0; k < kMoveStageCount; ++k) {
    const StageProfile& p = stats.stages[k];
    if (p.batches == 0) continue;
    // Milliseconds: a stage of a small move takes a few.
    std::string part = fmt::format("{} {:.3f} s", ToString(static_cast<MoveStage>(k)), p.seconds);
    if (p.bytes > 0) part += " " + FormatSize(p.bytes);
    if (p.flushes > 0) {
      part += fmt::format(" ({} flush{} {:.3f} s)", p.flushes, p.flushes == 1 ? "" : "es",
                          p.flush_seconds);
    }
    parts.push_back(std::move(part));
  }
  if (parts.empty()) return {};
  return fmt::format(
      "stages (each on its own thread, times overlap, within the copy and read-back's {:.3f} s): "
      "{}",
      stats.move_seconds, fmt::join(parts, "; "));
}

}  // namespace

bool Confirm(Streams io, bool yes, const std::string& what) {
  if (yes) return true;
  if (::isatty(STDIN_FILENO) == 0) {
    PrintError(io.err, "refusing to write without --yes (" + what + ")");
    return false;
  }
  io.err << "partalign: " << what << ".\nType 'yes' to continue: " << std::flush;
  std::string answer;
  std::getline(std::cin, answer);
  if (answer == "yes") return true;
  PrintError(io.err, "not confirmed; nothing was written");
  return false;
}

StopOnSignal::StopOnSignal() {
  g_stop_requested.store(false);
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  // Every signal, the second one too, only asks: a death in the middle of a batch is safe for
  // the disk, but it leaves the person with no word of where the disk is (issue #37). SIGKILL
  // remains for the impatient. A write to a closed stdout then fails (EPIPE) instead of killing.
  action.sa_flags = SA_RESTART;
  for (size_t i = 0; i < std::size(kStopSignals); ++i) {
    ::sigaction(kStopSignals[i], &action, &g_old_actions[i]);
  }
}

StopOnSignal::~StopOnSignal() {
  for (size_t i = 0; i < std::size(kStopSignals); ++i) {
    ::sigaction(kStopSignals[i], &g_old_actions[i], nullptr);
  }
}

bool StopOnSignal::Requested() { return g_stop_requested.load(); }

void PrintErrorOrToTerminal(Streams io, const std::string& message) {
  PrintError(io.err, message);
  io.err.flush();
  if (io.err.good()) return;
  // stderr is gone (a closed pipe, a terminal hung up): the controlling terminal, if any.
  UniqueFd tty(::open("/dev/tty", O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC));
  if (!tty.valid()) return;
  const std::string line = "partalign: " + message + "\n";
  (void)!::write(tty.get(), line.data(), line.size());
}

ProgressPrinter::ProgressPrinter(std::ostream& err, bool forced)
    : err_(err), terminal_(::isatty(STDERR_FILENO) != 0), enabled_(forced || terminal_) {}

void ProgressPrinter::Update(const MoveProgress& progress) {
  if (!enabled_) return;
  std::lock_guard lock(mutex_);
  const Clock::time_point now = Clock::now();
  const bool new_phase = progress.phase != phase_;
  if (new_phase) {
    if (drawn_ && terminal_) err_ << '\n';
    phase_ = progress.phase;
    phase_start_ = now;
    drawn_ = false;
  }
  const bool last = progress.done_bytes >= progress.total_bytes;
  const double interval = 1.0 / (terminal_ ? kRedrawsPerSecond : kLinesPerSecond);
  if (drawn_ && !last && std::chrono::duration<double>(now - last_print_).count() < interval) {
    return;
  }
  const std::string line =
      "partalign: " + FormatProgress({progress.phase, progress.done_bytes, progress.total_bytes,
                                      std::chrono::duration<double>(now - phase_start_).count()});
  if (terminal_) {
    err_ << '\r' << line << "\033[K" << std::flush;
  } else {
    err_ << line << '\n' << std::flush;
  }
  last_print_ = now;
  drawn_ = true;
}

void ProgressPrinter::Finish() {
  std::lock_guard lock(mutex_);
  if (drawn_ && terminal_) err_ << '\n' << std::flush;
  drawn_ = false;
  phase_.clear();
}

MoverHooks MakeHooks(ProgressPrinter& printer) {
  MoverHooks hooks;
  if (printer.enabled()) {
    hooks.progress = [&printer](const MoveProgress& p) { printer.Update(p); };
  }
  hooks.stop_requested = [] { return StopOnSignal::Requested(); };
  // Test only (docs/apply.md, "Testing crash safety"): Ctrl-C before the N-th batch, through
  // the real signal and handler, at a point a test can name.
  if (std::optional<uint64_t> n = TestSigintAfterBatches()) {
    auto asked = std::make_shared<std::atomic<uint64_t>>(0);
    hooks.stop_requested = [asked, n = *n, signals = TestSignals()] {
      if (asked->fetch_add(1) + 1 == n) {
        for (int signal : signals) SendTestSignal(signal);
      }
      return StopOnSignal::Requested();
    };
  }
  return hooks;
}

void AddMoveWriteOptions(CLI::App* command, bool* yes, bool* progress) {
  command->add_flag("-y,--yes", *yes, "do not ask for confirmation");
  command->add_flag("--progress", *progress, "print progress even when stderr is not a terminal");
}

ExitCode RunMoveOperation(
    Streams io, const std::string& device_path, bool progress,
    const std::function<Result<MoveOutcome>(const Target&, const MoverHooks&)>& run,
    const MoveGeometry& move, size_t table_updates, const std::string& journal_path,
    std::optional<MoveStatus>* status) {
  Result<Target> target = RetryWhileBusy<Target>(
      [&] { return OpenTarget(device_path, {.write = true, .exclusive = true}); });
  if (!target) {
    PrintError(io.err, target.error().message);
    return ExitCode::kRefused;
  }
  StopOnSignal stop;
  return RunMoveOn(io, *target, progress, run, move, table_updates, journal_path, status);
}

ExitCode RunMoveOn(Streams io, const Target& target, bool progress,
                   const std::function<Result<MoveOutcome>(const Target&, const MoverHooks&)>& run,
                   const MoveGeometry& move, size_t table_updates, const std::string& journal_path,
                   std::optional<MoveStatus>* status) {
  const std::string& device_path = target.path;
  ProgressPrinter printer(io.err, progress);
  Result<MoveOutcome> outcome = run(target, MakeHooks(printer));
  printer.Finish();
  if (!outcome) {
    PrintError(io.err, outcome.error().message);
    return outcome.error().errno_value == kUnfinishedMoveErrno ? ExitCode::kUnfinished
                                                               : ExitCode::kFailure;
  }
  if (KillPointsCounted() > 0) {
    io.err << fmt::format("partalign: test: {} kill points passed\n", KillPointsCounted());
  }
  if (status != nullptr) *status = outcome->status;
  return ReportOutcome(io, *outcome, move, table_updates, AbsolutePath(journal_path), device_path);
}

ExitCode ReportOutcome(Streams io, const MoveOutcome& outcome, const MoveGeometry& move,
                       size_t table_updates, const std::string& journal_path,
                       const std::string& device_path) {
  for (const std::string& note : outcome.notes) PrintWarning(io.err, note);
  const MoveStats& s = outcome.stats;
  const std::string digest =
      s.range_digest ? fmt::format(" (xxh3-128 of the chunk digests: {})", ToHex(*s.range_digest))
                     : "";
  switch (outcome.status) {
    case MoveStatus::kCompleted: {
      if (move.length_bytes == 0) {
        io.out << fmt::format("wrote the step's {} byte ranges on '{}'\n", table_updates,
                              device_path);
        return ExitCode::kOk;
      }
      io.out << fmt::format(
          "moved {} bytes ({}) on '{}' from byte {} to byte {}{}; verified{}\n", move.length_bytes,
          FormatSize(move.length_bytes), device_path, move.source_bytes, move.dest_bytes,
          move.copy.all() ? ""
                          : fmt::format(" (copied the used {} of them, {})", CopiedBytes(move),
                                        FormatSize(CopiedBytes(move))),
          digest);
      if (table_updates > 0) {
        io.out << fmt::format("wrote the new partition table ({} byte ranges)\n", table_updates);
      }
      // Only the phases this run went through (a resume may skip the scan, a first run the
      // separate verification pass: it read each chunk back during the copy).
      std::vector<std::string> parts;
      const std::pair<const char*, double> phases[] = {{"scan", s.scan_seconds},
                                                       {"copy and read-back", s.move_seconds},
                                                       {"verification pass", s.verify_seconds}};
      for (const auto& [name, seconds] : phases) {
        if (seconds > 0) parts.push_back(fmt::format("{} {}", name, FormatDuration(seconds)));
      }
      if (!parts.empty()) {
        io.out << fmt::format("time: {}; {} of saved copies written to the journal\n",
                              fmt::join(parts, ", "), FormatSize(s.saved_copy_bytes));
      }
      if (const std::string stages = StageProfileLine(s); !stages.empty()) {
        io.out << stages << "\n";
      }
      return ExitCode::kOk;
    }
    case MoveStatus::kRolledBack:
      if (move.length_bytes == 0) {
        io.out << fmt::format(
            "rolled back: the step's {} byte ranges on '{}' hold their old bytes\n", table_updates,
            device_path);
        return ExitCode::kOk;
      }
      io.out << fmt::format("rolled back: the {} bytes are back at byte {} of '{}'{}, verified{}\n",
                            move.length_bytes, move.source_bytes, device_path,
                            table_updates > 0 ? " with the old partition table" : "", digest);
      return ExitCode::kOk;
    case MoveStatus::kNothingWritten:
      io.out << fmt::format("the move never started; nothing was written to '{}'\n", device_path);
      return ExitCode::kOk;
    case MoveStatus::kStopped:
      PrintErrorOrToTerminal(io, outcome.message);
      if (outcome.journal_damaged) {
        // Resuming again, or rolling back, needs the same lost copy: no command of partalign
        // finishes this move, and saying "resume" would send the user round in a circle.
        PrintErrorOrToTerminal(
            io, fmt::format("the move is unfinished and '{}' is part-way, and its journal '{}' "
                            "lost the only copy of those bytes: 'partalign resume' and 'partalign "
                            "resume --rollback' stop at the same chunk; nothing more was written",
                            device_path, journal_path));
        return ExitCode::kUnfinished;
      }
      PrintErrorOrToTerminal(
          io, fmt::format("the move is unfinished and '{}' is part-way; run 'partalign "
                          "resume {}' to complete it, or 'partalign resume --rollback "
                          "{}' to undo it",
                          device_path, ShellQuote(journal_path), ShellQuote(journal_path)));
      return ExitCode::kUnfinished;
  }
  return ExitCode::kFailure;
}

}  // namespace partalign
