// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/installers/kpmcore_model.h"

#include <fmt/format.h>

#include "partalign/tools/installers/installer_version.h"
#include "partalign/tools/libfdisk_model.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

// PartitionAlignment::s_sectorAlignment (partitionalignment.cpp).
constexpr uint64_t kSectorAlignment = 2048;
// The geometry KPMcore's sfdisk backend gave every disk before 24.08 (255 heads, 63 sectors).
constexpr uint64_t kSectorsPerTrack = 63;
constexpr uint64_t kCylinderSectors = 255 * kSectorsPerTrack;

// doAutopartition(): "last usable sector possibly allowing for secondary GPT using 66 sectors
// (256 entries)": totalLogical() - 67 is the last sector it gives the layout.
constexpr uint64_t kCalamaresGptBackSectors = 67;
// A DOS table holds four primary partitions.
constexpr size_t kCalamaresDosPrimaries = 4;
// An msdos entry holds 32-bit sector numbers.
constexpr int64_t kCalamaresDosMaxSector = 0xFFFFFFFFll;
// The GPT sfdisk writes: 128 entries of 128 bytes and a header at the end.
constexpr uint64_t kCalamaresGptArrayBytes = 128 * 128;

const ToolVersion kScaledSince{25, 11, 80, 3};
const ToolVersion kNoCylindersSince{24, 7, 80, 3};

int64_t Mod(int64_t a, int64_t b) { return a % b; }  // C++ %, as KPMcore's qint64 arithmetic

// dos_add_partition()'s test before a new primary: a gap of at least a grain before, between
// or after the primaries (libfdisk as sfdisk discovers it on this disk).
bool DosPrimaryRoom(const Topology& t, const ToolVersion& util_linux,
                    const std::vector<PlacedPartition>& primaries) {
  Result<LibfdiskContext> c = DiscoverLibfdisk(t, util_linux);
  if (!c) return true;
  const uint64_t g = c->grain_bytes > c->sector_size ? c->grain_bytes / c->sector_size : 1;
  uint64_t first = c->first_lba;
  for (const PlacedPartition& q : primaries) {
    if (first + g <= q.start_sector) return true;
    first = q.end_sector + 1;
  }
  return first + g - 1 <= c->total_sectors - 1;
}

}  // namespace

uint64_t KpmcoreSectorAlignment(const ToolVersion& v, uint64_t lbs) {
  if (v < kScaledSince || lbs < 512) return kSectorAlignment;
  return kSectorAlignment / (lbs / 512);
}

bool KpmcoreIsSectorBased(const ToolVersion& v, LabelType label, uint64_t lbs,
                          const std::vector<KpmcorePartition>& partitions) {
  if (v >= kNoCylindersSince || label != LabelType::kDos) return true;
  const uint64_t align = KpmcoreSectorAlignment(v, lbs);
  int primaries = 0, sector = 0, cylinder = 0;
  for (const KpmcorePartition& p : partitions) {
    if (p.logical) continue;  // children() of the table: primaries and the extended one
    if (!p.extended) ++primaries;
    if (p.first_sector % align == 0) {
      ++sector;
    } else if (p.first_sector % kCylinderSectors == 0) {
      ++cylinder;
    }
  }
  if (primaries == 0) return true;
  return sector >= cylinder;
}

KpmcoreCheck KpmcoreIsAligned(const ToolVersion& v, uint64_t lbs, LabelType label,
                              bool sector_based, const KpmcorePartition& p,
                              const std::string& node) {
  const auto align = static_cast<int64_t>(KpmcoreSectorAlignment(v, lbs));
  const auto first = static_cast<int64_t>(p.first_sector);
  const auto last = static_cast<int64_t>(p.last_sector);
  const auto track = static_cast<int64_t>(kSectorsPerTrack);
  KpmcoreCheck c;
  c.first_delta = Mod(first, align);
  if (v < kNoCylindersSince && label == LabelType::kDos && !sector_based) {
    if (p.logical && first == 2 * track) {
      c.first_delta = Mod(first - 2 * track, align);
    } else if (p.logical || first == track) {
      c.first_delta = Mod(first - track, align);
    }
  }
  c.last_delta = Mod(last + 1, align);
  if (c.first_delta != 0) {
    c.messages.push_back(
        fmt::format("Partition {} is not properly aligned (first sector: {}, modulo: {}).", node,
                    first, c.first_delta));
  }
  if (c.last_delta != 0) {
    c.messages.push_back(
        fmt::format("Partition {} is not properly aligned (last sector: {}, modulo: {}).", node,
                    last, c.last_delta));
  }
  c.aligned = c.first_delta == 0 && c.last_delta == 0;
  return c;
}

uint64_t CalamaresFirstSector(CalamaresFirmware firmware, uint64_t lbs) {
  uint64_t gap = firmware == CalamaresFirmware::kArm   ? 16 * kMiB
                 : firmware == CalamaresFirmware::kEfi ? 2 * kMiB
                                                       : kMiB;
  return gap / lbs;
}

