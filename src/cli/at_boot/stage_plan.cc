// SPDX-License-Identifier: GPL-3.0-or-later
// Staging a plan for the next boot (stage_plan.h; docs/at-boot.md).
#include "cli/at_boot/stage_plan.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/apply/fence_steps.h"
#include "cli/apply/move_ui.h"
#include "cli/apply/table_write.h"
#include "cli/at_boot/next_boot_dir.h"
#include "io/device/mounted_partitions.h"
#include "io/move/journal_registry.h"
#include "io/table/fdisk_table.h"
#include "io/util/durable_file.h"
#include "io/util/state_dir.h"
#include "io/util/text_file.h"
#include "partalign/at_boot/next_boot_stage.h"
#include "partalign/layout/plan.h"
#include "partalign/util/shell_quote.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;

// Where a staging journal partition may be mounted, best first: what the running system keeps
// for booting, which an installer never puts on the root filesystem's partition.
int MountPreference(const std::string& mount_point) {
  for (int i = 0; const char* preferred : {"/boot/efi", "/efi", "/boot"}) {
    if (mount_point == preferred) return i;
    ++i;
  }
  return 3;
}

struct ChosenJournal {
  JournalPartition partition;
  std::string mount_point;
};

// A partition of the disk the plan leaves alone (no action changes it), holding a filesystem
// the initramfs mounts, mounted now: `wanted`, or the best (MountPreference). nullopt after
// printing why there is none.
std::optional<ChosenJournal> ChooseJournalPartition(Streams io, const std::string& disk,
                                                    const Plan& plan, const PartitionTable& table,
                                                    std::optional<uint32_t> wanted) {
  Result<std::vector<MountedPartition>> mounted = MountedPartitionsOf(disk);
  if (!mounted) {
    PrintError(io.err, mounted.error().message + "; nothing was staged");
    return std::nullopt;
  }
  std::vector<std::string> why_not;
  std::optional<ChosenJournal> best;
  for (const Partition& p : table.partitions) {
    if (wanted && p.number != *wanted) continue;
    const PlanAction* action = nullptr;
    for (const PlanAction& a : plan.actions) {
      if (a.partition == p.number) action = &a;
    }
    const MountedPartition* m = nullptr;
    for (const MountedPartition& candidate : *mounted) {
      if (candidate.number == p.number) m = &candidate;
    }
    std::string reason;
    if (p.kind == PartitionKind::kExtended) {
      reason = "is the extended partition";
    } else if (action != nullptr && action->kind != ActionKind::kNone &&
               action->kind != ActionKind::kImpossible) {
      reason = "is changed by the plan";
    } else if (!IsJournalFilesystem(p.contents.fs_type)) {
      reason = p.contents.fs_type.empty()
                   ? "holds no filesystem the initramfs mounts (ext2/3/4, vfat)"
                   : fmt::format("holds {}, not a filesystem the initramfs mounts (ext2/3/4, vfat)",
                                 p.contents.fs_type);
    } else if (p.contents.fs_uuid.empty()) {
      reason = "has a filesystem without a UUID";
    } else if (m == nullptr) {
      reason = "is not mounted (mount it, then stage again)";
    } else if (m->read_only) {
      reason = fmt::format(
          "is mounted read-only on '{}': staging writes the plan there now "
          "(mount -o remount,rw {}, then stage again)",
          m->mount_point, ShellQuote(m->mount_point));
    }
    if (!reason.empty()) {
      why_not.push_back(fmt::format("partition {} {}", p.number, reason));
      continue;
    }
    ChosenJournal c{{p.number, p.contents.fs_uuid, p.contents.fs_type}, m->mount_point};
    if (!best || MountPreference(c.mount_point) < MountPreference(best->mount_point)) best = c;
  }
  if (best) return best;
  PrintError(io.err,
             fmt::format("refusing to stage the plan: no partition of '{}' can hold its journal "
                         "at the boot, which needs a partition the plan leaves alone, with an "
                         "ext2/3/4 or vfat filesystem, mounted now (the ESP or /boot){}; "
                         "nothing was staged",
                         disk, wanted ? fmt::format(" (--journal-partition {})", *wanted) : ""));
  for (const std::string& line : why_not) PrintError(io.err, "  " + line);
  if (why_not.empty() && wanted) {
    PrintError(io.err, fmt::format("  '{}' has no partition {}", disk, *wanted));
  }
  return std::nullopt;
}

