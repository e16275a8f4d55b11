// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/interactive/planner_session.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/apply/apply_plan.h"
#include "cli/content/content_proof.h"
#include "cli/content/sleeping_systems.h"
#include "cli/room/make_room.h"
#include "cli/target/load_disk.h"
#include "io/device/in_use.h"
#include "io/table/backup_file.h"
#include "io/terminal/curses_terminal.h"
#include "io/tools/tool_versions.h"
#include "io/util/text_file.h"
#include "partalign/interactive/planner_render.h"
#include "partalign/table/plan_check.h"
#include "partalign/topology/alignment.h"
#include "partalign/topology/topology_spec.h"

namespace partalign {
namespace {

// The disk as the planner edits it. Only a proof makes a partition empty (docs/audit-plan.md,
// "Empty is proven"): with `scan`, each partition not proven either way is read in full now.
// `*sleeping`: the partitions that hold a hibernated system (docs/used-map.md), which `w` refuses.
Result<PlannerModel> LoadModel(const TargetOptions& target, LabelType label, bool scan, Streams io,
                               const std::vector<uint32_t>& discard, SleepScan* sleeping) {
  Result<LoadedDisk> disk = LoadDisk(target, io);
  std::vector<ShrinkOffer> shrink_offers;
  std::string offers_error;
  if (!disk) return disk.error();
  PartitionTable& table = disk->table.table;
  *sleeping = ScanForSleepingSystems(target.target, table);
  if (scan) {
    std::vector<uint32_t> unscanned;
    for (const Partition& p : table.partitions) {
      if (p.kind != PartitionKind::kExtended && p.contents.proof == ContentProof::kUnscanned) {
        unscanned.push_back(p.number);
      }
    }
    if (Status s = ProvePartitionsEmpty(io, target.target, &table, unscanned); !s) {
      return s.error();
    }
    // The ends past filesystems that plan's layout gives up, read as plan reads them (a
    // partition never shrinks in silence). Whatever fails here leaves them unproven, and so
    // kept: a table plan cannot plan is the model's to refuse.
    if (!table.partitions.empty()) {
      Result<Plan> proven =
          MakeProvenPlan(io, target.target, &table, disk->device,
                         RecommendAlignment(disk->device.topology).alignment, ContentOptions{});
      // When plan cannot align every partition, how small each one's contents can be made,
      // read as plan --make-room reads it: what M offers (make_room.h).
      if (proven &&
          std::any_of(proven->actions.begin(), proven->actions.end(),
                      [](const PlanAction& a) { return a.kind == ActionKind::kImpossible; })) {
        Result<std::vector<ShrinkOffer>> offers = ReadShrinkOffers(target.target, table);
        if (offers) {
          shrink_offers = std::move(*offers);
        } else {
          offers_error = offers.error().message;
        }
      }
    }
  }
  if (!scan) offers_error = "not read (--no-scan)";
  // A partition the running system uses keeps its place in `A`, as in plan.
  Result<std::vector<DiskUser>> users = FindDiskUsers(target.target);
  if (!users) return users.error();
  std::vector<uint32_t> in_use;
  for (const DiskUser& u : *users) {
    if (u.partition != 0) in_use.push_back(u.partition);
  }
  return PlannerModel::Make({disk->device, table, in_use, std::move(shrink_offers), offers_error},
                            label, discard);
}

// The plan file `w` applies, kept beside the table backups as a record of what was written.
std::string PlanFilePath(const std::string& backup_dir) {
  return fmt::format("{}/partalign-planner-{}.plan.json", backup_dir, UtcTime("%Y%m%dT%H%M%SZ"));
}

// Runs apply on `plan` with the terminal back in plain mode, then waits for Enter. On success
// `*applied` is the plan file apply ran on.
std::string ApplyFromPlanner(CursesTerminal& term, const Plan& plan, const TargetOptions& target,
                             const std::string& backup_dir, Streams io, std::string* applied) {
  term.Suspend();
  TableWriteOptions write;
  write.yes = true;  // the planner asked: "yes" was typed
  write.assume = target.assume;
  write.sector_size = target.sector_size;
  write.target = target.target;
  write.backup_dir = backup_dir;
  std::string outcome;
  const std::string path = PlanFilePath(write.backup_dir);
  Status saved = MakeBackupDirectory(write.backup_dir);
  if (saved) saved = WriteFileAtomically(path, PlanToJson(plan).dump(2) + "\n");
  if (!saved) {
    PrintError(io.err, saved.error().message);
    outcome = "not applied: " + saved.error().message;
  } else {
    io.out << fmt::format("\npartalign apply '{}' (the plan the planner made):\n", path);
    io.out.flush();
    // The person confirmed this plan in the planner ("yes"): what it gives up, they gave up;
    // the shrink it makes, they took with M (as apply --make-room).
    ExitCode code = ApplyPlanFile(path, write, io, PlanDiscards(plan), !PlanShrinks(plan).empty());
    if (code == ExitCode::kOk) *applied = path;
    outcome = code == ExitCode::kOk ? fmt::format("applied '{}'; the disk as it is now", path)
                                    : fmt::format("apply of '{}' exited {}: see its output above",
                                                  path, static_cast<int>(code));
  }
  io.out << "\nPress Enter to return to the planner.";
  io.out.flush();
  for (int c = std::getchar(); c != '\n' && c != EOF;) c = std::getchar();
  term.Resume();
  return outcome;
}

}  // namespace

ExitCode RunPlannerSession(const TargetOptions& target, LabelType label,
                           const std::string& backup_dir, bool scan, Streams io,
                           const std::vector<uint32_t>& discard) {
  if (!::isatty(STDIN_FILENO) || !::isatty(STDOUT_FILENO)) {
    PrintError(io.err,
               fmt::format("plan --interactive needs a terminal; without one use 'partalign "
                           "plan --layout SPEC {}'",
                           target.target.empty() ? "TARGET" : target.target));
    return ExitCode::kFailure;
  }
  SleepScan sleeping;
  Result<PlannerModel> model = LoadModel(target, label, scan, io, discard, &sleeping);
  if (!model) {
    PrintError(io.err, model.error().message);
    return ExitCode::kFailure;
  }
  PlannerScreen screen(std::move(*model), BuiltinProfiles(), DetectToolVersions());
  // The message line says it from the start: w (apply) refuses while a system sleeps on the disk.
  if (const std::vector<std::string> lines = SleepingLines(sleeping); !lines.empty()) {
    screen.Report(lines.front());
  }
  Result<std::unique_ptr<CursesTerminal>> term = CursesTerminal::Open();
  if (!term) {
    PrintError(io.err, term.error().message);
    return ExitCode::kFailure;
  }
  std::string applied;  // the plan file of the last apply from the planner, if any
  std::string how = "q";
  std::string dropped;
  for (;;) {
    auto [columns, lines] = (*term)->Size();
    if (columns < kPlannerMinWidth || lines < kPlannerMinHeight) {
      (*term)->Draw(DrawPlannerTooSmall(columns, lines));
      Key k = (*term)->ReadKey();
      if ((k.code == KeyCode::kChar && k.ch == 'q') || k.code == KeyCode::kInterrupt) {
        // No room to ask about edits not written: the last line names them.
        how = k.code == KeyCode::kInterrupt ? "Ctrl-C" : "q";
        dropped = screen.HasUnsavedEdits() ? screen.model().ChangeSummary() : "";
        break;
      }
      continue;
    }
    (*term)->Draw(DrawPlanner(screen, columns, lines));
    PlannerEffect effect = screen.Handle((*term)->ReadKey());
    if (effect.kind == PlannerEffect::Kind::kQuit) {
      how = effect.content;
      dropped = effect.dropped;
      break;
    }
    if (effect.kind == PlannerEffect::Kind::kWriteFile) {
      Status s = WriteFileAtomically(effect.path, effect.content);
      if (s) screen.MarkExported();
      screen.Report(s ? fmt::format("wrote '{}'", effect.path) : s.error().message);
    } else if (effect.kind == PlannerEffect::Kind::kApply) {
      const std::string before = applied;
      std::string outcome =
          ApplyFromPlanner(**term, *effect.plan, target, backup_dir, io, &applied);
      std::ostringstream quiet;
      // After a write the disk is another one, and what was given up is gone; after a refusal
      // it is the same disk, given up as before.
      const std::vector<uint32_t> still =
          applied != before ? std::vector<uint32_t>{} : screen.model().layout().discarded;
      Result<PlannerModel> reloaded =
          LoadModel(target, label, scan, {quiet, quiet}, still, &sleeping);
      if (reloaded) {
        screen.Replace(std::move(*reloaded));
      } else {
        outcome += "; cannot read the disk again: " + reloaded.error().message;
      }
      screen.Report(outcome);
    }
  }
  term->reset();  // the terminal back to the shell before the last word
  io.out << fmt::format("partalign: left the planner ({}): {}{}\n", how,
                        applied.empty() ? fmt::format("nothing was written to '{}'", target.target)
                                        : fmt::format("'{}' holds what apply wrote (the plan '{}')",
                                                      target.target, applied),
                        dropped.empty() ? "" : fmt::format("; edits not written: {}", dropped));
  return ExitCode::kOk;
}

}  // namespace partalign
