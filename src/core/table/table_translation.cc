// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/table/table_translation.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "partalign/topology/alignment.h"
#include "partalign/util/checked_math.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

// A GPT is LBA 0 (protective MBR), LBA 1 (header), the entry array from LBA 2 and, at the end
// of the disk, the backup entry array and the backup header in the last LBA (UEFI 2.x 5.3).
constexpr uint64_t kTranslationGptHeaderSectors = 2;  // protective MBR + header, at either end
// fdisk_locate_disklabel() lists a GPT's areas in this order (libfdisk/src/gpt.c).
constexpr size_t kGptEntriesArea = 2;
constexpr size_t kGptAreaCount = 5;
constexpr std::array<TableAreaRole, kGptAreaCount> kGptRoles{
    TableAreaRole::kMbr, TableAreaRole::kGptHeader, TableAreaRole::kGptEntries,
    TableAreaRole::kGptBackupEntries, TableAreaRole::kGptBackupHeader};
// DOS logical partitions are numbered from 5; EBR i of the chain belongs to partition 5 + i.
constexpr uint32_t kTranslationFirstLogical = 5;

// Filesystems whose on-disk format records a sector size that must be at least the device's
// logical sector size; libblkid reports it as BLOCK_SIZE (vfat: BPB bytes per sector, xfs:
// sb_sectsize, ntfs: bytes per sector). Without it, partalign cannot tell whether they survive.
constexpr std::array<std::string_view, 4> kSectorSizeFilesystems{"vfat", "exfat", "xfs", "ntfs"};

