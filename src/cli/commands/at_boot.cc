// SPDX-License-Identifier: GPL-3.0-or-later
// partalign at-boot DIR: the options; the steps are src/cli/at_boot/boot_runner.h. The
// initramfs runs it (contrib/initramfs-tools, contrib/dracut; docs/at-boot.md).
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/at_boot/boot_runner.h"
#include "cli/at_boot/stage_plan.h"
#include "cli/commands.h"

namespace partalign {

void AddAtBootCommand(CLI::App& app, CommandRunners& runners) {
  auto request = std::make_shared<AtBootRequest>();
  CLI::App* sub = app.add_subcommand(
      "at-boot",
      "run the plan staged with 'apply --at-next-boot' (the initramfs runs this before the root "
      "filesystem is mounted; see docs/at-boot.md)");
  auto finished = std::make_shared<bool>(false);
  sub->add_option("DIR", request->mount_point,
                  "where the journal partition of the staged plan is mounted, read-write");
  sub->add_flag("--finished", *finished,
                "after the boot, on the running system: when the staged plan was applied at boot, "
                "remove its files here so that the next initramfs leaves partalign out");
  runners[sub] = [request, finished](Streams io) {
    if (*finished != request->mount_point.empty()) {
      PrintError(io.err, "at-boot takes DIR (in the initramfs) or --finished (after the boot)");
      return ExitCode::kFailure;
    }
    return *finished ? ForgetDoneStage(io) : RunAtBoot(io, *request);
  };
}

}  // namespace partalign
