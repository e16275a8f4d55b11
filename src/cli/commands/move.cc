// SPDX-License-Identifier: GPL-3.0-or-later
// partalign move TARGET --from B --to B --length B --journal PATH: the low-level, expert command
// that moves a byte range on a disk or image with the journaled mover (docs/mover.md). It is what
// apply calls for a plan's data moves; here it is driven by hand, optionally with a
// partition-table transition (--table-range + --new-table) written when the data is moved.
#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/apply/move_ui.h"
#include "cli/commands.h"
#include "cli/content/sleeping_systems.h"
#include "cli/move/move_way_choice.h"
#include "io/device/blkid_probe.h"
#include "io/device/target.h"
#include "io/move/mover.h"
#include "io/table/fdisk_table.h"
#include "io/used/used_map_reader.h"
#include "partalign/move/move_destination.h"
#include "partalign/util/checked_math.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

struct MoveCommand {
  std::string target;
  std::string from;
  std::string to;
  std::string length;
  std::string journal;
  std::string chunk;
  std::string way = "auto";
  std::vector<std::string> table_ranges;
  std::string new_table;
  bool yes = false;
  bool progress = false;
  bool only_used = false;
  bool force = false;
};

Result<uint64_t> ParseOption(const std::string& name, const std::string& value) {
  Result<uint64_t> bytes = ParseSize(value);
  if (!bytes) return MakeError(fmt::format("{}: {}", name, bytes.error().message));
  return bytes;
}

// A partition table's sectors: a GPT's header and entry array, an MBR, an EBR. Far larger
// ranges are typos (and would be held in memory twice and written to the journal twice).
constexpr uint64_t kMaxTableRangeBytes = 16 * kMiB;

Result<std::vector<uint8_t>> ReadBytes(const Target& target, uint64_t offset, uint64_t length) {
  const std::optional<uint64_t> end = CheckedAdd(offset, length);
  if (!end || *end > target.size_bytes) {
    return MakeError(fmt::format("--table-range {}:{} ends beyond the end of '{}' ({} bytes)",
                                 offset, length, target.path, target.size_bytes));
  }
  if (length > kMaxTableRangeBytes) {
    return MakeError(fmt::format("--table-range {}:{} is longer than a partition table can be ({})",
                                 offset, length, FormatSize(kMaxTableRangeBytes)));
  }
  std::vector<uint8_t> bytes(length);
  Result<size_t> got = ReadAt(target.fd.get(), bytes.data(), length, offset, target.path);
  if (!got) return got.error();
  if (*got != length) {
    return MakeError(fmt::format("'{}' ends before byte {}", target.path, offset + length));
  }
  return bytes;
}

// --table-range OFFSET:LENGTH (repeatable): old bytes from the target, new bytes from the same
// place in --new-table FILE (a scratch copy on which the new table was written).
Result<std::vector<TableUpdate>> ReadTableUpdates(const MoveCommand& command,
                                                  const Target& target) {
  std::vector<TableUpdate> updates;
  if (command.table_ranges.empty() != command.new_table.empty()) {
    return MakeError("--table-range and --new-table go together");
  }
  if (command.table_ranges.empty()) return updates;
  Result<Target> scratch = OpenTarget(command.new_table);
  if (!scratch) return scratch.error();
  for (const std::string& range : command.table_ranges) {
    const size_t colon = range.find(':');
    if (colon == std::string::npos) {
      return MakeError(fmt::format("--table-range '{}': expected OFFSET:LENGTH", range));
    }
    Result<uint64_t> offset = ParseOption("--table-range offset", range.substr(0, colon));
    if (!offset) return offset.error();
    Result<uint64_t> length = ParseOption("--table-range length", range.substr(colon + 1));
    if (!length) return length.error();
    Result<std::vector<uint8_t>> old_bytes = ReadBytes(target, *offset, *length);
    if (!old_bytes) return old_bytes.error();
    Result<std::vector<uint8_t>> new_bytes = ReadBytes(*scratch, *offset, *length);
    if (!new_bytes) return new_bytes.error();
    updates.push_back({*offset, std::move(*old_bytes), std::move(*new_bytes)});
  }
  return updates;
}

