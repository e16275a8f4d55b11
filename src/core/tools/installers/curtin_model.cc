// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/installers/curtin_model.h"

#include <fmt/format.h>

#include "partalign/tools/installers/installer_version.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

// ONE_MIB_BYTES (block_meta_v2.py) and v1's "Align to 1M" (block_meta.py).
constexpr uint64_t kOneMib = kMiB;
// GPTPartTable._headers(): a start below this is written as first-lba.
constexpr uint64_t kDefaultFirstLba = 2048;
const ToolVersion kV2Since{22, 1, 0, 2};
// subiquity's _partition_alignment_data: min_end_offset = GPT_OVERHEAD / 2 = 1 MiB on GPT, 0 on
// msdos; primary_part_limit 4 on msdos.
constexpr uint64_t kSubiquityGptEndOffset = kMiB;
constexpr size_t kSubiquityDosPrimaries = 4;
// The GPT a fresh `sgdisk` writes: a header and 128 entries of 128 bytes at each end.
constexpr uint64_t kCurtinGptArrayBytes = 128 * 128;
// An msdos entry holds 32-bit sector numbers.
constexpr uint64_t kCurtinDosMaxSector = 0xFFFFFFFFull;

uint64_t CurtinAlignUp(uint64_t value, uint64_t grain) {
  return (value + grain - 1) / grain * grain;
}

const CurtinPlaced* Find(const std::vector<CurtinPlaced>& placed, uint32_t number) {
  for (const CurtinPlaced& p : placed) {
    if (p.number == number) return &p;
  }
  return nullptr;
}

Result<CurtinLayout> PlaceV1(LabelType label, uint64_t lbs,
                             const std::vector<CurtinPartitionAction>& actions) {
  const uint64_t mib = kOneMib / lbs;
  CurtinLayout out;
  uint32_t logical_count = 0;
  for (const CurtinPartitionAction& a : actions) logical_count += a.logical ? 1 : 0;
  const CurtinPartitionAction* extended = nullptr;
  for (size_t i = 0; i < actions.size(); ++i) {
    const CurtinPartitionAction& a = actions[i];
    uint64_t offset = 0;
    if (a.number == 1) {
      offset = mib;
    } else {
      // find_previous_partition(): the partition before this one in the config; for the first
      // logical partition of an msdos disk, the extended one.
      const CurtinPlaced* prev = nullptr;
      if (a.number == 5 && label == LabelType::kDos) {
        if (extended == nullptr) return MakeError("logical partition without extended partition");
        prev = Find(out.partitions, extended->number);
      } else if (i > 0) {
        prev = Find(out.partitions, actions[i - 1].number);
      }
      if (prev == nullptr) return MakeError(fmt::format("no previous partition for {}", a.number));
      if (label == LabelType::kGpt || !a.logical) {
        offset = prev->start_sector + prev->size_sectors;
      } else if (a.number == 5) {
        offset = prev->start_sector + mib;
      } else {
        offset = prev->start_sector + prev->size_sectors + mib;
      }
    }
    uint64_t length = a.size_bytes / lbs - 1;  // "size in sectors - 1"
    if (a.extended) length += logical_count * mib;
    if (a.extended) extended = &a;
    out.partitions.push_back({a.number, offset, length + 1});
    out.commands.push_back(
        label == LabelType::kGpt
            ? fmt::format("sgdisk --new {}:{}:{}", a.number, offset, offset + length)
            : fmt::format("parted DEV --script mkpart {} {}s {}s",
                          a.extended  ? "extended"
                          : a.logical ? "logical"
                                      : "primary",
                          offset, offset + length));
  }
  return out;
}

