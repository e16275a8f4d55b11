// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/apply/apply_moves.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <ostream>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/advice/plan_advice.h"
#include "cli/apply/boot_steps.h"
#include "cli/apply/fence_steps.h"
#include "cli/apply/left_behind.h"
#include "cli/apply/move_ui.h"
#include "cli/move/move_way_choice.h"
#include "io/boot/boot_records.h"
#include "io/move/journal_file.h"
#include "io/move/mover.h"
#include "io/table/fdisk_table.h"
#include "io/table/fdisk_transition.h"
#include "io/table/table_writer.h"
#include "io/used/used_map_reader.h"
#include "io/util/smartcols_table.h"
#include "partalign/boot/boot_disk.h"
#include "partalign/table/apply_steps.h"
#include "partalign/table/plan_check.h"
#include "partalign/topology/probe_report.h"
#include "partalign/util/units.h"
#include "partalign/util/version.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;

// One step as apply runs it: the move, libfdisk's table before and after it, the journal.
struct PreparedStep {
  ApplyStep step;
  const PlanAction* move = nullptr;
  ComputedTransition computed;
  std::vector<TableRange> changed;  ///< in the crash-safe write order
  std::string journal;
  /// What the partition's contents use, as read before anything is asked (the step reads it
  /// again while it holds the disk); nullopt with --copy-all.
  std::optional<UsedMap> used;
  /// The boot records the step's move makes stale, written with its table (boot_steps.h).
  StepRecords records;
};

// The bytes a step writes: its move's source (a rollback writes it back) and destination, its
// changed table sectors and its boot records.
std::vector<ByteExtent> StepWrites(const PreparedStep& s, uint64_t sector_size) {
  std::vector<ByteExtent> writes;
  if (s.move) {
    const MoveGeometry g = MoveOf(*s.move, sector_size);
    writes = {{g.source_bytes, g.length_bytes}, {g.dest_bytes, g.length_bytes}};
  }
  for (const TableRange& r : s.computed.transition.ranges) {
    if (r.changed()) writes.push_back({r.offset_bytes, r.length_bytes});
  }
  for (const TableUpdate& u : s.records.updates) {
    writes.push_back({u.offset_bytes, u.new_bytes.size()});
  }
  return writes;
}

// What the whole apply changes: the partitions each step's table moves, resizes or
// renumbers, and every byte a step writes (its move's source and destination, its table
// sectors, its boot records). A partition outside it may stay in use (issue #29).
WriteScope ApplyScope(const std::vector<PreparedStep>& steps, uint64_t sector_size) {
  WriteScope scope;
  scope.whole_disk = false;
  for (const PreparedStep& s : steps) {
    const WriteScope step =
        TableWriteScope(s.computed.old_table, s.computed.new_table, s.computed.transition.ranges);
    if (step.whole_disk) return WriteScope::WholeDisk();
    for (uint32_t p : step.partitions) {
      if (std::find(scope.partitions.begin(), scope.partitions.end(), p) ==
          scope.partitions.end()) {
        scope.partitions.push_back(p);
      }
    }
    for (const ByteExtent& e : StepWrites(s, sector_size)) scope.bytes.push_back(e);
  }
  return scope;
}

// The step's move: every chunk, or the used ones.
Result<MoveRequest> StepRequest(const PreparedStep& s, uint64_t sector_size,
                                const std::optional<UsedMap>& used) {
  MoveRequest request;
  // The chunk, batches and ring of this shift and copy (docs/mover.md §10).
  request.move = SizedForItsCopy(MoveOf(*s.move, sector_size), used);
  request.journal_path = s.journal;
  for (const TableRange& t : s.changed) {
    request.table.push_back({t.offset_bytes, t.old_bytes, t.new_bytes});
  }
  // After the table: a reader that looks before resume finishes sees the new table first.
  for (const TableUpdate& u : s.records.updates) request.table.push_back(u);
  if (used) {
    if (Status only = UseOnlyUsedChunks(request, *used); !only) return only.error();
  }
  return request;
}

uint64_t CopiedBytesOf(const PreparedStep& s, uint64_t sector_size) {
  if (!s.move) return 0;
  Result<MoveRequest> request = StepRequest(s, sector_size, s.used);
  return request ? CopiedBytes(request->move) : MoveOf(*s.move, sector_size).length_bytes;
}

// "ext: libext2fs block bitmaps, 310 MiB used" or "every byte (--copy-all)".
std::string UsedDescription(const PreparedStep& s) {
  if (!s.move) return "nothing: a table write alone";
  if (!s.used) return "every byte (--copy-all)";
  return fmt::format("{}, {} used", s.used->source, FormatSize(s.used->used_bytes()));
}

const PlanAction* ActionOf(const Plan& plan, uint32_t partition) {
  for (const PlanAction& a : plan.actions) {
    if (a.partition == partition) return &a;
  }
  return nullptr;
}

std::vector<ScriptEdit> EditsOf(const ApplyStep& step) {
  std::vector<ScriptEdit> edits;
  for (const TableEdit& e : step.edits) {
    edits.push_back({e.partition, e.start_sector, e.end_sector - e.start_sector + 1});
  }
  return edits;
}

