// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/installers/libstorage_model.h"

#include <algorithm>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "partalign/tools/installers/installer_version.h"
#include "partalign/tools/parted_disk.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

// Msdos::Impl::num_ebrs (MsdosImpl.h): sectors kept free before a logical partition.
constexpr uint64_t kNumEbrs = 128;
// A GPT entry is 128 bytes (GptImpl.cc unusable_sectors()).
constexpr uint64_t kLibstorageGptEntryBytes = 128;
// The msdos table addresses 2^32 sectors; libstorage-ng allows UINT32_MAX as a length.
constexpr uint64_t kLibstorageMsdosMaxLength = 0xFFFFFFFFull;
// Msdos::Impl::max_primary, max_logical (range 256 of an sd disk minus 1); GPT 128 entries.
constexpr uint32_t kMsdosMaxPrimary = 4;
constexpr uint32_t kMsdosMaxLogical = 255;

// unusable_sectors(): blocks kept at the front and at the back of the disk.
std::pair<uint64_t, uint64_t> UnusableBlocks(const LibstorageTable& t) {
  if (t.label == LabelType::kGpt) {
    uint64_t array = 1 + t.gpt_partition_slots * kLibstorageGptEntryBytes / t.block_size;
    return {1 + array, array};
  }
  uint64_t front = std::max<uint64_t>(1, t.minimal_mbr_gap_bytes / t.block_size);
  uint64_t back =
      t.disk_blocks > kLibstorageMsdosMaxLength ? t.disk_blocks - kLibstorageMsdosMaxLength : 0;
  return {front, back};
}

// Region::unused_regions(): the gaps of `area` between the sorted used regions; a last gap is
// kept only when its end lies beyond its start (a one-block gap at the end is dropped).
std::vector<LibstorageRegion> UnusedRegions(const LibstorageRegion& area,
                                            std::vector<LibstorageRegion> used) {
  std::sort(used.begin(), used.end(),
            [](const LibstorageRegion& a, const LibstorageRegion& b) { return a.start < b.start; });
  uint64_t start = area.start;
  const uint64_t end = area.end();
  std::vector<LibstorageRegion> out;
  for (const LibstorageRegion& u : used) {
    if (u.end() < start || u.start > end) continue;
    if (u.start > start) out.push_back({start, u.start - start, area.block_size});
    start = std::max(start, u.end() + 1);
  }
  if (end > start) out.push_back({start, end - start + 1, area.block_size});
  return out;
}

uint32_t FirstMissingNumber(const std::vector<LibstoragePartition>& partitions) {
  std::set<uint32_t> used;
  for (const LibstoragePartition& p : partitions) used.insert(p.number);
  uint32_t n = 1;
  while (used.count(n) != 0) ++n;
  return n;
}

}  // namespace

uint64_t LibstorageGrain(const LibstorageAlignment& a) {
  uint64_t grain = 1;
  if (a.type == LibstorageAlignType::kOptimal) {
    grain = std::max(a.topology.optimal_io_size, grain);
    while (grain < a.topology.minimal_grain) grain *= 2;
  }
  if (a.extra_grain > 0) grain = std::lcm(grain, a.extra_grain);
  return grain;
}

bool LibstorageAlignBlock(const LibstorageAlignment& a, uint64_t* block, uint64_t block_size,
                          bool is_end) {
  // Signed division, then the unsigned subtraction of the original (a negative offset adds).
  const auto offset_blocks =
      static_cast<uint64_t>(a.topology.alignment_offset / static_cast<int64_t>(block_size));
  const uint64_t grain = std::max(LibstorageGrain(a), block_size) / block_size;
  uint64_t b = *block - offset_blocks;
  if (!is_end) {
    uint64_t rest = b % grain;
    if (rest != 0) b += grain - rest;
  } else {
    uint64_t rest = (b + 1) % grain;
    if (rest > b) return false;
    b -= rest;
  }
  *block = b + offset_blocks;
  return true;
}

std::optional<LibstorageRegion> LibstorageAlignRegion(const LibstorageAlignment& a,
                                                      const LibstorageRegion& region,
                                                      LibstorageAlignPolicy policy) {
  const uint64_t bs = region.block_size;
  uint64_t start = region.start;
  if (policy != LibstorageAlignPolicy::kKeepStartAlignEnd &&
      !LibstorageAlignBlock(a, &start, bs, /*is_end=*/false)) {
    return std::nullopt;
  }
  uint64_t length = 0;
  switch (policy) {
    case LibstorageAlignPolicy::kKeepStartAlignEnd:
    case LibstorageAlignPolicy::kAlignStartAndEnd: {
      uint64_t end = region.end();
      if (!LibstorageAlignBlock(a, &end, bs, /*is_end=*/true)) return std::nullopt;
      if (end + 1 <= start) return std::nullopt;
      length = end - start + 1;
      break;
    }
    case LibstorageAlignPolicy::kAlignStartKeepSize:
      length = region.length;
      break;
    case LibstorageAlignPolicy::kAlignStartKeepEnd: {
      uint64_t delta = start - region.start;
      if (region.length <= delta) return std::nullopt;
      length = region.length - delta;
      break;
    }
  }
  return LibstorageRegion{start, length, bs};
}

