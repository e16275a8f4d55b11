// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/label/table_scan.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <set>

#include <fmt/format.h>

#include "partalign/util/checked_math.h"
#include "partalign/util/crc32.h"

namespace partalign {
namespace {

// MBR and EBR (the same 512-byte layout): four 16-byte entries at byte 446, the disk
// identifier at 440, the signature 55 AA at 510. Entry: boot flag, CHS, type, CHS, start LBA
// (32-bit), sector count (32-bit).
constexpr uint64_t kMbrBytes = 512;
constexpr size_t kMbrDiskIdOffset = 440;
constexpr size_t kMbrEntriesOffset = 446;
constexpr size_t kMbrEntryBytes = 16;
constexpr uint8_t kBootFlagActive = 0x80;
constexpr uint8_t kTypeProtective = 0xEE;

// UEFI 2.x, 5.3.2 (GPT header) and 5.3.3 (entries).
constexpr std::array<uint8_t, 8> kGptSignature = {'E', 'F', 'I', ' ', 'P', 'A', 'R', 'T'};
constexpr uint64_t kGptPrimaryLba = 1;
constexpr uint32_t kGptHeaderMinBytes = 92;
// The Linux kernel reads 128-byte entries only (block/partitions/efi.c, is_gpt_valid).
constexpr uint32_t kGptEntryBytes = 128;
constexpr uint64_t kMinSectorSize = 512;
constexpr uint64_t kMaxSectorSize = 64 * 1024;

bool IsExtendedType(uint8_t type) {
  // DOS (0x05), W95 LBA (0x0F) and Linux (0x85) extended partitions, as libfdisk's IS_EXTENDED.
  return type == 0x05 || type == 0x0F || type == 0x85;
}

uint64_t ScanLe(std::span<const uint8_t> bytes, size_t offset, size_t width) {
  uint64_t value = 0;
  for (size_t i = 0; i < width; ++i) value |= static_cast<uint64_t>(bytes[offset + i]) << (8 * i);
  return value;
}

// A GUID as UEFI stores it (the first three fields little-endian), in upper case.
std::string GuidString(std::span<const uint8_t> b) {
  return fmt::format("{:08X}-{:04X}-{:04X}-{:02X}{:02X}-{:02X}{:02X}{:02X}{:02X}{:02X}{:02X}",
                     ScanLe(b, 0, 4), ScanLe(b, 4, 2), ScanLe(b, 6, 2), b[8], b[9], b[10], b[11],
                     b[12], b[13], b[14], b[15]);
}

bool AllZero(std::span<const uint8_t> b) {
  return std::all_of(b.begin(), b.end(), [](uint8_t c) { return c == 0; });
}

struct MbrEntry {
  uint8_t boot = 0;
  uint8_t type = 0;
  uint64_t start = 0;
  uint64_t count = 0;
  bool cleared = true;  ///< all 16 bytes zero: libfdisk's "cleared" entry, not a partition
};

MbrEntry ParseMbrEntry(std::span<const uint8_t> sector, size_t index) {
  std::span<const uint8_t> e =
      sector.subspan(kMbrEntriesOffset + index * kMbrEntryBytes, kMbrEntryBytes);
  MbrEntry entry;
  entry.boot = e[0];
  entry.type = e[4];
  entry.start = ScanLe(e, 8, 4);
  entry.count = ScanLe(e, 12, 4);
  entry.cleared = AllZero(e);
  return entry;
}

bool HasMbrSignature(std::span<const uint8_t> sector) {
  return sector.size() >= kMbrBytes && sector[510] == 0x55 && sector[511] == 0xAA;
}

struct GptHeader {
  uint32_t header_bytes = 0;
  uint64_t my_lba = 0;
  uint64_t alternate_lba = 0;
  uint64_t first_usable = 0;
  uint64_t last_usable = 0;
  std::string disk_guid;
  uint64_t entries_lba = 0;
  uint32_t entry_count = 0;
  uint32_t entry_bytes = 0;
  uint32_t entries_crc = 0;
  std::vector<uint8_t> entries;  ///< the entry array, when the copy is valid
};

std::string Range(uint64_t start, uint64_t end) { return fmt::format("sectors {}-{}", start, end); }

class Scanner {
 public:
  Scanner(const DiskReader& disk, uint64_t sector_size) : disk_(disk) {
    scan_.sector_size = sector_size;
  }

