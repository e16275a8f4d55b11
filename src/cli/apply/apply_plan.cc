// SPDX-License-Identifier: GPL-3.0-or-later
// Executing a plan with every protection of the safety contract (docs/apply.md): the plan must
// still fit the disk, nobody may use the disk, the table sectors are backed up before the first
// write, the write order keeps a readable table, the result is verified against the plan, the
// kernel is told (BLKPG). Table-only plans are written here; plans that move data go through
// the journaled mover, step by step (apply_moves.h).
#include <ostream>

#include <fmt/format.h>

#include <algorithm>

#include "cli/advice/plan_advice.h"
#include "cli/apply/apply_bench.h"
#include "cli/apply/apply_moves.h"
#include "cli/apply/apply_plan.h"
#include "cli/apply/left_behind.h"
#include "cli/apply/plan_claims.h"
#include "cli/apply/shrink_steps.h"
#include "cli/apply/table_write.h"
#include "cli/apply/written_before.h"
#include "cli/content/content_proof.h"
#include "cli/content/sleeping_systems.h"
#include "cli/room/make_room.h"
#include "io/device/device_probe.h"
#include "io/move/journal_registry.h"
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

nlohmann::json DryRunJson(const ApplyRequest& c, const std::string& path, const Plan& plan,
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

// The plan, the disk it is for and the table on it now, checked against each other
// (docs/apply.md steps 1-3), every emptiness the plan relies on proven.
struct ApplyInputs {
  LoadedPlan loaded;
  std::string path;
  /// --assume and --sector-size as given: the plan command apply's advice names repeats them.
  std::string assume;
  std::optional<std::string> sector_size_option;
  DeviceInfo device;
  /// Read with contents; the partitions the plan leaves behind proven (ProveLeftBehind).
  PartitionTable table;
  LeftBehind left_behind;
  const Plan& plan() const { return loaded.plan; }
  uint64_t sector_size() const { return device.topology.logical_sector_size; }
};

// Steps 1 and 3: the plan, the disk, its table; a stale plan refused. nullopt after printing
// why (`*code` says how to exit).
std::optional<ApplyInputs> LoadInputs(const ApplyRequest& c, Streams io, ExitCode* code) {
  *code = ExitCode::kFailure;
  Result<LoadedPlan> loaded = LoadPlan(c.plan_path);
  if (!loaded) {
    PrintError(io.err, loaded.error().message + "; nothing was written");
    return std::nullopt;
  }
  ApplyInputs in{std::move(*loaded), "", c.write.assume, c.write.sector_size, {}, {}, {}};
  in.path = c.write.target.empty() ? in.plan().disk.path : c.write.target;
  // A move left unfinished owns the disk (its journal in the registry, or in the journal
  // directory when the registry was lost): refused first, before anything is asked, and before
  // the half-moved table is read (which may fail, or look like a stale plan).
  if (!NoUnfinishedMove(io, in.path, {c.journal_dir}, code)) return std::nullopt;
  *code = ExitCode::kFailure;
  Result<ProbeOptions> options = MakeProbeOptions(c.write);
  if (!options) {
    PrintError(io.err, options.error().message);
    return std::nullopt;
  }
  Result<DeviceInfo> device = ProbeTarget(in.path, *options);
  if (!device) {
    PrintError(io.err, device.error().message + "; nothing was written");
    return std::nullopt;
  }
  in.device = std::move(*device);
  // With contents: a hand-edited plan may call a move of data "table-only".
  Result<TableRead> table =
      ReadPartitionTable(in.path, {.sector_size = in.sector_size(), .probe_contents = true});
  if (!table) {
    PrintError(io.err, table.error().message + "; nothing was written");
    return std::nullopt;
  }
  in.table = std::move(table->table);
  if (Status s = CheckChangeable(in.table); !s) {
    PrintError(io.err, fmt::format("refusing to apply '{}' to '{}': {}; nothing was written",
                                   c.plan_path, in.path, s.error().message));
    *code = ExitCode::kRefused;
    return std::nullopt;
  }
  std::vector<std::string> stale = PlanMismatches(in.plan(), in.device, in.table);
  if (!stale.empty()) {
    // Which case it is (another disk, or this one changed) and the command that plans it now.
    for (const std::string& line :
         StalePlanRefusal(in.plan(), in.device, in.table, stale, c.plan_path, in.path)) {
      PrintError(io.err, line);
    }
    *code = ExitCode::kRefused;
    return std::nullopt;
  }
  // A hibernated system on the disk would resume believing the old table (docs/used-map.md,
  // "Hibernation is a refusal"): refused before anything is proven, asked or written.
  if (RefuseIfSleeping(io, in.path, ScanForSleepingSystems(in.path, in.table))) {
    *code = ExitCode::kRefused;
    return std::nullopt;
  }
  if (!c.write.target.empty() && c.write.target != in.plan().disk.path) {
    PrintWarning(io.err, fmt::format("the plan names '{}'; writing '{}' (--target), whose "
                                     "identity and table match the plan",
                                     in.plan().disk.path, in.path));
  }
  return in;
}

// "Empty is proven, never guessed": every partition the plan leaves behind (a table-only move
// or shrink, or a table a fresh layout replaces) is read in full unless the probe proved it
// already, and every end its target layout takes from a partition that holds data is read;
// then the plan must fit the table with those proofs (PlanInconsistencies: a partition found to
// hold data refuses the plan), and every claim of it must be what apply computes from them
// (plan_claims.h). False after printing why.
bool ProveLeftBehind(const ApplyRequest& c, Streams io, ApplyInputs& in, ExitCode* code) {
  if (!CheckDiscardConsent(io, c.plan_path, c.write, in.plan(), c.discard, code) ||
      !CheckMakeRoomConsent(io, c.plan_path, c.write, in.plan(), c.make_room, code)) {
    return false;
  }
  *code = ExitCode::kFailure;
  // A shrink is checked against what its contents allow, read again now (make_room.h).
  std::vector<ShrinkOffer> offers;
  if (!PlanShrinks(in.plan()).empty()) {
    Result<std::vector<ShrinkOffer>> read = ReadShrinkOffers(in.path, in.table);
    if (!read) {
      PrintError(io.err, read.error().message + "; nothing was written");
      return false;
    }
    offers = std::move(*read);
  }
  in.left_behind = PartitionsLeftBehind(in.plan(), in.table);
  if (Status s = ProvePartitionsEmpty(io, in.path, &in.table, in.left_behind.to_prove, c.progress);
      !s) {
    PrintError(io.err, s.error().message + "; nothing was written");
    return false;
  }
  if (Status s = ProveTailsZero(io, in.path, &in.table,
                                TailsToProve(in.table, in.plan().actions, {.discard = c.discard}),
                                c.progress);
      !s) {
    PrintError(io.err, s.error().message + "; nothing was written");
    return false;
  }
  std::vector<std::string> bad = PlanInconsistencies(in.plan(), in.table);
  if (!bad.empty()) {
    PrintError(io.err,
               fmt::format("plan '{}' does not fit the table of '{}': {}{}; nothing was "
                           "written",
                           c.plan_path, in.path, bad.front(),
                           bad.size() > 1 ? fmt::format(" (and {} more)", bad.size() - 1) : ""));
    return false;
  }
  if (!ReplaceClaimsByRecomputation(io, c.plan_path, in.path, in.table, c.discard, &in.loaded.plan,
                                    code, offers)) {
    return false;
  }
  *code = ExitCode::kFailure;
  in.left_behind = PartitionsLeftBehind(in.plan(), in.table);
  if (in.loaded.fresh_layout && in.table.label == LabelType::kNone) {
    // No table: what the new table's sectors overwrite must not be data written on the whole
    // disk (ComputeTableWrite checks the bytes too).
    if (Status s = CheckNothingOnTheWholeDisk(in.path, in.sector_size()); !s) {
      PrintError(io.err, fmt::format("refusing to apply '{}': {}; nothing was written", c.plan_path,
                                     s.error().message));
      *code = ExitCode::kRefused;
      return false;
    }
  }
  if (in.loaded.fresh_layout) {
    // A fresh table replaces what the disk holds, which may go only where no partition may
    // hold data (the plan was made on this table: PlanMismatches checked its fingerprint).
    for (const Partition& p : in.table.partitions) {
      if (p.kind == PartitionKind::kExtended || !p.contents.MayHoldData()) continue;
      PrintError(io.err, fmt::format("refusing to apply '{}': partition {} of '{}' {}, and a fresh "
                                     "table would orphan it; nothing was written",
                                     c.plan_path, p.number, in.path, MayHoldDataText(p.contents)));
      *code = ExitCode::kRefused;
      return false;
    }
  }
  return true;
}

// After the shrinks are written: the rest of the plan (PlanAfterShrinks) on the table read
// again, proven and recomputed as a plan file is. False after printing why.
bool ContinueAfterShrinks(const ApplyRequest& c, Streams io, ApplyInputs& in, ExitCode* code) {
  *code = ExitCode::kFailure;
  in.loaded.plan = PlanAfterShrinks(in.plan());
  Result<TableRead> table =
      ReadPartitionTable(in.path, {.sector_size = in.sector_size(), .probe_contents = true});
  if (!table) {
    PrintError(io.err, table.error().message +
                           "; the shrink is written, the rest of the plan "
                           "was not started");
    return false;
  }
  in.table = std::move(table->table);
  in.loaded.plan.table_fingerprint = in.table.fingerprint;
  ApplyRequest rest = c;
  rest.make_room = false;
  if (!ProveLeftBehind(rest, io, in, code)) {
    PrintError(io.err, "the shrink is written, the rest of the plan was not started");
    return false;
  }
  return true;
}

// What the shrinks of `plan` wrote on `table` (as it was before them), for WrittenBefore.
std::string ShrinksWritten(const Plan& plan, const PartitionTable& table) {
  std::vector<std::string> each;
  const std::vector<PlannedShrink> shrinks = PlanShrinks(plan);
  for (const PlannedShrink& s : shrinks) {
    const Partition* p = table.Find(s.partition);
    if (p == nullptr) continue;
    each.push_back(fmt::format("partition {} ({}, {} -> {} by {})", s.partition,
                               p->contents.fs_type.empty() ? "contents" : p->contents.fs_type,
                               FormatSize(p->size_sectors * table.sector_size),
                               FormatSize(s.size_sectors * table.sector_size), ToString(s.tool)));
  }
  return ShrinksWrittenText(fmt::format("{}", fmt::join(each, ", ")), shrinks.size());
}

// What would align the partitions `in`'s plan cannot (way_through.h), with the plan command of
// this disk that gives the room.
std::vector<std::string> WayThroughOfPlan(const ApplyInputs& in) {
  ContentOptions content;
  for (const PlanAction& a : in.plan().actions) {
    if (a.empty == Emptiness::kDiscarded) content.discard.push_back(a.partition);
  }
  return WayThroughLines(in.plan(), in.table, {in.path, in.assume, in.sector_size_option, false},
                         std::nullopt, content);
}

// A plan that changes nothing: done (exit 0) when every partition is aligned; when some are
// impossible, apply says which stay misaligned, why, and what would make room (exit 3: the
// plan does not do what a plan is for).
ExitCode NothingToDo(Streams io, const ApplyInputs& in) {
  std::vector<const PlanAction*> impossible;
  for (const PlanAction& a : in.plan().actions) {
    if (a.kind == ActionKind::kImpossible) impossible.push_back(&a);
  }
  if (impossible.empty()) {
    io.out << fmt::format("Nothing to do: every partition of '{}' is aligned already.\n", in.path);
    return ExitCode::kOk;
  }
  PrintError(io.err,
             fmt::format("nothing to do: the plan aligns no partition of '{}'; {} stay{} "
                         "misaligned, nothing was written:",
                         in.path,
                         impossible.size() == 1 ? "1 partition"
                                                : fmt::format("{} partitions", impossible.size()),
                         impossible.size() == 1 ? "s" : ""));
  for (const PlanAction* a : impossible) {
    PrintError(io.err, fmt::format("  partition {}: {}", a->partition, a->reason));
  }
  for (const std::string& line : WayThroughOfPlan(in)) PrintError(io.err, "  " + line);
  return ExitCode::kRefused;
}

// What a table-only plan writes, computed on a scratch copy (docs/apply.md step 4) and
// checked; nullopt after printing why (`*code`), or with nothing to write (`*code` kOk).
std::optional<ComputedTransition> ComputeTableWrite(Streams io, const ApplyInputs& in,
                                                    const std::string& backup_dir, ExitCode* code) {
  *code = ExitCode::kFailure;
  Result<ComputedTransition> computed = MakeError("no transition");
  if (in.loaded.fresh_layout) {
    Result<std::string> script = RenderSfdiskScript(in.plan(), in.table);
    if (!script) {
      PrintError(io.err, script.error().message + "; nothing was written");
      return std::nullopt;
    }
    computed = ComputeFreshTableTransition(in.path, in.sector_size(), *script);
  } else {
    std::vector<ScriptEdit> edits = TableOnlyEdits(in.plan());
    if (edits.empty() && !in.plan().relocate_backup_gpt) {
      *code = NothingToDo(io, in);
      return std::nullopt;
    }
    computed = ComputeTableTransition(in.path, in.sector_size(), edits);
  }
  if (!computed) {
    PrintError(io.err, computed.error().message + "; nothing was written");
    return std::nullopt;
  }
  // libfdisk's reading of the old table knows only what the probe proves; apply knows more.
  CopyContentProofs(in.table, &computed->old_table);
  if (in.loaded.fresh_layout && in.table.label == LabelType::kNone) {
    // A disk without a table: every byte the new table overwrites must be zero (data without
    // a signature is still data).
    for (const TableRange& r : ChangedRanges(computed->transition)) {
      auto it =
          std::find_if(r.old_bytes.begin(), r.old_bytes.end(), [](uint8_t b) { return b != 0; });
      if (it == r.old_bytes.end()) continue;
      PrintError(io.err,
                 fmt::format("refusing to write a fresh table on '{}': byte {}, where it writes "
                             "its {}, is not zero (data on a disk without a table); nothing was "
                             "written",
                             in.path, r.offset_bytes + (it - r.old_bytes.begin()),
                             AreaName(computed->transition.label, r)));
      *code = ExitCode::kRefused;
      return std::nullopt;
    }
  }
  if (!in.loaded.fresh_layout) {
    // An EBR an earlier, interrupted apply left in a gap gets the gap's bytes back when this
    // table abandons it (RestoreAbandonedGaps).
    Result<Target> disk = OpenTarget(in.path);
    Status gaps = disk ? RestoreAbandonedGaps(in.device, *disk, backup_dir, {&computed->transition},
                                              computed->old_table, computed->new_table)
                       : Status(disk.error());
    if (!gaps) {
      PrintError(io.err, gaps.error().message + "; nothing was written");
      return std::nullopt;
    }
  }
  std::vector<std::string> wrong =
      TableVersusPlan(in.plan(), computed->old_table, computed->new_table);
  if (!wrong.empty()) {
    PrintError(io.err, "the table libfdisk made differs from the plan:");
    for (const std::string& m : wrong) PrintError(io.err, "  " + m);
    PrintError(io.err, "nothing was written");
    return std::nullopt;
  }
  std::vector<std::string> conflicts = TransitionConflicts(
      computed->transition, computed->old_table, computed->new_table, in.left_behind.discarded);
  if (!conflicts.empty()) {
    for (const std::string& m : conflicts) PrintError(io.err, m);
    PrintError(io.err, "refusing to overwrite partition contents; nothing was written");
    *code = ExitCode::kRefused;
    return std::nullopt;
  }
  *code = ExitCode::kOk;
  return std::move(*computed);
}

// Step 5: the actions and every range, and what a crash leaves (or the same as JSON).
void ShowTableWrite(const ApplyRequest& c, Streams io, const ApplyInputs& in,
                    const ComputedTransition& computed) {
  const TableTransition& t = computed.transition;
  if (c.json) {
    io.out << DryRunJson(c, in.path, in.plan(), computed).dump(2) << '\n';
    return;
  }
  const std::vector<TableRange> changed = ChangedRanges(t);
  uint64_t bytes = 0;
  for (const TableRange& r : changed) bytes += r.length_bytes;
  io.out << fmt::format("Plan '{}' for '{}' ({} table, {}-byte sectors, {}):\n", c.plan_path,
                        in.path, ToString(t.label), in.sector_size(),
                        computed.old_table.fingerprint);
  PrintPlanActions(io.out, in.plan());
  PrintLeftBehind(io.out, in.table, in.left_behind);
  io.out << fmt::format("\nTable write: {} step(s), {} bytes, each flushed before the next:\n",
                        changed.size(), bytes);
  PrintRanges(io.out, t, /*all=*/c.write.dry_run);
  io.out << fmt::format("Crash safety: {}.\n", AssessCrashSafety(t).reason);
}

// What a table-only plan changes: partitions the table leaves where they are may stay in use;
// a fresh table replaces everything.
WriteScope ScopeOf(const ApplyInputs& in, const ComputedTransition& computed) {
  if (in.loaded.fresh_layout) return WriteScope::WholeDisk();
  return TableWriteScope(computed.old_table, computed.new_table, computed.transition.ranges);
}

// Steps 7-11 for a table-only plan: hold the disk, check it did not change, back up, write in
// the crash-safe order, verify, tell the kernel.
ExitCode WriteTable(const ApplyRequest& c, Streams io, const ApplyInputs& in,
                    const ComputedTransition& computed) {
  const TableTransition& t = computed.transition;
  const std::vector<TableRange> changed = ChangedRanges(t);
  ExitCode code = ExitCode::kOk;
  std::optional<Target> disk =
      AcquireForWrite(io, in.path, &code, {c.journal_dir}, ScopeOf(in, computed));
  if (!disk) return code;
  // Held now: the sectors must still be the ones the transition (and the backup) start from.
  Result<std::vector<size_t>> moved = DifferingRanges(
      disk->fd.get(), in.path, t.ranges, [](const TableRange& r) { return r.old_bytes; });
  if (!moved) {
    PrintError(io.err, moved.error().message + "; nothing was written");
    return ExitCode::kFailure;
  }
  if (!moved->empty()) {
    PrintError(io.err, fmt::format("the table of '{}' changed while partalign prepared the write "
                                   "({} at byte {}); nothing was written",
                                   in.path, AreaName(t.label, t.ranges[moved->front()]),
                                   t.ranges[moved->front()].offset_bytes));
    return ExitCode::kRefused;
  }
  if (!StillEmpty(io, in.path, in.table, in.left_behind, disk->fd.get())) {
    return ExitCode::kRefused;
  }
  TableBackup backup = MakeBackup("apply", in.device, *disk, t, computed.old_table.fingerprint,
                                  computed.new_table.fingerprint, computed.old_script,
                                  {&computed.old_table, &computed.new_table});
  std::optional<std::string> backup_path = SaveBackup(io, c.write.backup_dir, backup);
  if (!backup_path) return ExitCode::kFailure;

  if (Status s = WriteTableRanges(disk->fd.get(), in.path, in.sector_size(), changed,
                                  HooksFromEnvironment());
      !s) {
    return FailedAfterWrite(io, s.error().message, *backup_path);
  }
  io.out << fmt::format("Wrote {} range(s) to '{}'.\n", changed.size(), in.path);

  // Verify: the bytes, then the table as libfdisk reads it, entry by entry against the plan.
  Result<std::vector<size_t>> unwritten = DifferingRanges(
      disk->fd.get(), in.path, changed, [](const TableRange& r) { return r.new_bytes; });
  if (!unwritten) return FailedAfterWrite(io, unwritten.error().message, *backup_path);
  if (!unwritten->empty()) {
    return FailedAfterWrite(io,
                            fmt::format("reading back '{}': the {} does not hold what was written",
                                        in.path, AreaName(t.label, changed[unwritten->front()])),
                            *backup_path);
  }
  Result<TableRead> after =
      ReadPartitionTable(in.path, {.sector_size = in.sector_size(), .probe_contents = false});
  if (!after) return FailedAfterWrite(io, after.error().message, *backup_path);
  std::vector<std::string> off = TableVersusPlan(in.plan(), computed.old_table, after->table);
  if (after->table.fingerprint != computed.new_table.fingerprint) {
    off.push_back(fmt::format("table fingerprint {}, expected {}", after->table.fingerprint,
                              computed.new_table.fingerprint));
  }
  if (!off.empty()) {
    for (const std::string& m : off) PrintError(io.err, m);
    return FailedAfterWrite(
        io, fmt::format("the table read back from '{}' differs from the plan", in.path),
        *backup_path);
  }
  io.out << fmt::format("Verified: the table on '{}' matches the plan ({} partitions, {}).\n",
                        in.path, after->table.partitions.size(), after->table.fingerprint);
  if (!UpdateKernel(io, *disk, after->table)) return ExitCode::kFailure;
  return ExitCode::kOk;
}

}  // namespace