uint64_t DivCeil(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

bool IsSectorSize(uint64_t size) { return size >= 512 && size <= 64 * kKiB && IsPowerOfTwo(size); }

// NTFS and exFAT keep their sector size in the boot sector. Windows mounts them only when it
// equals the disk's logical sector size (it shows the volume as RAW otherwise); Linux's FUSE
// drivers, ntfs-3g and exfat-fuse, read them all the same (tested here at 4096 with 512-byte
// filesystems). So the user may accept it, partition by partition (--accept N).
bool AcceptableFilesystem(const std::string& type) { return type == "ntfs" || type == "exfat"; }

// Why a filesystem with `block` bytes per block (libblkid BLOCK_SIZE) cannot be used on a disk
// with `to`-byte logical sectors, and what to do: the kernel reads and writes whole logical
// sectors, and these filesystems address their metadata in units of their own size.
std::string FilesystemRefusal(const Partition& p, uint64_t block, uint64_t from, uint64_t to) {
  const std::string& type = p.contents.fs_type;
  if (type == "ntfs" || type == "exfat") {
    const bool ntfs = type == "ntfs";
    return fmt::format(
        "partition {}: its {} boot sector says {} bytes per sector ({}), the new table is for "
        "{}-byte sectors: Windows mounts {} only when the two are the same, and shows it as RAW "
        "otherwise; Linux's {} reads it all the same (--accept {} translates the table anyway; "
        "the filesystem is not changed)",
        p.number, ntfs ? "NTFS" : "exFAT", block, ntfs ? "BytesPerSector" : "BytesPerSectorShift",
        to, ntfs ? "an NTFS volume" : "an exFAT volume", ntfs ? "ntfs-3g" : "exfat-fuse", p.number);
  }
  std::string what, driver, mkfs;
  if (type == "vfat") {
    what = fmt::format("its vfat filesystem has {}-byte sectors (boot sector: bytes per sector)",
                       block);
    driver = "Linux's vfat driver";
    mkfs = "mkfs.vfat";
  } else if (type == "xfs") {
    what = fmt::format("its XFS filesystem has {}-byte sectors (sb_sectsize)", block);
    driver = "the kernel's XFS";
    mkfs = "mkfs.xfs";
  } else if (type.rfind("ext", 0) == 0) {
    what = fmt::format("its {} filesystem has {}-byte blocks", type, block);
    driver = "the kernel's " + type + " driver";
    mkfs = "mkfs." + type;
  } else {
    what = fmt::format("its {} contents use {}-byte blocks (libblkid BLOCK_SIZE)", type, block);
    driver = "the kernel";
    mkfs = "its mkfs";
  }
  return fmt::format(
      "partition {}: {}, smaller than the {}-byte sectors of the new table: {} does not mount it "
      "on a disk with {}-byte sectors. Keep using the disk where it has {}-byte sectors, or there "
      "copy its files elsewhere and wipe it (wipefs -a on the partition), then translate and "
      "make it anew ({}) on the {}-byte disk",
      p.number, what, to, driver, to, from, mkfs, to);
}

void CheckFilesystem(const Partition& p, uint64_t from, uint64_t to,
                     const std::vector<uint32_t>& accepted, TableTranslation* t) {
  if (p.kind == PartitionKind::kExtended || p.contents.fs_type.empty()) return;
  const std::string& type = p.contents.fs_type;
  const bool accept = AcceptableFilesystem(type) &&
                      std::find(accepted.begin(), accepted.end(), p.number) != accepted.end();
  std::optional<std::string> refusal;
  if (p.contents.fs_block_size) {
    if (*p.contents.fs_block_size < to) {
      refusal = FilesystemRefusal(p, *p.contents.fs_block_size, from, to);
    }
  } else if (std::find(kSectorSizeFilesystems.begin(), kSectorSizeFilesystems.end(), type) !=
                 kSectorSizeFilesystems.end() &&
             to > 512) {
    refusal = fmt::format(
        "partition {}: libblkid does not report the sector size of its {} filesystem, so "
        "partalign cannot tell whether it can be mounted with {}-byte sectors{}",
        p.number, type, to,
        AcceptableFilesystem(type)
            ? fmt::format(" (--accept {} translates the table anyway; the filesystem is not "
                          "changed)",
                          p.number)
            : "");
  }
  if (!refusal) return;
  if (accept) {
    t->accepted.push_back(p.number);
    t->notes.push_back(fmt::format(
        "partition {}: accepted (--accept {}): its {} keeps its own sector size; Windows will "
        "not mount it on this disk, Linux's {} reads it",
        p.number, p.number, type == "ntfs" ? "NTFS" : "exFAT",
        type == "ntfs" ? "ntfs-3g" : "exfat-fuse"));
    return;
  }
  if (AcceptableFilesystem(type)) t->acceptable.push_back(p.number);
  t->refusals.push_back(std::move(*refusal));
}

// GPT: the usable area with `to`-byte sectors, keeping the old one's byte range where it can.
void PlanGptUsableArea(const PartitionTable& table, uint64_t new_disk_sectors, uint64_t to,
                       TableTranslation* t) {
  const uint64_t from = table.sector_size;
  if (table.areas.size() != kGptAreaCount) {
    t->refusals.push_back(
        fmt::format("the GPT has {} table areas, not {}", table.areas.size(), kGptAreaCount));
    return;
  }
  const uint64_t entry_bytes = table.areas[kGptEntriesArea].size_bytes;
  const uint64_t new_entry_sectors = DivCeil(entry_bytes, to);
  const uint64_t old_entry_sectors = DivCeil(entry_bytes, from);
  const uint64_t min_first = kTranslationGptHeaderSectors + new_entry_sectors;
  if (new_disk_sectors < 2 * min_first + 1) {
    t->refusals.push_back(fmt::format("the disk ({} sectors of {} bytes) is too small for a GPT",
                                      new_disk_sectors, to));
    return;
  }
  const uint64_t max_last = new_disk_sectors - 1 - 1 - new_entry_sectors;
  const std::optional<uint64_t> first_bytes = LbaToBytes(table.first_usable_lba, from);
  const std::optional<uint64_t> end_bytes = LbaToBytes(table.last_usable_lba + 1, from);
  if (!first_bytes || !end_bytes) {
    t->refusals.push_back("the GPT's usable area is beyond 2^64 bytes");
    return;
  }
  t->first_usable_lba = std::max(DivCeil(*first_bytes, to), min_first);
  // A usable area that reached as far as the old sector size allowed reaches as far as the new
  // one allows (what libfdisk and sfdisk make by default); one that stopped short keeps its end.
  const uint64_t old_max_last =
      table.disk_size_sectors >= kTranslationGptHeaderSectors + old_entry_sectors
          ? table.disk_size_sectors - 1 - 1 - old_entry_sectors
          : 0;
  if (table.last_usable_lba >= old_max_last || *end_bytes / to == 0) {
    t->last_usable_lba = max_last;
  } else {
    t->last_usable_lba = std::min(max_last, *end_bytes / to - 1);
  }
}

void PlanPartition(const Partition& p, const PartitionTable& table, uint64_t to,
                   uint64_t usable_end_bytes, const std::vector<uint32_t>& accepted,
                   TableTranslation* t) {
  const uint64_t from = table.sector_size;
  TranslatedPartition tp;
  tp.number = p.number;
  tp.kind = p.kind;
  tp.old_start_sector = p.start_sector;
  tp.old_size_sectors = p.size_sectors;
  const std::optional<uint64_t> start = LbaToBytes(p.start_sector, from);
  const std::optional<uint64_t> size = LbaToBytes(p.size_sectors, from);
  const std::optional<uint64_t> end = start && size ? CheckedAdd(*start, *size) : std::nullopt;
  if (!end) {
    t->refusals.push_back(fmt::format(
        "partition {}: its sectors lie beyond 2^64 bytes (a damaged table?)", p.number));
    return;
  }
  tp.start_bytes = *start;
  tp.size_bytes = *size;
  tp.new_start_sector = *start / to;
  tp.new_size_sectors = *size / to;
  std::vector<std::string>& refuse = t->refusals;
  const size_t refusals_before = refuse.size();
  if (*start % to != 0) {
    refuse.push_back(fmt::format(
        "partition {}: its start (sector {} of {} bytes, byte {}) is not a multiple of {} bytes: "
        "no {}-byte sector number addresses it; move it first where the disk has {}-byte "
        "sectors ('partalign plan' there puts every start on 1 MiB, a multiple of {} bytes)",
        p.number, p.start_sector, from, *start, to, to, from, to));
  }
  if (*size % to != 0) {
    refuse.push_back(fmt::format(
        "partition {}: its size ({} sectors of {} bytes, {} bytes) is not a whole number of "
        "{}-byte sectors",
        p.number, p.size_sectors, from, *size, to));
  }
  if (*end > usable_end_bytes) {
    refuse.push_back(fmt::format(
        "partition {}: it ends at byte {}, beyond the last whole {}-byte sector of the disk "
        "(byte {})",
        p.number, *end, to, usable_end_bytes));
  }
  if (refuse.size() == refusals_before && t->label == LabelType::kDos &&
      (tp.new_start_sector > kMaxDosSectors || tp.new_size_sectors > kMaxDosSectors)) {
    refuse.push_back(fmt::format(
        "partition {}: bytes {}-{} need sector numbers beyond 32 bits with {}-byte sectors, and "
        "a DOS table cannot hold them ({} at most with {}-byte sectors); convert the table to "
        "GPT first where it is read right, with {}-byte sectors (sgdisk --mbrtogpt DEVICE), "
        "then translate",
        p.number, *start, *end - 1, to, FormatSize((kMaxDosSectors + 1) * to), to, from));
  }
  if (refuse.size() == refusals_before && t->label == LabelType::kGpt && t->first_usable_lba &&
      t->last_usable_lba) {
    if (tp.new_start_sector < *t->first_usable_lba) {
      refuse.push_back(fmt::format(
          "partition {}: it starts at byte {}, inside the area a GPT with {}-byte sectors keeps "
          "for itself (the first usable byte is {})",
          p.number, *start, to, *t->first_usable_lba * to));
    } else if (tp.new_start_sector + tp.new_size_sectors - 1 > *t->last_usable_lba) {
      refuse.push_back(fmt::format(
          "partition {}: it ends at byte {}, inside the area a GPT with {}-byte sectors keeps for "
          "its backup (the last usable byte is {})",
          p.number, *end - 1, to, (*t->last_usable_lba + 1) * to - 1));
    }
  }
  CheckFilesystem(p, from, to, accepted, t);
  t->partitions.push_back(tp);
}

// DOS: the MBR and every EBR must be whole new sectors that hold no partition data.
void CheckDosAreas(const PartitionTable& table, uint64_t to, TableTranslation* t) {
  for (size_t i = 0; i < table.areas.size(); ++i) {
    const TableArea& a = table.areas[i];
    const std::string name =
        i == 0 ? std::string("MBR")
               : fmt::format("EBR of partition {}", kTranslationFirstLogical + i - 1);
    if (a.offset_bytes % to != 0) {
      t->refusals.push_back(fmt::format(
          "the {} is at byte {}, not on a {}-byte boundary: no {}-byte sector number addresses "
          "it (move the partition first, with the table read as {}-byte sectors)",
          name, a.offset_bytes, to, to, table.sector_size));
      continue;
    }
    const uint64_t begin = AlignDown(a.offset_bytes, to);
    const uint64_t end = AlignUp(a.offset_bytes + a.size_bytes, to);
    for (const Partition& p : table.partitions) {
      if (p.kind == PartitionKind::kExtended) continue;
      const uint64_t p_begin = p.start_sector * table.sector_size;
      const uint64_t p_end = p_begin + p.size_sectors * table.sector_size;
      if (begin < p_end && p_begin < end) {
        t->refusals.push_back(
            fmt::format("the {} (byte {}) shares a {}-byte sector with partition {}'s data", name,
                        a.offset_bytes, to, p.number));
      }
    }
  }
}

// --- TranslationTransition ---------------------------------------------------------------

struct Span {
  TableAreaRole role;
  uint32_t index;
  uint64_t begin;
  uint64_t end;
};

bool Touch(uint64_t a_begin, uint64_t a_end, uint64_t b_begin, uint64_t b_end) {
  return a_begin <= b_end && b_begin <= a_end;
}

Result<std::vector<Span>> Spans(LabelType label, uint64_t sector_size, uint64_t disk_size_bytes,
                                const std::vector<TableArea>& areas, std::string_view which) {
  if (label == LabelType::kGpt && areas.size() != kGptAreaCount) {
    return MakeError(
        fmt::format("the {} GPT has {} table areas, not {}", which, areas.size(), kGptAreaCount));
  }
  if (label == LabelType::kDos && areas.empty()) {
    return MakeError(fmt::format("the {} DOS table has no MBR area", which));
  }
  std::vector<Span> spans;
  for (size_t i = 0; i < areas.size(); ++i) {
    const TableArea& a = areas[i];
    Span s{};
    if (label == LabelType::kGpt) {
      s.role = kGptRoles[i];
    } else {
      s.role = i == 0 ? TableAreaRole::kMbr : TableAreaRole::kEbr;
      s.index = i == 0 ? 0 : static_cast<uint32_t>(i - 1);
    }
    const std::optional<uint64_t> end = CheckedAdd(a.offset_bytes, a.size_bytes);
    if (a.size_bytes == 0 || !end || AlignUp(*end, sector_size) > disk_size_bytes) {
      return MakeError(fmt::format("the {} table's {} at byte {} ({} bytes) is not inside the disk",
                                   which, a.name, a.offset_bytes, a.size_bytes));
    }
    s.begin = AlignDown(a.offset_bytes, sector_size);
    s.end = AlignUp(*end, sector_size);
    spans.push_back(s);
  }
  return spans;
}

// `span` minus every range of `ranges`: the pieces left, in order.
std::vector<std::pair<uint64_t, uint64_t>> Subtract(const Span& span,
                                                    const std::vector<TableRange>& ranges) {
  std::vector<std::pair<uint64_t, uint64_t>> pieces{{span.begin, span.end}};
  for (const TableRange& r : ranges) {
    const uint64_t r_end = r.offset_bytes + r.length_bytes;
    std::vector<std::pair<uint64_t, uint64_t>> next;
    for (const auto& [b, e] : pieces) {
      if (r_end <= b || e <= r.offset_bytes) {
        next.emplace_back(b, e);
        continue;
      }
      if (b < r.offset_bytes) next.emplace_back(b, r.offset_bytes);
      if (r_end < e) next.emplace_back(r_end, e);
    }
    pieces = std::move(next);
  }
  return pieces;
}

}  // namespace