  TableScan Run() {
    const uint64_t ss = scan_.sector_size;
    if (ss < kMinSectorSize || ss > kMaxSectorSize || (ss & (ss - 1)) != 0) {
      Add("sector-size-invalid", TableSeverity::kUnreadable,
          fmt::format("{} is not a sector size a partition table can have", ss));
      return std::move(scan_);
    }
    scan_.disk_size_sectors = disk_.size_bytes() / ss;
    if (disk_.size_bytes() < kMbrBytes || scan_.disk_size_sectors == 0) return std::move(scan_);
    std::vector<uint8_t> mbr(kMbrBytes);
    if (Status s = disk_.ReadAt(0, mbr); !s) {
      Add("read-error", TableSeverity::kUnreadable,
          fmt::format("cannot read the first sector: {}", s.error().message));
      return std::move(scan_);
    }
    if (!HasMbrSignature(mbr)) {
      ScanWithoutMbr();
    } else {
      std::array<MbrEntry, 4> entries;
      bool protective = false;
      bool others = false;
      for (size_t i = 0; i < 4; ++i) {
        entries[i] = ParseMbrEntry(mbr, i);
        // libfdisk's valid_pmbr() and the kernel's is_pmbr_valid() look at the type byte only.
        if (entries[i].type == kTypeProtective) {
          protective = true;
        } else if (entries[i].type != 0) {
          others = true;
        }
      }
      if (protective) {
        scan_.mbr = others ? MbrKind::kHybrid : MbrKind::kProtective;
        ScanGpt(entries);
      } else {
        ScanDos(mbr, entries);
      }
    }
    if (WorstSeverity(scan_.findings) == TableSeverity::kUnreadable) scan_.partitions.clear();
    std::sort(
        scan_.partitions.begin(), scan_.partitions.end(),
        [](const ScannedPartition& a, const ScannedPartition& b) { return a.number < b.number; });
    return std::move(scan_);
  }

 private:
  void Add(std::string code, TableSeverity severity, std::string message) {
    scan_.findings.push_back({std::move(code), severity, std::move(message)});
  }

  // Reads `length` bytes at sector `lba`; nullopt (and the reason in `*why`) when they are not
  // all on the disk or cannot be read.
  std::optional<std::vector<uint8_t>> ReadSectors(uint64_t lba, uint64_t length, std::string* why) {
    std::optional<uint64_t> offset = LbaToBytes(lba, scan_.sector_size);
    std::optional<uint64_t> end = offset ? CheckedAdd(*offset, length) : std::nullopt;
    if (!end || *end > disk_.size_bytes()) {
      *why = fmt::format("sector {} is beyond the end of the disk ({} sectors)", lba,
                         scan_.disk_size_sectors);
      return std::nullopt;
    }
    std::vector<uint8_t> bytes(length);
    if (Status s = disk_.ReadAt(*offset, bytes); !s) {
      *why = s.error().message;
      return std::nullopt;
    }
    return bytes;
  }

  // --- GPT ----------------------------------------------------------------------------------

