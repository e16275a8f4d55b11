// partalign resume JOURNAL [--rollback]: completes an interrupted move (data and partition
// table) or rolls it back to the old layout, from whatever instant the interruption hit.
#include <filesystem>
#include <ostream>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/apply/move_ui.h"
#include "cli/commands.h"
#include "io/device/target.h"
#include "io/move/mover.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

struct ResumeCommand {
  std::string journal;
  std::string device;
  bool rollback = false;
  bool yes = false;
  bool progress = false;
};

ExitCode RunResume(const ResumeCommand& command, Streams io) {
  Result<JournalSummary> summary = InspectJournal(command.journal);
  if (!summary) {
    PrintError(io.err, summary.error().message);
    // The hint is about a journal file a killed start left behind, not about a path that is no
    // journal file at all (a FIFO, a device: refused before anything was read).
    std::error_code ec;
    if (!std::filesystem::is_regular_file(command.journal, ec)) return ExitCode::kFailure;
    Result<bool> registered = IsJournalRegistered(command.journal);
    if (registered && !*registered) {
      PrintError(io.err,
                 fmt::format("'{}' is not a registered journal: if it is the journal of a move "
                             "that was interrupted while starting, that move never wrote to its "
                             "device and the file can be removed",
                             command.journal));
    }
    return ExitCode::kFailure;
  }
  const JournalHeader& header = summary->header;
  const std::string device_path = command.device.empty() ? header.device.path : command.device;
  Result<Target> probe = OpenTarget(device_path);
  if (!probe) {
    PrintError(io.err, probe.error().message + (command.device.empty()
                                                    ? " (the journal's device; if it has another "
                                                      "name now, give it with --device)"
                                                    : ""));
    return ExitCode::kFailure;
  }
  Result<JournalDevice> device = DescribeMoveDevice(*probe);
  if (!device) {
    PrintError(io.err, device.error().message);
    return ExitCode::kRefused;
  }
  if (std::optional<std::string> mismatch = DeviceMismatch(header.device, *device)) {
    PrintError(io.err, "refusing to resume: " + *mismatch);
    return ExitCode::kRefused;
  }
  const char* state = summary->state ? ToString(summary->state->phase) : "not started";
  const std::string copies =
      header.move.copy.all()
          ? ""
          : fmt::format(", copying the {} bytes of the used chunks ({}, {} used)",
                        CopiedBytes(header.move), header.used.source,
                        FormatSize(header.used.used_bytes));
  const std::string what = fmt::format(
      "this {} the move of {} bytes on '{}' from byte {} to byte {}{} (journal state: {})",
      command.rollback ? "rolls back" : "completes", header.move.length_bytes, device_path,
      header.move.source_bytes, header.move.dest_bytes, copies, state);
  if (!Confirm(io, command.yes, what)) return ExitCode::kRefused;

  std::optional<MoveStatus> status;
  const ExitCode code = RunMoveOperation(
      io, device_path, command.progress,
      [&](const Target& target, const MoverHooks& hooks) {
        return ResumeMove(target, command.journal,
                          command.rollback ? ResumeMode::kRollback : ResumeMode::kComplete, hooks);
      },
      header.move, header.table.size(), command.journal, &status);
  // Asked to roll back a move that had completed: nothing was undone, which is not success.
  if (command.rollback && status == MoveStatus::kCompleted) return ExitCode::kFailure;
  return code;
}

}  // namespace

void AddResumeCommand(CLI::App& app, CommandRunners& runners) {
  auto command = std::make_shared<ResumeCommand>();
  CLI::App* sub = app.add_subcommand(
      "resume", "complete an interrupted data move, or roll it back with --rollback");
  sub->add_option("JOURNAL", command->journal, "the journal of the move")->required();
  sub->add_flag("--rollback", command->rollback,
                "put the data and the old partition table back instead");
  sub->add_option("--device", command->device,
                  "the disk, when its name changed since the move began (it is checked)");
  AddMoveWriteOptions(sub, &command->yes, &command->progress);
  runners[sub] = [command](Streams io) { return RunResume(*command, io); };
}

}  // namespace partalign
