// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/layout_prediction.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "partalign/tools/installers/installer_layout.h"
#include "partalign/tools/parted_disk.h"
#include "partalign/tools/repart_layout.h"
#include "partalign/tools/sfdisk_layout.h"
#include "partalign/tools/sgdisk_layout.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

// A DOS table holds four primary partitions; a fifth needs the fourth slot as an extended one.
constexpr size_t kPredictionDosPrimaries = 4;
// parted's MiB layouts start where everybody starts, and leave this much before each logical
// partition (its EBR needs at least a sector, and 1 MiB keeps the grain).
constexpr uint64_t kFirstStartBytes = kMiB;
constexpr uint64_t kLogicalGapBytes = kMiB;

bool NeedsExtended(const LayoutRequest& r) {
  return r.label == LabelType::kDos && r.sizes_bytes.size() > kPredictionDosPrimaries;
}

// ---- parted -------------------------------------------------------------------------------------

enum class PartedUnits { kMiB, kPercent };

struct PartedCommand {
  PartedPartType type;
  std::string start;
  std::string end;
};

// A byte position as parted is given it: in MiB when it is a whole number of them, in KiB, or
// in sectors (an end then names its last sector, as IEC ends are moved one sector down).
std::string BytePosition(uint64_t bytes, uint64_t lbs, bool is_end) {
  if (bytes % kMiB == 0) return fmt::format("{}MiB", bytes / kMiB);
  if (bytes % kKiB == 0) return fmt::format("{}KiB", bytes / kKiB);
  uint64_t sector = (bytes + lbs - 1) / lbs;
  return fmt::format("{}s", is_end ? sector - 1 : sector);
}

// Whole percent of the disk, rounded to the nearest (parted reads "12.5%" as a CHS address).
std::string PercentPosition(uint64_t bytes, uint64_t disk_bytes) {
  uint64_t p = (bytes * 200 / disk_bytes + 1) / 2;
  return fmt::format("{}%", std::min<uint64_t>(p, 100));
}

std::vector<PartedCommand> PartedCommands(const LayoutRequest& r, const Topology& t,
                                          PartedUnits units) {
  const uint64_t lbs = t.logical_sector_size;
  const bool mib = units == PartedUnits::kMiB;
  auto pos = [&](uint64_t bytes, bool is_end) {
    return mib ? BytePosition(bytes, lbs, is_end) : PercentPosition(bytes, t.size_bytes);
  };
  std::vector<PartedCommand> out;
  uint64_t cursor = mib ? kFirstStartBytes : 0;
  std::string start = mib ? pos(cursor, false) : "0%";
  const bool extended = NeedsExtended(r);
  for (size_t i = 0; i < r.sizes_bytes.size(); ++i) {
    PartedPartType type = PartedPartType::kPrimary;
    if (extended && i + 1 >= kPredictionDosPrimaries) {
      if (i + 1 == kPredictionDosPrimaries)
        out.push_back({PartedPartType::kExtended, start, "100%"});
      type = PartedPartType::kLogical;
      if (mib) {
        cursor += kLogicalGapBytes;
        start = pos(cursor, false);
      }
    }
    std::string end;
    if (r.sizes_bytes[i]) {
      cursor += *r.sizes_bytes[i];
      end = pos(cursor, true);
    } else {
      end = "100%";
    }
    out.push_back({type, start, end});
    start = mib ? pos(cursor, false) : end;
  }
  return out;
}

LayoutPrediction PredictParted(const Topology& t, const ToolVersions& v, const LayoutRequest& r,
                               PartedUnits units) {
  LayoutPrediction p;
  p.tool = units == PartedUnits::kMiB ? "parted-mib" : "parted-percent";
  std::vector<PartedCommand> commands = PartedCommands(r, t, units);
  std::string line = fmt::format("parted -s -a optimal DEV mklabel {}", PartedLabelName(r.label));
  for (const PartedCommand& c : commands) {
    line += fmt::format(" mkpart {} {} {}", ToString(c.type), c.start, c.end);
  }
  p.command.push_back(line);
  Result<PartedModel> model = MakePartedModel(t, v.parted.version);
  if (!model) {
    p.error = model.error().message;
    return p;
  }
  PartedDisk disk(*model, r.label);
  for (const PartedCommand& c : commands) {
    MkpartOutcome o = disk.Mkpart(PartedMode::kOptimal, c.type, c.start, c.end);
    std::string prefix = fmt::format("mkpart {} {} {}: ", ToString(c.type), c.start, c.end);
    for (const std::string& reason : o.reasons) p.reasons.push_back(prefix + reason);
    if (!o.created) {
      p.error = prefix + o.error;
      break;
    }
    if (o.warning) p.warnings.push_back(*o.warning);
  }
  for (const PartedPartition& q : disk.partitions()) {
    PlacedKind kind = q.type == PartedPartType::kExtended  ? PlacedKind::kExtended
                      : q.type == PartedPartType::kLogical ? PlacedKind::kLogical
                                                           : PlacedKind::kPrimary;
    p.partitions.push_back({static_cast<uint32_t>(q.number), kind,
                            static_cast<uint64_t>(q.start_sector),
                            static_cast<uint64_t>(q.end_sector)});
  }
  return p;
}