  // Reads and checks the GPT header at `lba` (`primary`: LBA 1). `*copy` says what was found;
  // the header is returned when the copy is valid.
  std::optional<GptHeader> ReadGptCopy(uint64_t lba, bool primary, GptCopy* copy) {
    const uint64_t ss = scan_.sector_size;
    const uint64_t sectors = scan_.disk_size_sectors;
    const char* which = primary ? "primary" : "backup";
    copy->header_lba = lba;
    std::string why;
    std::optional<std::vector<uint8_t>> sector = ReadSectors(lba, ss, &why);
    if (!sector) {
      copy->problem = why;
      return std::nullopt;
    }
    std::span<const uint8_t> h(*sector);
    if (!std::equal(kGptSignature.begin(), kGptSignature.end(), h.begin())) {
      copy->problem = fmt::format("no GPT header at sector {}", lba);
      return std::nullopt;
    }
    copy->present = true;
    auto invalid = [&](std::string problem) -> std::optional<GptHeader> {
      copy->problem = std::move(problem);
      return std::nullopt;
    };
    GptHeader g;
    g.header_bytes = static_cast<uint32_t>(ScanLe(h, 12, 4));
    if (g.header_bytes < kGptHeaderMinBytes || g.header_bytes > ss) {
      return invalid(fmt::format("header size {} is not between {} and the sector size {}",
                                 g.header_bytes, kGptHeaderMinBytes, ss));
    }
    const uint32_t stored_crc = static_cast<uint32_t>(ScanLe(h, 16, 4));
    std::vector<uint8_t> zeroed(h.begin(), h.begin() + g.header_bytes);
    std::fill(zeroed.begin() + 16, zeroed.begin() + 20, uint8_t{0});
    const uint32_t computed_crc = Crc32(zeroed);
    if (computed_crc != stored_crc) {
      return invalid(fmt::format("header CRC 0x{:08x} does not match its bytes (0x{:08x})",
                                 stored_crc, computed_crc));
    }
    g.my_lba = ScanLe(h, 24, 8);
    g.alternate_lba = ScanLe(h, 32, 8);
    g.first_usable = ScanLe(h, 40, 8);
    g.last_usable = ScanLe(h, 48, 8);
    g.disk_guid = GuidString(h.subspan(56, 16));
    g.entries_lba = ScanLe(h, 72, 8);
    g.entry_count = static_cast<uint32_t>(ScanLe(h, 80, 4));
    g.entry_bytes = static_cast<uint32_t>(ScanLe(h, 84, 4));
    g.entries_crc = static_cast<uint32_t>(ScanLe(h, 88, 4));

    // libfdisk reads the whole entry array as soon as the header's CRC is right, whatever its
    // size (gpt_read_entries, libfdisk/src/gpt.c): a damaged count is a read of gigabytes.
    std::optional<uint64_t> array_bytes = CheckedMul(g.entry_count, g.entry_bytes);
    if (!array_bytes || *array_bytes > kMaxGptEntryArrayBytes) {
      Add("gpt-entry-array-too-large", TableSeverity::kUnreadable,
          fmt::format("the {} GPT header claims {} entries of {} bytes; partalign reads at most "
                      "{} bytes of entries (and libfdisk would try to read them all)",
                      which, g.entry_count, g.entry_bytes, kMaxGptEntryArrayBytes));
      return invalid(fmt::format("{} entries of {} bytes", g.entry_count, g.entry_bytes));
    }
    if (g.my_lba != lba) {
      return invalid(fmt::format("it is at sector {} but says it is at sector {}", lba, g.my_lba));
    }
    if (g.entry_bytes != kGptEntryBytes) {
      return invalid(fmt::format("entry size {} bytes (the kernel reads 128-byte entries only)",
                                 g.entry_bytes));
    }
    if (g.entry_count == 0) return invalid("it has no partition entries");
    if (g.first_usable > g.last_usable) {
      return invalid(fmt::format("first usable sector {} is after the last usable sector {}",
                                 g.first_usable, g.last_usable));
    }
    if (g.last_usable >= sectors) {
      return invalid(fmt::format("last usable sector {} is beyond the disk ({} sectors)",
                                 g.last_usable, sectors));
    }
    if (lba >= g.first_usable && lba <= g.last_usable) {
      return invalid(fmt::format("the header lies inside the usable area {}",
                                 Range(g.first_usable, g.last_usable)));
    }
    const uint64_t array_sectors = (*array_bytes + ss - 1) / ss;
    std::optional<uint64_t> array_last = LastSector(g.entries_lba, array_sectors);
    if (!array_last || *array_last >= sectors) {
      return invalid(fmt::format("its entry array at sector {} ({} sectors) ends beyond the disk",
                                 g.entries_lba, array_sectors));
    }
    const bool array_placed = primary
                                  ? g.entries_lba > kGptPrimaryLba && *array_last < g.first_usable
                                  : g.entries_lba > g.last_usable && *array_last < lba;
    if (!array_placed) {
      return invalid(fmt::format(
          "its entry array ({}) overlaps the header, the usable area {} or the other copy",
          Range(g.entries_lba, *array_last), Range(g.first_usable, g.last_usable)));
    }
    std::optional<std::vector<uint8_t>> entries = ReadSectors(g.entries_lba, *array_bytes, &why);
    if (!entries) return invalid(fmt::format("cannot read its entry array: {}", why));
    const uint32_t entries_crc = Crc32(*entries);
    if (entries_crc != g.entries_crc) {
      return invalid(fmt::format("entry array CRC 0x{:08x} does not match its bytes (0x{:08x})",
                                 g.entries_crc, entries_crc));
    }
    g.entries = std::move(*entries);
    copy->valid = true;
    return g;
  }

