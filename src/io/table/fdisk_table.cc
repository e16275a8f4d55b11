// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/table/fdisk_table.h"

#include <libfdisk.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include <fmt/format.h>

#include "io/device/blkid_probe.h"
#include "io/device/sysfs_identity.h"
#include "io/device/target.h"
#include "io/label/table_gate.h"
#include "io/table/fdisk_messages.h"
#include "io/util/c_handle.h"
#include "io/util/xxhash_digest.h"
#include "partalign/label/table_scan.h"
#include "partalign/util/checked_math.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

using FdiskTable = CHandle<fdisk_unref_table, fdisk_table*>;
using FdiskIter = CHandle<fdisk_free_iter, fdisk_iter*>;

// When there is no table, the fingerprint covers where one would be written.
constexpr uint64_t kNoLabelFingerprintBytes = kMiB;

std::string TakeString(char* s) {
  std::string value = s ? s : "";
  std::free(s);
  return value;
}

LabelType LabelOf(fdisk_context* cxt) {
  if (!fdisk_has_label(cxt)) return LabelType::kNone;
  if (fdisk_is_label(cxt, GPT)) return LabelType::kGpt;
  if (fdisk_is_label(cxt, DOS)) return LabelType::kDos;
  return LabelType::kOther;
}

Partition ToPartition(fdisk_partition* pa, LabelType label) {
  Partition p;
  p.number = static_cast<uint32_t>(fdisk_partition_get_partno(pa) + 1);
  p.start_sector = fdisk_partition_get_start(pa);
  p.size_sectors = fdisk_partition_get_size(pa);
  if (fdisk_partition_is_container(pa)) {
    p.kind = PartitionKind::kExtended;
  } else if (fdisk_partition_is_nested(pa)) {
    p.kind = PartitionKind::kLogical;
  }
  if (fdisk_parttype* type = fdisk_partition_get_type(pa)) {
    if (label == LabelType::kGpt) {
      if (const char* guid = fdisk_parttype_get_string(type)) p.type_code = guid;
    } else {
      p.type_code = fmt::format("0x{:02x}", fdisk_parttype_get_code(type));
    }
    if (const char* name = fdisk_parttype_get_name(type)) p.type_name = name;
  }
  if (const char* name = fdisk_partition_get_name(pa)) p.name = name;
  if (const char* uuid = fdisk_partition_get_uuid(pa)) p.uuid = uuid;
  if (const char* attrs = fdisk_partition_get_attrs(pa)) p.attributes = attrs;
  p.bootable = fdisk_partition_is_bootable(pa) == 1;
  return p;
}

Status ReadPartitions(fdisk_context* cxt, LabelType label, std::vector<Partition>* out) {
  fdisk_table* raw = nullptr;
  if (int rc = fdisk_get_partitions(cxt, &raw); rc < 0) {
    return ErrnoError(rc, "cannot list partitions");
  }
  FdiskTable table(raw);
  FdiskIter iter(fdisk_new_iter(FDISK_ITER_FORWARD));
  fdisk_partition* pa = nullptr;
  while (fdisk_table_next_partition(table.get(), iter.get(), &pa) == 0) {
    if (!fdisk_partition_has_start(pa) || !fdisk_partition_has_size(pa)) continue;
    out->push_back(ToPartition(pa, label));
  }
  std::sort(out->begin(), out->end(),
            [](const Partition& a, const Partition& b) { return a.number < b.number; });
  return {};
}

Status ReadFreeRegions(fdisk_context* cxt, std::vector<FreeRegion>* out) {
  fdisk_table* raw = nullptr;
  if (int rc = fdisk_get_freespaces(cxt, &raw); rc < 0) {
    return ErrnoError(rc, "cannot list free space");
  }
  FdiskTable table(raw);
  FdiskIter iter(fdisk_new_iter(FDISK_ITER_FORWARD));
  fdisk_partition* pa = nullptr;
  while (fdisk_table_next_partition(table.get(), iter.get(), &pa) == 0) {
    if (!fdisk_partition_has_start(pa) || !fdisk_partition_has_size(pa)) continue;
    out->push_back({fdisk_partition_get_start(pa), fdisk_partition_get_size(pa)});
  }
  return {};
}

std::vector<TableArea> LocateAreas(fdisk_context* cxt) {
  std::vector<TableArea> areas;
  for (int n = 0;; ++n) {
    const char* name = nullptr;
    uint64_t offset = 0;
    size_t size = 0;
    if (fdisk_locate_disklabel(cxt, n, &name, &offset, &size) != 0) break;
    areas.push_back({name ? name : "", offset, size});
  }
  return areas;
}

