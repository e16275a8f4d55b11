#include "partalign/tools/installers/kpmcore_model.h"

#include <fmt/format.h>

#include "partalign/tools/installers/installer_version.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

// PartitionAlignment::s_sectorAlignment (partitionalignment.cpp).
constexpr uint64_t kSectorAlignment = 2048;
// The geometry KPMcore's sfdisk backend gave every disk before 24.08 (255 heads, 63 sectors).
constexpr uint64_t kSectorsPerTrack = 63;
constexpr uint64_t kCylinderSectors = 255 * kSectorsPerTrack;

const ToolVersion kScaledSince{25, 11, 80, 3};
const ToolVersion kNoCylindersSince{24, 7, 80, 3};

int64_t Mod(int64_t a, int64_t b) { return a % b; }  // C++ %, as KPMcore's qint64 arithmetic

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

uint64_t CalamaresSizeSectors(uint64_t size_bytes, uint64_t lbs) { return size_bytes / lbs; }

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

}  // namespace partalign
