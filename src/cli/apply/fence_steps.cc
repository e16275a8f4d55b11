// SPDX-License-Identifier: GPL-3.0-or-later
// The fence of a partition moved at boot (fence_steps.h; docs/at-boot.md, "The fence").
#include "cli/apply/fence_steps.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>

#include <fmt/format.h>

#include "cli/apply/move_ui.h"
#include "cli/apply/table_write.h"
#include "io/move/journal_file.h"
#include "io/move/mover.h"
#include "io/table/backup_file.h"
#include "io/table/fdisk_table.h"
#include "io/table/table_writer.h"
#include "io/util/xxhash_digest.h"
#include "partalign/table/table_fence.h"
#include "partalign/util/shell_quote.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;

constexpr const char* kFenceCommand = "fence";

// A partition as a table read without contents shows it.
Partition WithoutContents(Partition p) {
  p.contents = {};
  return p;
}

// Runs a step that moves no data whose table updates are `ranges`' changes.
ExitCode RunTableStep(Streams io, const Target& disk, const std::vector<TableRange>& ranges,
                      const std::string& journal, const std::string& what, bool progress) {
  MoveRequest request;
  request.move = {.source_bytes = 0, .dest_bytes = 0, .length_bytes = 0};
  for (const TableRange& t : ChangedRanges({.ranges = ranges})) {
    request.table.push_back({t.offset_bytes, t.old_bytes, t.new_bytes});
  }
  request.journal_path = journal;
  request.step = what;
  std::optional<MoveStatus> status;
  const ExitCode code = RunMoveOn(
      io, disk, progress,
      [&](const Target& target, const MoverHooks& hooks) {
        return StartMove(target, request, hooks);
      },
      request.move, request.table.size(), journal, &status);
  if (code == ExitCode::kOk && status != MoveStatus::kCompleted) return ExitCode::kFailure;
  return code;
}

std::string JournalIn(const std::string& dir, const std::string& path, const std::string& what) {
  std::string disk = fs::path(path).filename().string();
  return fmt::format("{}/{}-{}-{}{}", fs::absolute(dir).lexically_normal().string(),
                     disk.empty() ? "disk" : disk, UtcTime("%Y%m%dT%H%M%SZ"), what,
                     kJournalFileSuffix);
}

// The placeholder of a logical partition's fence (PrepareFence), and its EBR's sector in
// `*ebr`. An error when there is no such sector.
Result<uint64_t> PlaceholderSector(const ComputedTransition& step, uint32_t partition,
                                   uint64_t* ebr) {
  const uint64_t ss = step.transition.sector_size;
  std::optional<uint64_t> found_ebr;
  for (const TableRange& r : step.transition.ranges) {
    if (r.role == TableAreaRole::kEbr && r.old_index && *r.old_index == partition - 5) {
      found_ebr = r.offset_bytes / ss;
    }
  }
  if (!found_ebr) {
    return MakeError(fmt::format("the table's ranges hold no EBR of partition {}", partition));
  }
  *ebr = *found_ebr;
  // Every sector something holds, and the extended partition's end in both tables.
  std::vector<std::pair<uint64_t, uint64_t>> held;  // first, last
  uint64_t extended_end = UINT64_MAX;
  for (const PartitionTable* t : {&step.old_table, &step.new_table}) {
    bool has_extended = false;
    for (const Partition& p : t->partitions) {
      if (p.kind == PartitionKind::kExtended) {
        extended_end = std::min(extended_end, p.end_sector());
        has_extended = true;
      } else {
        held.emplace_back(p.start_sector, p.end_sector());
      }
    }
    if (!has_extended) extended_end = 0;
  }
  for (const TableRange& r : step.transition.ranges) {
    held.emplace_back(r.offset_bytes / ss, (r.offset_bytes + r.length_bytes - 1) / ss);
  }
  uint64_t sector = *ebr + 1;
  for (bool moved = true; moved;) {
    moved = false;
    for (const auto& [first, last] : held) {
      if (sector >= first && sector <= last) {
        sector = last + 1;
        moved = true;
      }
    }
  }
  if (sector > extended_end || sector - *ebr > UINT32_MAX) {
    return MakeError(
        fmt::format("no free sector after the EBR of partition {} inside the "
                    "extended partition for the one-sector placeholder its fence "
                    "needs",
                    partition));
  }
  return sector;
}

}  // namespace