// The partitions whose old place a step's table write may overwrite: the moved one (when the
// mover writes the step's table, its data is at its new place, which is checked through the
// new table) and those the user discarded.
std::vector<uint32_t> FreeOldPlaces(const MoveApplyRequest& r, uint32_t moved) {
  std::vector<uint32_t> out = r.left_behind->discarded;
  out.push_back(moved);
  return out;
}

std::string DiskName(const std::string& path) {
  std::string name = fs::path(path).filename().string();
  return name.empty() ? "disk" : name;
}

// The directory a journal check can look at: the journal directory, or (dry run, before it is
// created) its nearest existing ancestor, which is where it will be made.
std::string ExistingDirFor(const std::string& dir) {
  fs::path p = fs::absolute(dir).lexically_normal();
  std::error_code ec;
  while (!fs::is_directory(p, ec) && p.has_parent_path() && p != p.parent_path()) {
    p = p.parent_path();
  }
  return p.string();
}

std::vector<BackupMove> MovesFrom(const std::vector<PreparedStep>& steps, size_t first,
                                  uint64_t sector_size) {
  std::vector<BackupMove> out;
  for (size_t k = first; k < steps.size(); ++k) {
    if (!steps[k].move) continue;
    const MoveGeometry g = MoveOf(*steps[k].move, sector_size);
    out.push_back(
        {steps[k].move->partition, g.source_bytes, g.dest_bytes, g.length_bytes, steps[k].journal});
  }
  return out;
}

}  // namespace

void PrintPlanActions(std::ostream& out, const Plan& plan) {
  if (plan.layout) {
    const PlanLayout& l = *plan.layout;
    out << fmt::format("A fresh {} table (usable sectors {}-{}) replaces what the disk holds:\n",
                       ToString(l.label), l.first_usable_lba, l.last_usable_lba);
    TextTable fresh({{"PART", true}, {"START", true}, {"END", true}, {"SECTORS", true}, {"TYPE"}});
    for (const LayoutPartition& p : l.partitions) {
      fresh.AddRow({std::to_string(p.partition), std::to_string(p.start_sector),
                    std::to_string(p.end_sector), std::to_string(p.end_sector - p.start_sector + 1),
                    p.type});
    }
    out << fresh.Render();
    return;
  }
  TextTable table({{"PART", true},
                   {"OLD START", true},
                   {"OLD END", true},
                   {"NEW START", true},
                   {"NEW END", true},
                   {"ACTION"},
                   {"REASON"}});
  for (const PlanAction& a : plan.actions) {
    const bool changes = a.kind == ActionKind::kTableOnly || a.kind == ActionKind::kMoveData;
    table.AddRow({std::to_string(a.partition), std::to_string(a.old_start_sector),
                  std::to_string(a.old_end_sector),
                  changes ? std::to_string(a.new_start_sector) : "-",
                  changes ? std::to_string(a.new_end_sector) : "-", std::string(ToString(a.kind)),
                  a.reason});
  }
  out << table.Render();
  if (plan.relocate_backup_gpt) out << DescribeRelocation(*plan.relocate_backup_gpt) << '\n';
}