  // The logical sector size a GPT header found at LBA 1 of another sector size was written
  // for (a disk moved between a 4K-translating USB bridge and a SATA port).
  std::optional<uint64_t> GptWrittenForOtherSectorSize() {
    for (uint64_t ss = kMinSectorSize; ss <= kMaxSectorSize; ss *= 2) {
      if (ss == scan_.sector_size || ss + 32 > disk_.size_bytes()) continue;
      std::vector<uint8_t> head(32);
      if (!disk_.ReadAt(ss, head)) continue;
      if (std::equal(kGptSignature.begin(), kGptSignature.end(), head.begin()) &&
          ScanLe(head, 24, 8) == kGptPrimaryLba) {
        return ss;
      }
    }
    return std::nullopt;
  }

  void ScanWithoutMbr() {
    GptCopy primary;
    if (ReadGptCopy(kGptPrimaryLba, /*primary=*/true, &primary)) {
      scan_.label = LabelType::kGpt;
      scan_.primary = primary;
      Add("gpt-without-protective-mbr", TableSeverity::kUnreadable,
          "the GPT header at sector 1 is valid, but sector 0 holds no protective MBR (no 55 AA "
          "signature): libfdisk, libblkid and the kernel see no partition table (gdisk rebuilds "
          "the protective MBR)");
    } else if (std::optional<uint64_t> other = GptWrittenForOtherSectorSize()) {
      scan_.label = LabelType::kGpt;
      AddOtherSectorSize(*other);
    }
  }

  void AddOtherSectorSize(uint64_t written_for) {
    Add("table-sector-size-mismatch", TableSeverity::kUnreadable,
        fmt::format("the GPT was written for {}-byte sectors (its header is at byte {}), but it "
                    "is read with {}-byte sectors: every position in it would be misread (read "
                    "it with --sector-size {})",
                    written_for, written_for, scan_.sector_size, written_for));
  }

  void CheckProtectiveMbr(const std::array<MbrEntry, 4>& entries) {
    std::vector<uint32_t> others;
    for (size_t i = 0; i < 4; ++i) {
      const MbrEntry& e = entries[i];
      if (e.type == kTypeProtective) {
        // The kernel ignores a GPT whose 0xEE entry does not start at LBA 1
        // (block/partitions/efi.c, pmbr_part_valid).
        if (e.start != kGptPrimaryLba) {
          Add("protective-mbr-invalid", TableSeverity::kReadOnly,
              fmt::format("the protective MBR's 0xEE entry starts at sector {}, not 1: the Linux "
                          "kernel ignores such a GPT",
                          e.start));
        }
        const uint64_t expected = std::min<uint64_t>(scan_.disk_size_sectors - 1, 0xFFFFFFFFu);
        if (scan_.mbr == MbrKind::kProtective && e.count != expected && e.count != 0xFFFFFFFFu) {
          Add("protective-mbr-size", TableSeverity::kNote,
              fmt::format("the protective MBR covers {} sectors, not the {} the disk has after "
                          "sector 0 (libfdisk corrects it when it writes)",
                          e.count, expected));
        }
      } else if (e.type != 0) {
        others.push_back(static_cast<uint32_t>(i + 1));
      }
    }
    if (!others.empty()) {
      Add("hybrid-mbr", TableSeverity::kReadOnly,
          fmt::format("hybrid MBR: sector 0 holds partition entries besides the protective one "
                      "(MBR entries {}); libfdisk would replace it with a plain protective MBR, "
                      "so partalign does not change this table",
                      fmt::join(others, ", ")));
    }
  }

