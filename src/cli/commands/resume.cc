// SPDX-License-Identifier: GPL-3.0-or-later
// partalign resume [JOURNAL | DEVICE] [--rollback | --forget]: the options; the steps are
// src/cli/move/resume_journal.h, which the boot runner runs too.
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/apply/move_ui.h"
#include "cli/commands.h"
#include "cli/move/resume_journal.h"

namespace partalign {

void AddResumeCommand(CLI::App& app, CommandRunners& runners) {
  auto command = std::make_shared<ResumeCommand>();
  CLI::App* sub = app.add_subcommand(
      "resume",
      "complete an interrupted data move, or roll it back with --rollback; without an argument, "
      "list every unfinished move");
  sub->add_option("JOURNAL", command->what,
                  "the journal of the move, or the disk (its journal is found through the "
                  "registry and the journal directory)");
  sub->add_flag("--rollback", command->rollback,
                "put the data and the old partition table back instead");
  sub->add_flag("--forget", command->forget,
                "remove the journal of a move the disk no longer holds (restored from a copy); "
                "refused while the disk holds it");
  sub->add_option("--device", command->device,
                  "the disk, when its name changed since the move began (it is checked)");
  AddMoveWriteOptions(sub, &command->yes, &command->progress);
  runners[sub] = [command](Streams io) { return RunResume(*command, io); };
}

}  // namespace partalign
