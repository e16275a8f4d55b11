// SPDX-License-Identifier: GPL-3.0-or-later
// The files of a plan staged for the next boot (docs/at-boot.md): on the journal partition,
// `partalign-next-boot/` with the plan, its stage record and, once the boot runs it, the
// journals, backups and registry of the move; in the running system's state directory,
// next-boot.conf (what the initramfs hook reads) and next-boot.json.
#pragma once

#include <string>

namespace partalign {

/// The staged directory on the journal partition mounted at `mount_point`.
struct NextBootDir {
  std::string root;  ///< MOUNT/partalign-next-boot
  std::string plan() const { return root + "/plan.json"; }
  std::string stage() const { return root + "/stage.json"; }
  /// What the boot runner writes once the plan is applied (and the stage removed).
  std::string done() const { return root + "/done.json"; }
  /// Written by the boot runner before its first write, removed with the stage: while it is
  /// there the boot scripts run the runner before the boot looks for the root filesystem,
  /// which a fence (or an unfinished move) may keep from being found.
  std::string started() const { return root + "/started"; }
  std::string journals() const { return root + "/state/journals"; }
  std::string backups() const { return root + "/backups"; }
  /// $PARTALIGN_STATE_DIR while the boot runner runs: the registry, the table-write markers.
  std::string state() const { return root + "/state"; }
};

NextBootDir NextBootDirOn(const std::string& mount_point);

/// In the running system's state directory (StateDir()).
std::string NextBootConfPath();
std::string NextBootRecordPath();

}  // namespace partalign
