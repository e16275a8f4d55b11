// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/boot/boot_scan.h"

#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "partalign/boot/grub_boot.h"
#include "partalign/boot/nested_label.h"
#include "partalign/boot/volume_boot_sector.h"
#include "partalign/util/byte_order.h"
#include "partalign/util/checked_math.h"
#include "partalign/util/shell_quote.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

constexpr uint64_t kMaxBootSectorSize = 64 * 1024;
// Boot sectors are read 512 bytes at least: a 4Kn disk's first sector holds the same record.
constexpr uint64_t kVbrReadBytes = 512;
// syslinux's boot sector keeps the partition offset in 512-byte sectors (extlinux/main.c:
// bsBytesPerSec = SECTOR_SIZE, bsHiddenSecs = geo.start).
constexpr uint64_t kSyslinuxSectorBytes = 512;
constexpr uint64_t kExfatBootRegionSectors = 12;

// Sector ranges [first, last], in logical sectors.
struct SectorRange {
  uint64_t first = 0;
  uint64_t last = 0;
  bool Overlaps(uint64_t start, uint64_t count) const {
    return count != 0 && first < start + count && start <= last;
  }
};

struct ScanContext {
  const DiskReader& disk;
  const BootDisk& table;
  const BootScanOptions& options;
  std::map<uint32_t, PartitionMove> moves;
  uint64_t ss = 512;
  BootReport report;

  const PartitionMove* MoveOf(uint32_t number) const {
    auto it = moves.find(number);
    return it == moves.end() ? nullptr : &it->second;
  }
  bool audit() const { return moves.empty(); }
};

std::vector<uint8_t> LeBytes(uint64_t value, size_t width) {
  std::vector<uint8_t> out(width);
  for (size_t i = 0; i < width; ++i) out[i] = static_cast<uint8_t>(value >> (8 * i));
  return out;
}

Result<std::vector<uint8_t>> ReadBytes(const DiskReader& disk, uint64_t at, uint64_t count,
                                       std::string_view what) {
  std::vector<uint8_t> out(count);
  if (Status s = disk.ReadAt(at, out); !s) {
    return MakeError(fmt::format("cannot read {}: {}", what, s.error().message));
  }
  return out;
}

std::string PartitionName(uint32_t number) { return fmt::format("partition {}", number); }

// ---- filesystems that record their start: NTFS, FAT, exFAT, syslinux --------------------------

// Where a partition's record must point, and whether a record there is to be rewritten now:
// a moving partition's new start, or (no moves: audit) its present start. A partition that
// does not move while others do is only reported.
struct Target {
  uint64_t start_sector = 0;  ///< what the record should say (logical sectors)
  uint64_t usable_bytes = 0;  ///< bytes of the partition both before and after
  bool may_edit = false;
  bool moving = false;
};

Target TargetOf(const ScanContext& c, const BootPartition& p) {
  Target t;
  t.usable_bytes = p.size_sectors * c.ss;
  if (const PartitionMove* m = c.MoveOf(p.number)) {
    t.start_sector = m->new_start_sector;
    t.usable_bytes = std::min(m->old_size_sectors, m->new_size_sectors) * c.ss;
    t.may_edit = true;
    t.moving = true;
  } else {
    t.start_sector = p.start_sector;
    t.may_edit = c.audit();
  }
  return t;
}

// The record's unit is the volume's sector (`unit` bytes); nullopt when the start is not a
// whole number of them.
std::optional<uint64_t> StartInUnits(const ScanContext& c, uint64_t start_sector, uint64_t unit) {
  std::optional<uint64_t> bytes = CheckedMul(start_sector, c.ss);
  if (!bytes || unit == 0 || *bytes % unit != 0) return std::nullopt;
  return *bytes / unit;
}

// A hidden-sectors field (u32 at 0x1C) in one or two sectors of a partition: NTFS, FAT and
// syslinux share the rule, the sectors and the wording.
struct HiddenSectorsRecord {
  BootRecordKind kind;
  std::string what;  ///< "NTFS boot sector", "FAT32 boot sector (SYSLINUX)"
  uint64_t unit = 512;
  uint32_t value = 0;
  std::vector<uint64_t> sector_offsets{0};  ///< primary, then the backup when there is one
  std::string backup_note;                  ///< why there is no backup edit, if none
  /// NTFS and FAT: a start past 32 bits is refused for a bootable volume, written as 0
  /// with a warning otherwise (GParted's update_bootsector); syslinux cannot boot it at all.
  bool zero_when_too_far = true;
};