Result<PreparedFence> PrepareFence(const ComputedTransition& step, uint32_t partition) {
  // A logical partition keeps its entry, pointed at a one-sector placeholder (FenceTransition):
  // the first sector after its EBR that no partition of the step's tables (the move's
  // destination included) and no table area holds, inside the extended partition.
  std::optional<uint64_t> placeholder;
  uint64_t ebr = 0;
  if (step.transition.label == LabelType::kDos && partition > 4) {
    Result<uint64_t> found = PlaceholderSector(step, partition, &ebr);
    if (!found) return found.error();
    placeholder = *found;
  }
  Result<TableTransition> transition =
      FenceTransition(step.transition, partition, placeholder ? *placeholder - ebr : 1);
  if (!transition) return transition.error();
  // The fenced table as libfdisk reads it: every other partition exactly as before.
  Result<UniqueFd> scratch = CreateScratchDisk(transition->disk_size_bytes);
  if (!scratch) return scratch.error();
  if (Status s = WriteTableRanges(scratch->get(), "the fence's scratch copy",
                                  transition->sector_size, transition->ranges);
      !s) {
    return s.error();
  }
  const std::string scratch_path = fmt::format("/proc/self/fd/{}", scratch->get());
  Result<TableRead> fenced = ReadPartitionTable(
      scratch_path, {.sector_size = transition->sector_size, .probe_contents = false});
  if (!fenced) {
    return MakeError(fmt::format("libfdisk cannot read the table without partition {}: {}",
                                 partition, fenced.error().message));
  }
  std::vector<Partition> expected;
  for (const Partition& p : step.old_table.partitions) {
    if (p.number != partition) {
      expected.push_back(WithoutContents(p));
    } else if (placeholder) {
      Partition kept = WithoutContents(p);
      kept.start_sector = *placeholder;
      kept.size_sectors = 1;
      expected.push_back(kept);
    }
  }
  std::vector<Partition> got;
  for (const Partition& p : fenced->table.partitions) got.push_back(WithoutContents(p));
  if (got != expected || fenced->table.label != step.old_table.label) {
    return MakeError(
        fmt::format("the fenced table does not read back as the table with partition {} "
                    "fenced and every other partition as it was ({} partitions instead of {})",
                    partition, got.size(), expected.size()));
  }
  return PreparedFence{partition, std::move(*transition), fenced->table.fingerprint};
}

std::vector<TableUpdate> UpdatesAfterFence(std::vector<TableUpdate> updates,
                                           const PreparedFence& fence) {
  std::vector<TableUpdate> after;
  for (const TableRange& r : ChangedRanges(fence.transition)) {
    auto it = std::find_if(updates.begin(), updates.end(), [&](const TableUpdate& u) {
      return !u.in_data && u.offset_bytes == r.offset_bytes && u.old_bytes == r.old_bytes;
    });
    if (it != updates.end()) {
      it->old_bytes = r.new_bytes;
    } else {
      // A sector the step leaves as it is (the old place of an EBR that moves): given back its
      // bytes once the step's table is written, as the step without a fence leaves it.
      after.push_back({r.offset_bytes, r.new_bytes, r.old_bytes});
    }
  }
  updates.insert(updates.end(), after.begin(), after.end());
  return updates;
}

ExitCode WriteFence(Streams io, const Target& disk, const DeviceInfo& device,
                    const ComputedTransition& step, const PreparedFence& fence,
                    const std::string& backup_dir, const std::string& journal, bool progress) {
  const TableBackup backup =
      MakeBackup(kFenceCommand, device, disk, fence.transition, step.old_table.fingerprint,
                 fence.fenced_fingerprint, step.old_script, {&step.old_table});
  if (!SaveBackup(io, backup_dir, backup)) return ExitCode::kFailure;
  io.out << fmt::format(
                "Fence: partition {} leaves the table of '{}' while its data moves, so that no "
                "system booted meanwhile mounts it half moved; its move puts it back at its new "
                "place (journal '{}')\n",
                fence.partition, disk.path, journal)
         << std::flush;
  const ExitCode code =
      RunTableStep(io, disk, fence.transition.ranges, journal,
                   fmt::format("fence partition {}: its entry out of the table until its data is "
                               "at its new place",
                               fence.partition),
                   progress);
  if (code != ExitCode::kOk) return code;
  Result<TableRead> after = ReadPartitionTable(
      disk.path, {.sector_size = fence.transition.sector_size, .probe_contents = false});
  if (!after || after->table.fingerprint != fence.fenced_fingerprint) {
    PrintError(io.err,
               !after ? after.error().message
                      : fmt::format("after the fence the table of '{}' has fingerprint "
                                    "{}, expected {}",
                                    disk.path, after->table.fingerprint, fence.fenced_fingerprint));
    return ExitCode::kFailure;
  }
  return ExitCode::kOk;
}

