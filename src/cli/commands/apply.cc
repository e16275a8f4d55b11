// partalign apply PLAN: executes a plan with every protection of the safety contract
// (docs/apply.md): the plan must still fit the disk, nobody may use the disk, the table sectors
// are backed up before the first write, the write order keeps a readable table, the result is
// verified against the plan, the kernel is told (BLKPG). Table-only plans are written here;
// plans that move data go through the journaled mover, step by step (cli/apply_moves.h).
#include <ostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>

#include "cli/apply/apply_bench.h"
#include "cli/apply/apply_moves.h"
#include "cli/apply/table_write.h"
#include "cli/commands.h"
#include "io/device/device_probe.h"
#include "io/table/fdisk_table.h"
#include "io/table/fdisk_transition.h"
#include "io/table/table_writer.h"
#include "io/util/smartcols_table.h"
#include "io/util/text_file.h"
#include "partalign/layout/plan.h"
#include "partalign/layout/plan_render.h"
#include "partalign/table/plan_check.h"
#include "partalign/topology/probe_report.h"
#include "partalign/util/json_util.h"
#include "partalign/util/version.h"

namespace partalign {
namespace {

struct ApplyCommand {
  std::string plan_path;
  TableWriteOptions write;
  bool json = false;
  std::string journal_dir = kDefaultJournalDir;
  bool progress = false;
  bool copy_all = false;
  ApplyBenchOptions bench;  // --bench (apply_bench.h)
};

struct LoadedPlan {
  Plan plan;
  /// The plan creates a fresh table (`plan --layout` or the planner, key "layout") instead of
  /// changing the existing one.
  bool fresh_layout = false;
};

Result<LoadedPlan> LoadPlan(const std::string& path) {
  Result<std::string> text = ReadWholeFile(path, "plan");
  if (!text) return text.error();
  Result<Plan> plan = PlanFromJson(*text);
  if (!plan) return MakeError(fmt::format("plan '{}': {}", path, plan.error().message));
  nlohmann::json doc = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  return LoadedPlan{std::move(*plan), doc.is_object() && doc.contains("layout")};
}

std::vector<ScriptEdit> TableOnlyEdits(const Plan& plan) {
  std::vector<ScriptEdit> edits;
  for (const PlanAction& a : plan.actions) {
    if (a.kind != ActionKind::kTableOnly) continue;
    edits.push_back({a.partition, a.new_start_sector, a.new_end_sector - a.new_start_sector + 1});
  }
  return edits;
}

nlohmann::json DryRunJson(const ApplyCommand& c, const std::string& path, const Plan& plan,
                          const ComputedTransition& computed) {
  nlohmann::json actions = PlanToJson(plan)["actions"];
  return {
      {"schema_version", kJsonSchemaVersion},
      {"partalign_version", kVersion},
      {"plan", c.plan_path},
      {"device", path},
      {"dry_run", true},
      {"table_fingerprint", computed.old_table.fingerprint},
      {"new_table_fingerprint", computed.new_table.fingerprint},
      {"actions", actions},
      {"new_sfdisk_script", computed.new_script},
      {"table_write", TransitionJson(computed.transition)},
  };
}

ExitCode RunApply(const ApplyCommand& c, Streams io) {
  if (c.json && !c.write.dry_run) {
    PrintError(io.err, "apply: --json needs --dry-run");
    return ExitCode::kFailure;
  }
  Result<LoadedPlan> loaded = LoadPlan(c.plan_path);
  if (!loaded) {
    PrintError(io.err, loaded.error().message + "; nothing was written");
    return ExitCode::kFailure;
  }
  const Plan* plan = &loaded->plan;
  const std::string path = c.write.target.empty() ? plan->disk.path : c.write.target;
  Result<ProbeOptions> options = MakeProbeOptions(c.write);
  if (!options) {
    PrintError(io.err, options.error().message);
    return ExitCode::kFailure;
  }
  Result<DeviceInfo> device = ProbeTarget(path, *options);
  if (!device) {
    PrintError(io.err, device.error().message + "; nothing was written");
    return ExitCode::kFailure;
  }
  const uint64_t sector_size = device->topology.logical_sector_size;
  // With contents: a hand-edited plan may call a move of data "table-only".
  Result<TableRead> table =
      ReadPartitionTable(path, {.sector_size = sector_size, .probe_contents = true});
  if (!table) {
    PrintError(io.err, table.error().message + "; nothing was written");
    return ExitCode::kFailure;
  }
  if (Status s = CheckChangeable(table->table); !s) {
    PrintError(io.err, fmt::format("refusing to apply '{}' to '{}': {}; nothing was written",
                                   c.plan_path, path, s.error().message));
    return ExitCode::kRefused;
  }
  std::vector<std::string> stale = PlanMismatches(*plan, *device, table->table);
  if (!stale.empty()) {
    PrintError(io.err, fmt::format("refusing to apply '{}' to '{}': the disk does not match the "
                                   "plan (another disk, or it changed since the plan was made):",
                                   c.plan_path, path));
    for (const std::string& m : stale) PrintError(io.err, "  " + m);
    PrintError(io.err, "nothing was written");
    return ExitCode::kRefused;
  }
  if (std::vector<std::string> bad = PlanInconsistencies(*plan, table->table); !bad.empty()) {
    PrintError(io.err,
               fmt::format("plan '{}' does not fit the table of '{}': {}{}; nothing was "
                           "written",
                           c.plan_path, path, bad.front(),
                           bad.size() > 1 ? fmt::format(" (and {} more)", bad.size() - 1) : ""));
    return ExitCode::kFailure;
  }
  if (!c.write.target.empty() && c.write.target != plan->disk.path) {
    PrintWarning(io.err, fmt::format("the plan names '{}'; writing '{}' (--target), whose "
                                     "identity and table match the plan",
                                     plan->disk.path, path));
  }

  // --bench (apply_bench.h): the old places after the confirmation, before the disk is held;
  // the new places once everything is written, verified and the kernel told.
  ApplyBench bench(c.bench, path, BenchedPlaces(*plan, sector_size, &table->table));
  auto bench_before = [&] {
    Status s = bench.Before(io);
    if (!s) PrintError(io.err, s.error().message + "; nothing was written");
    return static_cast<bool>(s);
  };
  auto bench_after = [&] {
    if (Status s = bench.After(io); !s) {
      PrintWarning(io.err,
                   "the plan was applied, but the benchmark after it failed: " + s.error().message);
    }
  };

  if (std::any_of(plan->actions.begin(), plan->actions.end(),
                  [](const PlanAction& a) { return a.kind == ActionKind::kMoveData; })) {
    MoveApplyRequest request{.plan_path = c.plan_path,
                             .plan = plan,
                             .path = path,
                             .device = &*device,
                             .write = &c.write,
                             .journal_dir = c.journal_dir,
                             .progress = c.progress,
                             .json = c.json,
                             .copy_all = c.copy_all,
                             .before_first_write = bench_before,
                             .after_success = bench_after};
    return ApplyWithMoves(io, request);
  }

  Result<ComputedTransition> computed = MakeError("no transition");
  if (loaded->fresh_layout) {
    // A fresh table replaces what the disk holds, which may go only where no partition holds
    // data (the plan was made on this table: PlanMismatches checked its fingerprint, and
    // PlanInconsistencies the layout itself).
    for (const Partition& p : table->table.partitions) {
      if (p.kind == PartitionKind::kExtended || !p.contents.has_data) continue;
      PrintError(io.err,
                 fmt::format("refusing to apply '{}': partition {} of '{}' holds {}, and a fresh "
                             "table would orphan it; nothing was written",
                             c.plan_path, p.number, path,
                             p.contents.fs_type.empty() ? "data" : p.contents.fs_type));
      return ExitCode::kRefused;
    }
    Result<std::string> script = RenderSfdiskScript(*plan, table->table);
    if (!script) {
      PrintError(io.err, script.error().message + "; nothing was written");
      return ExitCode::kFailure;
    }
    computed = ComputeFreshTableTransition(path, sector_size, *script);
  } else {
    std::vector<ScriptEdit> edits = TableOnlyEdits(*plan);
    if (edits.empty()) {
      io.out << fmt::format("Nothing to do: the plan has no table-only changes for '{}'.\n", path);
      return ExitCode::kOk;
    }
    computed = ComputeTableTransition(path, sector_size, edits);
  }
  if (!computed) {
    PrintError(io.err, computed.error().message + "; nothing was written");
    return ExitCode::kFailure;
  }
  const TableTransition& t = computed->transition;
  std::vector<std::string> wrong = TableVersusPlan(*plan, computed->old_table, computed->new_table);
  if (!wrong.empty()) {
    PrintError(io.err, "the table libfdisk made differs from the plan:");
    for (const std::string& m : wrong) PrintError(io.err, "  " + m);
    PrintError(io.err, "nothing was written");
    return ExitCode::kFailure;
  }
  std::vector<std::string> conflicts =
      TransitionConflicts(t, computed->old_table, computed->new_table);
  if (!conflicts.empty()) {
    for (const std::string& m : conflicts) PrintError(io.err, m);
    PrintError(io.err, "refusing to overwrite partition contents; nothing was written");
    return ExitCode::kRefused;
  }

  const std::vector<TableRange> changed = ChangedRanges(t);
  const CrashAssessment crash = AssessCrashSafety(t);
  if (c.json) {
    io.out << DryRunJson(c, path, *plan, *computed).dump(2) << '\n';
    return ExitCode::kOk;
  } else {
    uint64_t bytes = 0;
    for (const TableRange& r : changed) bytes += r.length_bytes;
    io.out << fmt::format("Plan '{}' for '{}' ({} table, {}-byte sectors, {}):\n", c.plan_path,
                          path, ToString(t.label), sector_size, computed->old_table.fingerprint);
    PrintPlanActions(io.out, *plan);
    io.out << fmt::format("\nTable write: {} step(s), {} bytes, each flushed before the next:\n",
                          changed.size(), bytes);
    PrintRanges(io.out, t, /*all=*/c.write.dry_run);
    io.out << fmt::format("Crash safety: {}.\n", crash.reason);
  }
  if (c.write.dry_run) {
    io.out << "Dry run: nothing was written.\n";
    return ExitCode::kOk;
  }
  if (!Confirm(io, fmt::format("Apply these changes to '{}'?", path), c.write.yes)) {
    return ExitCode::kRefused;
  }
  if (!bench_before()) return ExitCode::kFailure;
  ExitCode code = ExitCode::kOk;
  std::optional<Target> disk = AcquireForWrite(io, path, &code);
  if (!disk) return code;
  // Held now: the sectors must still be the ones the transition (and the backup) start from.
  Result<std::vector<size_t>> moved = DifferingRanges(
      disk->fd.get(), path, t.ranges, [](const TableRange& r) { return r.old_bytes; });
  if (!moved) {
    PrintError(io.err, moved.error().message + "; nothing was written");
    return ExitCode::kFailure;
  }
  if (!moved->empty()) {
    PrintError(io.err, fmt::format("the table of '{}' changed while partalign prepared the write "
                                   "({} at byte {}); nothing was written",
                                   path, AreaName(t.label, t.ranges[moved->front()]),
                                   t.ranges[moved->front()].offset_bytes));
    return ExitCode::kRefused;
  }
  TableBackup backup = MakeBackup("apply", *device, *disk, t, computed->old_table.fingerprint,
                                  computed->new_table.fingerprint, computed->old_script,
                                  {&computed->old_table, &computed->new_table});
  std::optional<std::string> backup_path = SaveBackup(io, c.write.backup_dir, backup);
  if (!backup_path) return ExitCode::kFailure;

  if (Status s =
          WriteTableRanges(disk->fd.get(), path, sector_size, changed, HooksFromEnvironment());
      !s) {
    return FailedAfterWrite(io, s.error().message, *backup_path);
  }
  io.out << fmt::format("Wrote {} range(s) to '{}'.\n", changed.size(), path);

  // Verify: the bytes, then the table as libfdisk reads it, entry by entry against the plan.
  Result<std::vector<size_t>> unwritten = DifferingRanges(
      disk->fd.get(), path, changed, [](const TableRange& r) { return r.new_bytes; });
  if (!unwritten) return FailedAfterWrite(io, unwritten.error().message, *backup_path);
  if (!unwritten->empty()) {
    return FailedAfterWrite(io,
                            fmt::format("reading back '{}': the {} does not hold what was written",
                                        path, AreaName(t.label, changed[unwritten->front()])),
                            *backup_path);
  }
  Result<TableRead> after =
      ReadPartitionTable(path, {.sector_size = sector_size, .probe_contents = false});
  if (!after) return FailedAfterWrite(io, after.error().message, *backup_path);
  std::vector<std::string> off = TableVersusPlan(*plan, computed->old_table, after->table);
  if (after->table.fingerprint != computed->new_table.fingerprint) {
    off.push_back(fmt::format("table fingerprint {}, expected {}", after->table.fingerprint,
                              computed->new_table.fingerprint));
  }
  if (!off.empty()) {
    for (const std::string& m : off) PrintError(io.err, m);
    return FailedAfterWrite(
        io, fmt::format("the table read back from '{}' differs from the plan", path), *backup_path);
  }
  io.out << fmt::format("Verified: the table on '{}' matches the plan ({} partitions, {}).\n", path,
                        after->table.partitions.size(), after->table.fingerprint);
  if (!UpdateKernel(io, *disk, after->table)) return ExitCode::kFailure;
  bench_after();
  return ExitCode::kOk;
}

}  // namespace

ExitCode ApplyPlanFile(const std::string& plan_path, const TableWriteOptions& write, Streams io) {
  ApplyCommand c;
  c.plan_path = plan_path;
  c.write = write;
  return RunApply(c, io);
}

void AddApplyCommand(CLI::App& app, CommandRunners& runners) {
  auto command = std::make_shared<ApplyCommand>();
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
                      std::string(kDefaultJournalDir) + ")");
  sub->add_flag("--progress", command->progress,
                "print the progress of data moves even when stderr is not a terminal");
  sub->add_flag("--copy-all", command->copy_all,
                "move every byte of a partition, not only what its filesystem uses");
  AddApplyBenchOptions(sub, &command->bench);
  runners[sub] = [command](Streams io) { return RunApply(*command, io); };
}

}  // namespace partalign