std::vector<LibstorageSlot> LibstorageUnusedSlots(const LibstorageTable& t,
                                                  const LibstorageAlignment& a,
                                                  LibstorageAlignPolicy policy) {
  const bool msdos = t.label == LabelType::kDos;
  const uint32_t max_primary =
      msdos ? kMsdosMaxPrimary
            : static_cast<uint32_t>(std::min<uint64_t>(t.gpt_partition_slots, 255));
  uint32_t num_primary = 0, num_logical = 0;
  const LibstoragePartition* extended = nullptr;
  for (const LibstoragePartition& p : t.partitions) {
    if (p.type == LibstoragePartitionType::kPrimary) ++num_primary;
    if (p.type == LibstoragePartitionType::kLogical) ++num_logical;
    if (p.type == LibstoragePartitionType::kExtended) extended = &p;
  }
  const bool has_extended = extended != nullptr;
  const bool primary_possible = num_primary + (has_extended ? 1 : 0) < max_primary;
  const bool extended_possible = primary_possible && msdos && !has_extended;
  const bool logical_possible = has_extended && num_logical < kMsdosMaxLogical - max_primary;

  std::vector<LibstorageSlot> slots;
  auto [front, back] = UnusableBlocks(t);
  if (t.disk_blocks > front + back) {
    LibstorageSlot slot;
    slot.number = FirstMissingNumber(t.partitions);
    slot.primary_slot = true;
    slot.primary_possible = primary_possible;
    slot.extended_slot = msdos;
    slot.extended_possible = extended_possible;
    std::vector<LibstorageRegion> used;
    for (const LibstoragePartition& p : t.partitions) {
      if (p.type != LibstoragePartitionType::kLogical) {
        used.push_back({p.start, p.length, t.block_size});
      }
    }
    LibstorageRegion usable{front, t.disk_blocks - (front + back), t.block_size};
    for (const LibstorageRegion& gap : UnusedRegions(usable, used)) {
      if (std::optional<LibstorageRegion> r = LibstorageAlignRegion(a, gap, policy)) {
        slot.region = *r;
        slots.push_back(slot);
      }
    }
  }
  if (has_extended) {
    LibstorageSlot slot;
    slot.number = max_primary + num_logical + 1;
    slot.logical_slot = true;
    slot.logical_possible = logical_possible;
    std::vector<LibstorageRegion> used;
    for (const LibstoragePartition& p : t.partitions) {
      if (p.type == LibstoragePartitionType::kLogical) {
        used.push_back({p.start, p.length, t.block_size});
      }
    }
    LibstorageRegion ext{extended->start, extended->length, t.block_size};
    for (const LibstorageRegion& gap : UnusedRegions(ext, used)) {
      // Room for the EBRs: before the new partition, and before the one after it unless the
      // gap ends the extended partition.
      const bool at_end = gap.end() == ext.end();
      const uint64_t keep = (at_end ? 1 : 2) * kNumEbrs;
      if (gap.length <= keep) continue;
      LibstorageRegion adjusted{gap.start + kNumEbrs, gap.length - keep, t.block_size};
      if (std::optional<LibstorageRegion> r = LibstorageAlignRegion(a, adjusted, policy)) {
        slot.region = *r;
        slots.push_back(slot);
      }
    }
  }
  return slots;
}

LibstorageTopology LibstorageTopologyOf(const Topology& t) {
  LibstorageTopology lt;
  if (t.origin != TopologyOrigin::kDefault) {
    lt.alignment_offset = static_cast<int64_t>(t.alignment_offset);
    lt.optimal_io_size = t.optimal_io_size;
  }
  return lt;
}