ExitCode LiftFence(Streams io, const std::string& path, Target* held, const std::string& backup_dir,
                   const std::string& journal_dir, bool progress) {
  const ProbeOptions options;
  Result<DeviceInfo> device = ProbeTarget(path, options);
  if (!device) {
    PrintError(io.err, device.error().message);
    return ExitCode::kFailure;
  }
  std::optional<Target> reader;
  if (!held) {
    Result<Target> opened = OpenTarget(path);
    if (!opened) {
      PrintError(io.err, opened.error().message);
      return ExitCode::kFailure;
    }
    reader = std::move(*opened);
  }
  const Target& looked = held ? *held : *reader;
  const uint64_t sector_size = device->topology.logical_sector_size;
  Result<TableRead> table =
      ReadPartitionTable(path, {.sector_size = sector_size, .probe_contents = false});
  if (!table) return ExitCode::kOk;  // no fence of ours: a fenced table reads back
  // The newest fence whose table the disk holds, every range byte for byte.
  std::optional<TableBackup> fence;
  for (TableBackup& b : FindDiskBackups(backup_dir, BackupDeviceOf(*device, looked))) {
    if (b.command != kFenceCommand || b.applied_table_fingerprint != table->table.fingerprint) {
      continue;
    }
    Result<std::vector<std::vector<uint8_t>>> now = ReadBackupRangesNow(looked.fd.get(), path, b);
    bool holds = static_cast<bool>(now);
    for (size_t i = 0; holds && i < b.ranges.size(); ++i) {
      holds = Xxh64Hex((*now)[i].data(), (*now)[i].size()) == b.ranges[i].applied_xxh64;
    }
    if (holds && (!fence || b.created >= fence->created)) fence = std::move(b);
  }
  if (!fence) return ExitCode::kOk;

  std::optional<Target> acquired;
  if (!held) {
    reader.reset();  // closed before the disk is opened for writing
    ExitCode code = ExitCode::kOk;
    WriteScope scope;
    scope.whole_disk = false;
    for (const BackupRange& r : fence->ranges) {
      scope.bytes.push_back({r.offset_bytes, r.length_bytes});
    }
    acquired = AcquireForWrite(io, path, &code, {journal_dir}, scope);
    if (!acquired) return code;
  } else {
    Result<JournalDevice> id = DescribeMoveDevice(*held);
    Result<std::vector<RegisteredJournal>> unfinished =
        id ? FindUnfinishedJournals(*id, {journal_dir})
           : Result<std::vector<RegisteredJournal>>(id.error());
    if (!unfinished || !unfinished->empty()) {
      // The move under the fence is unfinished: the fence stays until it is resumed.
      return ExitCode::kOk;
    }
  }
  Target& disk = held ? *held : *acquired;
  // Read again now that the disk is held: the restore of the fence's backup.
  Result<std::vector<std::vector<uint8_t>>> now = ReadBackupRangesNow(disk.fd.get(), path, *fence);
  Result<TableTransition> lift =
      now ? RestoreTransition(*fence, *now) : Result<TableTransition>(now.error());
  if (!lift) {
    PrintError(io.err, fmt::format("the fence's backup of '{}': {}", path, lift.error().message));
    return ExitCode::kFailure;
  }
  io.out << fmt::format(
                "Fence: the table of '{}' is the fence an earlier run wrote (backup of {}), with "
                "no move under it: the data is at its old place; the table is put back as it "
                "was\n",
                path, fence->created)
         << std::flush;
  std::error_code ec;
  fs::create_directories(journal_dir, ec);
  const ExitCode code =
      RunTableStep(io, disk, lift->ranges, JournalIn(journal_dir, path, "lift-fence"),
                   "lift a fence: the table as it was before it", progress);
  if (code != ExitCode::kOk) return code;
  Result<TableRead> after =
      ReadPartitionTable(path, {.sector_size = sector_size, .probe_contents = false});
  if (!after || after->table.fingerprint != fence->table_fingerprint) {
    PrintError(io.err, !after
                           ? after.error().message
                           : fmt::format("after lifting the fence the table of '{}' has "
                                         "fingerprint {}, expected {}",
                                         path, after->table.fingerprint, fence->table_fingerprint));
    return ExitCode::kFailure;
  }
  // The fenced partition: out of the fenced table, or (a logical one) at its placeholder there.
  for (const Partition& p : after->table.partitions) {
    const Partition* fenced = table->table.Find(p.number);
    if (!fenced || fenced->start_sector != p.start_sector ||
        fenced->size_sectors != p.size_sectors) {
      io.out << fmt::format("Fence lifted: partition {} is back in the table of '{}'\n", p.number,
                            path);
    }
  }
  if (!UpdateKernel(io, disk, after->table)) return ExitCode::kFailure;
  return ExitCode::kOk;
}

}  // namespace partalign