  void ScanGpt(const std::array<MbrEntry, 4>& mbr_entries) {
    scan_.label = LabelType::kGpt;
    CheckProtectiveMbr(mbr_entries);
    const uint64_t last_lba = scan_.disk_size_sectors - 1;
    // As libfdisk (gpt_probe_label): the backup where a valid primary says, else at the end.
    std::optional<GptHeader> primary =
        ReadGptCopy(kGptPrimaryLba, /*primary=*/true, &scan_.primary);
    std::optional<GptHeader> backup;
    if (primary) {
      const uint64_t alternate = primary->alternate_lba;
      if (alternate <= kGptPrimaryLba || alternate > last_lba) {
        scan_.backup.header_lba = alternate;
        scan_.backup.problem =
            fmt::format("the primary header puts it at sector {}, outside the disk's sectors 2-{}",
                        alternate, last_lba);
      } else {
        backup = ReadGptCopy(alternate, /*primary=*/false, &scan_.backup);
      }
    } else {
      backup = ReadGptCopy(last_lba, /*primary=*/false, &scan_.backup);
    }
    if (!primary && !backup) {
      if (std::optional<uint64_t> other = GptWrittenForOtherSectorSize()) {
        AddOtherSectorSize(*other);
      } else {
        Add("gpt-invalid", TableSeverity::kUnreadable,
            fmt::format("{} MBR, but no valid GPT: primary: {}; backup: {}",
                        scan_.mbr == MbrKind::kHybrid ? "hybrid" : "protective",
                        scan_.primary.problem, scan_.backup.problem));
      }
      return;
    }
    if (!primary) {
      Add("gpt-primary-invalid", TableSeverity::kReadOnly,
          fmt::format("the primary GPT is damaged ({}); the backup at sector {} is valid and is "
                      "what libfdisk reads",
                      scan_.primary.problem, scan_.backup.header_lba));
    } else if (!backup) {
      Add("gpt-backup-invalid", TableSeverity::kReadOnly,
          fmt::format("the backup GPT is damaged ({}); the primary is valid and is what libfdisk "
                      "reads",
                      scan_.backup.problem));
    } else {
      CompareCopies(*primary, *backup);
    }
    const GptHeader& g = primary ? *primary : *backup;
    if (backup && backup->my_lba != last_lba) {
      // Sound otherwise, it is the state a copy onto a bigger disk leaves: plan offers to move
      // it (a table-only step, BackupRelocationFor); a damaged copy stays read-only above.
      Add("gpt-backup-misplaced", TableSeverity::kNote,
          fmt::format("the backup GPT header is at sector {}, but the disk ends at sector {}: a "
                      "copy of a smaller disk (or the disk grew); plan relocates the backup GPT "
                      "to the end as a table-only step",
                      backup->my_lba, last_lba));
    }
    scan_.disk_id = g.disk_guid;
    scan_.first_usable_lba = g.first_usable;
    scan_.last_usable_lba = g.last_usable;
    ReadGptEntries(g);
  }

  void CompareCopies(const GptHeader& p, const GptHeader& b) {
    std::vector<std::string> differ;
    if (p.disk_guid != b.disk_guid) differ.push_back("disk GUID");
    if (p.first_usable != b.first_usable || p.last_usable != b.last_usable) {
      differ.push_back("usable area");
    }
    if (p.entry_count != b.entry_count || p.entries != b.entries) differ.push_back("entries");
    if (b.alternate_lba != kGptPrimaryLba) differ.push_back("the backup's alternate LBA");
    if (!differ.empty()) {
      Add("gpt-copies-differ", TableSeverity::kReadOnly,
          fmt::format("the primary and backup GPT differ ({}); libfdisk reads the primary",
                      fmt::join(differ, ", ")));
    }
  }