Result<LibstoragePrediction> PredictLibstorage(const Topology& t, const ToolVersion& version,
                                               LabelType label,
                                               std::optional<uint64_t> first_size) {
  Result<ToolEra> era = InstallerEraOf(Installer::kLibstorageNg, version);
  if (!era) return era.error();
  LibstoragePrediction p;
  p.version = version;
  p.era = *era;
  p.topology = LibstorageTopologyOf(t);
  LibstorageAlignment a{p.topology, LibstorageAlignType::kOptimal, 0};
  const uint64_t lbs = t.logical_sector_size;
  p.grain_bytes = LibstorageGrain(a);
  p.offset_sectors = p.topology.alignment_offset / static_cast<int64_t>(lbs);
  if (t.origin == TopologyOrigin::kDefault) {
    p.reasons.push_back(
        "an image file has no sysfs queue/optimal_io_size or alignment_offset: both read as 0");
  } else {
    p.reasons.push_back(fmt::format(
        "libstorage-ng reads sysfs alignment_offset {} and queue/optimal_io_size {}; physical "
        "sector and minimum I/O are never read (BlkDeviceImpl.cc probe_topology)",
        t.alignment_offset, t.optimal_io_size));
  }
  const uint64_t opt = p.topology.optimal_io_size;
  if (opt == 0) {
    p.key_reason = "libstorage-ng has no optimal I/O to follow and aligns to 1 MiB";
  } else if (opt >= p.topology.minimal_grain) {
    p.key_reason = fmt::format(
        "libstorage-ng takes the optimal I/O {} as its grain ({} sectors), without any sanity "
        "check",
        opt, p.grain_bytes / lbs);
  } else {
    p.key_reason = fmt::format(
        "libstorage-ng doubles the optimal I/O {} until it reaches 1 MiB: grain {} ({} sectors)",
        opt, p.grain_bytes, p.grain_bytes / lbs);
  }
  p.reasons.push_back(
      fmt::format("grain = optimal I/O {} doubled until >= 1 MiB = {} bytes = {} sectors "
                  "(Alignment::Impl::calculate_grain)",
                  opt, p.grain_bytes, p.grain_bytes / lbs));
  if (p.offset_sectors != 0) {
    p.reasons.push_back(fmt::format("every start is shifted by the alignment offset {} / {} = {}",
                                    t.alignment_offset, lbs, p.offset_sectors));
  }
  LibstorageTable table;
  table.label = label;
  table.block_size = lbs;
  table.disk_blocks = t.size_bytes / lbs;
  std::vector<LibstorageSlot> slots = LibstorageUnusedSlots(table, a);
  auto [front, back] = UnusableBlocks(table);
  std::string area = label == LabelType::kGpt
                         ? fmt::format(
                               "a new GPT keeps {} sectors before the first partition "
                               "(protective MBR, header, 128 entries)",
                               front)
                         : fmt::format(
                               "a new msdos table keeps the MBR gap of 1 MiB = {} "
                               "sectors (minimal-mbr-gap)",
                               front);
  (void)back;
  if (slots.empty()) {
    p.reasons.push_back(area + "; no aligned slot is left on this disk");
    return p;
  }
  p.first_start = slots.front().region.start;
  p.reasons.push_back(fmt::format("{}; the first unused slot starts at the next aligned sector: {}",
                                  area, *p.first_start));
  if (first_size) {
    LibstorageRegion first{*p.first_start, *first_size / lbs, lbs};
    std::optional<LibstorageRegion> placed =
        first.length <= slots.front().region.length
            ? LibstorageAlignRegion(a, first, LibstorageAlignPolicy::kKeepStartAlignEnd)
            : std::nullopt;
    if (placed) {
      table.partitions.push_back(
          {1, LibstoragePartitionType::kPrimary, placed->start, placed->length});
      std::vector<LibstorageSlot> after = LibstorageUnusedSlots(table, a);
      for (const LibstorageSlot& s : after) {
        if (s.region.start > placed->start) {
          p.second_start = s.region.start;
          break;
        }
      }
    }
  }
  return p;
}

namespace {

// More partitions than a DOS table holds as primaries: the fourth and later ones need an
// extended partition.
constexpr size_t kLayoutDosPrimaries = 4;

// The optimal slots a new primary partition can use (AddPartition#unused_optimal_slots,
// filtered by PartitionSlot#possible?).
std::vector<LibstorageSlot> PrimarySlots(const LibstorageTable& table,
                                         const LibstorageAlignment& a) {
  std::vector<LibstorageSlot> out;
  for (const LibstorageSlot& s : LibstorageUnusedSlots(table, a)) {
    if (s.primary_slot && s.primary_possible) out.push_back(s);
  }
  return out;
}

}  // namespace