// ---- sfdisk -------------------------------------------------------------------------------------

// The size field of a script line: with a binary unit when the size is a whole number of
// sectors in one (a relative size: libfdisk aligns the end), else in sectors (taken as is).
std::pair<std::string, SfdiskLine> SfdiskSize(uint64_t bytes, uint64_t lbs) {
  SfdiskLine line;
  if (bytes % lbs == 0) {
    line.size_sectors = bytes / lbs;
    for (auto [unit, name] : {std::pair{kGiB, "GiB"}, {kMiB, "MiB"}, {kKiB, "KiB"}}) {
      if (bytes % unit == 0) return {fmt::format("size={}{}", bytes / unit, name), line};
    }
  }
  line.size_sectors = (bytes + lbs - 1) / lbs;
  line.size_explicit = true;
  return {fmt::format("size={}", *line.size_sectors), line};
}

LayoutPrediction PredictSfdisk(const Topology& t, const ToolVersions& v, const LayoutRequest& r) {
  LayoutPrediction p;
  p.tool = "sfdisk";
  p.command.push_back("sfdisk DEV");
  p.command.push_back(fmt::format("label: {}", r.label == LabelType::kGpt ? "gpt" : "dos"));
  std::vector<SfdiskLine> lines;
  for (size_t i = 0; i < r.sizes_bytes.size(); ++i) {
    if (NeedsExtended(r) && i + 1 == kPredictionDosPrimaries) {
      lines.push_back({std::nullopt, false, true});
      p.command.push_back("type=Ex");
    }
    if (r.sizes_bytes[i]) {
      auto [text, line] = SfdiskSize(*r.sizes_bytes[i], t.logical_sector_size);
      lines.push_back(line);
      p.command.push_back(text);
    } else {
      lines.push_back({});
      p.command.push_back(",");
    }
  }
  Result<LibfdiskContext> cxt = DiscoverLibfdisk(t, v.util_linux.version);
  if (!cxt) {
    p.error = cxt.error().message;
    return p;
  }
  Result<LibfdiskLabel> label = CreateLibfdiskLabel(*cxt, r.label);
  if (!label) {
    p.error = label.error().message;
    return p;
  }
  SfdiskLayout s = PredictSfdiskLayout(*label, lines);
  p.error = s.error;
  p.warnings = s.warnings;
  p.reasons = label->reasons;
  p.reasons.insert(p.reasons.end(), s.reasons.begin(), s.reasons.end());
  for (const SfdiskPartition& q : s.partitions) {
    PlacedKind kind = q.kind == SfdiskPartKind::kExtended  ? PlacedKind::kExtended
                      : q.kind == SfdiskPartKind::kLogical ? PlacedKind::kLogical
                                                           : PlacedKind::kPrimary;
    p.partitions.push_back({static_cast<uint32_t>(q.number), kind, q.start_sector, q.end_sector});
  }
  return p;
}

// ---- sgdisk and systemd-repart (GPT only) -------------------------------------------------------

// The partitions of a tool that writes GPT only: all primary.
template <typename Partition>
std::vector<PlacedPartition> Primaries(const std::vector<Partition>& parts) {
  std::vector<PlacedPartition> out;
  for (const Partition& q : parts) {
    out.push_back(
        {static_cast<uint32_t>(q.number), PlacedKind::kPrimary, q.start_sector, q.end_sector});
  }
  return out;
}

