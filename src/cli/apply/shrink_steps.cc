// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/apply/shrink_steps.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <ostream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/apply/apply_moves.h"
#include "cli/apply/move_ui.h"
#include "cli/room/make_room.h"
#include "io/move/mover.h"
#include "io/resize/filesystem_shrink.h"
#include "io/table/fdisk_table.h"
#include "io/table/fdisk_transition.h"
#include "io/table/table_writer.h"
#include "partalign/move/journal_format.h"
#include "partalign/table/plan_check.h"
#include "partalign/topology/probe_report.h"
#include "partalign/util/json_util.h"
#include "partalign/util/shell_quote.h"
#include "partalign/util/units.h"
#include "partalign/util/version.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;

// The shrink computed, before anything is written.
struct PreparedShrink {
  PlannedShrink shrink;
  const Partition* partition = nullptr;
  ShrinkOutcome outcome;
  ComputedTransition computed;
  std::vector<TableRange> changed;  ///< the table's ranges, in the crash-safe order
  std::string journal;
  MoveRequest request;
};

std::string NothingWritten(const std::string& message) { return message + "; nothing was written"; }

// libfdisk's table with the partition of `s` ending at its new size, computed from the table
// on the disk now (after the shrinks written before it), and the step's ranges: the tool's
// changes, then the table's. False after printing why (`*code`).
bool PrepareTableEntry(Streams io, const ShrinkStepsRequest& r, PreparedShrink* out, ExitCode* code,
                       bool after_a_shrink = false) {
  *code = ExitCode::kRefused;
  auto NothingWritten = [&](const std::string& message) {
    return after_a_shrink ? message +
                                "; the shrinks before it are written, the rest of the plan "
                                "was not started ('partalign plan' again plans it)"
                          : message + "; nothing was written";
  };
  PreparedShrink& s = *out;
  const PlannedShrink& shrink = s.shrink;
  const Partition& p = *s.partition;
  const uint64_t ss = r.device->topology.logical_sector_size;
  const std::string dir = fs::absolute(r.journal_dir).lexically_normal().string();
  Result<ComputedTransition> computed =
      ComputeTableTransition(r.path, ss, {{p.number, p.start_sector, shrink.size_sectors}});
  if (!computed) {
    PrintError(io.err, NothingWritten(computed.error().message));
    return false;
  }
  s.computed = std::move(*computed);
  CopyContentProofs(*r.table, &s.computed.old_table);
  const Partition* after = s.computed.new_table.Find(p.number);
  if (after == nullptr || after->start_sector != p.start_sector ||
      after->size_sectors != shrink.size_sectors) {
    PrintError(io.err,
               NothingWritten(fmt::format("the table libfdisk made for the shrink of partition {} "
                                          "does not end it at sector {}",
                                          p.number, p.start_sector + shrink.size_sectors - 1)));
    *code = ExitCode::kFailure;
    return false;
  }
  std::vector<std::string> conflicts =
      TransitionConflicts(s.computed.transition, s.computed.old_table, s.computed.new_table);
  if (!conflicts.empty()) {
    for (const std::string& m : conflicts) PrintError(io.err, m);
    PrintError(io.err, NothingWritten("refusing to overwrite partition contents"));
    return false;
  }
  s.changed = ChangedRanges(s.computed.transition);
  std::string disk = fs::path(r.path).filename().string();
  s.journal = fmt::format("{}/{}-{}-shrink-part{}{}", dir, disk.empty() ? "disk" : disk,
                          UtcTime("%Y%m%dT%H%M%SZ"), p.number, kJournalFileSuffix);
  // The contents first, then the table entry: a reader that looks before resume finishes sees
  // the new table last.
  s.request.move = {p.start_sector * ss, p.start_sector * ss, 0};
  s.request.table = s.outcome.updates;
  for (const TableRange& t : s.changed) {
    s.request.table.push_back({t.offset_bytes, t.old_bytes, t.new_bytes});
  }
  s.request.journal_path = s.journal;
  s.request.step =
      fmt::format("shrink the {} of partition {} from {} to {} sectors ({})", p.contents.fs_type,
                  p.number, p.size_sectors, shrink.size_sectors, ToString(shrink.tool));
  return true;
}