namespace {

void PrintSteps(std::ostream& out, const std::vector<PreparedStep>& steps, uint64_t sector_size) {
  TextTable table({{"STEP", true},
                   {"PART", true},
                   {"MOVE"},
                   {"FROM BYTE", true},
                   {"TO BYTE", true},
                   {"BYTES", true},
                   {"COPIES", true},
                   {"TABLE", true},
                   {"ALSO CHANGES"},
                   {"JOURNAL"}});
  for (size_t k = 0; k < steps.size(); ++k) {
    const PreparedStep& s = steps[k];
    std::string also;
    for (const TableEdit& e : s.step.edits) {
      if (e.partition == s.step.move_partition) continue;
      also += (also.empty() ? "" : ", ") +
              fmt::format("{}: {}-{}", e.partition, e.start_sector, e.end_sector);
    }
    uint64_t table_bytes = 0;
    for (const TableRange& r : s.changed) table_bytes += r.length_bytes;
    if (!s.move) {
      table.AddRow({std::to_string(k + 1), "-", "table", "-", "-", "0", "0",
                    fmt::format("{} B", table_bytes), also.empty() ? "-" : also, "-"});
      continue;
    }
    const MoveGeometry g = MoveOf(*s.move, sector_size);
    table.AddRow({std::to_string(k + 1), std::to_string(s.move->partition),
                  std::string(Direction(*s.move)), std::to_string(g.source_bytes),
                  std::to_string(g.dest_bytes), std::to_string(g.length_bytes),
                  std::to_string(CopiedBytesOf(s, sector_size)), fmt::format("{} B", table_bytes),
                  also.empty() ? "-" : also, s.journal});
  }
  out << table.Render();
  for (size_t k = 0; k < steps.size(); ++k) {
    if (!steps[k].move) {
      out << fmt::format(
          "Step {} writes the table alone: it moves the EBR the next step's move would "
          "overwrite (docs/apply.md, \"Plans that move data\")\n",
          k + 1);
      continue;
    }
    out << fmt::format("Step {} copies {}: {}\n", k + 1, steps[k].used ? "the used chunks" : "all",
                       UsedDescription(steps[k]));
    for (const std::string& what : steps[k].records.descriptions) {
      out << fmt::format("Step {} updates a boot record with its table: {}\n", k + 1, what);
    }
  }
}

// A step's boot records: what each says, and every sector its edits change (absolute).
nlohmann::json RecordsJson(const StepRecords& records) {
  nlohmann::json edited = nlohmann::json::array();
  for (const auto& [first, end] : records.edited) {
    edited.push_back({{"offset_bytes", first}, {"length_bytes", end - first}});
  }
  return {{"descriptions", records.descriptions}, {"sectors", edited}};
}

nlohmann::json DryRunJson(const MoveApplyRequest& r, const std::vector<PreparedStep>& steps,
                          uint64_t sector_size) {
  nlohmann::json json_steps = nlohmann::json::array();
  for (size_t k = 0; k < steps.size(); ++k) {
    const PreparedStep& s = steps[k];
    const MoveGeometry g = s.move ? MoveOf(*s.move, sector_size) : MoveGeometry{};
    nlohmann::json edits = nlohmann::json::array();
    for (const TableEdit& e : s.step.edits) {
      edits.push_back({{"partition", e.partition},
                       {"start_sector", e.start_sector},
                       {"end_sector", e.end_sector}});
    }
    json_steps.push_back(
        {{"step", k + 1},
         {"partition", s.move ? nlohmann::json(s.move->partition) : nlohmann::json(nullptr)},
         {"direction", s.move ? Direction(*s.move) : "table"},
         {"source_bytes", g.source_bytes},
         {"dest_bytes", g.dest_bytes},
         {"length_bytes", g.length_bytes},
         {"copy_bytes", CopiedBytesOf(s, sector_size)},
         {"used_map", s.used ? nlohmann::json{{"source", s.used->source},
                                              {"used_bytes", s.used->used_bytes()},
                                              {"notes", s.used->notes()}}
                             : nlohmann::json(nullptr)},
         {"journal", s.move ? nlohmann::json(s.journal) : nlohmann::json(nullptr)},
         {"table_edits", edits},
         {"table_fingerprint", s.computed.old_table.fingerprint},
         {"new_table_fingerprint", s.computed.new_table.fingerprint},
         {"table_write", TransitionJson(s.computed.transition)},
         {"boot_records", RecordsJson(s.records)}});
  }
  return {
      {"schema_version", kJsonSchemaVersion},
      {"partalign_version", kVersion},
      {"plan", r.plan_path},
      {"device", r.path},
      {"dry_run", true},
      {"table_fingerprint", steps.front().computed.old_table.fingerprint},
      {"new_table_fingerprint", steps.back().computed.new_table.fingerprint},
      {"actions", PlanToJson(*r.plan)["actions"]},
      {"steps", json_steps},
  };
}

// Prints what step k would overwrite, if anything, and the refusal; false when nothing.
bool Refused(Streams io, size_t k, const std::vector<std::string>& conflicts, const char* what) {
  if (conflicts.empty()) return false;
  for (const std::string& m : conflicts) PrintError(io.err, fmt::format("step {}: {}", k + 1, m));
  PrintError(io.err, fmt::format("refusing to overwrite {}; nothing was written", what));
  return true;
}

// The gap sectors that the steps' tables use only for a while get, in the step that abandons
// them, the bytes the disk holds there now (before the first step) as their new bytes.
Status RestoreTransientGaps(int fd, const std::string& path, std::vector<PreparedStep>& steps) {
  std::vector<const TableTransition*> chain;
  for (const PreparedStep& s : steps) chain.push_back(&s.computed.transition);
  for (const ChainRange& c : TransientGapRanges(chain, steps.front().computed.old_table,
                                                steps.back().computed.new_table)) {
    TableRange& range = steps[c.step].computed.transition.ranges[c.range];
    std::vector<uint8_t> original(range.length_bytes);
    Result<size_t> got = ReadAt(fd, original.data(), original.size(), range.offset_bytes, path);
    if (!got) return got.error();
    if (*got != original.size()) {
      return MakeError(fmt::format("'{}': cannot read byte {}", path, range.offset_bytes));
    }
    range.new_bytes = std::move(original);
    steps[c.step].changed = ChangedRanges(steps[c.step].computed.transition);
  }
  return {};
}

// The records outside the table that the steps' moves make stale (docs/boot-records.md): one
// that refuses the move refuses the plan, before anything is asked; the others are written
// with the table of the step that moves their partition. False after printing why.
bool PrepareBootRecords(Streams io, const MoveApplyRequest& r, const Target& disk,
                        std::vector<PreparedStep>& steps, ExitCode* code) {
  Result<BootReport> report =
      ScanBootRecords(disk.fd.get(), r.path, disk.size_bytes, BootDiskFromTable(*r.table),
                      MovesFromPlan(*r.plan), r.boot);
  if (!report) {
    PrintError(io.err, report.error().message + "; nothing was written");
    return false;
  }
  if (report->refused()) {
    for (const std::string& why : report->RefusalReasons()) {
      PrintError(io.err, "refusing to move it: " + why);
    }
    PrintError(io.err, "nothing was written");
    *code = ExitCode::kRefused;
    return false;
  }
  std::vector<RecordStep> record_steps;
  for (PreparedStep& s : steps) {
    RecordStep rs;
    rs.moved = s.move ? s.move->partition : 0;
    for (const TableEdit& e : s.step.edits) rs.changed.push_back(e.partition);
    rs.before = &s.computed.old_table;
    rs.after = &s.computed.new_table;
    rs.transition = &s.computed.transition;
    record_steps.push_back(rs);
  }
  std::vector<ByteEdit> unassigned;
  Result<std::vector<StepRecords>> per_step =
      RecordsPerStep(*report, disk.fd.get(), r.path, *r.table, record_steps, &unassigned);
  if (!per_step) {
    PrintError(io.err, per_step.error().message + "; nothing was written");
    return false;
  }
  for (size_t k = 0; k < steps.size(); ++k) {
    steps[k].records = std::move((*per_step)[k]);
    steps[k].changed = ChangedRanges(steps[k].computed.transition);
    if (!steps[k].move && !steps[k].records.updates.empty()) {
      // Only the mover writes records outside the table, with a move.
      PrintError(io.err, fmt::format("step {} writes the table alone but a boot record would "
                                     "change with it; nothing was written",
                                     k + 1));
      *code = ExitCode::kRefused;
      return false;
    }
  }
  // Stale records of partitions no step moves (a disk cloned by another tool): not written by a
  // move, and said so rather than dropped in silence.
  for (const ByteEdit& e : unassigned) {
    PrintWarning(io.err, fmt::format("a boot record at byte {} of partition {} is stale "
                                     "already and no step of this plan moves that partition: "
                                     "apply leaves it as it is (audit names it)",
                                     e.offset_bytes, e.partition));
  }
  for (const BootFinding& f : report->findings) {
    if (f.verdict == BootVerdict::kNothingToDo && !f.reason.empty()) {
      PrintWarning(io.err, f.description + " (" + f.reason + ")");
    }
    if (!f.follow_up.empty()) PrintWarning(io.err, "after apply, run: " + f.follow_up);
  }
  return true;
}

// Everything up to the first write: the steps, their tables (libfdisk, on scratch copies), the
// checks of every step. nullopt after printing why (`*code` says how to exit).
std::optional<std::vector<PreparedStep>> Prepare(Streams io, const MoveApplyRequest& r,
                                                 ExitCode* code) {
  const uint64_t sector_size = r.device->topology.logical_sector_size;
  *code = ExitCode::kFailure;
  Result<std::vector<ApplyStep>> order = OrderApplySteps(*r.plan, *r.table);
  if (!order) {
    PrintError(io.err, fmt::format("cannot apply '{}': {}; nothing was written", r.plan_path,
                                   order.error().message));
    *code = ExitCode::kRefused;
    return std::nullopt;
  }
  std::vector<std::vector<ScriptEdit>> edits;
  for (const ApplyStep& s : *order) edits.push_back(EditsOf(s));
  Result<std::vector<ComputedTransition>> chain =
      ComputeTransitionChain(r.path, sector_size, edits);
  if (!chain) {
    // A table libfdisk cannot make or read back (a logical partition's EBR where the plan puts
    // data): the plan needs what apply cannot do, a refusal like an unorderable plan.
    PrintError(io.err, chain.error().message + "; nothing was written");
    *code = ExitCode::kRefused;
    return std::nullopt;
  }

  const std::string stamp = UtcTime("%Y%m%dT%H%M%SZ");
  const std::string dir = fs::absolute(r.journal_dir).lexically_normal().string();
  std::vector<PreparedStep> steps;
  const PartitionTable* before = r.table;
  for (size_t k = 0; k < order->size(); ++k) {
    PreparedStep s;
    s.step = (*order)[k];
    s.move = ActionOf(*r.plan, s.step.move_partition);
    s.computed = std::move((*chain)[k]);
    // libfdisk's readings know only what the probe proves; apply knows more.
    CopyContentProofs(*r.table, &s.computed.old_table);
    s.changed = ChangedRanges(s.computed.transition);
    if (s.move) {
      s.journal = fmt::format("{}/{}-{}-step{}-part{}{}", dir, DiskName(r.path), stamp, k + 1,
                              s.move->partition, kJournalFileSuffix);
    }
    // libfdisk's table for this step must be the plan's, restricted to the step.
    std::vector<std::string> wrong = TableVersusPlan(StepPlan(*r.plan, s.step, *before),
                                                     s.computed.old_table, s.computed.new_table);
    if (!wrong.empty()) {
      PrintError(io.err,
                 fmt::format("the table libfdisk made for step {} differs from the plan:", k + 1));
      for (const std::string& m : wrong) PrintError(io.err, "  " + m);
      PrintError(io.err, "nothing was written");
      return std::nullopt;
    }
    std::vector<std::string> conflicts = TransitionConflicts(
        s.computed.transition, s.computed.old_table, s.computed.new_table,
        s.move ? FreeOldPlaces(r, s.move->partition) : r.left_behind->discarded);
    if (Refused(io, k, conflicts, "partition contents") ||
        (s.move && Refused(io, k,
                           MoveOverwritesTable(s.computed.transition, s.move->partition,
                                               MoveOf(*s.move, sector_size)),
                           "the partition table"))) {
      *code = ExitCode::kRefused;
      return std::nullopt;
    }
    steps.push_back(std::move(s));
    before = &steps.back().computed.new_table;
  }
  // And all the steps together make the plan.
  std::vector<std::string> wrong =
      TableVersusPlan(*r.plan, steps.front().computed.old_table, steps.back().computed.new_table);
  if (!wrong.empty()) {
    PrintError(io.err, "the table after the last step differs from the plan:");
    for (const std::string& m : wrong) PrintError(io.err, "  " + m);
    PrintError(io.err, "nothing was written");
    return std::nullopt;
  }

  Result<Target> reader = OpenTarget(r.path);
  if (!reader) {
    PrintError(io.err, reader.error().message + "; nothing was written");
    return std::nullopt;
  }
  // An EBR that libfdisk puts into a gap for a while gives the gap its old bytes back when a
  // later step abandons it (TransientGapRanges).
  if (Status s = RestoreTransientGaps(reader->fd.get(), r.path, steps); !s) {
    PrintError(io.err, s.error().message + "; nothing was written");
    return std::nullopt;
  }
  // And one that an earlier apply put there and did not take back (it was interrupted).
  std::vector<TableTransition*> transitions;
  for (PreparedStep& s : steps) transitions.push_back(&s.computed.transition);
  if (Status s =
          RestoreAbandonedGaps(*r.device, *reader, r.write->backup_dir, transitions,
                               steps.front().computed.old_table, steps.back().computed.new_table);
      !s) {
    PrintError(io.err, s.error().message + "; nothing was written");
    return std::nullopt;
  }
  for (PreparedStep& s : steps) s.changed = ChangedRanges(s.computed.transition);
  if (!PrepareBootRecords(io, r, *reader, steps, code)) return std::nullopt;
  *code = ExitCode::kFailure;
  // What would make the mover refuse, before anything is asked or written: the journals'
  // place, existing journal files, users of the disk, an unfinished move.
  const std::string check_dir = ExistingDirFor(dir);
  for (const PreparedStep& s : steps) {
    if (!s.move) continue;
    const std::string journal =
        check_dir == dir ? s.journal : check_dir + "/" + fs::path(s.journal).filename().string();
    std::string note;
    if (Status allowed = CheckMoveAllowed(*reader, journal, StepWrites(s, sector_size), &note,
                                          r.write->at_next_boot);
        !allowed) {
      PrintError(io.err, allowed.error().message + "; nothing was written");
      if (!r.write->at_next_boot) SayNextBootWay(io, r.path, ApplyScope(steps, sector_size));
      *code = allowed.error().errno_value == kUnfinishedMoveErrno ? ExitCode::kUnfinished
                                                                  : ExitCode::kRefused;
      return std::nullopt;
    }
    if (!note.empty() && &s == &steps.front()) PrintWarning(io.err, note);
  }
  // What each moved partition's contents use: shown now, refused now when a partition must not
  // move at all (a swap area holding a hibernation image).
  for (size_t k = 0; k < steps.size() && !r.copy_all; ++k) {
    if (!steps[k].move) continue;
    const MoveGeometry g = MoveOf(*steps[k].move, sector_size);
    Result<UsedMap> used = ProbeUsedMap(reader->fd.get(), r.path, g.source_bytes, g.length_bytes);
    if (!used) {
      PrintError(io.err, fmt::format("step {}: partition {}: {}; nothing was written", k + 1,
                                     steps[k].move->partition, used.error().message));
      *code = ExitCode::kRefused;
      return std::nullopt;
    }
    steps[k].used = std::move(*used);
  }
  // A move whose rollback could not put back what it writes outside its source: refused now,
  // not by the mover after the earlier steps.
  for (size_t k = 0; k < steps.size(); ++k) {
    if (!steps[k].move) continue;
    Result<MoveRequest> request = StepRequest(steps[k], sector_size, steps[k].used);
    Status kept = request ? CheckDestinationOutsideSource(request->move) : request.error();
    if (!kept) {
      PrintError(io.err, fmt::format("step {}: partition {}: {}", k + 1, steps[k].move->partition,
                                     kept.error().message));
      *code = ExitCode::kRefused;
      return std::nullopt;
    }
  }
  *code = ExitCode::kOk;
  return steps;
}

// After a step stopped or failed: where the disk is, what is left.
// "step 2" or "steps 2-4" (1-based, inclusive).
std::string StepRange(size_t first, size_t last) {
  return first == last ? fmt::format("step {}", first) : fmt::format("steps {}-{}", first, last);
}

// After a step stopped or failed: `done` steps are complete, the one after them (if any) is
// what the messages before this said, the rest were not started.
// "nothing was written" before the first step, "step K was not started" after.
std::string NotStarted(size_t k) {
  return k == 0 ? "nothing was written" : fmt::format("step {} was not started", k + 1);
}

void PrintWhereItStopped(Streams io, const std::vector<PreparedStep>& steps, size_t done,
                         const std::string& path, bool next_started = false) {
  if (done == 0 && !next_started) return;  // the message said "nothing was written"
  if (done > 0) {
    PrintErrorOrToTerminal(
        io,
        fmt::format("{} of {} {}: the data is moved and the table on '{}' says so",
                    StepRange(1, done), steps.size(), done == 1 ? "is done" : "are done", path));
  }
  // The step after the done ones either ran (its journal's message says where it is) or not.
  const size_t first_not_started = next_started ? done + 2 : done + 1;
  if (first_not_started <= steps.size()) {
    PrintErrorOrToTerminal(
        io, fmt::format("{} {} not started; once the disk is settled, 'partalign plan "
                        "{}' makes a new plan for what is left",
                        StepRange(first_not_started, steps.size()),
                        first_not_started == steps.size() ? "was" : "were", ShellQuote(path)));
  }
}

// The steps that move data.
size_t MoveSteps(const std::vector<PreparedStep>& steps) {
  return static_cast<size_t>(std::count_if(
      steps.begin(), steps.end(), [](const PreparedStep& s) { return s.move != nullptr; }));
}

// Step k writes the table alone (kTableOnlyStep): its changed ranges in the crash-safe order,
// read back, and the table the disk then holds, checked against the one computed for it.
Result<PartitionTable> WriteTableStep(Streams io, const Target& disk, const std::string& path,
                                      uint64_t sector_size, const std::vector<PreparedStep>& steps,
                                      size_t k) {
  const PreparedStep& s = steps[k];
  io.out << fmt::format(
                "\nStep {}/{}: the table alone ({} range(s)), to move an EBR out of the "
                "way of the next move\n",
                k + 1, steps.size(), s.changed.size())
         << std::flush;
  if (Status w =
          WriteTableRanges(disk.fd.get(), path, sector_size, s.changed, HooksFromEnvironment());
      !w) {
    return w.error();
  }
  Result<std::vector<size_t>> unwritten = DifferingRanges(
      disk.fd.get(), path, s.changed, [](const TableRange& t) { return t.new_bytes; });
  if (!unwritten) return unwritten.error();
  if (!unwritten->empty()) {
    return MakeError(
        fmt::format("reading back '{}': the {} does not hold what step {} wrote", path,
                    AreaName(s.computed.transition.label, s.changed[unwritten->front()]), k + 1));
  }
  Result<TableRead> after =
      ReadPartitionTable(path, {.sector_size = sector_size, .probe_contents = false});
  if (!after) return after.error();
  if (after->table.fingerprint != s.computed.new_table.fingerprint) {
    return MakeError(fmt::format("after step {} the table of '{}' has fingerprint {}, expected {}",
                                 k + 1, path, after->table.fingerprint,
                                 s.computed.new_table.fingerprint));
  }
  return std::move(after->table);
}

}  // namespace

