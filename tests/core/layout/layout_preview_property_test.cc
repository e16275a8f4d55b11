// SPDX-License-Identifier: GPL-3.0-or-later
// Property test of every layout partalign shows: over seeded random topologies (tiny disks
// included) and random layouts (GPT and DOS, one to seven partitions, a last one taking the
// rest or not, some too large), every prediction of explain --layout and of the planner's `p`
// screen (PreviewLayout: the partitioners, the installers and partalign's own placement) keeps
// each partition inside the label's usable area, no two partitions of one level overlap, a
// logical partition lies inside the extended one, and every partition of the request is placed,
// omitted with a reason, or after the one where the tool fails; and LayoutFaults(), which the
// page would print for such a layout, agrees. It found the sfdisk model showing overlapping GPT
// entries on tiny disks with an alignment offset, which sfdisk refuses to write (and the DOS
// model looping there). The plans the report draws are checked by planner_property_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include <fmt/format.h>

#include "partalign/layout/layout_preview.h"
#include "partalign/util/units.h"
#include "support/random_topology.h"

namespace partalign {
namespace {

constexpr int kCases = 300;

LayoutSpec DrawSpec(test::Draw& d, const Topology& t) {
  LayoutSpec spec;
  spec.label = d.Chance(60) ? LabelType::kGpt : LabelType::kDos;
  const uint64_t count = 1 + d.Below(7);
  const uint64_t budget = d.Chance(10) ? t.size_bytes * 2 : t.size_bytes * 9 / 10;
  for (uint64_t i = 0; i < count; ++i) {
    LayoutItem item;
    item.type = spec.label == LabelType::kGpt ? "0FC63DAF-8483-4772-8E79-3D69D8477DE4" : "0x83";
    if (i + 1 == count && d.Chance(70)) {
      spec.items.push_back(item);  // the rest
      break;
    }
    uint64_t bytes = d.LogUniform(kMiB, std::max<uint64_t>(budget / count, 2 * kMiB));
    int style = static_cast<int>(d.Below(100));
    if (style < 70) {
      bytes = std::max<uint64_t>(bytes / kMiB, 1) * kMiB;
    } else if (style < 95) {
      bytes = std::max<uint64_t>(bytes / kKiB, 1) * kKiB;
    } else {
      bytes = std::max<uint64_t>(bytes / 512, 1) * 512;
    }
    item.size_bytes = bytes;
    spec.items.push_back(item);
  }
  return spec;
}

// The label's usable sectors, as the tools see a fresh label: GPT between the entry arrays
// (34 and last-33 at 512 bytes), DOS after the MBR and below 2^32.
std::pair<uint64_t, uint64_t> Usable(LabelType label, const Topology& t) {
  const uint64_t lbs = t.logical_sector_size;
  const uint64_t sectors = t.size_bytes / lbs;
  if (label == LabelType::kGpt) {
    const uint64_t array = (128 * 128 + lbs - 1) / lbs;
    return {2 + array, sectors - 2 - array};
  }
  return {1, std::min<uint64_t>(sectors - 1, 0xFFFFFFFFull)};
}

std::string Check(const LayoutPrediction& p, const LayoutRequest& r, const Topology& t) {
  auto [lo, hi] = Usable(r.label, t);
  const PlacedPartition* extended = nullptr;
  for (const PlacedPartition& q : p.partitions) {
    if (q.kind == PlacedKind::kExtended) extended = &q;
  }
  for (const PlacedPartition& q : p.partitions) {
    if (q.end_sector < q.start_sector)
      return fmt::format("partition {} ends before it starts", q.number);
    if (q.start_sector < lo || q.end_sector > hi) {
      return fmt::format("partition {} ({}-{}) leaves the usable area {}-{}", q.number,
                         q.start_sector, q.end_sector, lo, hi);
    }
    if (q.kind == PlacedKind::kLogical && (!extended || q.start_sector <= extended->start_sector ||
                                           q.end_sector > extended->end_sector)) {
      return fmt::format("logical partition {} is not inside the extended one", q.number);
    }
    for (const PlacedPartition& o : p.partitions) {
      if (&o == &q || (o.kind == PlacedKind::kLogical) != (q.kind == PlacedKind::kLogical)) {
        continue;
      }
      if (o.start_sector <= q.end_sector && q.start_sector <= o.end_sector) {
        return fmt::format("partitions {} and {} overlap", q.number, o.number);
      }
    }
  }
  std::set<uint32_t> numbers;
  for (const PlacedPartition& q : p.partitions) {
    if (q.kind != PlacedKind::kExtended && !numbers.insert(q.number).second) {
      return fmt::format("partition number {} twice", q.number);
    }
  }
  size_t shown = 0;
  for (const PlacedPartition& q : p.partitions) shown += q.kind != PlacedKind::kExtended;
  for (const OmittedPartition& o : p.omitted) {
    if (o.reason.empty()) return fmt::format("partition {} omitted without a reason", o.number);
  }
  shown += p.omitted.size();
  if (shown > r.sizes_bytes.size()) return "more partitions than asked for";
  if (shown < r.sizes_bytes.size() && p.error.empty()) {
    return fmt::format("{} of {} partitions shown, and no error says why", shown,
                       r.sizes_bytes.size());
  }
  return "";
}

TEST(LayoutPreviewPropertyTest, NoShownLayoutOverlapsOrLeavesTheDisk) {
  test::Draw d(20261127);
  const ToolVersions versions = NewestKnownVersions();
  int checked = 0, tiny = 0;
  for (int i = 0; i < kCases; ++i) {
    // A quarter of the disks are tiny (1 to 16 MiB), where the tools' edges are.
    Topology t =
        test::DrawTopology(d, d.Chance(25) ? test::TopologyDrawOptions{.min_disk_bytes = 1 * kMiB,
                                                                       .max_disk_bytes = 16 * kMiB,
                                                                       .threshold_percent = 0}
                                           : test::TopologyDrawOptions{.min_disk_bytes = 8 * kMiB,
                                                                       .max_disk_bytes = 4 * kTiB,
                                                                       .threshold_percent = 10});
    tiny += t.size_bytes <= 16 * kMiB;
    LayoutSpec spec = DrawSpec(d, t);
    LayoutPreview preview = PreviewLayout(spec, t, versions);
    ASSERT_EQ(preview.predictions.size(), ToolViews().size() + 2) << "one per way of asking";
    for (const LayoutPrediction& p : preview.predictions) {
      std::string wrong = Check(p, preview.request, t);
      const std::vector<std::string> faults = LayoutFaults(p, preview.request, t);
      // LayoutFaults (what the page would say) sees what this independent check sees.
      const bool broken = wrong.find("overlap") != std::string::npos ||
                          wrong.find("leaves") != std::string::npos ||
                          wrong.find("inside the extended") != std::string::npos ||
                          wrong.find("ends before") != std::string::npos;
      EXPECT_EQ(broken, !faults.empty()) << p.tool << ": " << wrong;
      if (wrong.empty()) {
        ++checked;
        continue;
      }
      std::string parts, sizes;
      for (const PlacedPartition& q : p.partitions) {
        parts += fmt::format(" {}{}:{}-{}", q.number, q.kind == PlacedKind::kLogical ? "l" : "",
                             q.start_sector, q.end_sector);
      }
      for (const std::optional<uint64_t>& b : preview.request.sizes_bytes) {
        sizes += b ? fmt::format(" {}", *b) : std::string(" rest");
      }
      ADD_FAILURE() << p.tool << ": " << wrong << " on --assume log=" << t.logical_sector_size
                    << ",phys=" << t.physical_sector_size << ",min-io=" << t.minimum_io_size
                    << ",opt-io=" << t.optimal_io_size << ",align-offset=" << t.alignment_offset
                    << ",size=" << t.size_bytes << " "
                    << (preview.request.label == LabelType::kGpt ? "gpt" : "dos") << sizes << " ->"
                    << parts << " (case " << i << ")";
      ++checked;
    }
  }
  EXPECT_GT(tiny, kCases / 8);
  EXPECT_EQ(checked, kCases * static_cast<int>(ToolViews().size() + 2));
}

// The checker itself: a layout that overlaps, or one that leaves the disk, is caught.
TEST(LayoutPreviewPropertyTest, TheCheckCatchesOverlapsAndOverruns) {
  Topology t;
  t.logical_sector_size = 512;
  t.size_bytes = 64 * kMiB;
  LayoutRequest r{LabelType::kGpt, {kMiB, std::nullopt}};
  LayoutPrediction p;
  p.partitions = {{1, PlacedKind::kPrimary, 2048, 4095}, {2, PlacedKind::kPrimary, 4000, 8191}};
  EXPECT_NE(Check(p, r, t).find("overlap"), std::string::npos);
  p.partitions = {{1, PlacedKind::kPrimary, 2048, 4095}, {2, PlacedKind::kPrimary, 4096, 131071}};
  EXPECT_NE(Check(p, r, t).find("leaves the usable area"), std::string::npos);
  p.partitions = {{1, PlacedKind::kPrimary, 2048, 4095}};
  EXPECT_NE(Check(p, r, t).find("no error says why"), std::string::npos);
  p.omitted = {{2, false, "not known"}};
  EXPECT_EQ(Check(p, r, t), "");
}

}  // namespace
}  // namespace partalign