// The tool on a scratch copy and libfdisk's table with the smaller entry; nullopt after
// printing why (`*code`).
std::optional<PreparedShrink> PrepareShrink(Streams io, const ShrinkStepsRequest& r,
                                            const PlannedShrink& shrink, ExitCode* code) {
  *code = ExitCode::kRefused;
  const uint64_t ss = r.device->topology.logical_sector_size;
  PreparedShrink s;
  s.shrink = shrink;
  s.partition = r.table->Find(shrink.partition);
  if (s.partition == nullptr) {
    PrintError(io.err,
               NothingWritten(fmt::format("the plan shrinks partition {}, which '{}' does not have",
                                          shrink.partition, r.path)));
    return std::nullopt;
  }
  const Partition& p = *s.partition;
  const std::string dir = fs::absolute(r.journal_dir).lexically_normal().string();
  std::error_code ec;
  // The scratch copy goes where the journal goes (not on the disk, not on tmpfs): until it
  // exists (a dry run), the place plan reads limits in.
  const std::string scratch = fs::is_directory(dir, ec) ? dir : std::string(kShrinkScratchDir);
  Result<Target> reader = OpenTarget(r.path);
  if (!reader) {
    PrintError(io.err, NothingWritten(reader.error().message));
    return std::nullopt;
  }
  const std::string name = fmt::format("partition {} of '{}'", p.number, r.path);
  Result<ShrinkOutcome> outcome = ShrinkOnScratch({.disk_fd = reader->fd.get(),
                                                   .disk_path = r.path,
                                                   .offset_bytes = p.start_sector * ss,
                                                   .length_bytes = p.size_sectors * ss,
                                                   .new_length_bytes = shrink.size_sectors * ss,
                                                   .sector_bytes = ss,
                                                   .fs_type = p.contents.fs_type,
                                                   .scratch_dir = scratch,
                                                   .name = name});
  if (!outcome) {
    PrintError(io.err,
               NothingWritten(fmt::format("cannot make room: {}", outcome.error().message)));
    return std::nullopt;
  }
  s.outcome = std::move(*outcome);
  if (!PrepareTableEntry(io, r, &s, code)) return std::nullopt;
  *code = ExitCode::kOk;
  return s;
}

uint64_t ShrinkWrittenBytes(const MoveRequest& request) {
  uint64_t bytes = 0;
  for (const TableUpdate& u : request.table) bytes += u.new_bytes.size();
  return bytes;
}

void ShowShrink(Streams io, const ShrinkStepsRequest& r, const PreparedShrink& s,
                const std::string& step) {
  const uint64_t ss = r.device->topology.logical_sector_size;
  const Partition& p = *s.partition;
  io.out << fmt::format(
      "Make room first (--make-room): partition {} ({}) gives {} at its end: {} -> {} "
      "sectors ({} -> {}), by {} on a scratch copy:\n",
      p.number, p.contents.fs_type, FormatSize((p.size_sectors - s.shrink.size_sectors) * ss),
      p.size_sectors, s.shrink.size_sectors, FormatSize(p.size_sectors * ss),
      FormatSize(s.shrink.size_sectors * ss), ToString(s.shrink.tool));
  for (const std::string& line : s.outcome.steps) io.out << "  " << line << '\n';
  io.out << fmt::format(
      "Step {}: one journaled step that moves no data writes {} range(s) ({}): what the tool "
      "changed and the table entry; after a crash in it 'partalign resume {}' completes it or "
      "'partalign resume --rollback {}' undoes it. The steps after it are computed from the "
      "table it writes.\n",
      step, s.request.table.size(), FormatSize(ShrinkWrittenBytes(s.request)), ShellQuote(r.path),
      ShellQuote(r.path));
}

nlohmann::json ShrinkJson(const PreparedShrink& s) {
  nlohmann::json ranges = nlohmann::json::array();
  for (const TableUpdate& u : s.request.table) {
    ranges.push_back({{"offset_bytes", u.offset_bytes}, {"length_bytes", u.new_bytes.size()}});
  }
  return {{"partition", s.shrink.partition},
          {"tool", ToString(s.shrink.tool)},
          {"old_size_sectors", s.partition->size_sectors},
          {"size_sectors", s.shrink.size_sectors},
          {"tool_steps", s.outcome.steps},
          {"ranges", ranges}};
}

// The rest of the plan, as planned on the table the shrinks make (PlanAfterShrinks: apply
// computes its steps from that table once the shrinks are written).
nlohmann::json RestOfPlanJson(const Plan& plan) {
  return PlanToJson(PlanAfterShrinks(plan)).value("actions", nlohmann::json::array());
}