LayoutPrediction PredictSgdisk(const Topology& t, const ToolVersions& v, const LayoutRequest& r) {
  LayoutPrediction p;
  p.tool = "sgdisk";
  std::vector<SgdiskNew> news;
  std::string line = "sgdisk -o";
  for (const std::optional<uint64_t>& size : r.sizes_bytes) {
    news.push_back(size ? SgdiskSizeOf(*size, t.logical_sector_size) : SgdiskNew{});
    line += " -n 0:0:" + SgdiskEndText(news.back());
  }
  p.command.push_back(line + " DEV");
  if (r.label != LabelType::kGpt) {
    p.error = "sgdisk writes GPT only";
    return p;
  }
  SgdiskLayout s = PredictSgdiskLayout(t, v.gptfdisk.version, news);
  p.error = s.error;
  p.warnings = s.warnings;
  p.reasons = s.reasons;
  p.partitions = Primaries(s.partitions);
  return p;
}

LayoutPrediction PredictRepart(const Topology& t, const ToolVersions& v, const LayoutRequest& r) {
  LayoutPrediction p;
  p.tool = "systemd-repart";
  p.command.push_back("systemd-repart --empty=force --definitions=DIR DEV");
  for (size_t i = 0; i < r.sizes_bytes.size(); ++i) {
    const std::optional<uint64_t>& size = r.sizes_bytes[i];
    p.command.push_back(size ? fmt::format("{:02}-p{}.conf: SizeMinBytes={} SizeMaxBytes={}",
                                           (i + 1) * 10, i + 1, *size, *size)
                             : fmt::format("{:02}-p{}.conf: no size", (i + 1) * 10, i + 1));
  }
  if (r.label != LabelType::kGpt) {
    p.error = "systemd-repart writes GPT only";
    return p;
  }
  RepartLayout s = PredictRepartLayout(t, v.systemd.version, v.util_linux.version, r.sizes_bytes);
  p.error = s.error;
  p.reasons = s.reasons;
  p.partitions = Primaries(s.partitions);
  return p;
}

// ---- verdicts -----------------------------------------------------------------------------------

ToolVerdict PartedVerdict(const VerdictInput& in) {
  return PartedAlignCheckOpt(in.topology, in.number, in.start_sector);
}

ToolVerdict FdiskVerdict(const VerdictInput& in) {
  return FdiskPhysicalBoundary(in.topology, in.number, in.start_sector);
}

ToolVerdict GdiskVerdict(const VerdictInput& in) {
  uint64_t test = GdiskVerifyAlignment(in.topology, in.disk_sectors, in.all_starts);
  ToolVerdict start = GdiskVerifyStart(in.topology, in.number, in.start_sector, test);
  return start.ok ? GdiskVerifyEnd(in.topology, in.number, in.end_sector, test) : start;
}

}  // namespace

std::string_view ToString(PlacedKind kind) {
  switch (kind) {
    case PlacedKind::kPrimary:
      return "primary";
    case PlacedKind::kExtended:
      return "extended";
    case PlacedKind::kLogical:
      return "logical";
  }
  return "primary";
}

const std::vector<ToolView>& ToolViews() {
  static const std::vector<ToolView> kViews = [] {
    std::vector<ToolView> views{
        {"parted", "parted", PartedVerdict,
         [](const Topology& t, const ToolVersions& v, const LayoutRequest& r) {
           return std::vector<LayoutPrediction>{PredictParted(t, v, r, PartedUnits::kMiB),
                                                PredictParted(t, v, r, PartedUnits::kPercent)};
         }},
        {"fdisk", "fdisk", FdiskVerdict,
         [](const Topology& t, const ToolVersions& v, const LayoutRequest& r) {
           return std::vector<LayoutPrediction>{PredictSfdisk(t, v, r)};
         }},
        {"gdisk", "gdisk", GdiskVerdict,
         [](const Topology& t, const ToolVersions& v, const LayoutRequest& r) {
           return std::vector<LayoutPrediction>{PredictSgdisk(t, v, r)};
         }},
        {"systemd-repart", "repart", nullptr,
         [](const Topology& t, const ToolVersions& v, const LayoutRequest& r) {
           return std::vector<LayoutPrediction>{PredictRepart(t, v, r)};
         }},
    };
    for (ToolView& v : InstallerViews()) views.push_back(std::move(v));
    return views;
  }();
  return kViews;
}

std::vector<LayoutPrediction> PredictLayouts(const Topology& t, const ToolVersions& v,
                                             const LayoutRequest& r, bool with_installers) {
  std::vector<LayoutPrediction> all;
  for (const ToolView& view : ToolViews()) {
    if (!view.place || (view.installer && !with_installers)) continue;
    for (LayoutPrediction& p : view.place(t, v, r)) all.push_back(std::move(p));
  }
  return all;
}

}  // namespace partalign