void HiddenSectorsFinding(ScanContext& c, const BootPartition& p, HiddenSectorsRecord r) {
  const Target t = TargetOf(c, p);
  BootFinding f;
  f.partition = p.number;
  f.kind = r.kind;
  const std::string copies = r.sector_offsets.size() > 1 ? ", primary and backup" : "";
  std::optional<uint64_t> want = StartInUnits(c, t.start_sector, r.unit);
  if (!want) {
    f.verdict = t.may_edit ? BootVerdict::kRefuse : BootVerdict::kNothingToDo;
    f.description = fmt::format("{}: hidden sectors {}", r.what, r.value);
    f.reason = fmt::format(
        "{} {}: the start (sector {}) is not a whole number of its {}-byte "
        "sectors",
        PartitionName(p.number), r.what, t.start_sector, r.unit);
    c.report.findings.push_back(std::move(f));
    return;
  }
  uint64_t value = *want;
  std::string warning;
  if (value > UINT32_MAX) {
    if (!r.zero_when_too_far || p.bootable) {
      f.verdict = t.may_edit ? BootVerdict::kRefuse : BootVerdict::kNothingToDo;
      f.description = fmt::format("{}: hidden sectors {}", r.what, r.value);
      f.reason = fmt::format(
          "{} {}: its start {} does not fit the 32-bit hidden sectors and the "
          "volume is bootable",
          PartitionName(p.number), r.what, value);
      c.report.findings.push_back(std::move(f));
      return;
    }
    value = 0;
    warning = fmt::format("the start {} does not fit 32 bits: written as 0 (not bootable)", *want);
  }
  if (value == r.value) {
    f.description = fmt::format("{}: hidden sectors {} = start: nothing to do", r.what, r.value);
    if (!r.backup_note.empty()) f.reason = r.backup_note;
    c.report.findings.push_back(std::move(f));
    return;
  }
  f.description = fmt::format("{}: hidden sectors {} -> {}{}", r.what, r.value, value, copies);
  if (!t.may_edit) {
    f.description = fmt::format(
        "{}: hidden sectors {}, start {}: stale (plan fixes it without "
        "moving anything)",
        r.what, r.value, value);
    c.report.findings.push_back(std::move(f));
    return;
  }
  for (uint64_t at : r.sector_offsets) {
    if (at + kHiddenSectorsOffset + 4 > t.usable_bytes) {
      f.verdict = BootVerdict::kRefuse;
      f.reason = fmt::format("{} {}: the sector at byte {} lies outside the partition's new size",
                             PartitionName(p.number), r.what, at);
      c.report.findings.push_back(std::move(f));
      return;
    }
    f.edits.push_back({p.number, at + kHiddenSectorsOffset, LeBytes(r.value, 4), LeBytes(value, 4),
                       c.MoveOf(p.number) ? p.number : 0});
  }
  f.verdict = BootVerdict::kUpdate;
  f.reason = warning;
  if (!r.backup_note.empty()) f.reason += (f.reason.empty() ? "" : "; ") + r.backup_note;
  c.report.findings.push_back(std::move(f));
}

// Adds the backup boot sector at `at` (bytes into the partition) to `r` when it is a copy of the
// primary as `hidden_of` reads it (nullopt: not such a boot sector); says why not otherwise.
template <typename HiddenOf>
Status AddBackupSector(ScanContext& c, const BootPartition& p, uint64_t base, uint64_t at,
                       uint64_t bytes_per_sector, HiddenSectorsRecord& r, HiddenOf hidden_of) {
  if (at + bytes_per_sector > p.size_sectors * c.ss) {
    r.backup_note = fmt::format("the backup boot sector (byte {}) lies outside the partition", at);
    return {};
  }
  Result<std::vector<uint8_t>> b =
      ReadBytes(c.disk, base + at, bytes_per_sector, fmt::format("{}'s backup", r.what));
  if (!b) return b.error();
  std::optional<uint32_t> hidden = hidden_of(*b);
  if (hidden && *hidden == r.value) {
    r.sector_offsets.push_back(at);
  } else {
    r.backup_note = fmt::format(
        "the backup boot sector (byte {}) is not a copy of the primary: "
        "left alone (the filesystem's checker rewrites it)",
        at);
  }
  return {};
}

