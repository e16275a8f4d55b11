// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/table_corpus.h"

#include <cstdint>
#include <utility>

#include "support/table_images.h"

namespace partalign::test {
namespace {

constexpr uint64_t kMiB = 1024 * 1024;
constexpr uint64_t kDiskBytes = 64 * kMiB;
constexpr uint64_t kDiskSectors = kDiskBytes / 512;
// GPT header fields (UEFI 2.x, 5.3.2).
constexpr size_t kHeaderSize = 12;
constexpr size_t kMyLba = 24;
constexpr size_t kLastUsable = 48;
constexpr size_t kEntryCount = 80;
constexpr size_t kEntrySize = 84;
constexpr uint64_t kMax = ~uint64_t{0};

// Two partitions, the second misaligned (a plan moves it).
GptSpec TwoPartitions(uint64_t sector_size = 512) {
  GptSpec spec;
  spec.sector_size = sector_size;
  spec.disk_sectors = kDiskBytes / sector_size;
  const uint64_t mib = kMiB / sector_size;
  spec.entries = {{0, kEspGuid, "", mib, 9 * mib - 1},
                  {1, kLinuxFsGuid, "", 9 * mib + 1, 40 * mib - 1}};
  return spec;
}

// The same header field wrong in both copies (the CRC fixed, unless the header size is what is
// wrong: no CRC covers 4 GiB of a 512-byte sector): the copies agree, the field is bad.
SparseDisk BothHeaders(size_t field, size_t width, uint64_t value, bool fix_crc = true) {
  GptSpec spec = TwoPartitions();
  SparseDisk disk = MakeGptDisk(spec);
  SetGptHeaderField(&disk, 512, PrimaryHeaderLba(), field, width, value, fix_crc);
  SetGptHeaderField(&disk, 512, BackupHeaderLba(spec), field, width, value, fix_crc);
  return disk;
}

SparseDisk GptWith(GptEntrySpec second) {
  GptSpec spec = TwoPartitions();
  spec.entries[1] = std::move(second);
  return MakeGptDisk(spec);
}

SparseDisk Logicals(uint64_t count) {
  std::vector<LogicalSpec> logicals;
  for (uint64_t i = 0; i < count; ++i) logicals.push_back({2049 + i * 64, 63});
  return MakeDosDisk(256 * kMiB, 512, {}, logicals, 2048, 2048 + count * 64 + 100);
}

}  // namespace

std::vector<CorpusCase> TableCorpus() {
  std::vector<CorpusCase> c;
  const auto add = [&c](std::string name, SparseDisk disk, std::string audit_error = "",
                        std::string plan_error = "") {
    c.push_back({std::move(name), std::move(disk), std::move(audit_error), std::move(plan_error)});
  };
  const std::string sound_only = "partalign changes only a sound table";

  // --- sound tables, as references ------------------------------------------------------------
  add("gpt-sound", MakeGptDisk(TwoPartitions()));
  add("dos-sound",
      MakeDosDisk(kDiskBytes, 512, {{0x80, 0x83, 63, 20000}, {0, 0x83, 20480, 40000}}));
  add("dos-56-logicals", [] {
    std::vector<LogicalSpec> logicals;
    for (uint64_t i = 0; i < 56; ++i) logicals.push_back({2049 + i * 4096, 4095});
    return MakeDosDisk(512 * kMiB, 512, {}, logicals, 2048, 2048 + 56 * 4096 + 4096);
  }());
  add("no-table", SparseDisk(kDiskBytes));

  // --- GPT: damaged copies ----------------------------------------------------------------------
  {
    GptSpec spec = TwoPartitions();
    SparseDisk primary = MakeGptDisk(spec);
    CorruptGptHeader(&primary, 512, PrimaryHeaderLba());
    add("gpt-primary-header-crc", std::move(primary), "", sound_only);
    SparseDisk backup = MakeGptDisk(spec);
    CorruptGptHeader(&backup, 512, BackupHeaderLba(spec));
    add("gpt-backup-header-crc", std::move(backup), "", sound_only);
    SparseDisk both = MakeGptDisk(spec);
    CorruptGptHeader(&both, 512, PrimaryHeaderLba());
    CorruptGptHeader(&both, 512, BackupHeaderLba(spec));
    add("gpt-both-headers-crc", std::move(both), "protective MBR, but no valid GPT",
        "protective MBR, but no valid GPT");
    SparseDisk entries = MakeGptDisk(spec);
    entries.Write(2 * 512 + 40, std::vector<uint8_t>{0xde, 0xad});  // entry 1, no CRC fix
    add("gpt-primary-entries-crc", std::move(entries), "", sound_only);
    SparseDisk no_backup = MakeGptDisk(spec);
    no_backup.Write(BackupHeaderLba(spec) * 512, std::vector<uint8_t>(512, 0));
    add("gpt-backup-missing", std::move(no_backup), "", sound_only);
  }
  // --- GPT: header fields wrong in both copies ------------------------------------------------
  add("gpt-entry-size-0", BothHeaders(kEntrySize, 4, 0), "entry size 0 bytes",
      "entry size 0 bytes");
  add("gpt-entry-size-huge", BothHeaders(kEntrySize, 4, 0xffffffff),
      "claims 128 entries of 4294967295 bytes", "claims 128 entries of 4294967295 bytes");
  add("gpt-entry-count-0", BothHeaders(kEntryCount, 4, 0), "it has no partition entries",
      "it has no partition entries");
  add("gpt-entry-count-huge", BothHeaders(kEntryCount, 4, 0xffffffff),
      "claims 4294967295 entries of 128 bytes", "claims 4294967295 entries of 128 bytes");
  add("gpt-header-size-20", BothHeaders(kHeaderSize, 4, 20), "header size 20 is not between 92",
      "header size 20 is not between 92");
  add("gpt-header-size-huge", BothHeaders(kHeaderSize, 4, 0xffffffff, false),
      "header size 4294967295 is not between 92", "header size 4294967295 is not between 92");
  add("gpt-my-lba-wrong", BothHeaders(kMyLba, 8, 77),
      "it is at sector 1 but says it is at sector 77",
      "it is at sector 1 but says it is at sector 77");
  add("gpt-last-usable-past-end", BothHeaders(kLastUsable, 8, kDiskSectors + 1000),
      "last usable sector 132072 is beyond the disk",
      "last usable sector 132072 is beyond the disk");
  // --- GPT: partitions --------------------------------------------------------------------------
  add("gpt-partition-past-end", GptWith({1, kLinuxFsGuid, "", 18433, kDiskSectors + 100}),
      "ends beyond the end of the disk", "ends beyond the end of the disk");
  add("gpt-partition-ends-at-2^64-1", GptWith({1, kLinuxFsGuid, "", 18433, kMax}),
      "ends beyond the end of the disk", "ends beyond the end of the disk");
  add("gpt-partition-at-2^63",
      GptWith({1, kLinuxFsGuid, "", uint64_t{1} << 63, (uint64_t{1} << 63) + 2047}),
      "ends beyond the end of the disk", "ends beyond the end of the disk");
  add("gpt-partition-end-before-start", GptWith({1, kLinuxFsGuid, "", 40000, 30000}),
      "partition 2 ends (sector 30000) before it starts (sector 40000)",
      "partition 2 ends (sector 30000) before it starts (sector 40000)");
  add("gpt-partitions-overlap", GptWith({1, kLinuxFsGuid, "", 10000, 81919}), "overlap", "overlap");
  // --- GPT and the MBR in front of it -----------------------------------------------------------
  {
    SparseDisk zeroed = MakeGptDisk(TwoPartitions());
    zeroed.Write(0, std::vector<uint8_t>(512, 0));
    add("gpt-zeroed-mbr", std::move(zeroed), "sector 0 holds no protective MBR",
        "sector 0 holds no protective MBR");
    GptSpec hybrid = TwoPartitions();
    hybrid.mbr = {{0, 0xEE, 1, 2047}, {0x80, 0x0C, 2048, 16384}};
    add("gpt-hybrid-mbr", MakeGptDisk(hybrid), "", "hybrid MBR");
    SparseDisk damaged = MakeGptDisk(hybrid);
    CorruptGptHeader(&damaged, 512, PrimaryHeaderLba());
    CorruptGptHeader(&damaged, 512, BackupHeaderLba(hybrid));
    add("gpt-hybrid-mbr-damaged-gpt", std::move(damaged), "hybrid MBR, but no valid GPT",
        "hybrid MBR, but no valid GPT");
    add("pmbr-without-gpt",
        MakeDosDisk(kDiskBytes, 512, {{0, 0xEE, 1, static_cast<uint32_t>(kDiskSectors - 1)}}),
        "protective MBR, but no valid GPT", "protective MBR, but no valid GPT");
  }
  // --- tables for the other sector size ---------------------------------------------------------
  add("gpt-written-for-4096", MakeGptDisk(TwoPartitions(4096)),
      "the partition table was written for 4096-byte sectors",
      "the partition table was written for 4096-byte sectors");
  // A DOS table holds no sector size: written for 4096-byte sectors, it reads as a plausible
  // smaller table at 512 (only the filesystems at the starts could tell, issue 13).
  add("dos-written-for-4096",
      MakeDosDisk(kDiskBytes, 4096, {{0, 0x83, 256, 4096}, {0, 0x83, 4352, 8000}}));
  // --- DOS --------------------------------------------------------------------------------------
  add("dos-partition-past-end", MakeDosDisk(kDiskBytes, 512, {{0, 0x83, 2048, 200000}}),
      "ends beyond the end of the disk", "ends beyond the end of the disk");
  add("dos-partitions-overlap",
      MakeDosDisk(kDiskBytes, 512, {{0, 0x83, 2048, 20000}, {0, 0x83, 10000, 20000}}), "overlap",
      "overlap");
  add("dos-64-logicals", Logicals(64), "holds 64 logical partitions; libfdisk reads only 56",
      "holds 64 logical partitions; libfdisk reads only 56");
  add("dos-2001-logicals", Logicals(2001), "holds 2001 logical partitions; libfdisk reads only 56",
      "holds 2001 logical partitions; libfdisk reads only 56");
  {
    // The third EBR links back to the first: a loop.
    SparseDisk loop = Logicals(3);
    const uint64_t third_ebr = 2048 + 2 * 64;
    WriteMbr(&loop, third_ebr * 512, {{{0, 0x83, 1, 63}, {0, 0x05, 0, 64}, {}, {}}});
    add("dos-ebr-loop", std::move(loop), "the EBR chain loops: EBR 3 links back to sector 2048",
        "the EBR chain loops: EBR 3 links back to sector 2048");
    // An EBR that links outside the extended partition.
    SparseDisk outside = Logicals(3);
    WriteMbr(&outside, third_ebr * 512, {{{0, 0x83, 1, 63}, {0, 0x05, 400000, 64}, {}, {}}});
    add("dos-ebr-link-outside", std::move(outside), "outside the extended partition",
        "outside the extended partition");
  }
  add("dos-two-extended",
      MakeDosDisk(kDiskBytes, 512, {{0, 0x05, 2048, 8192}, {0, 0x0f, 16384, 8192}}),
      "MBR entries 1 and 2 are both extended partitions",
      "MBR entries 1 and 2 are both extended partitions");
  add("dos-zero-sized-entry", MakeDosDisk(kDiskBytes, 512, {{0, 0x83, 2048, 0}}),
      "is not empty (type 0x83) but has no sectors", "is not empty (type 0x83) but has no sectors");
  // --- boot sectors, other labels, tiny images --------------------------------------------------
  {
    SparseDisk boot(kDiskBytes);  // a FAT boot sector: 55 AA, jump code, garbage "entries"
    std::vector<uint8_t> sector(512, 0x4e);
    sector[0] = 0xeb;
    sector[1] = 0x3c;
    sector[2] = 0x90;
    sector[510] = 0x55;
    sector[511] = 0xaa;
    boot.Write(0, sector);
    add("fat-boot-sector", std::move(boot));
  }
  add("atari", MakeAtariDisk(kDiskBytes), "partition table of type 'atari'",
      "partition table of type 'atari'");
  {
    SparseDisk tiny(512);
    tiny.Write(510, std::vector<uint8_t>{0x55, 0xAA});
    add("tiny-512-bytes-55aa", std::move(tiny));
  }
  add("tiny-511-bytes", SparseDisk(511), "is too small for a partition table: 511 bytes",
      "is too small for a partition table: 511 bytes");
  add(
      "tiny-one-mib-gpt-header-only",
      [] {
        GptSpec spec = TwoPartitions();
        SparseDisk big = MakeGptDisk(spec);
        SparseDisk small(kMiB);
        for (const auto& [offset, bytes] : big.runs()) {
          if (offset < kMiB) small.Write(offset, bytes);
        }
        return small;
      }(),
      "protective MBR, but no valid GPT", "protective MBR, but no valid GPT");
  return c;
}

}  // namespace partalign::test