  void ReadGptEntries(const GptHeader& g) {
    std::span<const uint8_t> all(g.entries);
    for (uint32_t i = 0; i < g.entry_count; ++i) {
      std::span<const uint8_t> e =
          all.subspan(static_cast<size_t>(i) * g.entry_bytes, g.entry_bytes);
      const uint32_t number = i + 1;
      const uint64_t start = ScanLe(e, 32, 8);
      const uint64_t end = ScanLe(e, 40, 8);
      if (AllZero(e.subspan(0, 16))) {
        // libfdisk counts an entry with a start as used even without a type (gpt_get_partition);
        // UEFI and the kernel do not.
        if (start != 0) {
          Add("gpt-entry-untyped", TableSeverity::kUnreadable,
              fmt::format("GPT entry {} has no type but starts at sector {}: libfdisk lists it as "
                          "a partition, the kernel does not",
                          number, start));
        }
        continue;
      }
      if (!CheckExtent(number, start, end, g.first_usable, g.last_usable, "usable area")) continue;
      ScannedPartition p;
      p.number = number;
      p.start_sector = start;
      p.size_sectors = end - start + 1;
      p.type_code = GuidString(e.subspan(0, 16));
      p.uuid = GuidString(e.subspan(16, 16));
      scan_.partitions.push_back(std::move(p));
    }
    CheckOverlaps(scan_.partitions);
  }

  // A partition's sectors start..end must lie in first..last (the usable area, the extended
  // partition, the disk). False after adding the finding.
  bool CheckExtent(uint32_t number, uint64_t start, uint64_t end, uint64_t first, uint64_t last,
                   std::string_view area) {
    if (end < start) {
      Add("partition-invalid", TableSeverity::kUnreadable,
          fmt::format("partition {} ends (sector {}) before it starts (sector {})", number, end,
                      start));
      return false;
    }
    if (end >= scan_.disk_size_sectors) {
      Add("partition-past-end", TableSeverity::kUnreadable,
          fmt::format("partition {} ({}) ends beyond the end of the disk ({} sectors of {} "
                      "bytes){}",
                      number, Range(start, end), scan_.disk_size_sectors, scan_.sector_size,
                      SmallerSectorHint(end)));
      return false;
    }
    if (start < first || end > last) {
      Add("partition-outside", TableSeverity::kUnreadable,
          fmt::format("partition {} ({}) lies outside the {} ({})", number, Range(start, end), area,
                      Range(first, last)));
      return false;
    }
    return true;
  }

  // ", or it was written for 512-byte sectors" when the extent would fit the disk with a
  // smaller sector size (a disk moved from a 4K-translating USB bridge to SATA).
  std::string SmallerSectorHint(uint64_t end) {
    for (uint64_t ss = kMinSectorSize; ss < scan_.sector_size; ss *= 2) {
      std::optional<uint64_t> bytes = LbaToBytes(end, ss);
      if (bytes && *bytes < disk_.size_bytes()) {
        return fmt::format(
            " (it would fit with {}-byte sectors: the table may have been written "
            "for them)",
            ss);
      }
    }
    return "";
  }

  void CheckOverlaps(std::vector<ScannedPartition> parts) {
    std::sort(parts.begin(), parts.end(), [](const ScannedPartition& a, const ScannedPartition& b) {
      return a.start_sector < b.start_sector;
    });
    for (size_t i = 1; i < parts.size(); ++i) {
      const ScannedPartition& a = parts[i - 1];
      const ScannedPartition& b = parts[i];
      const uint64_t a_end = a.start_sector + a.size_sectors - 1;
      if (b.start_sector <= a_end) {
        Add("partition-overlap", TableSeverity::kUnreadable,
            fmt::format("partitions {} ({}) and {} ({}) overlap", a.number,
                        Range(a.start_sector, a_end), b.number,
                        Range(b.start_sector, b.start_sector + b.size_sectors - 1)));
      }
    }
  }

  // --- DOS ----------------------------------------------------------------------------------