// The libfdisk read proper: label, usable area, disk identifier, partitions, free regions and
// the areas holding the table. Runs only after the gate (ReadPartitionTable).
Status ReadWithLibfdisk(const std::string& path, const ReadTableOptions& options,
                        TableRead* result) {
  FdiskContext cxt(fdisk_new_context());
  if (!cxt) return ErrnoError(ENOMEM, "fdisk_new_context");
  fdisk_set_ask(cxt.get(), RecordFdiskMessages, &result->warnings);
  if (options.sector_size) {
    auto ss = static_cast<unsigned>(*options.sector_size);
    if (int rc = fdisk_save_user_sector_size(cxt.get(), ss, ss); rc < 0) {
      return ErrnoError(rc, fmt::format("cannot use sector size {}", ss));
    }
  }
  if (int rc = fdisk_assign_device(cxt.get(), path.c_str(), /*readonly=*/1); rc < 0) {
    return ErrnoError(rc, fmt::format("libfdisk cannot read '{}'", path));
  }
  PartitionTable& table = result->table;
  table.label = LabelOf(cxt.get());
  table.sector_size = fdisk_get_sector_size(cxt.get());
  table.disk_size_sectors = fdisk_get_nsectors(cxt.get());
  if (table.label == LabelType::kNone) return {};
  table.first_usable_lba = fdisk_get_first_lba(cxt.get());
  table.last_usable_lba = fdisk_get_last_lba(cxt.get());
  char* id = nullptr;
  if (fdisk_get_disklabel_id(cxt.get(), &id) == 0) table.disk_id = TakeString(id);
  if (Status s = ReadPartitions(cxt.get(), table.label, &table.partitions); !s) {
    return MakeError(fmt::format("'{}': {}", path, s.error().message));
  }
  // fdisk_get_freespaces() computes `last_lba - 1` unsigned: on a one-sector disk (last LBA 0)
  // that wraps and new_freespace() aborts on assert(end) (libfdisk/src/table.c, 2.38). Such a
  // disk has no free space anyway.
  if (table.last_usable_lba > table.first_usable_lba) {
    if (Status s = ReadFreeRegions(cxt.get(), &table.free_regions); !s) {
      return MakeError(fmt::format("'{}': {}", path, s.error().message));
    }
  }
  table.areas = LocateAreas(cxt.get());
  return {};
}

// What libblkid finds in each partition of `table` on the open `fd` (the extended partition left
// out), all of them probed together (ProbePartitionsContents).
Status ProbeContents(int fd, const std::string& path, PartitionTable* table) {
  std::vector<ByteRange> ranges;
  std::vector<Partition*> probed;
  for (Partition& p : table->partitions) {
    if (p.kind == PartitionKind::kExtended) continue;
    // Inside the disk (the scan checked every extent), so neither product wraps.
    std::optional<uint64_t> offset = LbaToBytes(p.start_sector, table->sector_size);
    std::optional<uint64_t> length = LbaToBytes(p.size_sectors, table->sector_size);
    if (!offset || !length) {
      return MakeError(fmt::format("'{}': partition {} lies beyond 2^64 bytes", path, p.number));
    }
    ranges.push_back({*offset, *length});
    probed.push_back(&p);
  }
  Result<std::vector<PartitionContents>> contents = ProbePartitionsContents(fd, path, ranges);
  if (!contents) return contents.error();
  for (size_t i = 0; i < probed.size(); ++i) probed[i]->contents = std::move((*contents)[i]);
  return {};
}

}  // namespace

Result<std::string> FingerprintAreas(int fd, const std::string& path,
                                     const std::vector<TableArea>& areas) {
  Xxh64Digest digest;
  std::vector<char> buffer;
  for (const TableArea& area : areas) {
    buffer.resize(area.size_bytes);
    Result<size_t> got = ReadAt(fd, buffer.data(), buffer.size(), area.offset_bytes, path);
    if (!got) return got.error();
    if (*got != area.size_bytes) {
      return MakeError(
          fmt::format("'{}' ends inside the {} at byte {}", path, area.name, area.offset_bytes));
    }
    digest.Update(buffer.data(), buffer.size());
  }
  return digest.Hex();
}

Result<TableRead> ReadPartitionTable(const std::string& path, const ReadTableOptions& options) {
  // Open it ourselves first, for the same errors probe gives (directory, not a device, ...).
  Result<Target> target = OpenTarget(path);
  if (!target) return target.error();
  if (!options.partition_node) {
    Result<std::optional<PartitionNode>> node = PartitionNodeOf(path);
    if (node && *node) return MakeError(PartitionNodeRefusal(**node));
  }
  const uint64_t sector_size = options.sector_size.value_or(target->logical_sector_size);

  // The validation gate: nothing below reads a table the scan cannot vouch for (libfdisk 2.38
  // aborts on some and silently drops partitions of others; docs/audit-plan.md).
  TableScan scan = ScanTarget(target->fd.get(), path, target->size_bytes, sector_size);
  if (scan.severity() == TableSeverity::kUnreadable) {
    return MakeError(
        fmt::format("'{}': {}", path, DescribeFindings(scan.findings, TableSeverity::kUnreadable)));
  }

  TableRead result;
  PartitionTable& table = result.table;
  table.findings = scan.findings;
  if (scan.label == LabelType::kNone) {
    // Nothing for libfdisk to read (and a boot sector it would misread as a DOS table).
    table.label = LabelType::kNone;
    table.sector_size = sector_size;
    table.disk_size_sectors = target->size_bytes / sector_size;
    table.areas.push_back(
        {"no label", 0, std::min<uint64_t>(kNoLabelFingerprintBytes, target->size_bytes)});
  } else if (Status s = ReadWithLibfdisk(path, options, &result); !s) {
    return s.error();
  }
  if (scan.label != LabelType::kNone) {
    std::vector<std::string> differ = ScanVersusTable(scan, table);
    if (!differ.empty()) {
      return MakeError(fmt::format(
          "'{}': libfdisk reads the partition table differently from partalign's own scan ({}{}); "
          "partalign does not use a table the two read differently",
          path, differ.front(),
          differ.size() > 1 ? fmt::format(", and {} more differences", differ.size() - 1) : ""));
    }
  }
  Result<std::string> fingerprint = FingerprintAreas(target->fd.get(), path, table.areas);
  if (!fingerprint) return fingerprint.error();
  table.fingerprint = *fingerprint;

  if (options.probe_contents) {
    if (Status s = ProbeContents(target->fd.get(), path, &table); !s) return s.error();
    result.contents_probed = true;
  }
  return result;
}

Status ProbeTableContents(const std::string& path, PartitionTable* table) {
  Result<Target> target = OpenTarget(path);
  if (!target) return target.error();
  return ProbeContents(target->fd.get(), path, table);
}

}  // namespace partalign