Status NtfsRecord(ScanContext& c, const BootPartition& p, uint64_t base, const NtfsBootSector& ntfs,
                  std::span<const uint8_t> first) {
  HiddenSectorsRecord r{BootRecordKind::kNtfsBootSector, "NTFS boot sector", ntfs.bytes_per_sector,
                        ntfs.hidden_sectors};
  if (std::optional<std::string> name = SyslinuxBootSectorName(first)) {
    r.what += " (" + *name + ")";
  }
  // The backup boot sector: the sector after the volume, which mkntfs puts on the partition's
  // last sector (ntfs-3g layout.h: number_of_sectors excludes it).
  std::optional<uint64_t> at = CheckedMul(ntfs.number_of_sectors, ntfs.bytes_per_sector);
  if (!at) return {};
  if (Status s = AddBackupSector(c, p, base, *at, ntfs.bytes_per_sector, r,
                                 [](std::span<const uint8_t> b) -> std::optional<uint32_t> {
                                   std::optional<NtfsBootSector> n = ParseNtfsBootSector(b);
                                   if (!n) return std::nullopt;
                                   return n->hidden_sectors;
                                 });
      !s) {
    return s;
  }
  // ntfsfix and chkdsk read the alternate boot sector in the partition's last sector. After a
  // shrink (ntfsresize keeps whole clusters) the volume ends sectors before it, and the shrink
  // leaves a copy in both places (io/resize/ntfs_shrink.cc): each copy follows the move, or
  // ntfsfix finds the one it reads stale ("Checking the alternate boot sector... BAD").
  const uint64_t bps = ntfs.bytes_per_sector;
  const uint64_t partition_bytes = p.size_sectors * c.ss;
  if (bps != 0 && partition_bytes >= 2 * bps) {
    const uint64_t last = (partition_bytes / bps - 1) * bps;
    if (last > *at) {
      Result<std::vector<uint8_t>> b =
          ReadBytes(c.disk, base + last, bps, fmt::format("{}'s last sector", r.what));
      if (!b) return b.error();
      std::optional<NtfsBootSector> copy = ParseNtfsBootSector(*b);
      if (copy && copy->hidden_sectors == r.value &&
          copy->number_of_sectors == ntfs.number_of_sectors) {
        r.sector_offsets.push_back(last);
      }
    }
  }
  HiddenSectorsFinding(c, p, std::move(r));
  return {};
}

Status FatRecord(ScanContext& c, const BootPartition& p, uint64_t base, const FatBootSector& fat) {
  HiddenSectorsRecord r{BootRecordKind::kFatBootSector,
                        fmt::format("{} boot sector", ToString(fat.type)), fat.bytes_per_sector,
                        fat.hidden_sectors};
  if (fat.oem_name == "SYSLINUX" || fat.oem_name == "EXTLINUX") {
    r.what += " (" + fat.oem_name + ")";
  }
  if (fat.type == FatType::kFat32 && fat.backup_boot_sector != 0) {
    const uint64_t at = uint64_t{fat.backup_boot_sector} * fat.bytes_per_sector;
    if (Status s = AddBackupSector(c, p, base, at, fat.bytes_per_sector, r,
                                   [](std::span<const uint8_t> b) -> std::optional<uint32_t> {
                                     std::optional<FatBootSector> f = ParseFatBootSector(b);
                                     if (!f) return std::nullopt;
                                     return f->hidden_sectors;
                                   });
        !s) {
      return s;
    }
  }
  HiddenSectorsFinding(c, p, std::move(r));
  return {};
}

