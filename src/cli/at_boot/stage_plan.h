// SPDX-License-Identifier: GPL-3.0-or-later
// `partalign apply --at-next-boot PLAN` and `--cancel-next-boot` (docs/at-boot.md): a plan whose
// partitions the running system uses (its root) is checked as apply checks it, then staged on a
// partition of the same disk that the plan does not write (the ESP, /boot), where the initramfs
// finds it and runs it before the root filesystem is checked and mounted (boot_runner.h).
#pragma once

#include <cstdint>
#include <optional>

#include "cli/apply/apply_plan.h"
#include "cli/commands.h"

namespace partalign {

/// Every check of `apply --dry-run` on `request` (partitions the plan changes may be in use),
/// the journal partition chosen (`journal_partition`, or the mounted one the plan leaves alone),
/// the person asked, then the plan staged. Prints what it adds and how to take it back.
ExitCode StageForNextBoot(Streams io, const ApplyRequest& request,
                          std::optional<uint32_t> journal_partition);

/// Takes back a staged plan: its files on the journal partition and in the state directory.
/// Refused while the boot runner's move is unfinished on the disk.
ExitCode CancelNextBoot(Streams io, bool yes);

/// After a boot (`partalign at-boot --finished`, run by the package's systemd unit): when the
/// staged plan was applied at boot (done.json on its journal partition, the stage gone), removes
/// the running system's stage files (next-boot.json, next-boot.conf), so that the next initramfs
/// leaves partalign out. A plan not run yet is left staged (exit 0).
ExitCode ForgetDoneStage(Streams io);

}  // namespace partalign
