// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/old_tool_disks.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>

#include <fmt/format.h>

#include "support/loop_device.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign::test {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kSector = 512;

uint8_t TypeOf(const std::string& fs) {
  if (fs == "ntfs") return 0x07;
  if (fs == "vfat") return 0x0b;  // W95 FAT32 (CHS): what both tools wrote below cylinder 1024
  if (fs == "swap") return 0x82;
  return 0x83;
}

// The CHS triple of `lba` as both tools wrote it: head, sector with the cylinder's high bits,
// cylinder; 1023/254/63 past cylinder 1023.
std::array<uint8_t, 3> Chs(uint64_t lba) {
  uint64_t c = lba / kCylinderSectors;
  uint64_t h = lba / kOldTrackSectors % kOldHeads;
  uint64_t s = lba % kOldTrackSectors + 1;
  if (c > 1023) {
    c = 1023;
    h = kOldHeads - 1;
    s = kOldTrackSectors;
  }
  return {static_cast<uint8_t>(h), static_cast<uint8_t>(s | ((c >> 2) & 0xC0)),
          static_cast<uint8_t>(c & 0xFF)};
}

void PutLe32(std::vector<uint8_t>* b, size_t at, uint64_t v) {
  for (size_t i = 0; i < 4; ++i) (*b)[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

// One 16-byte entry: `start` and `size` as stored (relative where the format says so), the CHS
// fields from the absolute sectors `abs_first` and `abs_last`.
void PutEntry(std::vector<uint8_t>* sector, size_t slot, bool boot, uint8_t type, uint64_t start,
              uint64_t size, uint64_t abs_first, uint64_t abs_last) {
  const size_t at = 446 + 16 * slot;
  (*sector)[at] = boot ? 0x80 : 0x00;
  const std::array<uint8_t, 3> first = Chs(abs_first);
  const std::array<uint8_t, 3> last = Chs(abs_last);
  std::copy(first.begin(), first.end(), sector->begin() + static_cast<ptrdiff_t>(at + 1));
  (*sector)[at + 4] = type;
  std::copy(last.begin(), last.end(), sector->begin() + static_cast<ptrdiff_t>(at + 5));
  PutLe32(sector, at + 8, start);
  PutLe32(sector, at + 12, size);
}

bool IsExtendedPlace(const OldPlace& p) { return p.type == 0x05 || p.type == 0x0f; }

void WriteSector(std::fstream& f, uint64_t lba, std::vector<uint8_t> sector) {
  sector[510] = 0x55;
  sector[511] = 0xAA;
  f.seekp(static_cast<std::streamoff>(lba * kSector));
  f.write(reinterpret_cast<const char*>(sector.data()), static_cast<std::streamsize>(kSector));
}

std::string RandomBytes(std::mt19937_64& rng, size_t n) {
  std::string out(n, '\0');
  for (size_t i = 0; i < n; i += 8) {
    const uint64_t v = rng();
    for (size_t k = 0; k < 8 && i + k < n; ++k) out[i + k] = static_cast<char>(v >> (8 * k));
  }
  return out;
}

// A few files of odd sizes, the last one the largest.
std::map<std::string, std::string> FilesFor(uint32_t number, uint64_t partition_bytes,
                                            std::mt19937_64& rng) {
  std::map<std::string, std::string> files;
  const uint64_t big = std::min<uint64_t>(partition_bytes / 16, 6 << 20);
  for (int i = 0; i < 4; ++i) {
    const size_t n = static_cast<size_t>(rng() % (200 << 10)) + 1;
    files[fmt::format("p{}-small{}.bin", number, i)] = RandomBytes(rng, n);
  }
  files[fmt::format("p{}-zlarge.bin", number)] = RandomBytes(rng, static_cast<size_t>(big));
  return files;
}

void MakeFilesystem(const OldPlace& p, const OldLayout& layout, const std::string& node,
                    const std::map<std::string, std::string>& files, const fs::path& work) {
  const fs::path staging = work / fmt::format("staging{}", p.number);
  fs::create_directories(staging);
  for (const auto& [name, bytes] : files) WriteFile((staging / name).string(), bytes);
  const std::string start = std::to_string(p.start);
  if (p.fs == "ntfs") {
    // What XP's format wrote into the boot sector: the partition's start (hidden sectors) and
    // the BIOS geometry.
    RunOrThrow({"mkntfs", "-q", "-F", "-Q", "-p", start, "-H", std::to_string(kOldHeads), "-S",
                std::to_string(kOldTrackSectors), "-L", fmt::format("XP{}", p.number), node});
    for (const auto& [name, unused] : files) {
      RunOrThrow({"ntfscp", "-f", node, (staging / name).string(), "/" + name});
    }
  } else if (p.fs == "vfat") {
    RunOrThrow({"mkfs.vfat", "-F", "32", "-h", start, "-g",
                fmt::format("{}/{}", kOldHeads, kOldTrackSectors), "-n",
                fmt::format("FAT{}", p.number), node});
    for (const auto& [name, unused] : files) {
      RunOrThrow({"mcopy", "-i", node, (staging / name).string(), "::/" + name});
    }
  } else if (p.fs == "ext4") {
    RunOrThrow({"mkfs.ext4", "-q", "-F", "-L", fmt::format("linux{}", p.number), "-d",
                staging.string(), node});
  } else if (p.fs == "swap") {
    RunOrThrow({"mkswap", "-L", fmt::format("swap{}", p.number), node});
  } else {
    throw std::runtime_error("unknown filesystem " + p.fs);
  }
  (void)layout;
}

}  // namespace

std::vector<OldPlace> OldPlaces(const OldLayout& layout) {
  const uint64_t total_cylinders = layout.disk_bytes / kSector / kCylinderSectors;
  std::vector<OldPlace> out;
  uint64_t cylinder = 0;
  uint32_t number = 1;
  for (const OldPartition& p : layout.primaries) {
    const uint64_t cylinders =
        p.cylinders ? p.cylinders : total_cylinders - cylinder;  // the last one: to the end
    const uint64_t first = cylinder == 0 ? kOldTrackSectors : cylinder * kCylinderSectors;
    const uint64_t end = (cylinder + cylinders) * kCylinderSectors - 1;
    out.push_back({number++, first, end - first + 1, TypeOf(p.fs), p.fs, p.bootable, {}});
    cylinder += cylinders;
  }
  if (layout.logicals.empty()) return out;
  const uint64_t ext_start = cylinder * kCylinderSectors;
  const uint64_t ext_end = total_cylinders * kCylinderSectors - 1;
  out.push_back({number,
                 ext_start,
                 ext_end - ext_start + 1,
                 static_cast<uint8_t>(layout.tool == OldTool::kWindowsXp ? 0x0f : 0x05),
                 "",
                 false,
                 {}});
  uint32_t logical = 5;
  for (const OldPartition& p : layout.logicals) {
    const uint64_t cylinders = p.cylinders ? p.cylinders : total_cylinders - cylinder;
    const uint64_t ebr = cylinder * kCylinderSectors;
    const uint64_t end = (cylinder + cylinders) * kCylinderSectors - 1;
    const uint64_t first = ebr + kOldTrackSectors;
    out.push_back({logical++, first, end - first + 1, TypeOf(p.fs), p.fs, p.bootable, ebr});
    cylinder += cylinders;
  }
  return out;
}

OldLayout XpDiskOfIssue38() {
  return {OldTool::kWindowsXp,
          2ull << 30,
          {{"ntfs", 16, true}},
          {{"ext4", 124, false}, {"vfat", 80, false}, {"swap", 0, false}}};
}

OldLayout XpSingleNtfs() { return {OldTool::kWindowsXp, 2ull << 30, {{"ntfs", 0, true}}, {}}; }

OldLayout OldFdiskDisk() {
  return {OldTool::kOldFdisk,
          2ull << 30,
          {{"ext4", 100, true}},
          {{"ntfs", 24, false}, {"vfat", 90, false}, {"swap", 0, false}}};
}

std::string OldBootCode() {
  std::string code;
  while (code.size() < 440) code += "partalign test: the boot code of an old MBR stands here. ";
  code.resize(440);
  return code;
}

void WriteOldToolTable(const OldLayout& layout, const std::string& image, uint32_t disk_id) {
  const std::vector<OldPlace> places = OldPlaces(layout);
  {
    std::fstream f(image, std::ios::in | std::ios::out | std::ios::binary);
    if (!f) throw std::runtime_error("cannot open " + image);
    std::vector<uint8_t> mbr(kSector, 0);
    const std::string code = OldBootCode();
    std::copy(code.begin(), code.end(), mbr.begin());
    PutLe32(&mbr, 440, disk_id);  // the disk signature
    size_t slot = 0;
    const OldPlace* ext = nullptr;
    std::vector<const OldPlace*> logicals;
    for (const OldPlace& p : places) {
      if (p.number >= 5) {
        logicals.push_back(&p);
        continue;
      }
      PutEntry(&mbr, slot++, p.bootable, p.type, p.start, p.size, p.start, p.end());
      if (IsExtendedPlace(p)) ext = &p;
    }
    WriteSector(f, 0, mbr);
    for (size_t i = 0; i < logicals.size(); ++i) {
      const OldPlace& l = *logicals[i];
      std::vector<uint8_t> ebr(kSector, 0);
      PutEntry(&ebr, 0, l.bootable, l.type, l.start - *l.ebr, l.size, l.start, l.end());
      if (i + 1 < logicals.size()) {
        const OldPlace& next = *logicals[i + 1];
        // The link: the next EBR relative to the extended partition, to the end of its
        // partition.
        PutEntry(&ebr, 1, false, 0x05, *next.ebr - ext->start, next.end() - *next.ebr + 1,
                 *next.ebr, next.end());
      }
      WriteSector(f, *l.ebr, ebr);
    }
    f.flush();
    if (!f) throw std::runtime_error("cannot write the table of " + image);
  }
}

OldFiles BuildOldToolImage(const OldLayout& layout, const std::string& image, uint64_t seed) {
  CreateSparseFile(image, layout.disk_bytes);
  WriteOldToolTable(layout, image, 0x2E0A1B3Cu ^ static_cast<uint32_t>(seed));
  const std::vector<OldPlace> places = OldPlaces(layout);
  std::mt19937_64 rng(seed);
  OldFiles files;
  LoopDevice loop(image, kSector);
  AddKernelPartitions(loop, kSector);
  TempDir work;
  for (const OldPlace& p : places) {
    if (IsExtendedPlace(p)) continue;
    if (p.fs != "swap") files[p.number] = FilesFor(p.number, p.size * kSector, rng);
    MakeFilesystem(p, layout, loop.PartitionPath(static_cast<int>(p.number)), files[p.number],
                   work.path());
  }
  RunOrThrow({"sync"});
  return files;
}

}  // namespace partalign::test