TableTranslation PlanTranslation(const PartitionTable& table, uint64_t disk_size_bytes,
                                 uint64_t to_sector_size, const std::vector<uint32_t>& accepted) {
  TableTranslation t;
  t.label = table.label;
  t.from_sector_size = table.sector_size;
  t.to_sector_size = to_sector_size;
  t.disk_size_bytes = disk_size_bytes;
  if (table.label != LabelType::kGpt && table.label != LabelType::kDos) {
    t.refusals.push_back(fmt::format("the disk has no GPT or DOS partition table (found: {})",
                                     ToString(table.label)));
    return t;
  }
  if (!IsSectorSize(to_sector_size) || !IsSectorSize(table.sector_size)) {
    t.refusals.push_back(
        fmt::format("{} to {} bytes is not a translation between sector sizes "
                    "(powers of two from 512 to 65536)",
                    table.sector_size, to_sector_size));
    return t;
  }
  const uint64_t to = to_sector_size;
  const uint64_t new_disk_sectors = disk_size_bytes / to;
  const uint64_t usable_end_bytes = new_disk_sectors * to;
  if (usable_end_bytes != disk_size_bytes) {
    t.notes.push_back(fmt::format(
        "the disk's last {} bytes are not a whole {}-byte sector: nothing can address them",
        disk_size_bytes - usable_end_bytes, to));
  }
  if (table.label == LabelType::kGpt) {
    PlanGptUsableArea(table, new_disk_sectors, to, &t);
  } else {
    CheckDosAreas(table, to, &t);
  }
  for (const Partition& p : table.partitions) {
    PlanPartition(p, table, to, usable_end_bytes, accepted, &t);
  }
  return t;
}