Result<CurtinLayout> PlaceV2(LabelType label, uint64_t lbs,
                             const std::vector<CurtinPartitionAction>& actions) {
  if (kOneMib % lbs != 0) {
    return MakeError(fmt::format("sector_bytes {} does not divide 1MiB, cannot continue!", lbs));
  }
  const uint64_t mib = kOneMib / lbs;
  CurtinLayout out;
  std::optional<size_t> extended;  // index: the vector grows
  for (const CurtinPartitionAction& a : actions) {
    std::optional<uint64_t> start;
    if (a.offset_bytes) start = *a.offset_bytes / lbs;
    if (label == LabelType::kGpt) {
      if (!start) {
        start =
            out.partitions.empty()
                ? mib
                : CurtinAlignUp(
                      out.partitions.back().start_sector + out.partitions.back().size_sectors, mib);
      }
    } else if (a.logical || a.number > 4) {
      if (!extended) return MakeError("logical partition without extended partition");
      const CurtinPlaced* prev = nullptr;
      for (const CurtinPlaced& p : out.partitions) {
        if (p.number > 4) prev = &p;
      }
      if (!start) {
        start = prev == nullptr ? CurtinAlignUp(out.partitions[*extended].start_sector + mib, mib)
                                : CurtinAlignUp(prev->start_sector + prev->size_sectors + mib, mib);
      }
    } else {
      if (!start) {
        const CurtinPlaced* prev = nullptr;
        for (const CurtinPlaced& p : out.partitions) {
          if (p.number <= 4) prev = &p;
        }
        start = prev == nullptr ? mib : CurtinAlignUp(prev->start_sector + prev->size_sectors, mib);
      }
    }
    uint32_t number = a.number;
    if (label == LabelType::kDos && (a.logical || a.number > 4)) {
      number = 5;
      for (const CurtinPlaced& p : out.partitions) {
        if (p.number > 4) number = p.number + 1;
      }
    }
    out.partitions.push_back({number, *start, a.size_bytes / lbs});
    if (a.extended) extended = out.partitions.size() - 1;
    out.commands.push_back(
        fmt::format("{}:  start={} size={}", number, *start, a.size_bytes / lbs));
  }
  if (label == LabelType::kGpt) {
    uint64_t min_start = kDefaultFirstLba;
    for (const CurtinPlaced& p : out.partitions) min_start = std::min(min_start, p.start_sector);
    if (min_start < kDefaultFirstLba) out.first_lba = min_start;
  }
  return out;
}

}  // namespace

Result<CurtinLayout> PlaceCurtin(int storage_version, LabelType label, uint64_t lbs,
                                 const std::vector<CurtinPartitionAction>& actions) {
  if (label != LabelType::kGpt && label != LabelType::kDos) {
    return MakeError("curtin is modelled for gpt and msdos only");
  }
  if (storage_version == 1) return PlaceV1(label, lbs, actions);
  if (storage_version == 2) return PlaceV2(label, lbs, actions);
  return MakeError(fmt::format("storage config version {} does not exist", storage_version));
}

Result<CurtinPrediction> PredictCurtin(const Topology& t, const ToolVersion& version,
                                       uint64_t first_size) {
  Result<ToolEra> era = InstallerEraOf(Installer::kCurtin, version);
  if (!era) return era.error();
  CurtinPrediction p;
  p.version = version;
  p.era = *era;
  const uint64_t lbs = t.logical_sector_size;
  p.grain_sectors = kOneMib / lbs;
  std::vector<CurtinPartitionAction> actions{{1, first_size, {}, false, false},
                                             {2, first_size, {}, false, false}};
  Result<CurtinLayout> v1 = PlaceCurtin(1, LabelType::kGpt, lbs, actions);
  if (!v1) return v1.error();
  p.first_start = v1->partitions[0].start_sector;
  p.second_start = v1->partitions[1].start_sector;
  p.reasons.push_back(fmt::format(
      "curtin reads only the logical sector size ({}); the topology is never consulted", lbs));
  p.reasons.push_back(fmt::format(
      "storage config v1 (subiquity's default): partition 1 at 1 MiB = sector {}, the next one "
      "right after the previous ({}, {})",
      p.first_start, v1->commands[0], v1->commands[1]));
  if (version >= kV2Since) {
    Result<CurtinLayout> v2 = PlaceCurtin(2, LabelType::kGpt, lbs, actions);
    if (v2) {
      p.reasons.push_back(fmt::format(
          "storage config v2 (curtin {} >= 22.1: subiquity-storage-version=2, core-boot "
          "installs): an sfdisk script, each default start rounded up to 1 MiB: {} and {}",
          version.ToString(), v2->partitions[0].start_sector, v2->partitions[1].start_sector));
    }
  }
  p.key_reason = fmt::format(
      "curtin starts at a fixed 1 MiB (sector {}) and never reads the topology", p.first_start);
  return p;
}