Status ExfatRecord(ScanContext& c, const BootPartition& p, uint64_t base,
                   const ExfatBootSector& exfat) {
  const Target t = TargetOf(c, p);
  const uint64_t bps = exfat.bytes_per_sector;
  BootFinding f;
  f.partition = p.number;
  f.kind = BootRecordKind::kExfatBootRegion;
  if (exfat.partition_offset == 0) {
    f.description =
        "exFAT boot region: PartitionOffset 0 (the specification: ignore it): nothing "
        "to do";
    c.report.findings.push_back(std::move(f));
    return {};
  }
  std::optional<uint64_t> want = StartInUnits(c, t.start_sector, bps);
  if (!want) {
    f.verdict = t.may_edit ? BootVerdict::kRefuse : BootVerdict::kNothingToDo;
    f.description = fmt::format("exFAT boot region: PartitionOffset {}", exfat.partition_offset);
    f.reason = fmt::format(
        "{} exFAT: the start (sector {}) is not a whole number of its {}-byte "
        "sectors",
        PartitionName(p.number), t.start_sector, bps);
    c.report.findings.push_back(std::move(f));
    return {};
  }
  if (*want == exfat.partition_offset) {
    f.description = fmt::format("exFAT boot region: PartitionOffset {} = start: nothing to do",
                                exfat.partition_offset);
    c.report.findings.push_back(std::move(f));
    return {};
  }
  if (!t.may_edit) {
    f.description = fmt::format(
        "exFAT boot region: PartitionOffset {}, start {}: stale (plan "
        "fixes it without moving anything)",
        exfat.partition_offset, *want);
    c.report.findings.push_back(std::move(f));
    return {};
  }
  if (2 * kExfatBootRegionSectors * bps > t.usable_bytes) {
    f.verdict = BootVerdict::kRefuse;
    f.reason = fmt::format("{} exFAT: the boot regions do not fit the partition's new size",
                           PartitionName(p.number));
    c.report.findings.push_back(std::move(f));
    return {};
  }
  Result<std::vector<uint8_t>> regions =
      ReadBytes(c.disk, base, 2 * kExfatBootRegionSectors * bps, "the exFAT boot regions");
  if (!regions) return regions.error();
  std::string copies;
  for (uint64_t region = 0; region < 2; ++region) {
    const uint64_t first = region * kExfatBootRegionSectors * bps;
    std::span<const uint8_t> old_region(regions->data() + first, kExfatBootRegionSectors * bps);
    std::optional<ExfatBootSector> boot = ParseExfatBootSector(old_region.first(bps));
    const uint32_t old_sum = ExfatBootChecksum(old_region, static_cast<uint32_t>(bps));
    std::span<const uint8_t> old_sums = old_region.subspan(11 * bps, bps);
    bool sums_ok = true;
    for (uint64_t at = 0; at < bps; at += 4) sums_ok &= Le<uint32_t>(old_sums, at) == old_sum;
    if (!boot || boot->partition_offset != exfat.partition_offset || !sums_ok) {
      if (region == 0) {
        f.verdict = BootVerdict::kRefuse;
        f.reason = fmt::format(
            "{} exFAT: the main boot region's checksum is wrong (fsck.exfat "
            "repairs it): not rewritten",
            PartitionName(p.number));
        c.report.findings.push_back(std::move(f));
        return {};
      }
      f.reason = "the backup boot region is not a valid copy of the main one: left alone";
      break;
    }
    std::vector<uint8_t> new_region(old_region.begin(), old_region.end());
    std::vector<uint8_t> offset = LeBytes(*want, 8);
    std::copy(offset.begin(), offset.end(), new_region.begin() + kExfatPartitionOffsetOffset);
    const uint32_t sum = ExfatBootChecksum(new_region, static_cast<uint32_t>(bps));
    std::vector<uint8_t> sums(bps);
    for (uint64_t at = 0; at < bps; at += 4) {
      for (int i = 0; i < 4; ++i) sums[at + i] = static_cast<uint8_t>(sum >> (8 * i));
    }
    const uint32_t cause = c.MoveOf(p.number) ? p.number : 0;
    f.edits.push_back({p.number, first + kExfatPartitionOffsetOffset,
                       LeBytes(exfat.partition_offset, 8), offset, cause});
    f.edits.push_back({p.number, first + 11 * bps,
                       std::vector<uint8_t>(old_sums.begin(), old_sums.end()), std::move(sums),
                       cause});
    copies = region == 0 ? "main" : "main and backup";
  }
  f.verdict = BootVerdict::kUpdate;
  f.description = fmt::format(
      "exFAT boot region: PartitionOffset {} -> {}, {} (boot checksums "
      "recomputed)",
      exfat.partition_offset, *want, copies);
  c.report.findings.push_back(std::move(f));
  return {};
}

// ---- GRUB on BIOS ---------------------------------------------------------------------------

// What contains a sector now: a partition's number, or 0 (outside every partition).
uint32_t ContainerOf(const BootDisk& table, uint64_t sector) {
  for (const BootPartition& p : table.partitions) {
    if (p.extended) continue;
    if (sector >= p.start_sector && sector - p.start_sector < p.size_sectors) return p.number;
  }
  return 0;
}

std::string RangesText(const std::vector<SectorRange>& ranges) {
  std::string out;
  for (const SectorRange& r : ranges) {
    if (!out.empty()) out += ", ";
    out += r.first == r.last ? fmt::format("{}", r.first) : fmt::format("{}-{}", r.first, r.last);
  }
  return out;
}

// The partition whose new place covers one of `ranges`, other than `own` (0: none).
uint32_t NewPlaceOver(const ScanContext& c, const std::vector<SectorRange>& ranges, uint32_t own) {
  for (const auto& [number, m] : c.moves) {
    if (number == own) continue;
    for (const SectorRange& r : ranges) {
      if (r.Overlaps(m.new_start_sector, m.new_size_sectors)) return number;
    }
  }
  return 0;
}

