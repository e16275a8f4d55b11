// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/layout/layout_preview.h"

#include <algorithm>

#include <fmt/format.h>

#include "partalign/topology/alignment.h"
#include "partalign/util/json_util.h"
#include "partalign/util/shell_quote.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

// The UEFI minimum: protective MBR, header and a 16 KiB entry array at each end (the backup
// without the MBR); DOS: the MBR, and 32-bit sector numbers.
constexpr uint64_t kPreviewGptEntryArrayBytes = 128 * 128;
constexpr uint64_t kPreviewDosLastSector = 0xFFFFFFFFull;

struct Area {
  uint64_t first = 0;
  uint64_t last = 0;
};

Area UsableArea(LabelType label, const Topology& t) {
  const uint64_t lbs = t.logical_sector_size;
  const uint64_t sectors = t.size_bytes / lbs;
  if (label == LabelType::kGpt) {
    const uint64_t entries = (kPreviewGptEntryArrayBytes + lbs - 1) / lbs;
    if (sectors < 2 * (2 + entries) + 1) return {1, 0};
    return {2 + entries, sectors - 2 - entries};
  }
  return {1, std::min(sectors - 1, kPreviewDosLastSector)};
}

std::vector<PlacedPartition> Level(const LayoutPrediction& p, bool logical) {
  std::vector<PlacedPartition> out;
  for (const PlacedPartition& q : p.partitions) {
    if ((q.kind == PlacedKind::kLogical) == logical) out.push_back(q);
  }
  std::sort(out.begin(), out.end(), [](const PlacedPartition& a, const PlacedPartition& b) {
    return a.start_sector < b.start_sector;
  });
  return out;
}

// The first sector a partition could use at its level, before `q`.
uint64_t LevelStart(const LayoutPrediction& p, const PlacedPartition& q, Area area) {
  if (q.kind != PlacedKind::kLogical) return area.first;
  for (const PlacedPartition& e : p.partitions) {
    if (e.kind == PlacedKind::kExtended) return e.start_sector + 1;
  }
  return area.first;
}

uint64_t GapBefore(const LayoutPrediction& p, const PlacedPartition& q, Area area) {
  uint64_t from = LevelStart(p, q, area);
  for (const PlacedPartition& o : Level(p, q.kind == PlacedKind::kLogical)) {
    if (o.start_sector < q.start_sector) from = std::max(from, o.end_sector + 1);
  }
  return q.start_sector > from ? q.start_sector - from : 0;
}

}  // namespace

LayoutRequest RequestOf(const LayoutSpec& spec, uint64_t sector_size) {
  LayoutRequest r;
  r.label = spec.label;
  for (const LayoutItem& it : spec.items) r.sizes_bytes.push_back(it.SizeBytes(sector_size));
  return r;
}

std::optional<LayoutRequest> RequestOfTable(const PartitionTable& table) {
  if (table.label != LabelType::kGpt && table.label != LabelType::kDos) return std::nullopt;
  std::vector<const Partition*> parts;
  for (const Partition& p : table.partitions) {
    if (p.kind != PartitionKind::kExtended) parts.push_back(&p);
  }
  if (parts.empty()) return std::nullopt;
  std::sort(parts.begin(), parts.end(), [](const Partition* a, const Partition* b) {
    return a->start_sector < b->start_sector;
  });
  LayoutRequest r;
  r.label = table.label;
  for (const Partition* p : parts) r.sizes_bytes.push_back(p->size_sectors * table.sector_size);
  return r;
}

LayoutPrediction PartalignPlacement(const LayoutSpec& spec, const Topology& t) {
  LayoutPrediction p;
  p.tool = "partalign";
  AlignmentRecommendation a = RecommendAlignment(t);
  // The spec as given, quoted for a shell; DEV as in every tool's command (NameTarget).
  p.command.push_back(spec.text.empty()
                          ? "partalign plan --layout SPEC DEV"
                          : "partalign plan --layout " + ShellQuote(spec.text) + " DEV");
  p.reasons = a.reasons;
  Result<PlanLayout> layout =
      MakeLayout(spec, t.size_bytes / t.logical_sector_size, t.logical_sector_size, a.alignment);
  if (!layout) {
    p.error = layout.error().message;
    return p;
  }
  for (const LayoutPartition& q : layout->partitions) {
    p.partitions.push_back({q.partition, PlacedKind::kPrimary, q.start_sector, q.end_sector});
  }
  return p;
}

