// SPDX-License-Identifier: GPL-3.0-or-later
// The boot runner (boot_runner.h; docs/at-boot.md).
#include "cli/at_boot/boot_runner.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/apply/apply_plan.h"
#include "cli/apply/fence_steps.h"
#include "cli/apply/table_write.h"
#include "cli/at_boot/next_boot_dir.h"
#include "cli/move/resume_journal.h"
#include "io/device/mounted_partitions.h"
#include "io/move/mover.h"
#include "io/table/fdisk_table.h"
#include "io/util/durable_file.h"
#include "io/util/text_file.h"
#include "partalign/at_boot/next_boot_stage.h"
#include "partalign/at_boot/staged_plan_left.h"
#include "partalign/layout/plan.h"
#include "partalign/table/plan_check.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;

constexpr const char* kLeftPlanName = "plan-left.json";

// What the boot runner needs before it may touch the disk: the stage record, and the disk the
// journal partition is on. nullopt after printing why (the boot must stop: a staged plan may be
// half-applied by an earlier boot, and nobody can tell which disk without these).
struct Staged {
  NextBootStage stage;
  std::string disk;
};

std::optional<Staged> ReadStaged(Streams io, const AtBootRequest& r, const NextBootDir& dir) {
  Result<std::string> text = ReadWholeFile(dir.stage(), "stage record");
  Result<NextBootStage> stage =
      text ? NextBootStageFromJson(*text) : Result<NextBootStage>(text.error());
  if (!stage) {
    PrintError(io.err, fmt::format("the staged plan's record '{}': {}", dir.stage(),
                                   stage.error().message));
    return std::nullopt;
  }
  Result<std::optional<HoldingPartition>> holding = PartitionHolding(r.mount_point);
  if (!holding || !*holding) {
    PrintError(io.err,
               fmt::format("'{}' is not a partition of a disk{}: it cannot be the journal "
                           "partition of the staged plan",
                           r.mount_point, holding ? "" : " (" + holding.error().message + ")"));
    return std::nullopt;
  }
  if ((*holding)->number != stage->journal.number) {
    PrintError(io.err, fmt::format("'{}' is partition {} of '{}', but the plan was staged on "
                                   "partition {}",
                                   r.mount_point, (*holding)->number, (*holding)->disk,
                                   stage->journal.number));
    return std::nullopt;
  }
  return Staged{std::move(*stage), (*holding)->disk};
}

// The plan is applied: done.json says so, the stage goes (an older initramfs that still
// carries the hook finds nothing staged).
ExitCode Finish(Streams io, const NextBootDir& dir, const Staged& s, size_t done_by_earlier) {
  nlohmann::json done = {
      {"format", "partalign-next-boot-done"},
      {"format_version", 1},
      {"disk_path", s.disk},
      {"staged_disk_path", s.stage.disk_path},
      {"staged_at", s.stage.staged_at},
      {"done_at", UtcTime("%Y-%m-%dT%H:%M:%SZ")},
  };
  Result<std::string> written =
      WriteFileDurably(dir.root, "done.json", done.dump(2) + "\n",
                       {.file_mode = 0600, .dir_mode = 0700, .replace = true, .what = "record"});
  for (const std::string& path :
       {dir.stage(), dir.plan(), dir.root + "/" + kLeftPlanName, dir.started()}) {
    if (!written) break;
    if (Status s2 = RemoveFileDurably(path); !s2) written = s2.error();
  }
  if (!written) {
    // The disk is realigned; only the stage could not be taken down: the next boot finds the
    // plan done (every partition at its new place) and tries again.
    PrintWarning(io.err, written.error().message);
  }
  io.out << fmt::format(
      "partalign: at-boot done: every partition of the staged plan of '{}' is at its new "
      "place{}\n",
      s.disk,
      done_by_earlier > 0 ? fmt::format(" ({} done by an earlier boot)", done_by_earlier) : "");
  ::sync();
  return ExitCode::kOk;
}

// After apply refused: whether the disk is exactly as before it (the table it started from,
// no move of this disk unfinished), so that the boot may go on.
bool UntouchedSince(const std::string& disk, const std::string& fingerprint) {
  Result<TableRead> table = ReadPartitionTable(disk, {.probe_contents = false});
  if (!table || table->table.fingerprint != fingerprint) return false;
  Result<std::vector<RegisteredJournal>> unfinished = ListUnfinishedMoves();
  return unfinished && unfinished->empty();
}

}  // namespace