// The node of partition `number` of `disk`, as the kernel names it: a "p" between a disk name
// that ends in a digit and the number (/dev/loop0p1, /dev/nvme0n1p1, /dev/sdb1).
std::string PartitionNode(const std::string& disk, uint32_t number) {
  const bool digit = !disk.empty() && disk.back() >= '0' && disk.back() <= '9';
  return fmt::format("{}{}{}", disk, digit ? "p" : "", number);
}

// What reinstalls GRUB whose boot.img is in the MBR (`where` 0) or in partition `where`'s
// first sector, on `disk` (empty: an image, named DISK and PARTITION).
std::string GrubInstallCommand(const std::string& disk, uint32_t where) {
  if (where == 0) return "grub-install " + (disk.empty() ? "DISK" : ShellQuote(disk));
  return "grub-install --force " +
         (disk.empty() ? std::string("PARTITION") : ShellQuote(PartitionNode(disk, where)));
}

// GRUB's boot.img in `where` (0 = the MBR, else the partition's first sector).
Status GrubRecords(ScanContext& c, uint32_t where, const GrubBootImage& boot) {
  const bool legacy = boot.generation == GrubGeneration::kLegacy;
  const std::string boot_name = legacy ? "GRUB Legacy stage1" : "GRUB 2 boot.img";
  const std::string place =
      where == 0 ? "in the MBR" : fmt::format("in {}'s first sector", PartitionName(where));
  const uint64_t k = boot.next_sector;
  const uint64_t disk_sectors = c.disk.size_bytes() / c.ss;
  BootFinding f;
  f.partition = where;
  f.kind = BootRecordKind::kGrubBootImage;
  if (k == 0 || k >= disk_sectors) {
    f.description = fmt::format("{} {}: points to sector {}, outside the disk: left alone",
                                boot_name, place, k);
    c.report.findings.push_back(std::move(f));
    return {};
  }
  // Where core.img (GRUB 2) or stage2/stage1.5 (Legacy) is: sector k, and for GRUB 2 the
  // blocklist in it.
  std::vector<SectorRange> sectors{{k, k}};
  std::optional<GrubDiskboot> diskboot;
  if (!legacy) {
    Result<std::vector<uint8_t>> s =
        ReadBytes(c.disk, k * c.ss, std::max<uint64_t>(c.ss, 512), "GRUB's core.img first sector");
    if (!s) return s.error();
    diskboot = ParseGrubDiskboot(*s);
    if (!diskboot) {
      f.description = fmt::format(
          "{} {}: points to sector {}, which holds no GRUB core.img "
          "(GRUB is not installed there any more): left alone",
          boot_name, place, k);
      c.report.findings.push_back(std::move(f));
      return {};
    }
    for (const GrubBlock& b : diskboot->blocks) {
      std::optional<uint64_t> last = LastSector(b.start_sector, b.sectors);
      if (!last || *last >= disk_sectors) {
        f.description = fmt::format(
            "{} {}: core.img's blocklist names sector {} outside the disk: "
            "left alone",
            boot_name, place, b.start_sector);
        c.report.findings.push_back(std::move(f));
        return {};
      }
      sectors.push_back({b.start_sector, *last});
    }
  }
  const uint32_t container = ContainerOf(c.table, k);
  bool one_container = true;
  for (const SectorRange& r : sectors) {
    one_container &=
        ContainerOf(c.table, r.first) == container && ContainerOf(c.table, r.last) == container;
  }
  const BootPartition* holder = c.table.Find(container);
  const bool bios_boot = holder != nullptr && IsBiosBootPartition(holder->type_code);
  const std::string what = legacy ? "stage2" : "core.img";
  std::string where_core;
  if (container == 0) {
    where_core = c.table.label == LabelType::kDos
                     ? "the DOS embedding area, outside every partition"
                     : "outside every partition";
  } else if (bios_boot) {
    where_core = fmt::format("BIOS boot {}", PartitionName(container));
  } else {
    where_core = fmt::format("a file in {}'s filesystem (blocklists)", PartitionName(container));
  }
  f.description = fmt::format("{} {}: {} at sectors {} ({})", boot_name, place, what,
                              RangesText(sectors), where_core);
  if (!one_container) {
    f.description = fmt::format("{} {}: {} at sectors {} spans several partitions", boot_name,
                                place, what, RangesText(sectors));
    if (!c.moves.empty()) {
      f.verdict = BootVerdict::kRefuse;
      f.reason = fmt::format(
          "{} {}: {} spans several partitions and the gaps between them: "
          "partalign cannot tell what a move does to it",
          boot_name, place, what);
    }
    c.report.findings.push_back(std::move(f));
    return {};
  }
  // Nothing may land on it: a moved partition's new place over core.img (the embedding area
  // is never written by partalign, and must not become a partition's data either).
  if (uint32_t over = NewPlaceOver(c, sectors, container); over != 0) {
    f.verdict = BootVerdict::kRefuse;
    f.reason = fmt::format(
        "{}'s new place covers GRUB's {} (sectors {}, {}): the disk would "
        "not boot",
        PartitionName(over), what, RangesText(sectors), where_core);
    c.report.findings.push_back(std::move(f));
    return {};
  }
  const PartitionMove* m = container == 0 ? nullptr : c.MoveOf(container);
  // The boot.img that moves with its own partition (a chain-loaded GRUB) is read there.
  if (m == nullptr) {
    f.description += ": nothing to do";
    c.report.findings.push_back(std::move(f));
    return {};
  }
  // core.img moves with its partition.
  if (!bios_boot || legacy) {
    const std::string command = GrubInstallCommand(c.options.disk_device, where);
    f.description += fmt::format(": {} moves", PartitionName(container));
    if (c.options.allow_reinstall_bootloader) {
      f.reason =
          fmt::format("GRUB will not start until it is reinstalled: run '{}' after apply", command);
      f.follow_up = command;
    } else {
      f.verdict = BootVerdict::kRefuse;
      f.reason = fmt::format(
          "{} {} loads its {} from {} by absolute sectors: moving {} breaks "
          "the boot; reinstall GRUB afterwards ('{}') and pass "
          "--allow-reinstall-bootloader",
          boot_name, place, what, where_core, PartitionName(container), command);
    }
    c.report.findings.push_back(std::move(f));
    return {};
  }
  // A BIOS boot partition forced to move: every pointer into it shifts by the same delta.
  const auto delta =
      static_cast<int64_t>(m->new_start_sector) - static_cast<int64_t>(m->old_start_sector);
  auto shifted = [&](uint64_t sector) {
    return static_cast<uint64_t>(static_cast<int64_t>(sector) + delta);
  };
  for (const SectorRange& r : sectors) {
    if (r.last - holder->start_sector >= m->new_size_sectors) {
      f.verdict = BootVerdict::kRefuse;
      f.reason = fmt::format(
          "GRUB's core.img (sectors {}) does not fit the BIOS boot partition's "
          "new size",
          RangesText(sectors));
      c.report.findings.push_back(std::move(f));
      return {};
    }
  }
  // boot.img's pointer: in the MBR (partition 0) or in the first sector of the partition
  // holding boot.img (a relative offset either way).
  const uint64_t pointer_at = kGrubKernelSectorOffset;
  f.verdict = BootVerdict::kUpdate;
  f.description = fmt::format("{} {}: core.img pointer {} -> {} (BIOS boot {} moves)", boot_name,
                              place, k, shifted(k), PartitionName(container));
  f.edits.push_back({where, pointer_at, LeBytes(k, 8), LeBytes(shifted(k), 8), container});
  c.report.findings.push_back(std::move(f));

  BootFinding core;
  core.partition = container;
  core.kind = BootRecordKind::kGrubCoreImage;
  core.verdict = BootVerdict::kUpdate;
  const uint64_t diskboot_at = (k - holder->start_sector) * c.ss;
  std::string entries;
  for (const GrubBlock& b : diskboot->blocks) {
    core.edits.push_back({container, diskboot_at + b.offset_in_sector, LeBytes(b.start_sector, 8),
                          LeBytes(shifted(b.start_sector), 8), container});
    entries += fmt::format("{}{} -> {}", entries.empty() ? "" : ", ", b.start_sector,
                           shifted(b.start_sector));
  }
  core.description = fmt::format("GRUB 2 core.img in BIOS boot {}: blocklist {}",
                                 PartitionName(container), entries);
  c.report.findings.push_back(std::move(core));
  return {};
}