LayoutPrediction CurtinLayoutPrediction(const Topology& t, const ToolVersion& version,
                                        const LayoutRequest& r) {
  LayoutPrediction p = NewInstallerLayoutPrediction(Installer::kCurtin, version);
  if (!p.error.empty()) return p;
  const uint64_t lbs = t.logical_sector_size;
  const uint64_t sectors = t.size_bytes / lbs;
  const bool gpt = r.label == LabelType::kGpt;
  const uint64_t array = (kCurtinGptArrayBytes + lbs - 1) / lbs;
  const uint64_t last_usable =
      gpt ? (sectors > array + 2 ? sectors - array - 2 : 0)
          : std::min<uint64_t>(sectors > 0 ? sectors - 1 : 0, kCurtinDosMaxSector);
  const size_t count = r.sizes_bytes.size();
  const size_t modelled =
      !gpt && count >= kSubiquityDosPrimaries ? kSubiquityDosPrimaries - 1 : count;
  std::vector<CurtinPartitionAction> actions;
  uint64_t used = kOneMib;  // find_disk_gaps_v1: min_start_offset, then each size rounded up
  for (size_t i = 0; i < modelled; ++i) {
    const auto asked = static_cast<uint32_t>(i + 1);
    uint64_t size = 0;
    if (r.sizes_bytes[i]) {
      size = *r.sizes_bytes[i];
    } else {
      const uint64_t end_offset = gpt ? kSubiquityGptEndOffset : 0;
      const uint64_t end =
          t.size_bytes > end_offset ? (t.size_bytes - end_offset) / kOneMib * kOneMib : 0;
      if (end < used || end - used < kOneMib) {
        p.error = fmt::format(
            "partition {}: subiquity lists no gap of at least 1 MiB for the rest (its v1 gap "
            "would run from {} to {})",
            asked, used, end);
        break;
      }
      size = end - used;
      p.reasons.push_back(fmt::format(
          "partition {}: the rest is subiquity's v1 gap: {} bytes, from {} to {} (1 MiB plus "
          "each earlier size rounded up to 1 MiB, to the disk's end{} rounded down to 1 MiB)",
          asked, size, used, end, gpt ? " less 1 MiB" : ""));
    }
    if (size < lbs) {
      p.error = fmt::format("partition {}: {} bytes is less than a sector", asked, size);
      break;
    }
    used = CurtinAlignUp(used + size, kOneMib);
    actions.push_back({asked, size, {}, false, false});
  }
  Result<CurtinLayout> v1 = PlaceCurtin(1, r.label, lbs, actions);
  if (!v1) {
    p.error = v1.error().message;
    return p;
  }
  p.command = v1->commands;
  for (const CurtinPlaced& q : v1->partitions) {
    const uint64_t end = q.start_sector + q.size_sectors - 1;
    if (end > last_usable) {
      p.error = fmt::format("partition {}: {}s-{}s ends past the last usable sector {}: {} fails",
                            q.number, q.start_sector, end, last_usable,
                            gpt ? "sgdisk --new" : "parted mkpart");
      break;
    }
    p.partitions.push_back({q.number, PlacedKind::kPrimary, q.start_sector, end});
  }
  if (p.error.empty()) {
    for (size_t i = modelled; i < count; ++i) {
      p.omitted.push_back({static_cast<uint32_t>(i + 1), false,
                           "subiquity makes the fourth and later partitions of an msdos disk "
                           "logical ones in an extended partition, which is not modelled"});
    }
  }
  return p;
}

}  // namespace partalign