ExitCode RunAtBoot(Streams io, const AtBootRequest& r) {
  const NextBootDir dir = NextBootDirOn(r.mount_point);
  std::error_code ec;
  if (!fs::exists(dir.stage(), ec)) {
    io.out << fmt::format("partalign: nothing staged in '{}'\n", dir.root);
    return ExitCode::kOk;
  }
  std::optional<Staged> s = ReadStaged(io, r, dir);
  if (!s) return ExitCode::kFailure;
  // The registry, the table-write markers and the journals live on the journal partition: the
  // root filesystem is not mounted (and may be what moves).
  ::setenv("PARTALIGN_STATE_DIR", dir.state().c_str(), 1);
  io.out << fmt::format(
      "partalign: realigning '{}' as staged at {} (journal on partition {}); do not switch off: "
      "if power fails, the next boot resumes\n",
      s->disk, s->stage.staged_at, s->stage.journal.number);

  // A move an earlier boot began and a power loss interrupted: finished first.
  if (ExitCode code = RunResume({.what = s->disk, .yes = true, .progress = r.progress}, io);
      code != ExitCode::kOk) {
    return code == ExitCode::kRefused ? ExitCode::kFailure : code;
  }
  // A fence an earlier boot wrote with no move under it (a power loss between the two, or a
  // move rolled back): the table as it was, so that the plan left is read from it.
  if (ExitCode code = LiftFence(io, s->disk, nullptr, dir.backups(), dir.journals(), r.progress);
      code != ExitCode::kOk) {
    return code == ExitCode::kRefused ? ExitCode::kFailure : code;
  }
  Result<std::string> text = ReadWholeFile(dir.plan(), "staged plan");
  Result<Plan> plan = text ? PlanFromJson(*text) : Result<Plan>(text.error());
  Result<TableRead> table = ReadPartitionTable(s->disk, {.probe_contents = false});
  Result<PlanLeft> left = !plan    ? Result<PlanLeft>(plan.error())
                          : !table ? Result<PlanLeft>(table.error())
                                   : StagedPlanLeft(*plan, table->table);
  if (!left) {
    PrintError(io.err, fmt::format("the staged plan '{}': {}", dir.plan(), left.error().message));
    return ExitCode::kFailure;
  }
  if (left->left == 0) return Finish(io, dir, *s, left->done);

  ApplyRequest apply;
  apply.plan_path = dir.plan();
  if (left->done > 0 || left->plan.table_fingerprint != plan->table_fingerprint) {
    io.out << fmt::format(
        "partalign: {} change(s) of the staged plan done by an earlier boot, {} "
        "left\n",
        left->done, left->left);
    Result<std::string> written =
        WriteFileDurably(dir.root, kLeftPlanName, PlanToJson(left->plan).dump(2) + "\n",
                         {.file_mode = 0600, .dir_mode = 0700, .replace = true, .what = "plan"});
    if (!written) {
      PrintError(io.err, written.error().message);
      return ExitCode::kFailure;
    }
    apply.plan_path = *written;
  }
  apply.write.target = s->disk;
  apply.write.yes = true;
  apply.write.backup_dir = dir.backups();
  apply.write.assume = s->stage.consent.assume;
  if (!s->stage.consent.sector_size.empty()) {
    apply.write.sector_size = s->stage.consent.sector_size;
  }
  apply.journal_dir = dir.journals();
  apply.progress = r.progress;
  for (uint32_t n : s->stage.consent.discard) {
    for (const PlanAction& a : left->plan.actions) {
      if (a.partition == n && a.empty == Emptiness::kDiscarded) apply.discard.push_back(n);
    }
  }
  apply.make_room = s->stage.consent.make_room && !PlanShrinks(left->plan).empty();
  apply.copy_all = s->stage.consent.copy_all;
  apply.boot.allow_reinstall_bootloader = s->stage.consent.allow_reinstall_bootloader;
  apply.fence = true;

  // From the first write on, the boot scripts run this before the root is looked for.
  if (Result<std::string> started =
          WriteFileDurably(dir.root, "started", UtcTime("%Y-%m-%dT%H:%M:%SZ") + "\n",
                           {.file_mode = 0600, .dir_mode = 0700, .replace = true, .what = "mark"});
      !started) {
    PrintError(io.err, started.error().message);
    return ExitCode::kFailure;
  }
  const ExitCode code = ApplyPlan(io, apply);
  if (code == ExitCode::kOk) return Finish(io, dir, *s, left->done);
  if (code == ExitCode::kRefused && UntouchedSince(s->disk, left->plan.table_fingerprint) &&
      RemoveFileDurably(dir.started())) {
    PrintError(io.err, fmt::format("the staged plan was not applied and nothing was written: the "
                                   "boot goes on with '{}' as it was; the plan stays staged "
                                   "('partalign apply --cancel-next-boot' takes it back)",
                                   s->disk));
    return ExitCode::kOk;
  }
  return code == ExitCode::kRefused ? ExitCode::kFailure : code;
}

}  // namespace partalign
