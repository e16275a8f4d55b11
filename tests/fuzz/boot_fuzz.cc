// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer harness: the boot domain's parsers (docs/boot-records.md) on any bytes - NTFS, FAT
// and exFAT boot sectors, syslinux VBRs, GRUB's boot.img and diskboot blocklists, BSD
// disklabels, BCD device data, MountedDevices values, hive base blocks - and the whole scan of
// a small disk whose first sectors and partition heads are the input. Any input: no crash, no
// sanitizer report, and what is accepted keeps its promises: fields in the ranges the formats
// allow, a rewritten BSD label that parses again, edits whose old bytes are on the disk, of
// equal length, inside their partition.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "partalign/boot/boot_scan.h"
#include "partalign/boot/grub_boot.h"
#include "partalign/boot/nested_label.h"
#include "partalign/boot/volume_boot_sector.h"
#include "partalign/boot/windows_store.h"

namespace {

using namespace partalign;

void CheckVolume(std::span<const uint8_t> bytes) {
  if (std::optional<NtfsBootSector> n = ParseNtfsBootSector(bytes)) {
    FUZZ_CHECK(n->bytes_per_sector >= 256 && n->bytes_per_sector <= 4096);
    FUZZ_CHECK(n->number_of_sectors != 0);
  }
  if (std::optional<FatBootSector> f = ParseFatBootSector(bytes)) {
    FUZZ_CHECK(f->bytes_per_sector >= 512 && f->bytes_per_sector <= 4096);
    FUZZ_CHECK(f->type == FatType::kFat32 || f->backup_boot_sector == 0);
    FUZZ_CHECK(f->oem_name.size() <= 8);
  }
  if (std::optional<ExfatBootSector> e = ParseExfatBootSector(bytes)) {
    FUZZ_CHECK(e->bytes_per_sector >= 512 && e->bytes_per_sector <= 4096);
    (void)ExfatBootChecksum(bytes, e->bytes_per_sector);
  }
  (void)SyslinuxBootSectorName(bytes);
}

void CheckGrub(std::span<const uint8_t> bytes) {
  (void)ParseGrubBootImage(bytes);
  if (std::optional<GrubDiskboot> d = ParseGrubDiskboot(bytes)) {
    FUZZ_CHECK(!d->blocks.empty());
    uint64_t segment = 0x820;
    for (const GrubBlock& b : d->blocks) {
      FUZZ_CHECK(b.sectors != 0 && b.start_sector != 0);
      FUZZ_CHECK(b.segment == segment);
      FUZZ_CHECK(b.offset_in_sector + 12 <= 512);
      segment += uint64_t{b.sectors} * 0x20;
    }
  }
}

void CheckBsd(std::span<const uint8_t> bytes) {
  std::optional<BsdDisklabel> label = ParseBsdDisklabel(bytes);
  if (!label) return;
  FUZZ_CHECK(!label->partitions.empty() && label->partitions.size() <= 22);
  FUZZ_CHECK(label->offset_in_sector + label->size_bytes() <= bytes.size());
  const uint64_t start = label->partitions[0].offset_sectors;
  const uint64_t size = label->partitions[0].size_sectors;
  std::optional<std::vector<uint8_t>> shifted =
      ShiftBsdDisklabel(bytes, *label, start, size, start + 1985, size + 4096);
  if (!shifted) return;
  std::vector<uint8_t> sector(bytes.begin(), bytes.end());
  std::copy(shifted->begin(), shifted->end(),
            sector.begin() + static_cast<ptrdiff_t>(label->offset_in_sector));
  std::optional<BsdDisklabel> again = ParseBsdDisklabel(sector);
  FUZZ_CHECK(again && again->partitions.size() == label->partitions.size());
}

void CheckWindows(std::span<const uint8_t> bytes) {
  for (const BcdPartitionRef& r : FindBcdPartitionRefs(bytes)) {
    FUZZ_CHECK(r.offset_field + 8 <= bytes.size());
  }
  (void)ParseMountedDevice(bytes);
  (void)ParseHiveBaseBlock(bytes);
}

// A 4 MiB DOS disk: the input's first 1024 bytes are sectors 0 and 1 (boot.img, diskboot), the
// next 8 KiB partition 1's head (at 63), the rest partition 2's head (at 4063).
void CheckScan(std::span<const uint8_t> bytes, uint8_t selector) {
  SparseDisk disk(4 << 20);
  disk.Write(0, bytes.first(std::min<size_t>(bytes.size(), 1024)));
  if (bytes.size() > 1024)
    disk.Write(63 * 512, bytes.subspan(1024, std::min<size_t>(bytes.size() - 1024, 8192)));
  if (bytes.size() > 1024 + 8192) disk.Write(4063 * 512, bytes.subspan(1024 + 8192));
  BootDisk table;
  table.label = (selector & 1) ? LabelType::kGpt : LabelType::kDos;
  table.disk_id = "0x12345678";
  const char* types[] = {"0x07", "0x0C", "0x83",
                         "0xA5", "0x42", "21686148-6449-6E6F-744E-656564454649"};
  table.partitions = {{1, 63, 4000, types[(selector >> 1) % 6], "", (selector & 0x10) != 0, false},
                      {2, 4063, 4000, types[(selector >> 4) % 6], "", false, false}};
  std::vector<PartitionMove> moves;
  if (selector & 0x20) moves.push_back({1, 63, (selector & 0x40) ? 2048u : 40u, 4000, 3000});
  if (selector & 0x80) moves.push_back({2, 4063, 6144, 4000, 2000});
  Result<BootReport> report = FindBootRecords(disk, table, moves, {(selector & 4) != 0});
  FUZZ_CHECK(report);
  for (const ByteEdit& e : report->Edits()) {
    FUZZ_CHECK(e.old_bytes.size() == e.new_bytes.size() && !e.new_bytes.empty());
    FUZZ_CHECK(e.new_bytes.size() <= 4096);
    uint64_t base = 0;
    if (e.partition != 0) {
      const BootPartition* p = table.Find(e.partition);
      FUZZ_CHECK(p != nullptr);
      base = p->start_sector * 512;
      uint64_t size = p->size_sectors;
      for (const PartitionMove& m : moves) {
        if (m.number == e.partition) size = std::min(m.old_size_sectors, m.new_size_sectors);
      }
      FUZZ_CHECK(e.offset_bytes + e.new_bytes.size() <= size * 512);
    }
    std::vector<uint8_t> now(e.old_bytes.size());
    FUZZ_CHECK(disk.ReadAt(base + e.offset_bytes, now));
    FUZZ_CHECK(now == e.old_bytes);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const uint8_t selector = data[0];
  std::span<const uint8_t> bytes(data + 2, size - 2);
  switch (selector % 5) {
    case 0:
      CheckVolume(bytes);
      break;
    case 1:
      CheckGrub(bytes);
      break;
    case 2:
      CheckBsd(bytes);
      break;
    case 3:
      CheckWindows(bytes);
      break;
    default:
      CheckScan(bytes, data[1]);
      break;
  }
  return 0;
}