// ---- BSD disklabels, LDM, identity ----------------------------------------------------------

Status BsdRecord(ScanContext& c, const BootPartition& p, std::span<const uint8_t> second) {
  std::optional<BsdDisklabel> label = ParseBsdDisklabel(second);
  if (!label) return {};
  BootFinding f;
  f.partition = p.number;
  f.kind = BootRecordKind::kBsdDisklabel;
  f.description = fmt::format("BSD disklabel in DOS slice {}: {} partitions at absolute offsets",
                              p.number, label->partitions.size());
  const PartitionMove* m = c.MoveOf(p.number);
  if (m == nullptr) {
    f.description += ": nothing to do";
    c.report.findings.push_back(std::move(f));
    return {};
  }
  std::optional<std::vector<uint8_t>> shifted =
      ShiftBsdDisklabel(second, *label, m->old_start_sector, m->old_size_sectors,
                        m->new_start_sector, m->new_size_sectors);
  if (!shifted || m->new_size_sectors < 2) {
    f.verdict = BootVerdict::kRefuse;
    f.reason = fmt::format(
        "BSD disklabel in DOS slice {}: its partitions cannot be shifted to "
        "the new place (an offset past 32 bits, or one that would leave the "
        "slice)",
        p.number);
    c.report.findings.push_back(std::move(f));
    return {};
  }
  const uint64_t at = c.ss + label->offset_in_sector;
  std::vector<uint8_t> old(
      second.begin() + static_cast<ptrdiff_t>(label->offset_in_sector),
      second.begin() + static_cast<ptrdiff_t>(label->offset_in_sector + label->size_bytes()));
  f.verdict = BootVerdict::kUpdate;
  f.description = fmt::format(
      "BSD disklabel in DOS slice {}: partition offsets {} -> {}, "
      "checksum recomputed",
      p.number, m->old_start_sector, m->new_start_sector);
  f.edits.push_back({p.number, at, std::move(old), std::move(*shifted), p.number});
  c.report.findings.push_back(std::move(f));
  return {};
}