LayoutPrediction LibstorageLayoutPrediction(const Topology& t, const ToolVersion& version,
                                            const ToolVersion& parted_version,
                                            const LayoutRequest& r) {
  LayoutPrediction p = NewInstallerLayoutPrediction(Installer::kLibstorageNg, version);
  if (!p.error.empty()) return p;
  const uint64_t lbs = t.logical_sector_size;
  const LibstorageAlignment a{LibstorageTopologyOf(t), LibstorageAlignType::kOptimal, 0};
  const uint64_t grain = std::max(LibstorageGrain(a), lbs);
  LibstorageTable table;
  table.label = r.label;
  table.block_size = lbs;
  table.disk_blocks = t.size_bytes / lbs;
  p.reasons.push_back(fmt::format(
      "optimal grain {} bytes ({} sectors{}): the smallest custom size the Partitioner takes "
      "(AddPartition#optimal_grain)",
      grain, grain / lbs,
      a.topology.alignment_offset != 0
          ? fmt::format(", shifted by the alignment offset {}", a.topology.alignment_offset)
          : ""));
  Result<PartedModel> parted = MakePartedModel(t, parted_version);
  std::optional<PartedDisk> disk;
  if (parted) disk.emplace(*parted, r.label);
  const size_t count = r.sizes_bytes.size();
  const bool needs_extended = r.label == LabelType::kDos && count > kLayoutDosPrimaries;
  for (size_t i = 0; i < count; ++i) {
    const auto asked = static_cast<uint32_t>(i + 1);
    if (needs_extended && i + 1 >= kLayoutDosPrimaries) {
      p.omitted.push_back(
          {asked, false,
           "a DOS layout of more than four partitions needs an extended partition, which YaST's "
           "Partitioner makes only when asked; its size and its logical partitions are not "
           "modelled"});
      continue;
    }
    std::vector<LibstorageSlot> slots = PrimarySlots(table, a);
    if (slots.empty()) {
      p.error = fmt::format("partition {}: no free optimally aligned slot is left", asked);
      break;
    }
    // Ruby's max_by and min_by keep the first of equals.
    const LibstorageSlot* largest = &slots.front();
    for (const LibstorageSlot& s : slots) {
      if (s.region.length > largest->region.length) largest = &s;
    }
    const std::optional<uint64_t>& size = r.sizes_bytes[i];
    const LibstorageSlot* slot = largest;
    LibstorageRegion region = largest->region;
    if (size) {
      const uint64_t max = largest->region.length * lbs;
      if (*size < grain || *size > max) {
        p.error = fmt::format(
            "partition {}: YaST's Partitioner takes a custom size from {} (the optimal grain) to "
            "{} (the largest free slot) only, not {}",
            asked, FormatSize(grain), FormatSize(max), FormatSize(*size));
        break;
      }
      slot = nullptr;
      for (const LibstorageSlot& s : slots) {
        if (s.region.length * lbs >= *size && (!slot || s.region.length < slot->region.length)) {
          slot = &s;
        }
      }
      region = {slot->region.start, (*size + lbs - 1) / lbs, lbs};
      if (region.end() != slot->region.end()) {
        std::optional<LibstorageRegion> aligned =
            LibstorageAlignRegion(a, region, LibstorageAlignPolicy::kKeepStartAlignEnd);
        // AddPartition#align's rescue: the smallest region REQUIRED alignment allows.
        region = aligned ? *aligned : LibstorageRegion{slot->region.start, 1, lbs};
      }
      p.reasons.push_back(fmt::format(
          "partition {}: custom size {}: the smallest slot that holds it starts at {}; {} "
          "sectors{}",
          asked, FormatSize(*size), slot->region.start, region.length,
          region.end() == slot->region.end()
              ? ", which end the slot: the end is kept"
              : fmt::format(", the end aligned down to {} (align_end, KEEP_START_ALIGN_END)",
                            region.end())));
    } else {
      p.reasons.push_back(fmt::format("partition {}: maximum size: the whole largest slot, {}-{}",
                                      asked, region.start, region.end()));
    }
    const uint32_t number = slot->number;
    table.partitions.push_back(
        {number, LibstoragePartitionType::kPrimary, region.start, region.length});
    p.partitions.push_back({number, PlacedKind::kPrimary, region.start, region.end()});
    if (disk) {
      // What libstorage-ng runs at commit (PartitionImpl.cc): the exact sectors.
      MkpartOutcome o =
          disk->Mkpart(PartedMode::kOptimal, PartedPartType::kPrimary,
                       fmt::format("{}s", region.start), fmt::format("{}s", region.end()));
      if (o.warning) p.warnings.push_back(*o.warning);
      if (!o.created) {
        p.partitions.pop_back();
        p.error = fmt::format("partition {}: at commit parted refuses {}s-{}s: {}", asked,
                              region.start, region.end(), o.error);
        break;
      }
    }
  }
  std::sort(p.partitions.begin(), p.partitions.end(),
            [](const PlacedPartition& x, const PlacedPartition& y) {
              return x.start_sector < y.start_sector;
            });
  return p;
}

}  // namespace partalign
