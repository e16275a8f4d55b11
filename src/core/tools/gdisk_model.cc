// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/gdisk_model.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace partalign {
namespace {

// DEFAULT_ALIGNMENT (gpt.h): 2048 sectors of SECTOR_SIZE (512) bytes, i.e. 1 MiB.
constexpr uint64_t kGdiskDefaultAlignment = 2048;
constexpr uint64_t kGdiskSectorSize = 512;
// MIN_AF_ALIGNMENT (gpt.h): the least inferred alignment on large ("Advanced Format") disks.
constexpr uint64_t kMinAfAlignment = 8;
// SMALLEST_ADVANCED_FORMAT (gpt.h): the disk size in sectors from which MIN_AF_ALIGNMENT
// applies; 1250263728 until 0.6.14, 585937500 (~300 GB at 512 bytes) from 0.7.0.
constexpr uint64_t kSmallestAfOld = 1250263728;
constexpr uint64_t kSmallestAfNew = 585937500;
// NUM_GPT_ENTRIES x GPT_SIZE (gpt.h): the entry array, 16 KiB.
constexpr uint64_t kGdiskGptEntryArrayBytes = 128 * 128;

const ToolVersion kScaledAlignmentSince{0, 6, 12, 3};
const ToolVersion kNewThresholdSince{0, 7, 0, 3};

uint64_t DefaultAlignment(const ToolVersion& v, uint64_t lbs) {
  if (v < kScaledAlignmentSince) return kGdiskDefaultAlignment;
  return kGdiskDefaultAlignment * kGdiskSectorSize / lbs;
}

}  // namespace

uint64_t GdiskComputeAlignment(const ToolVersion& v, uint64_t lbs, uint64_t disk_sectors,
                               const std::vector<uint64_t>& starts) {
  uint64_t align = DefaultAlignment(v, lbs);
  int exponent = 0;
  while ((uint64_t{1} << (exponent + 1)) <= align) ++exponent;
  for (uint64_t start : starts) {
    while (exponent > 0 && start % (uint64_t{1} << exponent) != 0) --exponent;
    align = uint64_t{1} << exponent;
  }
  uint64_t threshold = v < kNewThresholdSince ? kSmallestAfOld : kSmallestAfNew;
  if (align < kMinAfAlignment && disk_sectors >= threshold) align = kMinAfAlignment;
  return align;
}

uint64_t GdiskTestAlignment(const Topology& t, uint64_t alignment) {
  uint64_t test = 0;
  if (t.origin != TopologyOrigin::kDefault && t.physical_sector_size != 0) {
    test = t.physical_sector_size / t.logical_sector_size;
  }
  return std::max(test, alignment);
}

std::optional<std::string> GdiskVerifyBeginWarning(const Topology& t, uint64_t alignment,
                                                   int number, uint64_t start) {
  const uint64_t test = GdiskTestAlignment(t, alignment);
  if (test == 0 || start % test == 0) return std::nullopt;
  return fmt::format(
      "Caution: Partition {} doesn't begin on a {}-sector boundary. This may\nresult in degraded "
      "performance on some modern (2009 and later) hard disks.",
      number, test);
}

std::optional<std::string> GdiskVerifyEndWarning(const Topology& t, uint64_t alignment, int number,
                                                 uint64_t end) {
  const uint64_t test = GdiskTestAlignment(t, alignment);
  if (test == 0 || (end + 1) % test == 0) return std::nullopt;
  return fmt::format(
      "Caution: Partition {} doesn't end on a {}-sector boundary. This may\nresult in problems "
      "with some disk encryption tools.",
      number, test);
}

Result<GdiskPrediction> PredictGdisk(const Topology& t, const ToolVersion& version,
                                     const std::vector<uint64_t>& existing_starts,
                                     std::optional<uint64_t> first_size) {
  Result<ToolEra> era = EraOf(Tool::kGptfdisk, version);
  if (!era) return era.error();
  GdiskPrediction p;
  p.version = version;
  p.era = *era;
  const uint64_t lbs = t.logical_sector_size;
  const uint64_t disk = t.size_bytes / lbs;
  const uint64_t table = (kGdiskGptEntryArrayBytes + lbs - 1) / lbs;
  p.alignment_sectors = DefaultAlignment(version, lbs);
  p.first_usable_lba = 2 + table;
  if (disk < 2 * p.first_usable_lba + 1) return MakeError("the disk is too small for a GPT");
  p.last_usable_lba = disk - p.first_usable_lba;
  p.reasons.push_back(
      fmt::format("gdisk reads only the logical sector ({}) and, for warnings, the physical sector "
                  "(BLKPBSZGET); minimum/optimal I/O and the alignment offset are never read",
                  lbs));
  if (version < kScaledAlignmentSince) {
    p.reasons.push_back(fmt::format(
        "a new table (-o) aligns to 2048 sectors whatever the sector size (gptfdisk {} < 0.6.12)",
        version.ToString()));
  } else {
    p.reasons.push_back(
        fmt::format("a new table (-o) aligns to 1 MiB = 2048 x 512 / {} = {} "
                    "sectors (ClearGPTData)",
                    lbs, p.alignment_sectors));
  }
  p.key_reason = fmt::format(
      "gdisk aligns a new table to {} sectors and never reads minimum/optimal I/O or the "
      "alignment offset",
      p.alignment_sectors);
  // sgdisk -n 1:0:0: the first sector of the largest free area, moved to the alignment (Align():
  // down if that stays >= FirstUsableLBA and free, else up if <= LastUsableLBA).
  uint64_t start = p.first_usable_lba;
  uint64_t a = p.alignment_sectors;
  if (start % a != 0) {
    uint64_t earlier = start / a * a;
    uint64_t later = earlier + a;
    if (earlier >= p.first_usable_lba) {
      start = earlier;
    } else if (later <= p.last_usable_lba) {
      start = later;
    }
  }
  p.first_start = start;
  p.reasons.push_back(fmt::format(
      "FirstUsableLBA is {} (2 + {}/{}); sgdisk -n 1:0:0 moves it up to the next multiple of {}: "
      "{}",
      p.first_usable_lba, kGdiskGptEntryArrayBytes, lbs, a, start));
  if (first_size && start + *first_size - 1 < p.last_usable_lba) {
    uint64_t next = start + *first_size;
    if (next % a != 0) {
      uint64_t later = (next / a + 1) * a;
      if (later <= p.last_usable_lba) next = later;
    }
    p.second_start = next;
  }
  p.verify_warning = GdiskVerifyBeginWarning(t, a, 1, start);
  if (!existing_starts.empty()) {
    p.existing_table_alignment = GdiskComputeAlignment(version, lbs, disk, existing_starts);
    p.reasons.push_back(fmt::format(
        "on the existing table (starts {}) gdisk infers an alignment of {} sectors: the largest "
        "power of two dividing every start{}",
        fmt::join(existing_starts, ", "), *p.existing_table_alignment,
        disk >= (version < kNewThresholdSince ? kSmallestAfOld : kSmallestAfNew)
            ? ", at least 8 on a disk this large"
            : ""));
  }
  return p;
}

}  // namespace partalign