// Where a hibernated system may sleep (docs/used-map.md, "Hibernation is a refusal"): the
// partitions of the target's table, if it has one, and the moved range itself when it is not
// one of them.
std::vector<ScannedArea> AreasToScan(const Target& target, const MoveGeometry& move) {
  std::vector<ScannedArea> areas;
  if (Result<TableRead> table = ReadPartitionTable(target.path)) {
    areas = AreasOfTable(table->table);
  }
  const bool partition = std::any_of(areas.begin(), areas.end(), [&](const ScannedArea& a) {
    return a.offset_bytes == move.source_bytes && a.length_bytes == move.length_bytes;
  });
  if (!partition && move.length_bytes != 0) {
    Result<PartitionContents> contents =
        ProbePartitionContents(target.fd.get(), target.path, move.source_bytes, move.length_bytes);
    areas.push_back(
        {0, move.source_bytes, move.length_bytes, contents ? contents->fs_type : std::string()});
  }
  return areas;
}

// Says what lives at the destination; false after refusing a destination that overlaps a
// partition table or another partition (the move would destroy it), unless --force.
bool DestinationAllowed(const MoveCommand& command, const Target& target, const MoveGeometry& move,
                        Streams io) {
  const std::string where =
      fmt::format("bytes {}-{}", move.dest_bytes, move.dest_bytes + move.length_bytes - 1);
  Result<TableRead> read =
      ReadPartitionTable(command.target, {.sector_size = target.logical_sector_size});
  if (!read || read->table.label == LabelType::kNone) {
    io.err << fmt::format("partalign: the destination ({}): {}\n", where,
                          read ? "the disk has no partition table to say what lives there"
                               : "no partition table could be read (" + read.error().message +
                                     "), nothing says what lives there");
    return true;
  }
  const std::vector<std::string> there = DestinationOverlaps(read->table, move);
  if (there.empty()) {
    io.err << fmt::format(
        "partalign: the destination ({}): free space or the moved partition's own bytes, no "
        "table area\n",
        where);
    return true;
  }
  for (const std::string& what : there) {
    const std::string line = fmt::format("the destination ({}) overlaps {}", where, what);
    if (command.force) {
      PrintWarning(io.err, line + " (--force)");
    } else {
      PrintError(io.err, line);
    }
  }
  if (command.force) return true;
  PrintError(io.err, "refusing to write over them; nothing was written (--force writes anyway)");
  return false;
}

