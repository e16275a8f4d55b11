// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer harness: the validation gate's table scanner (partalign/label/table_scan.h), which
// reads every partition table before libfdisk does, on any bytes. The input is a disk: its
// first byte picks the sector size, the next eight its size, the rest is written at byte 0 and,
// in half of the inputs, also at the end of the disk (where the backup GPT lives). Any input:
// no crash, no sanitizer report, no hang, and what the scan does not call unreadable keeps the
// promises later layers rely on: partitions inside the disk, in number order, disjoint (a
// read-only table may overlap: audit reports it, nothing changes it), one message per finding.
// The same disk's first sectors, as a GPT's or a DOS table's ranges (sector 1 as an EBR), go
// through FenceTransition (partalign/table/table_fence.h): whatever they hold, no crash, and a
// fence that is made changes nothing but the partition's entry (a logical one's start and
// size) and, on a GPT, the headers' two CRCs.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include "fuzz/fuzz_check.h"
#include "partalign/label/table_scan.h"
#include "partalign/table/table_fence.h"

namespace {

using namespace partalign;

// The range of `count` sectors at `lba` as the table on `disk` holds it (old and new bytes).
TableRange RangeAt(const SparseDisk& disk, TableAreaRole role, uint64_t lba, uint64_t count,
                   uint64_t sector_size) {
  TableRange r;
  r.role = role;
  r.offset_bytes = lba * sector_size;
  r.length_bytes = count * sector_size;
  r.old_index = 0;
  r.new_index = 0;
  r.old_bytes.resize(r.length_bytes);
  if (!disk.ReadAt(r.offset_bytes, r.old_bytes)) r.old_bytes.assign(r.length_bytes, 0);
  r.new_bytes = r.old_bytes;
  return r;
}

void FenceSectors(const SparseDisk& disk, uint64_t sector_size, uint32_t number) {
  const uint64_t sectors = disk.size_bytes() / sector_size;
  const uint64_t entry_sectors = 16384 / sector_size;
  TableTransition t;
  t.sector_size = sector_size;
  t.disk_size_bytes = disk.size_bytes();
  if (sectors >= 3 + 2 * entry_sectors) {
    t.label = LabelType::kGpt;
    t.ranges = {RangeAt(disk, TableAreaRole::kMbr, 0, 1, sector_size),
                RangeAt(disk, TableAreaRole::kGptHeader, 1, 1, sector_size),
                RangeAt(disk, TableAreaRole::kGptEntries, 2, entry_sectors, sector_size),
                RangeAt(disk, TableAreaRole::kGptBackupEntries, sectors - 1 - entry_sectors,
                        entry_sectors, sector_size),
                RangeAt(disk, TableAreaRole::kGptBackupHeader, sectors - 1, 1, sector_size)};
  } else {
    t.label = LabelType::kDos;
    // Sector 1 as the head of the logical chain: partition 5's EBR.
    t.ranges = {RangeAt(disk, TableAreaRole::kMbr, 0, 1, sector_size),
                RangeAt(disk, TableAreaRole::kEbr, 1, 1, sector_size)};
  }
  Result<TableTransition> fence = FenceTransition(t, number);
  if (!fence) {
    FUZZ_CHECK(!fence.error().message.empty());
    return;
  }
  size_t changed = 0;
  for (const TableRange& r : fence->ranges) {
    FUZZ_CHECK(r.old_bytes.size() == r.length_bytes);
    FUZZ_CHECK(r.new_bytes.size() == r.length_bytes);
    for (size_t i = 0; i < r.length_bytes; ++i) {
      if (r.old_bytes[i] == r.new_bytes[i]) continue;
      ++changed;
      const bool header =
          r.role == TableAreaRole::kGptHeader || r.role == TableAreaRole::kGptBackupHeader;
      const bool crc = (i >= 16 && i < 20) || (i >= 88 && i < 92);
      const bool entry =
          r.role == TableAreaRole::kMbr
              ? i >= 446 + 16 * (number - 1) && i < 446 + 16 * number
              : r.role == TableAreaRole::kGptEntries || r.role == TableAreaRole::kGptBackupEntries;
      // A logical partition's start and size: one sector, right after its EBR.
      const bool logical = r.role == TableAreaRole::kEbr && number == 5 && i >= 454 && i < 462;
      FUZZ_CHECK((header && crc) || entry || logical);
      FUZZ_CHECK(header || logical || r.new_bytes[i] == 0);
    }
  }
  FUZZ_CHECK(changed > 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace partalign;
  if (size < 9) return 0;
  const uint64_t sector_size = (data[0] & 1) ? 4096 : 512;
  const bool mirror_at_end = (data[0] & 2) != 0;
  uint64_t sectors = 0;
  for (int i = 1; i <= 8; ++i) sectors = (sectors << 8) | data[i];
  // From one sector to 2^40 sectors (the scanner must not care how large a disk is).
  sectors = 1 + sectors % (uint64_t{1} << 40);
  SparseDisk disk(sectors * sector_size);
  const std::span<const uint8_t> bytes(data + 9, size - 9);
  disk.Write(0, bytes);
  if (mirror_at_end && disk.size_bytes() > bytes.size()) {
    disk.Write(disk.size_bytes() - bytes.size(), bytes);
  }

  FenceSectors(disk, sector_size, data[1] % 132);

  const TableScan scan = ScanTable(disk, sector_size);
  FUZZ_CHECK(scan.sector_size == sector_size);
  FUZZ_CHECK(scan.disk_size_sectors == sectors);
  for (const TableFinding& f : scan.findings) {
    FUZZ_CHECK(!f.code.empty());
    FUZZ_CHECK(!f.message.empty());
    FUZZ_CHECK(f.message.find('\n') == std::string::npos);
  }
  if (scan.severity() == TableSeverity::kUnreadable) return 0;
  uint32_t previous_number = 0;
  for (const ScannedPartition& p : scan.partitions) {
    FUZZ_CHECK(p.number > previous_number);
    previous_number = p.number;
    FUZZ_CHECK(p.size_sectors != 0);
    FUZZ_CHECK(p.start_sector < sectors);
    FUZZ_CHECK(p.size_sectors <= sectors - p.start_sector);
  }
  if (scan.severity() == TableSeverity::kReadOnly) return 0;
  // A table plan and apply may change: its partitions (the extended one aside, which holds the
  // logical ones) are disjoint.
  for (size_t i = 0; i < scan.partitions.size(); ++i) {
    for (size_t j = i + 1; j < scan.partitions.size(); ++j) {
      const ScannedPartition& a = scan.partitions[i];
      const ScannedPartition& b = scan.partitions[j];
      if (a.kind == PartitionKind::kExtended || b.kind == PartitionKind::kExtended) continue;
      FUZZ_CHECK(a.start_sector + a.size_sectors <= b.start_sector ||
                 b.start_sector + b.size_sectors <= a.start_sector);
    }
  }
  return 0;
}