Status LdmRecord(ScanContext& c) {
  std::string why;
  for (const BootPartition& p : c.table.partitions) {
    if (IsLdmPartitionType(p.type_code)) {
      why = fmt::format("partition {} has the LDM type {}", p.number, p.type_code);
      break;
    }
  }
  if (why.empty() && c.table.label == LabelType::kDos &&
      (kLdmPrivateHeaderSector + 1) * c.ss <= c.disk.size_bytes()) {
    Result<std::vector<uint8_t>> s =
        ReadBytes(c.disk, kLdmPrivateHeaderSector * c.ss, c.ss, "sector 6 (LDM's private header)");
    if (!s) return s.error();
    if (IsLdmPrivateHeader(*s)) why = "sector 6 holds an LDM private header (PRIVHEAD)";
  }
  if (why.empty()) return {};
  BootFinding f;
  f.kind = BootRecordKind::kLdm;
  f.verdict = BootVerdict::kRefuse;
  f.description = "Windows dynamic disk (LDM): " + why;
  f.reason =
      "a Windows dynamic disk (LDM): the partitions' real extents live in the LDM "
      "database at the disk's end, which partalign does not rewrite (convert it to a basic "
      "disk in Windows first)";
  c.report.findings.push_back(std::move(f));
  return {};
}

void IdentityRecord(ScanContext& c) {
  if (c.table.disk_id.empty()) return;
  BootFinding f;
  f.kind = BootRecordKind::kDiskIdentity;
  if (c.table.label == LabelType::kGpt) {
    f.description = fmt::format(
        "GPT disk GUID {} and the partitions' unique GUIDs name them for "
        "Windows (BCD) and boot loaders: kept",
        c.table.disk_id);
  } else {
    f.description = fmt::format(
        "MBR disk signature {} names this disk's partitions (with their "
        "byte offsets) for Windows' BCD and MountedDevices: kept",
        c.table.disk_id);
  }
  c.report.findings.push_back(std::move(f));
}

void BiosBootRecords(ScanContext& c) {
  for (const BootPartition& p : c.table.partitions) {
    if (c.table.label != LabelType::kGpt || !IsBiosBootPartition(p.type_code)) continue;
    BootFinding f;
    f.partition = p.number;
    f.kind = BootRecordKind::kBiosBootPartition;
    if (c.MoveOf(p.number) == nullptr) {
      f.description = std::string(kBiosBootPartitionReason) + ": left where it is";
    } else {
      f.description =
          "BIOS boot partition moves: GRUB's pointers into it are rewritten by the "
          "same delta (or the move is refused: see the GRUB findings)";
      f.reason = std::string(kBiosBootPartitionReason);
    }
    c.report.findings.push_back(std::move(f));
  }
}