ExitCode RunMove(const MoveCommand& command, Streams io) {
  MoveRequest request;
  request.journal_path = command.journal;
  const std::pair<const char*, const std::string*> sizes[] = {
      {"--from", &command.from}, {"--to", &command.to}, {"--length", &command.length}};
  uint64_t* fields[] = {&request.move.source_bytes, &request.move.dest_bytes,
                        &request.move.length_bytes};
  for (size_t i = 0; i < 3; ++i) {
    Result<uint64_t> value = ParseOption(sizes[i].first, *sizes[i].second);
    if (!value) {
      PrintError(io.err, value.error().message);
      return ExitCode::kFailure;
    }
    *fields[i] = *value;
  }
  if (!command.chunk.empty()) {
    Result<uint64_t> chunk = ParseOption("--chunk", command.chunk);
    if (!chunk) {
      PrintError(io.err, chunk.error().message);
      return ExitCode::kFailure;
    }
    request.move.chunk_bytes = *chunk;
  }

  // Everything that can refuse is checked on a read-only descriptor, before any question.
  Result<Target> probe = OpenTarget(command.target);
  if (!probe) {
    PrintError(io.err, probe.error().message);
    return ExitCode::kFailure;
  }
  if (Status valid = ValidateMove(request.move, probe->size_bytes, probe->logical_sector_size);
      !valid) {
    PrintError(io.err, valid.error().message);
    return ExitCode::kFailure;
  }
  if (Status allowed = CheckMoveAllowed(*probe, command.journal); !allowed) {
    PrintError(io.err, allowed.error().message);
    return allowed.error().errno_value == kUnfinishedMoveErrno ? ExitCode::kUnfinished
                                                               : ExitCode::kRefused;
  }
  if (RefuseIfSleeping(io, command.target,
                       ScanForSleepingSystems(command.target, AreasToScan(*probe, request.move)))) {
    return ExitCode::kRefused;
  }
  // --table-range is a usage error of its own: checked before the destination is described,
  // so that it stays one line.
  Result<std::vector<TableUpdate>> table = ReadTableUpdates(command, *probe);
  if (!table) {
    PrintError(io.err, table.error().message);
    return ExitCode::kFailure;
  }
  if (!DestinationAllowed(command, *probe, request.move, io)) return ExitCode::kRefused;
  request.table = std::move(*table);
  std::optional<UsedMap> used;
  if (command.only_used) {
    // The range is a partition: copy what its filesystem uses (docs/used-map.md).
    Result<UsedMap> read = ProbeUsedMap(probe->fd.get(), command.target, request.move.source_bytes,
                                        request.move.length_bytes);
    if (!read) {
      PrintError(io.err, read.error().message);
      return ExitCode::kRefused;
    }
    used = std::move(*read);
    for (const std::string& note : used->notes()) PrintWarning(io.err, note);
  }
  // The chunk, batches and ring of this shift and copy (docs/mover.md §10), unless --chunk chose.
  if (command.chunk.empty()) {
    request.move = SizedForItsCopy(request.move, used);
  }
  if (used) {
    if (Status only = UseOnlyUsedChunks(request, *used); !only) {
      PrintError(io.err, only.error().message);
      return ExitCode::kFailure;
    }
    io.err << fmt::format(
        "partalign: copying {} of {} ({}, {} used)\n", FormatSize(CopiedBytes(request.move)),
        FormatSize(request.move.length_bytes), used->source, FormatSize(used->used_bytes()));
  }
  Result<std::optional<MoveWay>> way = ParseMoveWay(command.way);
  if (!way) {
    PrintError(io.err, way.error().message);
    return ExitCode::kFailure;
  }
  if (Status valid =
          ValidateMove(request.move, probe->size_bytes, probe->logical_sector_size, request.table);
      !valid) {
    PrintError(io.err, valid.error().message);
    return ExitCode::kFailure;
  }
  if (Status kept = CheckDestinationOutsideSource(request.move); !kept) {
    PrintError(io.err, kept.error().message);
    return ExitCode::kRefused;
  }
  const std::string what =
      request.move.length_bytes == 0
          ? fmt::format("this writes {} byte ranges of '{}' (a step that moves no data)",
                        request.table.size(), command.target)
          : fmt::format("this moves {} bytes of '{}' from byte {} to byte {}{}",
                        request.move.length_bytes, command.target, request.move.source_bytes,
                        request.move.dest_bytes,
                        request.table.empty() ? "" : " and writes a new partition table");
  if (!Confirm(io, command.yes, what)) return ExitCode::kRefused;

  // The cheaper safe way of this shift now: saved copies or flush-ordered writes.
  // Measured once the move is confirmed (it writes a probe file beside the journal); the
  // flush-ordered geometry copies the same bytes and is checked as the first one was.
  const ChosenWay chosen =
      ChooseMoveWayNow(io, command.journal, probe->logical_sector_size, request.move, *way);
  if (Status valid =
          ValidateMove(chosen.move, probe->size_bytes, probe->logical_sector_size, request.table);
      !valid) {
    PrintError(io.err, valid.error().message);
    return ExitCode::kFailure;
  }
  request.move = chosen.move;
  if (request.move.length_bytes > 0) io.err << "partalign: " << chosen.line << '\n';

  return RunMoveOperation(
      io, command.target, command.progress,
      [&](const Target& target, const MoverHooks& hooks) {
        return StartMove(target, request, hooks);
      },
      request.move, request.table.size(), command.journal);
}

}  // namespace

void AddMoveCommand(CLI::App& app, CommandRunners& runners) {
  auto command = std::make_shared<MoveCommand>();
  CLI::App* sub = app.add_subcommand(
      "move", "move a byte range to another offset on the same disk, journaled (expert)");
  sub->add_option("TARGET", command->target, "block device or image file")->required();
  sub->add_option("--from", command->from, "source offset (bytes; K/M/G suffixes)")->required();
  sub->add_option("--to", command->to, "destination offset")->required();
  sub->add_option("--length", command->length, "bytes to move")->required();
  sub->add_option("--journal", command->journal,
                  "journal file to create, on another disk than TARGET")
      ->required();
  sub->add_option(
      "--chunk", command->chunk,
      "copy chunk size (default 1MiB for a shift below 4MiB copying at most 512MiB, else 4MiB)");
  sub->add_option("--way", command->way,
                  "how a small shift stays safe: auto (the cheaper of the two, measured beside "
                  "the journal at the start), copies (saved copies in the journal) or ordered "
                  "(writes ordered by flushes, no copies)")
      ->check(CLI::IsMember({"auto", "copies", "ordered"}));
  sub->add_option("--table-range", command->table_ranges,
                  "OFFSET:LENGTH of partition-table bytes to replace once the data is moved "
                  "(repeatable)");
  sub->add_option("--new-table", command->new_table,
                  "file holding the new table bytes at the same offsets (a scratch copy)");
  sub->add_flag("--only-used", command->only_used,
                "the range is a partition: copy only the chunks its filesystem uses");
  sub->add_flag("--force", command->force,
                "move even when the destination overlaps a partition table or another partition "
                "(whose bytes the move destroys)");
  AddMoveWriteOptions(sub, &command->yes, &command->progress);
  runners[sub] = [command](Streams io) { return RunMove(*command, io); };
}

}  // namespace partalign