void NameTarget(LayoutPreview& preview, const std::string& target) {
  constexpr std::string_view kDev = " DEV";
  for (LayoutPrediction& p : preview.predictions) {
    if (p.tool != "partalign" || p.command.empty()) continue;
    std::string& line = p.command.front();
    if (line.size() >= kDev.size() && line.ends_with(kDev)) {
      line.replace(line.size() - kDev.size(), kDev.size(), " " + ShellQuote(target));
    }
  }
}

LayoutPreview PreviewRequest(const LayoutRequest& request, const Topology& topology,
                             const ToolVersions& versions) {
  return {request, topology, PredictLayouts(topology, versions, request)};
}

LayoutPreview PreviewLayout(const LayoutSpec& spec, const Topology& topology,
                            const ToolVersions& versions) {
  LayoutPreview preview =
      PreviewRequest(RequestOf(spec, topology.logical_sector_size), topology, versions);
  preview.predictions.push_back(PartalignPlacement(spec, topology));
  return preview;
}

std::vector<LayoutGap> GapsOf(const LayoutPrediction& p, const LayoutRequest& r,
                              const Topology& t) {
  const Area area = UsableArea(r.label, t);
  std::vector<LayoutGap> gaps;
  for (bool logical : {false, true}) {
    std::vector<PlacedPartition> level = Level(p, logical);
    for (const PlacedPartition& q : level) {
      uint64_t gap = GapBefore(p, q, area);
      if (gap > 0) gaps.push_back({q.start_sector - gap, q.start_sector - 1});
    }
    if (!logical && !level.empty() && level.back().end_sector < area.last) {
      gaps.push_back({level.back().end_sector + 1, area.last});
    }
  }
  std::sort(gaps.begin(), gaps.end(),
            [](const LayoutGap& a, const LayoutGap& b) { return a.start_sector < b.start_sector; });
  return gaps;
}

std::vector<std::string> LayoutFaults(const LayoutPrediction& p, const LayoutRequest& r,
                                      const Topology& t) {
  const Area area = UsableArea(r.label, t);
  const PlacedPartition* extended = nullptr;
  for (const PlacedPartition& q : p.partitions) {
    if (q.kind == PlacedKind::kExtended) extended = &q;
  }
  std::vector<std::string> faults;
  for (size_t i = 0; i < p.partitions.size(); ++i) {
    const PlacedPartition& q = p.partitions[i];
    if (q.end_sector < q.start_sector || q.start_sector < area.first || q.end_sector > area.last) {
      faults.push_back(fmt::format("partition {} ({}-{}) is not inside the usable area {}-{}",
                                   q.number, q.start_sector, q.end_sector, area.first, area.last));
    }
    if (q.kind == PlacedKind::kLogical && (!extended || q.start_sector <= extended->start_sector ||
                                           q.end_sector > extended->end_sector)) {
      faults.push_back(
          fmt::format("logical partition {} is not inside the extended partition", q.number));
    }
    for (size_t j = i + 1; j < p.partitions.size(); ++j) {
      const PlacedPartition& o = p.partitions[j];
      const bool same_level = (o.kind == PlacedKind::kLogical) == (q.kind == PlacedKind::kLogical);
      if (same_level && o.start_sector <= q.end_sector && q.start_sector <= o.end_sector) {
        faults.push_back(fmt::format("partitions {} ({}-{}) and {} ({}-{}) overlap", q.number,
                                     q.start_sector, q.end_sector, o.number, o.start_sector,
                                     o.end_sector));
      }
    }
  }
  return faults;
}