std::vector<std::string> TranslationMismatches(const TableTranslation& translation,
                                               const PartitionTable& old_table,
                                               const PartitionTable& new_table) {
  std::vector<std::string> out;
  if (new_table.label != translation.label) {
    out.push_back(fmt::format("label {}, expected {}", ToString(new_table.label),
                              ToString(translation.label)));
    return out;
  }
  if (new_table.sector_size != translation.to_sector_size) {
    out.push_back(fmt::format("read with {}-byte sectors, expected {}", new_table.sector_size,
                              translation.to_sector_size));
  }
  if (new_table.disk_id != old_table.disk_id) {
    out.push_back(
        fmt::format("disk identifier {}, expected {}", new_table.disk_id, old_table.disk_id));
  }
  if (translation.first_usable_lba && new_table.first_usable_lba != *translation.first_usable_lba) {
    out.push_back(fmt::format("first usable LBA {}, expected {}", new_table.first_usable_lba,
                              *translation.first_usable_lba));
  }
  if (translation.last_usable_lba && new_table.last_usable_lba != *translation.last_usable_lba) {
    out.push_back(fmt::format("last usable LBA {}, expected {}", new_table.last_usable_lba,
                              *translation.last_usable_lba));
  }
  if (new_table.partitions.size() != translation.partitions.size()) {
    out.push_back(fmt::format("{} partitions, expected {}", new_table.partitions.size(),
                              translation.partitions.size()));
  }
  for (const TranslatedPartition& tp : translation.partitions) {
    const Partition* now = new_table.Find(tp.number);
    const Partition* was = old_table.Find(tp.number);
    if (!now || !was) {
      out.push_back(fmt::format("partition {} is missing", tp.number));
      continue;
    }
    auto differ = [&](std::string_view what, const auto& got, const auto& want) {
      if (got != want) {
        out.push_back(fmt::format("partition {}: {} {}, expected {}", tp.number, what, got, want));
      }
    };
    differ("start", now->start_sector, tp.new_start_sector);
    differ("size", now->size_sectors, tp.new_size_sectors);
    differ("kind", ToString(now->kind), ToString(was->kind));
    differ("type", now->type_code, was->type_code);
    differ("UUID", now->uuid, was->uuid);
    differ("name", now->name, was->name);
    differ("attributes", now->attributes, was->attributes);
    differ("boot flag", now->bootable, was->bootable);
  }
  return out;
}