  void ScanDos(std::span<const uint8_t> mbr, const std::array<MbrEntry, 4>& entries) {
    // libblkid's DOS prober refuses boot flags other than 0x00 and 0x80: the sector is then a
    // filesystem's boot sector (FAT, NTFS), not a partition table. libfdisk would read its boot
    // code as partition entries.
    for (size_t i = 0; i < 4; ++i) {
      if (entries[i].boot != 0 && entries[i].boot != kBootFlagActive) {
        scan_.mbr = MbrKind::kBootSector;
        Add("mbr-boot-sector", TableSeverity::kNote,
            fmt::format("sector 0 ends in 55 AA, but it is a boot sector, not a partition table "
                        "(entry {} has boot flag 0x{:02x})",
                        i + 1, entries[i].boot));
        return;
      }
    }
    scan_.mbr = MbrKind::kDos;
    scan_.label = LabelType::kDos;
    scan_.disk_id = fmt::format("0x{:08x}", ScanLe(mbr, kMbrDiskIdOffset, 4));
    std::optional<size_t> extended;
    std::vector<ScannedPartition> primaries;
    for (size_t i = 0; i < 4; ++i) {
      const MbrEntry& e = entries[i];
      const auto number = static_cast<uint32_t>(i + 1);
      if (e.cleared) continue;
      if (!CheckDosEntry(e, number, /*base_lba=*/0, "MBR")) continue;
      const uint64_t end = e.start + e.count - 1;
      if (!CheckExtent(number, e.start, end, 1, scan_.disk_size_sectors - 1, "disk")) continue;
      ScannedPartition p{
          number, PartitionKind::kPrimary,  e.start, e.count, fmt::format("0x{:02x}", e.type),
          "",     e.boot == kBootFlagActive};
      if (IsExtendedType(e.type)) {
        if (extended) {
          Add("extended-several", TableSeverity::kUnreadable,
              fmt::format("MBR entries {} and {} are both extended partitions (libfdisk reads "
                          "the logical partitions of the first only)",
                          *extended + 1, number));
          continue;
        }
        extended = i;
        p.kind = PartitionKind::kExtended;
      }
      primaries.push_back(p);
    }
    CheckOverlaps(primaries);
    scan_.partitions = primaries;
    if (extended) {
      for (const ScannedPartition& p : primaries) {
        if (p.kind == PartitionKind::kExtended) ScanEbrChain(p);
      }
    }
  }

  // An entry that is not cleared must have sectors and a partition must not start on its own
  // table sector (`base_lba`: 0 for the MBR, the EBR's sector in the chain).
  bool CheckDosEntry(const MbrEntry& e, uint32_t number, uint64_t base_lba,
                     std::string_view where) {
    if (e.count == 0) {
      Add("partition-invalid", TableSeverity::kUnreadable,
          fmt::format("{} entry for partition {} is not empty (type 0x{:02x}) but has no sectors: "
                      "libfdisk lists it, the kernel does not",
                      where, number, e.type));
      return false;
    }
    // A link's start counts from the extended partition's (0 is the chain's head: a loop, found
    // as such); a partition's from its own table sector, which it may not cover.
    if (e.start == 0 && !(base_lba != 0 && IsExtendedType(e.type))) {
      Add("partition-invalid", TableSeverity::kUnreadable,
          fmt::format("partition {} starts on its own table sector ({} at sector {})", number,
                      where, base_lba));
      return false;
    }
    return true;
  }