// PARTALIGN_STATE_DIR set to `value` while it lives, as it was afterwards: the staging's check
// runs with the state directory the boot runner uses (on the journal partition), whose place
// the mover checks like a journal's, while the stage's own records go to the running system's.
class StateDirOverride {
 public:
  explicit StateDirOverride(const std::string& value) {
    if (const char* old = ::getenv("PARTALIGN_STATE_DIR")) old_ = old;
    ::setenv("PARTALIGN_STATE_DIR", value.c_str(), 1);
  }
  ~StateDirOverride() {
    if (old_) {
      ::setenv("PARTALIGN_STATE_DIR", old_->c_str(), 1);
    } else {
      ::unsetenv("PARTALIGN_STATE_DIR");
    }
  }
  StateDirOverride(const StateDirOverride&) = delete;
  StateDirOverride& operator=(const StateDirOverride&) = delete;

 private:
  std::optional<std::string> old_;
};

// The stage's directory on its journal partition, mounted now, from the record at
// `record_path` (its stage in `stage` when not null); nullopt when the record cannot be read
// (said on io.err), and with `*refused` set when the journal partition is not mounted.
std::optional<NextBootDir> StagedDirOf(Streams io, const std::string& record_path,
                                       NextBootStage* staged, ExitCode* refused) {
  Result<std::string> text = ReadWholeFile(record_path, "next-boot record");
  Result<NextBootStage> stage =
      text ? NextBootStageFromJson(*text) : Result<NextBootStage>(text.error());
  if (!stage) {
    PrintError(io.err, fmt::format("'{}': {}", record_path, stage.error().message));
    return std::nullopt;
  }
  if (staged) *staged = *stage;
  Result<std::vector<MountedPartition>> mounted = MountedPartitionsOf(stage->disk_path);
  if (mounted) {
    for (const MountedPartition& m : *mounted) {
      if (m.number == stage->journal.number) return NextBootDirOn(m.mount_point);
    }
  }
  PrintError(io.err, fmt::format("partition {} of '{}' (filesystem UUID {}), which holds the "
                                 "staged plan, is not mounted{}: mount it and run this again",
                                 stage->journal.number, stage->disk_path, stage->journal.fs_uuid,
                                 mounted ? "" : " (" + mounted.error().message + ")"));
  *refused = ExitCode::kRefused;
  return std::nullopt;
}

}  // namespace

