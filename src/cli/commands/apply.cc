// SPDX-License-Identifier: GPL-3.0-or-later
// partalign apply PLAN: the options; the steps themselves are src/cli/apply/apply_plan.h, which
// the interactive planner's `w` runs too.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "cli/apply/apply_plan.h"
#include "cli/at_boot/stage_plan.h"
#include "cli/commands.h"
#include "cli/move/move_way_choice.h"

namespace partalign {

namespace {

// --at-next-boot, --journal-partition and --cancel-next-boot (docs/at-boot.md).
struct NextBootOptions {
  bool stage = false;
  bool cancel = false;
  std::optional<uint32_t> journal_partition;
  /// --journal-dir or --backup-dir given: the stage puts both on the journal partition.
  std::vector<std::string> places_given;
};

ExitCode RunApply(Streams io, const ApplyRequest& request, const NextBootOptions& next_boot) {
  if (next_boot.cancel) {
    if (!request.plan_path.empty() || next_boot.stage) {
      PrintError(io.err, "apply --cancel-next-boot takes no PLAN and no --at-next-boot");
      return ExitCode::kFailure;
    }
    return CancelNextBoot(io, request.write.yes);
  }
  if (request.plan_path.empty()) {
    PrintError(io.err, "apply: PLAN is required (or --cancel-next-boot)");
    return ExitCode::kFailure;
  }
  if (next_boot.journal_partition && !next_boot.stage) {
    PrintError(io.err, "apply: --journal-partition needs --at-next-boot");
    return ExitCode::kFailure;
  }
  if (!next_boot.stage) return ApplyPlan(io, request);
  if (request.write.dry_run || request.json || request.bench.enabled) {
    PrintError(io.err,
               "apply --at-next-boot checks everything a dry run does; it takes no "
               "--dry-run, --json or --bench");
    return ExitCode::kFailure;
  }
  if (request.way) {
    PrintError(io.err,
               "apply --at-next-boot takes no --way: the boot measures the disk's costs when it "
               "moves and chooses the way then");
    return ExitCode::kFailure;
  }
  if (!next_boot.places_given.empty()) {
    PrintError(io.err, fmt::format("apply --at-next-boot takes no {}: the boot keeps the journals "
                                   "and the backup on the journal partition (--journal-partition)",
                                   fmt::join(next_boot.places_given, " or ")));
    return ExitCode::kFailure;
  }
  return StageForNextBoot(io, request, next_boot.journal_partition);
}

}  // namespace

void AddApplyCommand(CLI::App& app, CommandRunners& runners) {
  auto command = std::make_shared<ApplyRequest>();
  auto next_boot = std::make_shared<NextBootOptions>();
  auto way = std::make_shared<std::string>("auto");
  CLI::App* sub = app.add_subcommand(
      "apply",
      "execute a plan: journaled data moves and table changes through libfdisk, with backups "
      "(see partalign(8))");
  sub->add_option("PLAN", command->plan_path, "plan file (partalign plan --output)");
  AddTableWriteOptions(sub, &command->write);
  sub->add_flag("-J,--json", command->json,
                "print the changes and every range to be written as JSON");
  sub->add_option("--journal-dir", command->journal_dir,
                  "where the journals of data moves go, on another disk (default: " +
                      DefaultJournalDir() + ")");
  sub->add_flag("--progress", command->progress,
                "print the progress of data moves even when stderr is not a terminal");
  sub->add_option("--discard", command->discard,
                  "give up the contents of partition N, as the plan does (repeatable): the plan "
                  "file's word is not enough")
      ->delimiter(',')
      ->allow_extra_args(false)  // one N per --discard: the PLAN after it is not an N
      ->check(CLI::PositiveNumber);
  sub->add_flag("--make-room", command->make_room,
                "shrink the partition the plan shrinks (plan --make-room), as a journaled step "
                "before the moves: the plan file's word is not enough");
  sub->add_flag("--copy-all", command->copy_all,
                "move every byte of a partition, not only what its filesystem uses");
  sub->add_option("--way", *way,
                  "how a small shift stays safe: auto (the cheaper of the two, measured beside "
                  "the journal at each step), copies (saved copies in the journal) or ordered "
                  "(writes ordered by flushes, no copies)")
      ->check(CLI::IsMember({"auto", "copies", "ordered"}));
  sub->add_flag("--allow-reinstall-bootloader", command->boot.allow_reinstall_bootloader,
                "move a partition holding GRUB's core.img as a file (blocklists) all the same; "
                "GRUB must be reinstalled afterwards (the command is printed)");
  AddApplyBenchOptions(sub, &command->bench);
  sub->add_flag("--at-next-boot", next_boot->stage,
                "stage the plan for the next boot: the initramfs applies it before the root "
                "filesystem is mounted, so partitions the running system uses may move "
                "(docs/at-boot.md)");
  sub->add_option("--journal-partition", next_boot->journal_partition,
                  "with --at-next-boot: the partition of the same disk, left alone by the plan "
                  "and mounted now, that holds the staged plan and its journal (default: the "
                  "ESP or /boot)")
      ->check(CLI::PositiveNumber);
  sub->add_flag("--cancel-next-boot", next_boot->cancel,
                "take back the plan staged for the next boot");
  runners[sub] = [command, next_boot, way, sub](Streams io) {
    for (const char* name : {"--journal-dir", "--backup-dir"}) {
      if (sub->get_option(name)->count() > 0) next_boot->places_given.emplace_back(name);
    }
    Result<std::optional<MoveWay>> parsed = ParseMoveWay(*way);
    if (!parsed) {
      PrintError(io.err, parsed.error().message);
      return ExitCode::kFailure;
    }
    command->way = *parsed;
    return RunApply(io, *command, *next_boot);
  };
}

}  // namespace partalign