ExitCode ApplyWithMoves(Streams io, const MoveApplyRequest& r) {
  const uint64_t sector_size = r.device->topology.logical_sector_size;
  ExitCode code = ExitCode::kOk;
  std::optional<std::vector<PreparedStep>> prepared = Prepare(io, r, &code);
  if (!prepared) return code;
  const std::vector<PreparedStep>& steps = *prepared;

  if (r.json) {
    io.out << DryRunJson(r, steps, sector_size).dump(2) << '\n';
    return ExitCode::kOk;
  }
  uint64_t moved_bytes = 0;
  for (const PreparedStep& s : steps) moved_bytes += CopiedBytesOf(s, sector_size);
  io.out << fmt::format("Plan '{}' for '{}' ({} table, {}-byte sectors, {}):\n", r.plan_path,
                        r.path, ToString(steps.front().computed.transition.label), sector_size,
                        steps.front().computed.old_table.fingerprint);
  PrintPlanActions(io.out, *r.plan);
  PrintLeftBehind(io.out, *r.table, *r.left_behind);
  io.out << fmt::format(
      "\nData moves: {} step(s), {} to copy, each one journaled move after which the mover "
      "writes that step's table:\n",
      steps.size(), FormatSize(moved_bytes));
  PrintSteps(io.out, steps, sector_size);
  // At boot: each moved partition leaves the table while its data moves (fence_steps.h).
  std::vector<std::optional<PreparedFence>> fences(steps.size());
  for (size_t k = 0; r.fence && k < steps.size(); ++k) {
    if (!steps[k].move) continue;
    const uint32_t n = steps[k].move->partition;
    Result<PreparedFence> f = PrepareFence(steps[k].computed, n);
    if (!f) {
      PrintWarning(io.err, fmt::format("step {}: partition {} stays in the table while its data "
                                       "moves (no fence): {}",
                                       k + 1, n, f.error().message));
      continue;
    }
    io.out << fmt::format(
        "Step {}: partition {} leaves the table while its data moves (a fence): a system booted "
        "meanwhile (a live USB, an older kernel's initramfs) finds no half-moved filesystem to "
        "mount; the step's table write puts it back at its new place.\n",
        k + 1, n);
    fences[k] = std::move(*f);
  }
  const std::string device = ShellQuote(r.path);
  io.out << fmt::format(
      "Crash safety: at every instant the table on disk matches the data of every partition; "
      "after a crash in a step, 'partalign resume {0}' completes that step (or 'partalign resume "
      "--rollback {0}' undoes it; the steps before it are done, those after it not started), "
      "and then 'partalign plan {0}' makes a new plan for what is left.\n",
      device);
  if (MoveSteps(steps) < steps.size()) {
    // A step that writes the table alone has no journal: it is undone like a table-only plan.
    io.out << "A step that writes the table alone is written in the crash-safe order after its "
              "backup; if it is interrupted, restoring that backup puts its table back.\n";
  }
  // Where the backups and journals go, before anything is asked: a full, read-only or missing
  // directory is a refusal now, not a failure after the first write.
  uint64_t journal_bytes = 0;
  for (const PreparedStep& s : steps) {
    if (!s.move) continue;
    Result<MoveRequest> request = StepRequest(s, sector_size, s.used);
    if (request) journal_bytes = std::max(journal_bytes, JournalFileBytes(*request));
  }
  for (const auto& [dir, what, bytes] :
       {std::tuple{r.write->backup_dir, "the backup directory", kBackupFileBytes * steps.size()},
        std::tuple{r.journal_dir, "the journal directory", journal_bytes}}) {
    if (Status usable = CheckDirectoryFor(dir, what, bytes, /*create=*/false); !usable) {
      PrintError(io.err, usable.error().message + "; nothing was written");
      return ExitCode::kRefused;
    }
  }
  if (ExitCode in_use = ExitCode::kOk;
      !ShowDiskUsers(io, r.path, ApplyScope(steps, sector_size), &in_use, r.write->at_next_boot)) {
    return in_use;
  }
  if (r.write->dry_run) {
    SayDryRunDone(io, *r.write);
    return ExitCode::kOk;
  }
  if (!Confirm(io,
               fmt::format("Move the data of {} partition(s) and change the table of '{}'?",
                           MoveSteps(steps), r.path),
               r.write->yes)) {
    return ExitCode::kRefused;
  }
  std::error_code ec;
  fs::create_directories(r.journal_dir, ec);
  if (ec) {
    PrintError(io.err, fmt::format("cannot create the journal directory '{}': {}; nothing was "
                                   "written",
                                   r.journal_dir, ec.message()));
    return ExitCode::kFailure;
  }
  if (r.before_first_write && !r.before_first_write()) return ExitCode::kFailure;

  std::optional<Target> disk =
      AcquireForWrite(io, r.path, &code, {r.journal_dir}, ApplyScope(steps, sector_size));
  if (!disk) return code;
  if (!StillEmpty(io, r.path, *r.table, *r.left_behind, disk->fd.get())) {
    return ExitCode::kRefused;
  }
  // Ctrl-C from here on asks the running move to stop at a batch boundary, consistently.
  StopOnSignal stop;
  PartitionTable final_table;
  for (size_t k = 0; k < steps.size(); ++k) {
    const PreparedStep& s = steps[k];
    // A signal between two steps (a SIGPIPE from the report of the step before): the disk is
    // settled, the steps after it are not started.
    if (StopOnSignal::Requested()) {
      PrintErrorOrToTerminal(io, fmt::format("stopped by a signal; {}", NotStarted(k)));
      PrintWhereItStopped(io, steps, k, r.path);
      return k == 0 ? ExitCode::kRefused : ExitCode::kUnfinished;
    }
    // The sectors must be the ones this step's table starts from: the disk's, or what the
    // step before wrote.
    Result<std::vector<size_t>> moved = DifferingRanges(
        disk->fd.get(), r.path, s.changed, [](const TableRange& t) { return t.old_bytes; });
    if (!moved || !moved->empty()) {
      PrintError(io.err,
                 !moved
                     ? moved.error().message
                     : fmt::format("the table of '{}' is not the one step {} starts "
                                   "from ({} at byte {}); {}",
                                   r.path, k + 1,
                                   AreaName(s.computed.transition.label, s.changed[moved->front()]),
                                   s.changed[moved->front()].offset_bytes, NotStarted(k)));
      PrintWhereItStopped(io, steps, k, r.path);
      return k == 0 ? ExitCode::kRefused : ExitCode::kFailure;
    }
    TableBackup backup =
        MakeBackup("apply", *r.device, *disk, s.computed.transition,
                   s.computed.old_table.fingerprint, s.computed.new_table.fingerprint,
                   s.computed.old_script, {&s.computed.old_table, &s.computed.new_table});
    // A table write alone is undone by restoring its backup, like a table-only plan's: no move
    // has started under it (the next step's backup records those).
    if (s.move) backup.moves = MovesFrom(steps, k, sector_size);
    std::optional<std::string> backup_path =
        SaveBackup(io, r.write->backup_dir, backup, NotStarted(k));
    if (!backup_path) {
      PrintWhereItStopped(io, steps, k, r.path);
      return ExitCode::kFailure;
    }
    if (!s.move) {
      Result<PartitionTable> written = WriteTableStep(io, *disk, r.path, sector_size, steps, k);
      if (!written) {
        // Undone like a table-only plan: its backup records no move.
        FailedAfterWrite(io, fmt::format("step {}: {}", k + 1, written.error().message),
                         *backup_path);
        PrintWhereItStopped(io, steps, k, r.path);
        return ExitCode::kFailure;
      }
      if (!UpdateKernel(io, *disk, *written)) {
        PrintWhereItStopped(io, steps, k + 1, r.path);
        return ExitCode::kFailure;
      }
      final_table = std::move(*written);
      continue;
    }

    // The used map again, now that the disk is held: nothing can change it until the move.
    std::optional<UsedMap> used;
    if (!r.copy_all) {
      const MoveGeometry g = MoveOf(*s.move, sector_size);
      Result<UsedMap> read = ProbeUsedMap(disk->fd.get(), r.path, g.source_bytes, g.length_bytes);
      if (!read) {
        PrintError(io.err, fmt::format("step {}: partition {}: {}; {}", k + 1, s.move->partition,
                                       read.error().message, NotStarted(k)));
        PrintWhereItStopped(io, steps, k, r.path);
        return k == 0 ? ExitCode::kRefused : ExitCode::kFailure;
      }
      used = std::move(*read);
      for (const std::string& note : used->notes()) PrintWarning(io.err, note);
    }
    Result<MoveRequest> step_request = StepRequest(s, sector_size, used);
    if (!step_request) {
      PrintError(io.err, fmt::format("step {}: {}; {}", k + 1, step_request.error().message,
                                     NotStarted(k)));
      PrintWhereItStopped(io, steps, k, r.path);
      return ExitCode::kFailure;
    }
    MoveRequest& request = *step_request;
    // The fence, when the step has one: the move's table write starts from it.
    const std::optional<PreparedFence>& fence = fences[k];
    if (fence) request.table = UpdatesAfterFence(std::move(request.table), *fence);
    // The cheaper safe way of this step's shift, by what writes and flushes cost now (measured
    // beside the journal; docs/mover.md §5a), unless --way forced one.
    const ChosenWay way = ChooseMoveWayNow(io, s.journal, sector_size, request.move, r.way);
    request.move = way.move;
    io.out << fmt::format(
                  "\nStep {}/{}: partition {}, {} bytes {} from byte {} to byte {}; copies {} "
                  "({})\n",
                  k + 1, steps.size(), s.move->partition, request.move.length_bytes,
                  Direction(*s.move), request.move.source_bytes, request.move.dest_bytes,
                  FormatSize(CopiedBytes(request.move)),
                  used ? fmt::format("{}, {} used", used->source, FormatSize(used->used_bytes()))
                       : "every byte, --copy-all")
           << "  " << way.line << '\n'
           << std::flush;
    if (fence) {
      const std::string base = s.journal.substr(0, s.journal.size() - kJournalFileSuffix.size());
      if (ExitCode fenced =
              WriteFence(io, *disk, *r.device, s.computed, *fence, r.write->backup_dir,
                         base + "-fence" + std::string(kJournalFileSuffix), r.progress);
          fenced != ExitCode::kOk) {
        PrintWhereItStopped(io, steps, k, r.path, /*next_started=*/true);
        return fenced;
      }
    }
    std::optional<MoveStatus> status;
    ExitCode moved_code = RunMoveOn(
        io, *disk, r.progress,
        [&](const Target& target, const MoverHooks& hooks) {
          return StartMove(target, request, hooks);
        },
        request.move, request.table.size(), s.journal, &status);
    if (moved_code != ExitCode::kOk || status != MoveStatus::kCompleted) {
      if (fence) {
        // A move rolled back leaves the fence over data at its old place: lifted now. An
        // unfinished one keeps it until it is resumed.
        LiftFence(io, r.path, &*disk, r.write->backup_dir, r.journal_dir, r.progress);
      }
      PrintWhereItStopped(io, steps, k, r.path, /*next_started=*/true);
      return moved_code == ExitCode::kOk ? ExitCode::kFailure : moved_code;
    }
    Result<TableRead> after =
        ReadPartitionTable(r.path, {.sector_size = sector_size, .probe_contents = false});
    if (!after) {
      PrintError(io.err, after.error().message);
      PrintWhereItStopped(io, steps, k + 1, r.path);
      return ExitCode::kFailure;
    }
    if (after->table.fingerprint != s.computed.new_table.fingerprint) {
      PrintError(io.err, fmt::format("after step {} the table of '{}' has fingerprint {}, "
                                     "expected {}",
                                     k + 1, r.path, after->table.fingerprint,
                                     s.computed.new_table.fingerprint));
      PrintWhereItStopped(io, steps, k + 1, r.path);
      return ExitCode::kFailure;
    }
    if (!UpdateKernel(io, *disk, after->table)) {
      PrintWhereItStopped(io, steps, k + 1, r.path);
      return ExitCode::kFailure;
    }
    final_table = std::move(after->table);
  }

  // The table read back after the last step (the disk is held: nobody changed it since).
  std::vector<std::string> off =
      TableVersusPlan(*r.plan, steps.front().computed.old_table, final_table);
  if (!off.empty()) {
    for (const std::string& m : off) PrintError(io.err, m);
    PrintError(io.err, fmt::format("the table read back from '{}' differs from the plan", r.path));
    return ExitCode::kFailure;
  }
  io.out << fmt::format(
      "\nVerified: the table on '{}' matches the plan ({} partitions, {}); {} moved.\n", r.path,
      final_table.partitions.size(), final_table.fingerprint, FormatSize(moved_bytes));
  if (r.after_success) r.after_success();
  return ExitCode::kOk;
}

}  // namespace partalign