nlohmann::json LayoutPredictionsJson(const LayoutPreview& preview) {
  const uint64_t lbs = preview.topology.logical_sector_size;
  const Alignment a = RecommendAlignment(preview.topology).alignment;
  nlohmann::json list = nlohmann::json::array();
  for (const LayoutPrediction& p : preview.predictions) {
    nlohmann::json parts = nlohmann::json::array();
    for (const PlacedPartition& q : p.partitions) {
      parts.push_back({{"number", q.number},
                       {"kind", ToString(q.kind)},
                       {"start_sector", q.start_sector},
                       {"end_sector", q.end_sector},
                       {"size_bytes", (q.end_sector - q.start_sector + 1) * lbs},
                       {"aligned", a.IsAligned(q.start_sector * lbs)}});
    }
    nlohmann::json gaps = nlohmann::json::array();
    for (const LayoutGap& g : GapsOf(p, preview.request, preview.topology)) {
      gaps.push_back({{"start_sector", g.start_sector}, {"end_sector", g.end_sector}});
    }
    nlohmann::json omitted = nlohmann::json::array();
    for (const OmittedPartition& o : p.omitted) {
      omitted.push_back({{"number", o.number}, {"modelled", o.modelled}, {"reason", o.reason}});
    }
    list.push_back({{"tool", p.tool},
                    {"command", p.command},
                    {"partitions", parts},
                    {"gaps", gaps},
                    {"omitted", omitted},
                    {"faults", LayoutFaults(p, preview.request, preview.topology)},
                    {"warnings", p.warnings},
                    {"error", p.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.error)},
                    {"reasons", p.reasons}});
  }
  return list;
}

std::vector<std::string> LayoutPreviewColumns() {
  return {"TOOL", "NR", "KIND", "START", "END", "SIZE", "GAP-BEFORE", "ALIGNED"};
}

std::vector<std::vector<std::string>> LayoutPreviewRows(const LayoutPreview& preview) {
  const uint64_t lbs = preview.topology.logical_sector_size;
  const Alignment a = RecommendAlignment(preview.topology).alignment;
  const Area area = UsableArea(preview.request.label, preview.topology);
  std::vector<std::vector<std::string>> rows;
  for (const LayoutPrediction& p : preview.predictions) {
    if (p.partitions.empty() && p.omitted.empty()) {
      rows.push_back({p.tool, "-", "-", "-", "-", "-", "-", p.error.empty() ? "-" : "refuses"});
      continue;
    }
    for (const PlacedPartition& q : p.partitions) {
      uint64_t gap = GapBefore(p, q, area);
      rows.push_back({p.tool, std::to_string(q.number), std::string(ToString(q.kind)),
                      std::to_string(q.start_sector), std::to_string(q.end_sector),
                      FormatSize((q.end_sector - q.start_sector + 1) * lbs),
                      gap == 0 ? "0" : std::to_string(gap),
                      a.IsAligned(q.start_sector * lbs) ? "yes" : "no"});
    }
    for (const OmittedPartition& o : p.omitted) {
      rows.push_back({p.tool, std::to_string(o.number), "-",
                      o.modelled ? "skipped" : "not modelled", "-", "-", "-", "-"});
    }
  }
  return rows;
}

std::vector<std::string> LayoutPreviewLines(const LayoutPreview& preview) {
  std::vector<std::string> lines;
  for (const LayoutPrediction& p : preview.predictions) {
    lines.push_back(fmt::format("{}: {}", p.tool, p.command.empty() ? "" : p.command.front()));
    for (size_t i = 1; i < p.command.size(); ++i) lines.push_back("    " + p.command[i]);
    for (const std::string& w : p.warnings) lines.push_back("  prints: " + w);
    for (const OmittedPartition& o : p.omitted) {
      lines.push_back(fmt::format("  partition {} {}: {}", o.number,
                                  o.modelled ? "skipped" : "not modelled", o.reason));
    }
    for (const std::string& f : LayoutFaults(p, preview.request, preview.topology)) {
      lines.push_back("  makes a broken table: " + f);
    }
    if (!p.error.empty()) {
      lines.push_back(fmt::format("  fails: {}{}", p.error,
                                  p.partitions.empty() ? "" : " (the partitions above stay)"));
    }
  }
  return lines;
}

}  // namespace partalign