uint64_t CalamaresSizeSectors(uint64_t size_bytes, uint64_t lbs) {
  // alignBytesToBlockSize(alignBytesToBlockSize(bytes, lbs), 1 MiB) / lbs.
  const uint64_t sector_bytes = (size_bytes + lbs - 1) / lbs * lbs;
  return (sector_bytes + kMiB - 1) / kMiB * kMiB / lbs;
}

uint64_t CalamaresLastSector(LabelType label, uint64_t disk_sectors) {
  const uint64_t back = label == LabelType::kGpt ? kCalamaresGptBackSectors : 1;
  return disk_sectors >= back ? disk_sectors - back : 0;
}

Result<KpmcorePrediction> PredictKpmcore(const Topology& t, const ToolVersion& version,
                                         uint64_t first_size) {
  Result<ToolEra> era = InstallerEraOf(Installer::kKpmcore, version);
  if (!era) return era.error();
  KpmcorePrediction p;
  p.version = version;
  p.era = *era;
  const uint64_t lbs = t.logical_sector_size;
  p.alignment_sectors = KpmcoreSectorAlignment(version, lbs);
  p.first_start_efi = CalamaresFirstSector(CalamaresFirmware::kEfi, lbs);
  p.first_start_bios = CalamaresFirstSector(CalamaresFirmware::kBios, lbs);
  p.second_start_efi = p.first_start_efi + CalamaresSizeSectors(first_size, lbs);
  p.second_start_bios = p.first_start_bios + CalamaresSizeSectors(first_size, lbs);
  p.reasons.push_back(fmt::format(
      "KPMcore reads only the logical sector size ({}); physical sector, minimum/optimal I/O "
      "and the alignment offset are never read",
      lbs));
  p.reasons.push_back(
      version < kScaledSince
          ? fmt::format("KPMcore {} aligns to 2048 sectors whatever the sector size ({} bytes)",
                        version.ToString(), 2048 * lbs)
          : fmt::format("KPMcore {} aligns to 2048 x 512 / {} = {} sectors (1 MiB)",
                        version.ToString(), lbs, p.alignment_sectors));
  p.reasons.push_back(fmt::format(
      "Calamares' automatic partitioning starts at 2 MiB on UEFI (GPT: sector {}) and 1 MiB on "
      "BIOS (msdos: sector {}), 16 MiB on ARM, and places each next partition right after the "
      "previous one, sizes in MiB (PartitionActions.cpp doAutopartition)",
      p.first_start_efi, p.first_start_bios));
  p.key_reason = fmt::format(
      "Calamares starts at a fixed 2 MiB (UEFI) or 1 MiB (BIOS) and never reads the topology; "
      "KPMcore only logs partitions off its {}-sector alignment",
      p.alignment_sectors);
  KpmcorePartition at_1mib{1, kMiB / lbs, t.size_bytes / lbs - 1, false, false};
  KpmcoreCheck check = KpmcoreIsAligned(version, lbs, LabelType::kGpt, true, at_1mib, "1");
  if (check.first_delta != 0) {
    p.warning_at_1mib = check.messages.front();
    p.reasons.push_back("KPMcore logs for a partition at 1 MiB: " + *p.warning_at_1mib);
  }
  return p;
}