void ShowRestOfPlan(Streams io, const Plan& plan) {
  const Plan rest = PlanAfterShrinks(plan);
  const auto changes =
      std::count_if(rest.actions.begin(), rest.actions.end(), [](const PlanAction& a) {
        return a.kind == ActionKind::kTableOnly || a.kind == ActionKind::kMoveData;
      });
  io.out << fmt::format(
      "Then the rest of the plan ({} partition(s) to move or change), as planned on the table "
      "the shrink{} make{}; its steps, journals and boot records are computed from that table "
      "once {} written:\n",
      changes, PlanShrinks(plan).size() == 1 ? "" : "s", PlanShrinks(plan).size() == 1 ? "s" : "",
      PlanShrinks(plan).size() == 1 ? "it is" : "they are");
  PrintPlanActions(io.out, rest);
}

// The dry run's document: "shrink" the first shrink (as when a plan had one), "shrinks" each.
nlohmann::json ShrinksJson(const ShrinkStepsRequest& r, const std::vector<PreparedShrink>& all) {
  nlohmann::json each = nlohmann::json::array();
  for (const PreparedShrink& s : all) each.push_back(ShrinkJson(s));
  return {{"schema_version", kJsonSchemaVersion},
          {"partalign_version", kVersion},
          {"plan", r.plan_path},
          {"device", r.path},
          {"dry_run", true},
          {"shrink", each.front()},
          {"shrinks", each},
          {"then", RestOfPlanJson(*r.plan)}};
}

std::string StepName(size_t index, size_t count) {
  return count == 1 ? std::string("0") : fmt::format("0.{}", index + 1);
}

}  // namespace