ExitCode ApplyPlan(Streams io, const ApplyRequest& asked) {
  ApplyRequest c = asked;
  if (c.json && !c.write.dry_run) {
    PrintError(io.err, "apply: --json needs --dry-run");
    return ExitCode::kFailure;
  }
  ExitCode code = ExitCode::kOk;
  std::optional<ApplyInputs> in = LoadInputs(c, io, &code);
  if (!in || !ProveLeftBehind(c, io, *in, &code)) return code;
  std::optional<WrittenBefore> after_shrinks;
  if (!PlanShrinks(in->plan()).empty()) {
    // Make room first (shrink_steps.h), then the rest of the plan on the table it wrote,
    // checked again like a plan file; the person confirmed the whole plan already.
    bool written = false;
    code = ApplyShrinks(io,
                        {c.plan_path, &in->plan(), in->path, &in->device, &in->table, &c.write,
                         c.journal_dir, c.progress, c.json},
                        &written);
    if (code != ExitCode::kOk || !written) return code;
    // From here on a refusal says that the shrinks are written and nothing else is.
    after_shrinks.emplace(io.err, ShrinksWritten(in->plan(), in->table));
    if (!ContinueAfterShrinks(c, io, *in, &code)) return code;
    c.make_room = false;
    c.write.yes = true;
  }

  // --bench (apply_bench.h): the old places after the confirmation, before the disk is held;
  // the new places once everything is written, verified and the kernel told.
  ApplyBench bench(c.bench, in->path, BenchedPlaces(in->plan(), in->sector_size(), &in->table));
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

  if (std::any_of(in->plan().actions.begin(), in->plan().actions.end(),
                  [](const PlanAction& a) { return a.kind == ActionKind::kMoveData; })) {
    MoveApplyRequest request{.plan_path = c.plan_path,
                             .plan = &in->plan(),
                             .path = in->path,
                             .device = &in->device,
                             .table = &in->table,
                             .left_behind = &in->left_behind,
                             .write = &c.write,
                             .journal_dir = c.journal_dir,
                             .progress = c.progress,
                             .json = c.json,
                             .copy_all = c.copy_all,
                             .way = c.way,
                             .boot = c.boot,
                             .fence = c.fence,
                             .before_first_write = bench_before,
                             .after_success = bench_after};
    return ApplyWithMoves(io, request);
  }

  std::optional<ComputedTransition> computed =
      ComputeTableWrite(io, *in, c.write.backup_dir, &code);
  if (!computed) return code;
  ShowTableWrite(c, io, *in, *computed);
  if (c.json) return ExitCode::kOk;
  if (Status usable =
          CheckDirectoryFor(c.write.backup_dir, "the backup directory", kBackupFileBytes, false);
      !usable) {
    PrintError(io.err, usable.error().message + "; nothing was written");
    return ExitCode::kRefused;
  }
  if (!ShowDiskUsers(io, in->path, ScopeOf(*in, *computed), &code, c.write.at_next_boot))
    return code;
  if (c.write.dry_run) {
    SayDryRunDone(io, c.write);
    return ExitCode::kOk;
  }
  if (!Confirm(io, fmt::format("Apply these changes to '{}'?", in->path), c.write.yes)) {
    return ExitCode::kRefused;
  }
  if (!bench_before()) return ExitCode::kFailure;
  code = WriteTable(c, io, *in, *computed);
  if (code == ExitCode::kOk) bench_after();
  return code;
}

ExitCode ApplyPlanFile(const std::string& plan_path, const TableWriteOptions& write, Streams io,
                       const std::vector<uint32_t>& discard, bool make_room) {
  ApplyRequest c;
  c.plan_path = plan_path;
  c.write = write;
  c.discard = discard;
  c.make_room = make_room;
  return ApplyPlan(io, c);
}

}  // namespace partalign