ExitCode StageForNextBoot(Streams io, const ApplyRequest& asked,
                          std::optional<uint32_t> journal_partition) {
  std::error_code ec;
  if (fs::exists(NextBootRecordPath(), ec)) {
    PrintError(io.err, fmt::format("a plan is staged for the next boot already ('{}'): take it "
                                   "back first with 'partalign apply --cancel-next-boot'; "
                                   "nothing was staged",
                                   NextBootRecordPath()));
    return ExitCode::kRefused;
  }
  Result<std::string> text = ReadWholeFile(asked.plan_path, "plan");
  if (!text) {
    PrintError(io.err, text.error().message + "; nothing was staged");
    return ExitCode::kFailure;
  }
  Result<Plan> plan = PlanFromJson(*text);
  if (!plan) {
    PrintError(io.err, fmt::format("plan '{}': {}; nothing was staged", asked.plan_path,
                                   plan.error().message));
    return ExitCode::kFailure;
  }
  if (plan->layout) {
    PrintError(io.err,
               "refusing to stage a fresh layout for the next boot: it replaces every "
               "partition, the running system's too; nothing was staged");
    return ExitCode::kRefused;
  }
  const std::string disk = asked.write.target.empty() ? plan->disk.path : asked.write.target;
  Result<TableRead> table = ReadPartitionTable(disk, {.probe_contents = true});
  if (!table) {
    PrintError(io.err, table.error().message + "; nothing was staged");
    return ExitCode::kFailure;
  }
  std::optional<ChosenJournal> journal =
      ChooseJournalPartition(io, disk, *plan, table->table, journal_partition);
  if (!journal) return ExitCode::kRefused;
  const NextBootDir dir = NextBootDirOn(journal->mount_point);

  // Every check of apply, as a dry run whose journals and backups go where the boot puts them.
  io.out << fmt::format(
      "Checking the plan as apply does, for the next boot (the journal on partition {}, "
      "mounted on '{}'):\n",
      journal->partition.number, journal->mount_point);
  ApplyRequest check = asked;
  check.write.dry_run = true;
  check.write.at_next_boot = true;
  check.fence = true;  // the boot's apply fences: the check says so
  check.write.backup_dir = dir.backups();
  check.journal_dir = dir.journals();
  check.json = false;
  check.bench = {};
  ExitCode checked = ExitCode::kOk;
  {
    const StateDirOverride boot_state(dir.state());
    checked = ApplyPlan(io, check);
  }
  if (checked != ExitCode::kOk) {
    PrintError(io.err, "nothing was staged");
    return checked;
  }

  NextBootStage stage;
  stage.disk_path = disk;
  stage.table_fingerprint = table->table.fingerprint;
  stage.journal = journal->partition;
  stage.consent = {asked.discard,      asked.make_room,
                   asked.copy_all,     asked.boot.allow_reinstall_bootloader,
                   asked.write.assume, asked.write.sector_size.value_or("")};
  stage.staged_at = UtcTime("%Y-%m-%dT%H:%M:%SZ");
  Result<std::string> conf = NextBootConf(stage.journal);
  if (!conf) {
    PrintError(io.err, conf.error().message + "; nothing was staged");
    return ExitCode::kFailure;
  }
  if (!Confirm(io, asked.write.yes,
               fmt::format("this stages the plan for the next boot of this system: the "
                           "initramfs applies it before the root filesystem is mounted, with its "
                           "journal in '{}'",
                           dir.root))) {
    return ExitCode::kRefused;
  }
  const std::string record = NextBootStageToJson(stage);
  for (const auto& [where, name, bytes] : {
           std::tuple{dir.root, "plan.json", *text},
           std::tuple{dir.root, "stage.json", record},
           std::tuple{StateDir(), "next-boot.json", record},
           std::tuple{StateDir(), "next-boot.conf", *conf},
       }) {
    Result<std::string> written = WriteFileDurably(
        where, name, bytes, {.file_mode = 0600, .dir_mode = 0700, .replace = true, .what = name});
    if (!written) {
      PrintError(io.err, written.error().message);
      PrintError(io.err,
                 "the plan is not staged completely: take it back with 'partalign apply "
                 "--cancel-next-boot'");
      return ExitCode::kFailure;
    }
  }
  io.out << fmt::format(
      "Staged for the next boot:\n"
      "  {}  (the plan)\n  {}  (what was consented to)\n"
      "  {}  (what the initramfs hook reads)\n  {}\n"
      "At the next boot, before the root filesystem is checked and mounted, the initramfs moves "
      "the data and writes the table, journaled on partition {}; if power fails, the boot after "
      "resumes it.\n"
      "Next: rebuild the initramfs so that it carries partalign and runs the plan "
      "('update-initramfs -u' on Debian and Ubuntu, 'dracut -f' with dracut), then reboot. Once "
      "the system is up again, partalign-at-boot-finished.service rebuilds it without "
      "partalign.\n"
      "To take it back before then: partalign apply --cancel-next-boot (and rebuild the "
      "initramfs).\n",
      dir.plan(), dir.stage(), NextBootConfPath(), NextBootRecordPath(), stage.journal.number);
  return ExitCode::kOk;
}