ExitCode ApplyShrinks(Streams io, const ShrinkStepsRequest& r, bool* written) {
  *written = false;
  const std::vector<PlannedShrink> shrinks = PlanShrinks(*r.plan);
  if (shrinks.empty()) {
    PrintError(io.err, NothingWritten("the plan shrinks no partition"));
    return ExitCode::kRefused;
  }
  // Every tool runs on its scratch copy, its checker clean before and after, before anything
  // is written: a refusal of any shrink leaves the disk as it was.
  ExitCode code = ExitCode::kOk;
  std::vector<PreparedShrink> all;
  for (const PlannedShrink& shrink : shrinks) {
    std::optional<PreparedShrink> s = PrepareShrink(io, r, shrink, &code);
    if (!s) return code;
    all.push_back(std::move(*s));
  }
  if (r.json) {
    io.out << ShrinksJson(r, all).dump(2) << '\n';
    return ExitCode::kOk;
  }
  const uint64_t ss = r.device->topology.logical_sector_size;
  std::vector<ByteExtent> writes;
  WriteScope scope;
  scope.whole_disk = false;
  std::vector<std::string> asked;
  for (size_t i = 0; i < all.size(); ++i) {
    const PreparedShrink& s = all[i];
    ShowShrink(io, r, s, StepName(i, all.size()));
    for (const TableUpdate& u : s.request.table)
      writes.push_back({u.offset_bytes, u.new_bytes.size()});
    scope.partitions.push_back(s.shrink.partition);
    asked.push_back(
        fmt::format("{}partition {}{} by {}", i == 0 ? "" : (i + 1 == all.size() ? "and " : ""),
                    s.shrink.partition, i == 0 ? fmt::format(" of '{}'", r.path) : "",
                    FormatSize((s.partition->size_sectors - s.shrink.size_sectors) * ss)));
  }
  {
    Result<Target> reader = OpenTarget(r.path);
    if (!reader) {
      PrintError(io.err, NothingWritten(reader.error().message));
      return ExitCode::kFailure;
    }
    std::error_code ec;
    const std::string journal = fs::is_directory(r.journal_dir, ec)
                                    ? all.front().journal
                                    : std::string(kShrinkScratchDir) + "/" +
                                          fs::path(all.front().journal).filename().string();
    std::string note;
    if (Status allowed = CheckMoveAllowed(*reader, journal, writes, &note, r.write->at_next_boot);
        !allowed) {
      PrintError(io.err, NothingWritten(allowed.error().message));
      if (!r.write->at_next_boot)
        SayNextBootWay(io, r.path, {.whole_disk = false, .bytes = writes});
      return ExitCode::kRefused;
    }
    if (!note.empty()) PrintWarning(io.err, note);
  }
  scope.bytes = writes;
  if (ExitCode in_use = ExitCode::kOk;
      !ShowDiskUsers(io, r.path, scope, &in_use, r.write->at_next_boot))
    return in_use;
  if (r.write->dry_run) {
    ShowRestOfPlan(io, *r.plan);
    SayDryRunDone(io, *r.write);
    return ExitCode::kOk;
  }
  if (!Confirm(io,
               fmt::format("Shrink {}, then apply the rest of the plan?",
                           fmt::join(asked, all.size() > 2 ? ", " : " ")),
               r.write->yes)) {
    return ExitCode::kRefused;
  }
  std::error_code ec;
  fs::create_directories(r.journal_dir, ec);
  if (ec) {
    PrintError(io.err, NothingWritten(fmt::format("cannot create the journal directory '{}': {}",
                                                  r.journal_dir, ec.message())));
    return ExitCode::kFailure;
  }
  std::optional<Target> disk = AcquireForWrite(io, r.path, &code, {r.journal_dir}, scope);
  if (!disk) return code;
  for (size_t i = 0; i < all.size(); ++i) {
    PreparedShrink& s = all[i];
    // The table entry of each shrink after the first from the table the one before it wrote.
    if (i > 0 && !PrepareTableEntry(io, r, &s, &code, true)) return code;
    const std::string later =
        i == 0 ? std::string("nothing was written")
               : std::string(
                     "the shrinks before it are written, the rest of the plan was not "
                     "started ('partalign plan' again plans it)");
    // Held now: every byte the step writes must still be what the tool's copy was made from.
    std::vector<TableRange> expected;
    for (const TableUpdate& u : s.request.table) {
      TableRange t;
      t.offset_bytes = u.offset_bytes;
      t.length_bytes = u.old_bytes.size();
      t.old_bytes = u.old_bytes;
      t.new_bytes = u.new_bytes;
      expected.push_back(std::move(t));
    }
    Result<std::vector<size_t>> moved = DifferingRanges(
        disk->fd.get(), r.path, expected, [](const TableRange& t) { return t.old_bytes; });
    if (!moved || !moved->empty()) {
      PrintError(io.err,
                 fmt::format("{}; {}",
                             !moved ? moved.error().message
                                    : fmt::format("'{}' changed while partalign prepared the "
                                                  "shrink (byte {})",
                                                  r.path, expected[moved->front()].offset_bytes),
                             later));
      return ExitCode::kRefused;
    }
    TableBackup backup =
        MakeBackup("apply", *r.device, *disk, s.computed.transition,
                   s.computed.old_table.fingerprint, s.computed.new_table.fingerprint,
                   s.computed.old_script, {&s.computed.old_table, &s.computed.new_table});
    if (!SaveBackup(io, r.write->backup_dir, backup)) return ExitCode::kFailure;
    io.out << fmt::format("\nStep {}: shrinking partition {} ({}), journal '{}'\n",
                          StepName(i, all.size()), s.shrink.partition, ToString(s.shrink.tool),
                          s.journal)
           << std::flush;
    StopOnSignal stop;
    std::optional<MoveStatus> status;
    ExitCode step = RunMoveOn(
        io, *disk, r.progress,
        [&](const Target& target, const MoverHooks& hooks) {
          return StartMove(target, s.request, hooks);
        },
        s.request.move, s.request.table.size(), s.journal, &status);
    if (step != ExitCode::kOk || status != MoveStatus::kCompleted) {
      PrintError(io.err, fmt::format("the shrink did not finish; the rest of the plan was not "
                                     "started: 'partalign resume {}' completes the shrink (or "
                                     "'partalign resume --rollback {}' undoes it)",
                                     ShellQuote(r.path), ShellQuote(r.path)));
      return step == ExitCode::kOk ? ExitCode::kFailure : step;
    }
    Result<TableRead> after =
        ReadPartitionTable(r.path, {.sector_size = ss, .probe_contents = false});
    if (!after || after->table.fingerprint != s.computed.new_table.fingerprint) {
      PrintError(io.err, !after ? after.error().message
                                : fmt::format("after the shrink the table of '{}' has fingerprint "
                                              "{}, expected {}",
                                              r.path, after->table.fingerprint,
                                              s.computed.new_table.fingerprint));
      return ExitCode::kFailure;
    }
    if (!UpdateKernel(io, *disk, after->table)) return ExitCode::kFailure;
  }
  *written = true;
  return ExitCode::kOk;
}

}  // namespace partalign