Result<TableTransition> TranslationTransition(LabelType label, uint64_t from_sector_size,
                                              uint64_t to_sector_size, uint64_t disk_size_bytes,
                                              const std::vector<TableArea>& old_areas,
                                              const std::vector<TableArea>& new_areas) {
  if (label != LabelType::kGpt && label != LabelType::kDos) {
    return MakeError(
        fmt::format("cannot write a '{}' partition table (GPT and DOS only)", ToString(label)));
  }
  if (!IsSectorSize(from_sector_size) || !IsSectorSize(to_sector_size)) {
    return MakeError(
        fmt::format("{} and {} are not both sector sizes", from_sector_size, to_sector_size));
  }
  // Old areas are rounded out to whole sectors of the size the disk is written in now.
  Result<std::vector<Span>> olds = Spans(label, to_sector_size, disk_size_bytes, old_areas, "old");
  if (!olds) return olds.error();
  Result<std::vector<Span>> news = Spans(label, to_sector_size, disk_size_bytes, new_areas, "new");
  if (!news) return news.error();

  TableTransition t;
  t.label = label;
  t.sector_size = to_sector_size;
  t.disk_size_bytes = disk_size_bytes;
  for (const Span& s : *news) {
    for (const TableRange& r : t.ranges) {
      if (s.begin < r.offset_bytes + r.length_bytes && r.offset_bytes < s.end) {
        return MakeError(fmt::format("the new table's areas overlap at byte {}", s.begin));
      }
    }
    TableRange r;
    r.role = s.role;
    r.offset_bytes = s.begin;
    r.length_bytes = s.end - s.begin;
    r.new_index = s.index;
    // A range holds old table data where an old area overlaps it: the same area in its old
    // place (the MBR, an EBR the chain keeps) or, between sector sizes, any other one.
    for (const Span& o : *olds) {
      if (o.begin < s.end && s.begin < o.end && (!r.old_index || o.role == s.role)) {
        r.old_index = o.index;
      }
    }
    t.ranges.push_back(std::move(r));
  }
  const std::vector<TableRange> new_ranges = t.ranges;
  for (const Span& o : *olds) {
    for (const std::pair<uint64_t, uint64_t>& piece : Subtract(o, new_ranges)) {
      // Plain variables, not a structured binding: the lambdas below capture them, which
      // Clang accepts only from version 16 (C++20's P1091).
      const uint64_t begin = piece.first;
      const uint64_t end = piece.second;
      // What is left of an old area: part of the new range it touches (written with it, so
      // that nothing of the old table stays behind in the new one's sectors), else a range of
      // its own that only the old table uses.
      auto touching = std::find_if(t.ranges.begin(), t.ranges.end(), [&](const TableRange& r) {
        return r.new_index && Touch(begin, end, r.offset_bytes, r.offset_bytes + r.length_bytes);
      });
      if (touching != t.ranges.end()) {
        const uint64_t lo = std::min(begin, touching->offset_bytes);
        const uint64_t hi = std::max(end, touching->offset_bytes + touching->length_bytes);
        touching->offset_bytes = lo;
        touching->length_bytes = hi - lo;
        if (!touching->old_index) touching->old_index = o.index;
        continue;
      }
      auto same = std::find_if(t.ranges.begin(), t.ranges.end(), [&](const TableRange& r) {
        return !r.new_index && Touch(begin, end, r.offset_bytes, r.offset_bytes + r.length_bytes);
      });
      if (same != t.ranges.end()) {
        const uint64_t lo = std::min(begin, same->offset_bytes);
        const uint64_t hi = std::max(end, same->offset_bytes + same->length_bytes);
        same->offset_bytes = lo;
        same->length_bytes = hi - lo;
        continue;
      }
      TableRange r;
      r.role = o.role;
      r.offset_bytes = begin;
      r.length_bytes = end - begin;
      r.old_index = o.index;
      t.ranges.push_back(std::move(r));
    }
  }
  // Growing a range can make it reach another one: merged, they would be written twice.
  for (size_t i = 0; i < t.ranges.size(); ++i) {
    for (size_t j = 0; j < t.ranges.size(); ++j) {
      const TableRange& a = t.ranges[i];
      const TableRange& b = t.ranges[j];
      if (i != j && a.offset_bytes < b.offset_bytes + b.length_bytes &&
          b.offset_bytes < a.offset_bytes + a.length_bytes) {
        return MakeError(fmt::format(
            "the old and the new table's areas interleave at byte {}; partalign cannot order "
            "their writes",
            std::max(a.offset_bytes, b.offset_bytes)));
      }
    }
  }
  SortForWrite(&t);
  return t;
}

std::vector<std::string> TranslationConflicts(const TableTransition& transition,
                                              const PartitionTable& old_table,
                                              const PartitionTable& new_table) {
  std::vector<std::string> conflicts;
  for (const TableRange& r : transition.ranges) {
    if (!r.changed()) continue;
    const uint64_t r_end = r.offset_bytes + r.length_bytes;
    for (const PartitionTable* table : {&old_table, &new_table}) {
      for (const Partition& p : table->partitions) {
        if (p.kind == PartitionKind::kExtended) continue;
        const uint64_t begin = p.start_sector * table->sector_size;
        const uint64_t end = begin + p.size_sectors * table->sector_size;
        if (r.offset_bytes < end && begin < r_end) {
          conflicts.push_back(fmt::format(
              "the {} (bytes {}-{}) would overwrite partition {} (bytes {}-{}, {}-byte sectors)",
              AreaName(transition.label, r), r.offset_bytes, r_end - 1, p.number, begin, end - 1,
              table->sector_size));
        }
      }
    }
  }
  return conflicts;
}

}  // namespace partalign