LayoutPrediction CalamaresLayoutPrediction(const Topology& t, const ToolVersion& version,
                                           const ToolVersion& util_linux_version,
                                           const LayoutRequest& r) {
  LayoutPrediction p = NewInstallerLayoutPrediction(Installer::kKpmcore, version);
  if (!p.error.empty()) return p;
  const uint64_t lbs = t.logical_sector_size;
  const bool gpt = r.label == LabelType::kGpt;
  const uint64_t first =
      CalamaresFirstSector(gpt ? CalamaresFirmware::kEfi : CalamaresFirmware::kBios, lbs);
  const uint64_t last = CalamaresLastSector(r.label, t.size_bytes / lbs);
  p.reasons.push_back(fmt::format(
      "{}: the layout goes from sector {} to {} (doAutopartition: {} MiB, then the disk's last "
      "sector{})",
      gpt ? "UEFI, GPT" : "BIOS, msdos", first, last, gpt ? 2 : 1,
      gpt ? " minus 66 for the backup GPT" : ""));
  if (last < first) {
    p.error = fmt::format("the disk ends before Calamares' first free sector {}", first);
    return p;
  }
  const auto total = static_cast<int64_t>(last - first + 1);
  const size_t count = r.sizes_bytes.size();
  const size_t modelled = !gpt && count > kCalamaresDosPrimaries ? kCalamaresDosPrimaries : count;
  // createPartitions(): the fixed sizes first, then "100%" of what they leave.
  std::vector<int64_t> sectors(modelled, 0);
  int64_t available = total;
  for (size_t i = 0; i < modelled; ++i) {
    if (r.sizes_bytes[i]) {
      sectors[i] = static_cast<int64_t>(CalamaresSizeSectors(*r.sizes_bytes[i], lbs));
    }
    available -= sectors[i];
  }
  for (size_t i = 0; i < modelled; ++i) {
    // PartitionSize::toSectors() of a percentage of less than one sector is -1.
    if (!r.sizes_bytes[i]) sectors[i] = available < 1 ? -1 : available;
  }
  // The GPT KPMcore's sfdisk backend makes (`label: gpt`): libfdisk puts FirstUsableLBA at its
  // topology's first LBA (8192 with a 4 MiB optimal I/O), and `sfdisk --append` takes no start
  // outside the usable area.
  std::optional<LibfdiskLabel> gpt_area;
  if (gpt) {
    if (Result<LibfdiskContext> cxt = DiscoverLibfdisk(t, util_linux_version)) {
      if (Result<LibfdiskLabel> l = CreateLibfdiskLabel(*cxt, LabelType::kGpt)) gpt_area = *l;
    }
  }
  int64_t current = static_cast<int64_t>(first);
  available = total;
  uint32_t number = 0;
  for (size_t i = 0; i < modelled; ++i) {
    const auto asked = static_cast<uint32_t>(i + 1);
    const int64_t n = std::min(sectors[i], available);
    if (n == 0) {
      p.omitted.push_back({asked, true,
                           "no sector is left for it: Calamares skips a partition of 0 sectors "
                           "(PartitionLayout::createPartitions)"});
      continue;
    }
    int64_t length = n;
    if (n < 0) {
      // "100%" of nothing is -1 sectors (PartitionSize::toSectors); KPMcore's sfdisk backend
      // writes `start=S size=-1`, which sfdisk 2.38.1 takes as one sector, or refuses when S
      // is not free.
      const uint64_t sfdisk_last =
          gpt ? t.size_bytes / lbs - 1 - (1 + (kCalamaresGptArrayBytes + lbs - 1) / lbs)
              : std::min<uint64_t>(t.size_bytes / lbs - 1, kCalamaresDosMaxSector);
      if (static_cast<uint64_t>(current) > sfdisk_last) {
        p.error = fmt::format(
            "partition {}: \"100%\" of no space left is -1 sectors (PartitionSize::toSectors); "
            "KPMcore's sfdisk backend writes start={} size=-1, and sfdisk refuses it",
            asked, current);
        break;
      }
      p.reasons.push_back(fmt::format(
          "partition {}: \"100%\" of no space left is -1 sectors (PartitionSize::toSectors); "
          "KPMcore's sfdisk backend writes start={} size=-1, which sfdisk takes as one sector",
          asked, current));
      length = 1;
    }
    if (gpt && gpt_area &&
        (static_cast<uint64_t>(current) < gpt_area->first_usable_lba ||
         static_cast<uint64_t>(current + length - 1) > gpt_area->last_usable_lba)) {
      p.error = fmt::format(
          "partition {}: {}-{} is outside the usable area {}-{} of the GPT KPMcore's sfdisk "
          "writes on this disk (libfdisk's first LBA follows the topology), so `sfdisk --append` "
          "refuses it (\"Numerical result out of range\")",
          asked, current, current + length - 1, gpt_area->first_usable_lba,
          gpt_area->last_usable_lba);
      break;
    }
    if (!gpt && !DosPrimaryRoom(t, util_linux_version, p.partitions)) {
      p.error = fmt::format(
          "partition {}: no gap of a libfdisk grain is left around the primary partitions, so "
          "the `sfdisk --append` KPMcore runs refuses another primary (\"Impossible to create "
          "another primary partition\")",
          asked);
      break;
    }
    if (!gpt && current + length - 1 > kCalamaresDosMaxSector) {
      p.error = fmt::format(
          "partition {}: {}-{} passes sector 2^32-1, which msdos cannot hold: KPMcore's sfdisk "
          "backend fails to write it",
          asked, current, current + length - 1);
      break;
    }
    p.partitions.push_back({++number, PlacedKind::kPrimary, static_cast<uint64_t>(current),
                            static_cast<uint64_t>(current + length - 1)});
    if (n < sectors[i]) {
      p.reasons.push_back(fmt::format(
          "partition {}: cut to the {} sectors left (createPartitions takes the smaller)", asked,
          n));
    }
    current += n;
    available -= n;
  }
  for (size_t i = modelled; i < count; ++i) {
    p.omitted.push_back({static_cast<uint32_t>(i + 1), false,
                         "Calamares' layout makes every partition primary, and msdos holds four; "
                         "what it does with a fifth is not modelled"});
  }
  return p;
}

}  // namespace partalign