ExitCode CancelNextBoot(Streams io, bool yes) {
  const std::string record_path = NextBootRecordPath();
  std::error_code ec;
  if (!fs::exists(record_path, ec) && !fs::exists(NextBootConfPath(), ec)) {
    io.out << fmt::format("No plan is staged for the next boot ('{}' does not exist).\n",
                          record_path);
    return ExitCode::kOk;
  }
  ExitCode refused = ExitCode::kOk;
  NextBootStage staged;
  std::optional<NextBootDir> dir = StagedDirOf(io, record_path, &staged, &refused);
  if (refused != ExitCode::kOk) return refused;
  if (dir) {
    // The boot runner's registry: a move it began and a power loss interrupted is finished by
    // the next boot, never abandoned by taking the plan back.
    std::error_code none;
    for (const auto& entry : fs::directory_iterator(dir->journals(), none)) {
      if (entry.path().string().ends_with(".journal.json")) {
        PrintError(io.err, fmt::format("refusing to take the plan back: the boot began its move "
                                       "and did not finish it ('{}'); the next boot resumes it",
                                       entry.path().string()));
        return ExitCode::kRefused;
      }
    }
  }
  if (!Confirm(io, yes, "this takes back the plan staged for the next boot")) {
    return ExitCode::kRefused;
  }
  if (dir) {
    // A fence a boot left with no move under it (docs/at-boot.md, "The fence"): the table as it
    // was, before the stage that would lift it goes.
    if (ExitCode code = LiftFence(io, staged.disk_path, nullptr, dir->backups(), dir->journals(),
                                  /*progress=*/false);
        code != ExitCode::kOk) {
      PrintError(io.err, "the plan stays staged");
      return code;
    }
  }
  std::vector<std::string> removed;
  std::vector<std::string> paths = {NextBootConfPath(), record_path};
  if (dir) paths.insert(paths.begin(), {dir->stage(), dir->plan(), dir->started()});
  for (const std::string& path : paths) {
    if (!fs::exists(path, ec)) continue;
    if (Status s = RemoveFileDurably(path); !s) {
      PrintError(io.err, s.error().message);
      return ExitCode::kFailure;
    }
    removed.push_back(path);
  }
  io.out << "Took back the plan staged for the next boot; removed:\n";
  for (const std::string& path : removed) io.out << "  " << path << "\n";
  io.out << "Rebuild the initramfs to leave partalign out of it ('update-initramfs -u', or "
            "'dracut -f').\n";
  return ExitCode::kOk;
}

ExitCode ForgetDoneStage(Streams io) {
  const std::string record_path = NextBootRecordPath();
  std::error_code ec;
  if (!fs::exists(record_path, ec)) {
    io.out << fmt::format("No plan is staged for the next boot ('{}' does not exist).\n",
                          record_path);
    return ExitCode::kOk;
  }
  NextBootStage stage;
  ExitCode refused = ExitCode::kOk;
  std::optional<NextBootDir> dir = StagedDirOf(io, record_path, &stage, &refused);
  if (!dir) return refused != ExitCode::kOk ? refused : ExitCode::kFailure;
  if (fs::exists(dir->stage(), ec)) {
    io.out << fmt::format(
        "The plan staged at {} has not run yet ('{}' is there): it runs at the next boot; "
        "nothing was changed.\n",
        stage.staged_at, dir->stage());
    return ExitCode::kOk;
  }
  const std::string done = dir->root + "/done.json";
  if (!fs::exists(done, ec)) {
    PrintError(io.err, fmt::format("the plan staged at {} is neither staged on '{}' any more nor "
                                   "done ('{}' is missing): take it back with 'partalign apply "
                                   "--cancel-next-boot'",
                                   stage.staged_at, dir->root, done));
    return ExitCode::kFailure;
  }
  for (const std::string& path : {NextBootConfPath(), record_path}) {
    if (Status s = RemoveFileDurably(path); !s) {
      PrintError(io.err, s.error().message);
      return ExitCode::kFailure;
    }
  }
  io.out << fmt::format(
      "The plan staged at {} was applied at boot ('{}'); removed '{}' and '{}'. Rebuild the "
      "initramfs to leave partalign out of it ('update-initramfs -u', or 'dracut -f').\n",
      stage.staged_at, done, NextBootConfPath(), record_path);
  return ExitCode::kOk;
}

}  // namespace partalign
