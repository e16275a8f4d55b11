// SPDX-License-Identifier: GPL-3.0-or-later
// partalign apply PLAN: the options; the steps themselves are src/cli/apply/apply_plan.h, which
// the interactive planner's `w` runs too.
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/apply/apply_plan.h"
#include "cli/commands.h"

namespace partalign {

void AddApplyCommand(CLI::App& app, CommandRunners& runners) {
  auto command = std::make_shared<ApplyRequest>();
  CLI::App* sub = app.add_subcommand(
      "apply",
      "execute a plan: journaled data moves and table changes through libfdisk, with backups "
      "(see partalign(8))");
  sub->add_option("PLAN", command->plan_path, "plan file (partalign plan --output)")->required();
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
  sub->add_flag("--allow-reinstall-bootloader", command->boot.allow_reinstall_bootloader,
                "move a partition holding GRUB's core.img as a file (blocklists) all the same; "
                "GRUB must be reinstalled afterwards (the command is printed)");
  AddApplyBenchOptions(sub, &command->bench);
  runners[sub] = [command](Streams io) { return ApplyPlan(io, *command); };
}

}  // namespace partalign