Status PartitionRecords(ScanContext& c, const BootPartition& p) {
  if (p.extended || p.size_sectors == 0) return {};
  std::optional<uint64_t> base = CheckedMul(p.start_sector, c.ss);
  if (!base) return MakeError(fmt::format("partition {}: its start wraps", p.number));
  const uint64_t part_bytes = p.size_sectors * c.ss;
  const uint64_t first_bytes = std::max(kVbrReadBytes, c.ss);
  if (part_bytes < first_bytes) return {};
  Result<std::vector<uint8_t>> first =
      ReadBytes(c.disk, *base, first_bytes, fmt::format("partition {}'s first sector", p.number));
  if (!first) return first.error();
  if (std::optional<NtfsBootSector> ntfs = ParseNtfsBootSector(*first)) {
    if (Status s = NtfsRecord(c, p, *base, *ntfs, *first); !s) return s;
  } else if (std::optional<ExfatBootSector> exfat = ParseExfatBootSector(*first)) {
    if (Status s = ExfatRecord(c, p, *base, *exfat); !s) return s;
  } else if (std::optional<FatBootSector> fat = ParseFatBootSector(*first)) {
    if (Status s = FatRecord(c, p, *base, *fat); !s) return s;
  } else if (std::optional<std::string> name = SyslinuxBootSectorName(*first)) {
    HiddenSectorsRecord r{BootRecordKind::kSyslinuxVbr, *name + " volume boot record",
                          kSyslinuxSectorBytes, *Le<uint32_t>(*first, kHiddenSectorsOffset)};
    r.zero_when_too_far = false;
    HiddenSectorsFinding(c, p, std::move(r));
  }
  if (std::optional<GrubBootImage> grub = ParseGrubBootImage(*first)) {
    if (Status s = GrubRecords(c, p.number, *grub); !s) return s;
  }
  if (c.table.label == LabelType::kDos && part_bytes >= 2 * c.ss) {
    Result<std::vector<uint8_t>> second = ReadBytes(
        c.disk, *base + c.ss, c.ss, fmt::format("partition {}'s second sector", p.number));
    if (!second) return second.error();
    if (Status s = BsdRecord(c, p, *second); !s) return s;
  }
  return {};
}

}  // namespace

Result<BootReport> FindBootRecords(const DiskReader& disk, const BootDisk& table,
                                   std::span<const PartitionMove> moves,
                                   const BootScanOptions& options) {
  if (table.sector_size < 512 || table.sector_size > kMaxBootSectorSize ||
      !IsPowerOfTwo(table.sector_size)) {
    return MakeError(
        fmt::format("sector size {} is not a power of two from 512 to 65536", table.sector_size));
  }
  ScanContext c{disk, table, options, {}, table.sector_size, {}};
  for (const BootPartition& p : table.partitions) {
    if (!CheckedMul(p.start_sector, c.ss) || !CheckedMul(p.start_sector + p.size_sectors, c.ss) ||
        p.start_sector + p.size_sectors < p.start_sector) {
      return MakeError(fmt::format("partition {}: start {} and size {} pass 2^64 bytes", p.number,
                                   p.start_sector, p.size_sectors));
    }
  }
  for (const PartitionMove& m : moves) {
    if (table.Find(m.number) == nullptr) {
      return MakeError(
          fmt::format("a move of partition {}, which the table does not have", m.number));
    }
    if (!CheckedMul(m.new_start_sector + m.new_size_sectors, c.ss) ||
        m.new_start_sector + m.new_size_sectors < m.new_start_sector ||
        !CheckedMul(m.old_start_sector + m.old_size_sectors, c.ss) ||
        m.old_start_sector + m.old_size_sectors < m.old_start_sector) {
      return MakeError(fmt::format("partition {}: the move's sectors pass 2^64 bytes", m.number));
    }
    if (!c.moves.emplace(m.number, m).second) {
      return MakeError(fmt::format("partition {} is moved twice", m.number));
    }
  }
  IdentityRecord(c);
  if (Status s = LdmRecord(c); !s) return s.error();
  if (disk.size_bytes() >= c.ss) {
    Result<std::vector<uint8_t>> mbr =
        ReadBytes(disk, 0, std::max<uint64_t>(c.ss, 512), "the disk's first sector");
    if (!mbr) return mbr.error();
    if (std::optional<GrubBootImage> grub = ParseGrubBootImage(*mbr)) {
      if (Status s = GrubRecords(c, 0, *grub); !s) return s.error();
    }
  }
  BiosBootRecords(c);
  for (const BootPartition& p : table.partitions) {
    if (Status s = PartitionRecords(c, p); !s) return s.error();
  }
  return std::move(c.report);
}

}  // namespace partalign
