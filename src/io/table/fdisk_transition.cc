// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/table/fdisk_transition.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "io/device/target.h"
#include "io/table/fdisk_table.h"
#include "io/table/table_writer.h"
#include "io/util/unique_fd.h"
#include "partalign/layout/planner.h"
#include "partalign/topology/alignment.h"

namespace partalign {
namespace {

Status CopyAreas(int from, const std::string& from_path, int to, const PartitionTable& table) {
  for (const TableArea& a : table.areas) {
    uint64_t start = AlignDown(a.offset_bytes, table.sector_size);
    uint64_t end = AlignUp(a.offset_bytes + a.size_bytes, table.sector_size);
    Result<std::vector<uint8_t>> bytes = ReadExactly(from, from_path, start, end - start);
    if (!bytes) return bytes.error();
    TableRange copy{TableAreaRole::kMbr, start, end - start, 0, 0, {}, std::move(*bytes)};
    if (Status s = WriteTableRanges(to, "scratch copy", table.sector_size, {copy}); !s) return s;
  }
  return {};
}

bool Inside(const TableTransition& t, uint64_t offset) {
  return std::any_of(t.ranges.begin(), t.ranges.end(), [&](const TableRange& r) {
    return offset >= r.offset_bytes && offset < r.offset_bytes + r.length_bytes;
  });
}

// Every byte libfdisk may have written lies in a range of the transition: the scratch copy
// started all zero except the old table's sectors, so a non-zero byte anywhere else means
// libfdisk wrote somewhere the transition does not know about (and would not back up).
Status CheckScratchWrites(int fd, uint64_t size, const TableTransition& t) {
  off_t pos = 0;
  std::vector<uint8_t> buffer;
  while (static_cast<uint64_t>(pos) < size) {
    off_t data = ::lseek(fd, pos, SEEK_DATA);
    if (data < 0) {
      if (errno == ENXIO) break;  // no data after pos
      return ErrnoError(errno, "cannot scan the scratch copy");
    }
    off_t hole = ::lseek(fd, data, SEEK_HOLE);
    if (hole < 0) return ErrnoError(errno, "cannot scan the scratch copy");
    Result<std::vector<uint8_t>> bytes = ReadExactly(
        fd, "scratch copy", static_cast<uint64_t>(data), static_cast<uint64_t>(hole - data));
    if (!bytes) return bytes.error();
    for (size_t i = 0; i < bytes->size(); ++i) {
      uint64_t offset = static_cast<uint64_t>(data) + i;
      if ((*bytes)[i] != 0 && !Inside(t, offset)) {
        return MakeError(fmt::format(
            "libfdisk wrote outside the partition-table areas (byte {}); refusing to use it",
            offset));
      }
    }
    pos = hole;
  }
  return {};
}

// Whether any byte of `r` lies in a partition of `table`.
bool InsidePartition(const PartitionTable& table, const TableRange& r) {
  const uint64_t first = r.offset_bytes / table.sector_size;
  const uint64_t last = (r.offset_bytes + r.length_bytes - 1) / table.sector_size;
  return std::any_of(table.partitions.begin(), table.partitions.end(), [&](const Partition& p) {
    return p.kind != PartitionKind::kExtended && first <= p.end_sector() && last >= p.start_sector;
  });
}

// ComputeTableTransition, keeping the scratch copy (the new table) in `*keep` when given.
Result<ComputedTransition> Compute(const std::string& path, uint64_t sector_size,
                                   const std::vector<ScriptEdit>& edits, UniqueFd* keep) {
  ComputedTransition out;
  Result<TableRead> old_read =
      ReadPartitionTable(path, {.sector_size = sector_size, .probe_contents = true});
  if (!old_read) return old_read.error();
  out.old_table = std::move(old_read->table);
  const PartitionTable& old_table = out.old_table;
  if (Status s = CheckChangeable(old_table); !s) {
    return MakeError(fmt::format("'{}': {}", path, s.error().message));
  }
  if (old_table.label != LabelType::kGpt && old_table.label != LabelType::kDos) {
    return MakeError(fmt::format("'{}' has no GPT or DOS partition table (found: {})", path,
                                 ToString(old_table.label)));
  }
  const WriteScriptOptions script_options{.sector_size = sector_size};
  Result<std::string> old_script = DumpSfdiskScript(path, script_options);
  if (!old_script) return old_script.error();
  // A GPT copied onto a bigger disk: libfdisk puts the backup at the end when it writes; the
  // usable area grows with it (BackupRelocationFor: the plan's "relocate_backup_gpt" step).
  const std::optional<BackupGptRelocation> relocation = BackupRelocationFor(old_table);
  std::vector<ScriptHeader> headers;
  if (relocation) {
    headers.push_back({"last-lba", std::to_string(relocation->new_last_usable_lba)});
  }
  Result<std::string> new_script = DumpSfdiskScript(path, script_options, edits, headers);
  if (!new_script) return new_script.error();
  out.old_script = std::move(*old_script);
  out.new_script = std::move(*new_script);

  Result<Target> disk = OpenTarget(path);
  if (!disk) return disk.error();
  const uint64_t size = disk->size_bytes;
  Result<UniqueFd> scratch = CreateScratchDisk(size);
  if (!scratch) return scratch.error();
  if (Status s = CopyAreas(disk->fd.get(), path, scratch->get(), old_table); !s) return s.error();

  // libfdisk opens paths; /proc/self/fd/N reopens the memfd itself.
  const std::string scratch_path = fmt::format("/proc/self/fd/{}", scratch->get());
  Result<std::vector<std::string>> written =
      WriteSfdiskScript(scratch_path, out.new_script, script_options);
  if (!written) {
    return MakeError(
        fmt::format("libfdisk cannot make the planned table: {}", written.error().message));
  }
  out.messages = std::move(*written);
  Result<TableRead> new_read =
      ReadPartitionTable(scratch_path, {.sector_size = sector_size, .probe_contents = false});
  if (!new_read) {
    return MakeError(
        fmt::format("libfdisk cannot read back the planned table: {}", new_read.error().message));
  }
  out.new_table = std::move(new_read->table);

  Result<TableTransition> t =
      LayoutTransition(old_table.label, sector_size, size, old_table.areas, out.new_table.areas);
  if (!t) return t.error();
  for (TableRange& r : t->ranges) {
    Result<std::vector<uint8_t>> before =
        ReadExactly(disk->fd.get(), path, r.offset_bytes, r.length_bytes);
    if (!before) return before.error();
    Result<std::vector<uint8_t>> after =
        ReadExactly(scratch->get(), "scratch copy", r.offset_bytes, r.length_bytes);
    if (!after) return after.error();
    r.old_bytes = std::move(*before);
    r.new_bytes = std::move(*after);
    if (relocation && !r.new_index && !InsidePartition(out.new_table, r)) {
      // The old backup GPT, left mid-disk: zeroed, so that no reader finds a stale copy.
      r.new_bytes.assign(r.length_bytes, 0);
    }
  }
  if (Status s = CheckScratchWrites(scratch->get(), size, *t); !s) return s.error();
  if (Status s = ValidateTransition(*t); !s) return s.error();
  out.transition = std::move(*t);
  if (keep) *keep = std::move(*scratch);
  return out;
}

// Copies the bytes of `written` (earlier steps' changed ranges) that fall inside `range` over
// `bytes` (what `range` holds on the disk before any step).
void Overlay(const std::vector<TableRange>& written, const TableRange& range,
             std::vector<uint8_t>* bytes) {
  const uint64_t begin = range.offset_bytes;
  const uint64_t end = begin + range.length_bytes;
  for (const TableRange& w : written) {
    const uint64_t from = std::max(begin, w.offset_bytes);
    const uint64_t to = std::min(end, w.offset_bytes + w.length_bytes);
    if (from >= to) continue;
    std::copy(w.new_bytes.begin() + static_cast<ptrdiff_t>(from - w.offset_bytes),
              w.new_bytes.begin() + static_cast<ptrdiff_t>(to - w.offset_bytes),
              bytes->begin() + static_cast<ptrdiff_t>(from - begin));
  }
}

}  // namespace

Result<UniqueFd> CreateScratchDisk(uint64_t size_bytes) {
  UniqueFd fd(::memfd_create("partalign-scratch", MFD_CLOEXEC));
  if (!fd.valid()) return ErrnoError(errno, "cannot create the scratch copy (memfd_create)");
  if (::ftruncate(fd.get(), static_cast<off_t>(size_bytes)) != 0) {
    return ErrnoError(errno, fmt::format("cannot size the scratch copy to {} bytes", size_bytes));
  }
  return fd;
}

Result<ComputedTransition> ComputeFreshTableTransition(const std::string& path,
                                                       uint64_t sector_size,
                                                       const std::string& script) {
  ComputedTransition out;
  Result<TableRead> old_read =
      ReadPartitionTable(path, {.sector_size = sector_size, .probe_contents = true});
  if (!old_read) return old_read.error();
  out.old_table = std::move(old_read->table);
  const PartitionTable& old_table = out.old_table;
  const bool had_table = old_table.label == LabelType::kGpt || old_table.label == LabelType::kDos;
  if (had_table) {
    Result<std::string> old_script = DumpSfdiskScript(path, {.sector_size = sector_size});
    if (!old_script) return old_script.error();
    out.old_script = std::move(*old_script);
  }
  out.new_script = script;

  Result<Target> disk = OpenTarget(path);
  if (!disk) return disk.error();
  const uint64_t size = disk->size_bytes;
  Result<UniqueFd> scratch = CreateScratchDisk(size);
  if (!scratch) return scratch.error();
  // Only the first sector: its boot code survives the new label, as with sfdisk.
  Result<std::vector<uint8_t>> mbr = ReadExactly(disk->fd.get(), path, 0, sector_size);
  if (!mbr) return mbr.error();
  TableRange first{TableAreaRole::kMbr, 0, sector_size, 0, 0, {}, std::move(*mbr)};
  if (Status s = WriteTableRanges(scratch->get(), "scratch copy", sector_size, {first}); !s) {
    return s.error();
  }
  const std::string scratch_path = fmt::format("/proc/self/fd/{}", scratch->get());
  const WriteScriptOptions script_options{.sector_size = sector_size};
  Result<std::vector<std::string>> written =
      WriteSfdiskScript(scratch_path, out.new_script, script_options);
  if (!written) {
    return MakeError(
        fmt::format("libfdisk cannot make the planned table: {}", written.error().message));
  }
  out.messages = std::move(*written);
  Result<TableRead> new_read =
      ReadPartitionTable(scratch_path, {.sector_size = sector_size, .probe_contents = false});
  if (!new_read) {
    return MakeError(
        fmt::format("libfdisk cannot read back the planned table: {}", new_read.error().message));
  }
  out.new_table = std::move(new_read->table);
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  for (const Partition& p : out.new_table.partitions) {
    if (p.kind != PartitionKind::kExtended) spans.push_back({p.start_sector, p.end_sector()});
  }
  Result<TableTransition> t = FreshLayoutTransition(
      old_table.label, out.new_table.label, sector_size, size,
      had_table ? old_table.areas : std::vector<TableArea>{}, out.new_table.areas, spans);
  if (!t) return t.error();
  for (TableRange& r : t->ranges) {
    Result<std::vector<uint8_t>> before =
        ReadExactly(disk->fd.get(), path, r.offset_bytes, r.length_bytes);
    if (!before) return before.error();
    r.old_bytes = std::move(*before);
    if (r.new_index) {
      Result<std::vector<uint8_t>> after =
          ReadExactly(scratch->get(), "scratch copy", r.offset_bytes, r.length_bytes);
      if (!after) return after.error();
      r.new_bytes = std::move(*after);
    } else {
      r.new_bytes.assign(r.length_bytes, 0);  // the old table's stale areas
    }
  }
  if (Status s = CheckScratchWrites(scratch->get(), size, *t); !s) return s.error();
  if (Status s = ValidateTransition(*t); !s) return s.error();
  out.transition = std::move(*t);
  return out;
}

Result<ComputedTransition> ComputeTableTransition(const std::string& path, uint64_t sector_size,
                                                  const std::vector<ScriptEdit>& edits) {
  return Compute(path, sector_size, edits, nullptr);
}

Result<std::vector<ComputedTransition>> ComputeTransitionChain(
    const std::string& path, uint64_t sector_size,
    const std::vector<std::vector<ScriptEdit>>& steps) {
  std::vector<ComputedTransition> chain;
  Result<Target> disk = OpenTarget(path);
  if (!disk) return disk.error();
  std::vector<TableRange> written;  // every range a step before this one writes
  UniqueFd previous;                // the scratch copy holding the table before this step
  for (size_t k = 0; k < steps.size(); ++k) {
    const std::string source = k == 0 ? path : fmt::format("/proc/self/fd/{}", previous.get());
    UniqueFd scratch;
    Result<ComputedTransition> step = Compute(source, sector_size, steps[k], &scratch);
    if (!step) {
      return MakeError(fmt::format("step {} of {}: {}", k + 1, steps.size(), step.error().message));
    }
    if (k > 0) {
      // The scratch copy holds the previous table's sectors only; the disk at that moment
      // holds its own bytes everywhere else, overwritten where an earlier step wrote.
      for (TableRange& r : step->transition.ranges) {
        Result<std::vector<uint8_t>> bytes =
            ReadExactly(disk->fd.get(), path, r.offset_bytes, r.length_bytes);
        if (!bytes) return bytes.error();
        Overlay(written, r, &*bytes);
        r.old_bytes = std::move(*bytes);
      }
      if (Status s = ValidateTransition(step->transition); !s) return s.error();
      // What the partitions hold travels with them (a scratch copy holds no data).
      for (Partition& p : step->old_table.partitions) {
        if (const Partition* first = chain.front().old_table.Find(p.number)) {
          p.contents = first->contents;
        }
      }
    }
    for (const TableRange& r : ChangedRanges(step->transition)) written.push_back(r);
    chain.push_back(std::move(*step));
    previous = std::move(scratch);
  }
  return chain;
}

Result<ComputedTransition> ComputeTableTranslation(const std::string& path,
                                                   const PartitionTable& old_table,
                                                   const TableTranslation& plan) {
  if (!plan.ok()) return MakeError(plan.refusals.front());
  const uint64_t from = plan.from_sector_size;
  const uint64_t to = plan.to_sector_size;
  ComputedTransition out;
  out.old_table = old_table;
  std::vector<ScriptEdit> edits;
  for (const TranslatedPartition& p : plan.partitions) {
    edits.push_back({p.number, p.new_start_sector, p.new_size_sectors});
  }
  // The numbers in the script are already in `to`-byte sectors: a sector-size header of the
  // old size would make libfdisk (2.38.1 on Debian, 2.39 upstream) recalculate them again.
  std::vector<ScriptHeader> headers{{"sector-size", std::to_string(to)}};
  if (plan.first_usable_lba)
    headers.push_back({"first-lba", std::to_string(*plan.first_usable_lba)});
  if (plan.last_usable_lba) headers.push_back({"last-lba", std::to_string(*plan.last_usable_lba)});
  const WriteScriptOptions read_options{.sector_size = from};
  Result<std::string> old_script = DumpSfdiskScript(path, read_options);
  if (!old_script) return old_script.error();
  Result<std::string> new_script = DumpSfdiskScript(path, read_options, edits, headers);
  if (!new_script) return new_script.error();
  out.old_script = std::move(*old_script);
  out.new_script = std::move(*new_script);

  Result<Target> disk = OpenTarget(path);
  if (!disk) return disk.error();
  const uint64_t size = disk->size_bytes;
  Result<UniqueFd> scratch = CreateScratchDisk(size);
  if (!scratch) return scratch.error();
  // Only the boot code (and the disk signature, which the script sets anyway): the first 512
  // bytes, which hold it at any sector size.
  constexpr uint64_t kBootSectorBytes = 512;
  Result<std::vector<uint8_t>> boot = ReadExactly(disk->fd.get(), path, 0, kBootSectorBytes);
  if (!boot) return boot.error();
  TableRange boot_copy{TableAreaRole::kMbr, 0, kBootSectorBytes, 0, 0, {}, std::move(*boot)};
  if (Status s = WriteTableRanges(scratch->get(), "scratch copy", kBootSectorBytes, {boot_copy});
      !s) {
    return s.error();
  }
  const std::string scratch_path = fmt::format("/proc/self/fd/{}", scratch->get());
  const WriteScriptOptions write_options{.sector_size = to};
  Result<std::vector<std::string>> written =
      WriteSfdiskScript(scratch_path, out.new_script, write_options);
  if (!written) {
    return MakeError(fmt::format("libfdisk cannot make the table for {}-byte sectors: {}", to,
                                 written.error().message));
  }
  out.messages = std::move(*written);
  Result<TableRead> new_read =
      ReadPartitionTable(scratch_path, {.sector_size = to, .probe_contents = false});
  if (!new_read) {
    return MakeError(fmt::format("libfdisk cannot read back the table for {}-byte sectors: {}", to,
                                 new_read.error().message));
  }
  out.new_table = std::move(new_read->table);
  Result<TableTransition> t =
      TranslationTransition(old_table.label, from, to, size, old_table.areas, out.new_table.areas);
  if (!t) return t.error();
  for (TableRange& r : t->ranges) {
    Result<std::vector<uint8_t>> before =
        ReadExactly(disk->fd.get(), path, r.offset_bytes, r.length_bytes);
    if (!before) return before.error();
    Result<std::vector<uint8_t>> after =
        ReadExactly(scratch->get(), "scratch copy", r.offset_bytes, r.length_bytes);
    if (!after) return after.error();
    r.old_bytes = std::move(*before);
    r.new_bytes = std::move(*after);
  }
  if (Status s = CheckScratchWrites(scratch->get(), size, *t); !s) return s.error();
  if (Status s = ValidateTransition(*t); !s) return s.error();
  out.transition = std::move(*t);
  return out;
}

}  // namespace partalign