  void ScanEbrChain(const ScannedPartition& ext) {
    const uint64_t ext_start = ext.start_sector;
    const uint64_t ext_end = ext.start_sector + ext.size_sectors - 1;
    std::set<uint64_t> visited;
    std::vector<ScannedPartition> logicals;
    uint64_t ebr = ext_start;
    uint32_t walked = 0;
    bool truncated = false;
    for (;;) {
      if (visited.count(ebr)) {
        Add("ebr-loop", TableSeverity::kUnreadable,
            fmt::format("the EBR chain loops: EBR {} links back to sector {}", walked, ebr));
        break;
      }
      if (walked == kMaxEbrChainWalk) {
        truncated = true;  // counted enough: the finding below says "more than"
        break;
      }
      visited.insert(ebr);
      if (ebr < ext_start || ebr > ext_end) {
        Add("ebr-outside-extended", TableSeverity::kUnreadable,
            fmt::format("EBR {} of the chain is at sector {}, outside the extended partition {} "
                        "({})",
                        walked + 1, ebr, ext.number, Range(ext_start, ext_end)));
        break;
      }
      std::string why;
      std::optional<std::vector<uint8_t>> sector = ReadSectors(ebr, kMbrBytes, &why);
      if (!sector) {
        Add("ebr-invalid", TableSeverity::kUnreadable,
            fmt::format("cannot read the EBR at sector {}: {}", ebr, why));
        break;
      }
      if (!HasMbrSignature(*sector)) {
        Add("ebr-invalid", TableSeverity::kUnreadable,
            fmt::format("the EBR at sector {} has no 55 AA signature (the kernel ends the chain "
                        "there, libfdisk does not)",
                        ebr));
        break;
      }
      ++walked;
      const auto number = static_cast<uint32_t>(4 + walked);
      std::optional<MbrEntry> data;
      std::optional<MbrEntry> link;
      bool broken = false;
      for (size_t i = 0; i < 4 && !broken; ++i) {
        MbrEntry e = ParseMbrEntry(*sector, i);
        if (e.cleared) continue;
        if (!CheckDosEntry(e, number, ebr, "EBR")) {
          broken = true;
        } else if (IsExtendedType(e.type) ? link.has_value() : data.has_value()) {
          Add("ebr-invalid", TableSeverity::kUnreadable,
              fmt::format("the EBR at sector {} holds more than one {} (libfdisk ignores the "
                          "others)",
                          ebr, IsExtendedType(e.type) ? "link" : "partition"));
          broken = true;
        } else if (IsExtendedType(e.type)) {
          link = e;
        } else {
          data = e;
        }
      }
      if (broken) break;
      scan_.ebr_lbas.push_back(ebr);
      if (data) {
        const uint64_t start = ebr + data->start;
        const uint64_t end = start + data->count - 1;
        if (!CheckExtent(number, start, end, ext_start, ext_end, "extended partition")) break;
        logicals.push_back({number, PartitionKind::kLogical, start, data->count,
                            fmt::format("0x{:02x}", data->type), "",
                            data->boot == kBootFlagActive});
      } else if (link) {
        Add("ebr-invalid", TableSeverity::kUnreadable,
            fmt::format("the EBR at sector {} holds no partition but links to another: libfdisk "
                        "and the kernel would number the partitions after it differently",
                        ebr));
        break;
      } else {
        // An empty last EBR (an extended partition without logical partitions ends so):
        // libfdisk drops it.
        scan_.ebr_lbas.pop_back();
        --walked;
      }
      if (!link) break;
      ebr = ext_start + link->start;
    }
    if (walked > kMaxFdiskLogicalPartitions) {
      Add("ebr-chain-too-long", TableSeverity::kUnreadable,
          fmt::format("the EBR chain holds {}{} logical partitions; libfdisk reads only {} "
                      "(partitions 5-60) and would delete the rest when it writes",
                      truncated ? "more than " : "", walked, kMaxFdiskLogicalPartitions));
    }
    CheckOverlaps(logicals);
    for (const ScannedPartition& p : logicals) {
      const uint64_t end = p.start_sector + p.size_sectors - 1;
      for (uint64_t e : scan_.ebr_lbas) {
        if (e >= p.start_sector && e <= end) {
          Add("partition-overlap", TableSeverity::kUnreadable,
              fmt::format("partition {} ({}) covers the EBR at sector {}", p.number,
                          Range(p.start_sector, end), e));
        }
      }
    }
    scan_.partitions.insert(scan_.partitions.end(), logicals.begin(), logicals.end());
  }

  const DiskReader& disk_;
  TableScan scan_;
};

}  // namespace

std::string_view ToString(MbrKind kind) {
  switch (kind) {
    case MbrKind::kNone:
      return "none";
    case MbrKind::kDos:
      return "dos";
    case MbrKind::kProtective:
      return "protective";
    case MbrKind::kHybrid:
      return "hybrid";
    case MbrKind::kBootSector:
      return "boot-sector";
  }
  return "none";
}

TableScan ScanTable(const DiskReader& disk, uint64_t sector_size) {
  return Scanner(disk, sector_size).Run();
}

std::string_view ToString(PartitionKind kind) {
  switch (kind) {
    case PartitionKind::kPrimary:
      return "primary";
    case PartitionKind::kExtended:
      return "extended";
    case PartitionKind::kLogical:
      return "logical";
  }
  return "primary";
}

}  // namespace partalign
