// SPDX-License-Identifier: GPL-3.0-or-later
// Property tests of the planner over thousands of seeded random layouts (GPT and DOS, 512 and
// 4096-byte sectors, offsets, grains): whatever the layout, every proposed start is aligned
// (or the partition is left untouched as impossible), nothing overlaps, nothing leaves the
// usable area, order is kept, no filesystem shrinks, libfdisk's EBR gaps hold, and planning
// the planned table again changes nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "partalign/layout/audit.h"
#include "partalign/layout/planner.h"
#include "partalign/util/units.h"
#include "support/random_layout.h"
#include "support/test_topology.h"

namespace partalign {
namespace {

constexpr int kLayouts = 4000;

struct Extent {
  uint64_t start;
  uint64_t end;
};

// The checks; returns "" or what is wrong.
std::string CheckPlan(const PartitionTable& t, const Alignment& a,
                      const std::vector<PlanAction>& actions) {
  const uint64_t ss = t.sector_size;
  const bool dos = t.label == LabelType::kDos;
  const uint64_t lo = dos ? 1 : t.first_usable_lba;
  const uint64_t hi =
      dos ? std::min<uint64_t>(t.last_usable_lba, kMbrMaxSector) : t.last_usable_lba;
  if (actions.size() != t.partitions.size()) return "not one action per partition";
  std::map<uint32_t, Extent> next;
  for (size_t i = 0; i < actions.size(); ++i) {
    const PlanAction& x = actions[i];
    const Partition& p = t.partitions[i];
    if (x.partition != p.number) return "actions not in table order";
    if (x.old_start_sector != p.start_sector || x.old_end_sector != p.end_sector()) {
      return "old extent wrong for " + std::to_string(p.number);
    }
    if (x.new_end_sector < x.new_start_sector) return "end before start";
    if (x.new_start_sector < lo || x.new_end_sector > hi) {
      return "partition " + std::to_string(p.number) + " leaves the usable area";
    }
    next[p.number] = {x.new_start_sector, x.new_end_sector};
    const bool moved = x.new_start_sector != x.old_start_sector;
    const bool end_moved = x.new_end_sector != x.old_end_sector;
    const uint64_t new_size = x.new_end_sector - x.new_start_sector + 1;
    if (x.reason.empty()) return "no reason";
    if (p.kind == PartitionKind::kExtended) {
      if (x.kind != (moved || end_moved ? ActionKind::kTableOnly : ActionKind::kNone)) {
        return "extended partition kind";
      }
      continue;
    }
    const bool aligned = a.IsAligned(x.new_start_sector * ss);
    switch (x.kind) {
      case ActionKind::kNone:
        if (moved || end_moved || !aligned) return "none but changed or misaligned";
        break;
      case ActionKind::kTableOnly:
        if (!aligned) return "table-only but misaligned";
        if (moved && p.contents.MayHoldData()) return "table-only moves data";
        if (!moved && (!end_moved || x.new_end_sector < x.old_end_sector)) {
          return "table-only end change that is not a growth";
        }
        break;
      case ActionKind::kMoveData:
        if (!aligned || !moved || !p.contents.MayHoldData()) return "bad move-data";
        if (x.bytes_to_move != std::min(p.size_sectors, new_size) * ss) return "bytes_to_move";
        break;
      case ActionKind::kImpossible:
        if (moved || end_moved) return "impossible but changed";
        if (a.IsAligned(p.start_sector * ss)) return "impossible but aligned";
        break;
    }
    if (x.kind != ActionKind::kMoveData && x.bytes_to_move != 0) return "bytes without a move";
    // Never below the filesystem.
    const PartitionContents& c = p.contents;
    if (c.MayHoldData()) {
      if (IsEndAnchored(c) && new_size != p.size_sectors) return "end-anchored size changed";
      if (c.fs_size_bytes && *c.fs_size_bytes <= p.size_sectors * ss) {
        if (new_size * ss < *c.fs_size_bytes) {
          return "partition " + std::to_string(p.number) + " shrinks below its filesystem";
        }
      } else if (new_size < p.size_sectors) {
        return "partition " + std::to_string(p.number) + " with data of unknown size shrinks";
      }
    }
  }
  // Overlaps and order: top level, then logical partitions inside the extended one.
  std::vector<const Partition*> top, logicals;
  const Partition* ext = nullptr;
  for (const Partition& p : t.partitions) {
    if (p.kind == PartitionKind::kLogical) {
      logicals.push_back(&p);
    } else {
      top.push_back(&p);
      if (p.kind == PartitionKind::kExtended) ext = &p;
    }
  }
  uint64_t f_eff = dos ? std::max<uint64_t>(t.first_usable_lba, 1) : 0;
  for (const Partition* p : top) {
    if (next[p->number].start < f_eff) f_eff = 1;  // libfdisk drops its first LBA
  }
  if (ext && !logicals.empty()) {
    uint64_t first = UINT64_MAX;
    for (const Partition* l : logicals) first = std::min(first, next[l->number].start);
    if (first > next[ext->number].start && first - next[ext->number].start < f_eff) f_eff = 1;
  }
  for (std::vector<const Partition*>* list : {&top, &logicals}) {
    std::vector<const Partition*> by_old = *list, by_new = *list;
    std::sort(by_old.begin(), by_old.end(), [](const Partition* x, const Partition* y) {
      return x->start_sector < y->start_sector;
    });
    std::sort(by_new.begin(), by_new.end(), [&](const Partition* x, const Partition* y) {
      return next[x->number].start < next[y->number].start;
    });
    if (by_old != by_new) return "order changed";
    for (size_t i = 1; i < by_new.size(); ++i) {
      const Extent& prev = next[by_new[i - 1]->number];
      const Extent& cur = next[by_new[i]->number];
      if (cur.start <= prev.end) return "overlap";
      if (list == &logicals && cur.start < prev.end + 1 + f_eff) {
        return "logical partition " + std::to_string(by_new[i]->number) +
               " too close to the previous one for its EBR";
      }
    }
    if (list == &logicals && !by_new.empty()) {
      const Extent& e = next[ext->number];
      const Extent& first = next[by_new.front()->number];
      if (first.start <= e.start) return "first logical partition before its EBR";
      for (const Partition* l : by_new) {
        if (next[l->number].start <= e.start || next[l->number].end > e.end) {
          return "logical partition outside the extended one";
        }
      }
    }
  }
  return "";
}

// For failure messages: the table and the plan, one partition per line.
std::string Describe(const PartitionTable& t, const Alignment& a,
                     const std::vector<PlanAction>& actions) {
  std::string out = "label " + std::string(ToString(t.label)) + ", sector " +
                    std::to_string(t.sector_size) + ", usable " +
                    std::to_string(t.first_usable_lba) + "-" + std::to_string(t.last_usable_lba) +
                    ", grain " + std::to_string(a.grain_bytes) + " offset " +
                    std::to_string(a.offset_bytes) + "\n";
  for (size_t i = 0; i < t.partitions.size(); ++i) {
    const Partition& p = t.partitions[i];
    out += "  " + std::to_string(p.number) + " " + std::string(ToString(p.kind)) + " " +
           std::to_string(p.start_sector) + "-" + std::to_string(p.end_sector()) +
           (p.contents.MayHoldData() ? " data" : "") +
           (p.contents.fs_size_bytes ? " fs=" + std::to_string(*p.contents.fs_size_bytes) : "");
    if (i < actions.size()) {
      const PlanAction& x = actions[i];
      out += " -> " + std::to_string(x.new_start_sector) + "-" + std::to_string(x.new_end_sector) +
             " " + std::string(ToString(x.kind)) + ": " + x.reason;
    }
    out += "\n";
  }
  return out;
}

Alignment RandomAlignment(test::RandomLayout& r, uint64_t ss) {
  switch (r.Uniform(0, 5)) {
    case 0:
      return {4 * kMiB, 0};
    case 1:
      return ss == 512 ? Alignment{kMiB, 3584 / 512 * 512} : Alignment{kMiB, 0};
    case 2:
      return {kMiB * 3 / 2, 0};  // a RAID stripe that 1 MiB does not divide (lcm 3 MiB)
    default:
      return {kMiB, 0};
  }
}

TEST(PlannerPropertyTest, RandomLayoutsGiveSafeAlignedStablePlans) {
  int impossible = 0, moves = 0, table_only = 0;
  for (int seed = 0; seed < kLayouts; ++seed) {
    test::RandomLayout r(static_cast<uint64_t>(seed));
    test::RandomLayoutOptions o;
    o.label = r.Chance(0.5) ? LabelType::kGpt : LabelType::kDos;
    o.sector_size = r.Chance(0.8) ? 512 : 4096;
    o.dos_first_lba = kMiB / o.sector_size;
    PartitionTable t = r.Make(o);
    Alignment a = RandomAlignment(r, o.sector_size);
    if (a.offset_bytes != 0) a.offset_bytes %= a.grain_bytes;
    Result<std::vector<PlanAction>> actions = PlanPartitions(t, a);
    ASSERT_TRUE(actions) << "seed " << seed << ": " << actions.error().message;
    std::string problem = CheckPlan(t, a, *actions);
    ASSERT_EQ(problem, "") << "seed " << seed << "\n" << Describe(t, a, *actions);
    for (const PlanAction& x : *actions) {
      impossible += x.kind == ActionKind::kImpossible;
      moves += x.kind == ActionKind::kMoveData;
      table_only += x.kind == ActionKind::kTableOnly;
    }
    // Planning the planned table again changes nothing, except that a partition the first
    // plan could not align may be now (with the extended partition around it): a logical
    // partition moves down only above its EBR, and libfdisk's new table may have it lower.
    PartitionTable after = ApplyPlanToTable(t, *actions);
    Result<std::vector<PlanAction>> again = PlanPartitions(after, a);
    ASSERT_TRUE(again) << "seed " << seed << ": " << again.error().message;
    for (const PlanAction& x : *again) {
      const Partition* p = t.Find(x.partition);
      const bool was_impossible =
          std::any_of(actions->begin(), actions->end(), [&](const PlanAction& y) {
            return y.partition == x.partition && y.kind == ActionKind::kImpossible;
          });
      if (was_impossible || (p != nullptr && p->kind == PartitionKind::kExtended)) continue;
      ASSERT_TRUE(x.kind == ActionKind::kNone || x.kind == ActionKind::kImpossible)
          << "seed " << seed << ": partition " << x.partition << " " << ToString(x.kind) << "\n"
          << Describe(t, a, *actions) << "again:\n"
          << Describe(after, a, *again);
    }
  }
  // The generator exercises every kind (a guard against a generator that tests nothing).
  EXPECT_GT(impossible, 0);
  EXPECT_GT(moves, 0);
  EXPECT_GT(table_only, 0);
}

TEST(PlannerPropertyTest, WhereTheUnreadPlanIgnoresContentsNoContentsChangeIt) {
  // The tables random plans produce (many on the alignment, some not), read without their
  // contents: where that plan ignores contents (PlanIgnoresContents, plan --json then reads no
  // partition), every mix of contents, discards and the first pass of a proof gives the same
  // actions.
  int ignored = 0;
  for (int seed = 0; seed < kLayouts / 4; ++seed) {
    test::RandomLayout r(static_cast<uint64_t>(seed) + 2000000);
    test::RandomLayoutOptions o;
    o.label = r.Chance(0.5) ? LabelType::kGpt : LabelType::kDos;
    o.sector_size = r.Chance(0.8) ? 512 : 4096;
    o.dos_first_lba = kMiB / o.sector_size;
    const PartitionTable t = r.Make(o);
    Alignment a = RandomAlignment(r, o.sector_size);
    if (a.offset_bytes != 0) a.offset_bytes %= a.grain_bytes;
    Result<std::vector<PlanAction>> first = PlanPartitions(t, a);
    ASSERT_TRUE(first) << "seed " << seed << ": " << first.error().message;
    PartitionTable unread = ApplyPlanToTable(t, *first);
    for (Partition& p : unread.partitions) p.contents = {};
    Result<std::vector<PlanAction>> plan = PlanPartitions(unread, a);
    ASSERT_TRUE(plan) << "seed " << seed << ": " << plan.error().message;
    if (!PlanIgnoresContents(unread, a, *plan)) continue;
    ++ignored;
    for (int variant = 0; variant < 8; ++variant) {
      PartitionTable known = unread;
      PlanOptions options;
      options.unscanned_as_empty = r.Chance(0.5);
      for (Partition& p : known.partitions) {
        if (p.kind == PartitionKind::kExtended) continue;
        const uint64_t bytes = p.size_sectors * known.sector_size;
        switch (r.Uniform(0, 5)) {
          case 0:
            break;  // unscanned
          case 1:
            p.contents.proof = ContentProof::kZeros;
            break;
          case 2:
            p.contents.proof = ContentProof::kSignature;
            p.contents.fs_type = "ext4";
            p.contents.fs_size_bytes = bytes / 2 / known.sector_size * known.sector_size;
            p.contents.zeros_from_bytes = p.contents.fs_size_bytes;
            break;
          case 3:
            p.contents.proof = ContentProof::kSignature;
            p.contents.fs_type = "linux_raid_member";
            break;
          case 4:
            p.contents.proof = ContentProof::kData;
            p.contents.data_offset_bytes = 0;
            break;
          default:
            options.discard.push_back(p.number);
        }
      }
      Result<std::vector<PlanAction>> again = PlanPartitions(known, a, options);
      ASSERT_TRUE(again) << "seed " << seed << ": " << again.error().message;
      ASSERT_EQ(*again, *plan) << "seed " << seed << " variant " << variant << "\n"
                               << Describe(known, a, *again) << "unread:\n"
                               << Describe(unread, a, *plan);
    }
  }
  // A guard against a generator whose plans never ignore contents.
  EXPECT_GT(ignored, kLayouts / 40);
}

TEST(PlannerPropertyTest, AuditAndPlanAgreeOnWhatIsAligned) {
  // For random topologies (the profiles' shapes and random ones), the audit's "aligned" is
  // exactly "on the alignment plan uses", and after the plan every partition the plan did not
  // call impossible audits as aligned.
  const std::vector<Topology> shapes = [] {
    std::vector<Topology> out;
    auto add = [&](uint64_t lbs, uint64_t pbs, uint64_t min, uint64_t opt, uint64_t off) {
      out.push_back(test::MakeTopology(lbs, pbs, min, opt, off));
    };
    add(512, 512, 512, 0, 0);
    add(512, 4096, 4096, 0, 0);
    add(512, 4096, 4096, 33553920, 0);
    add(512, 4096, 65536, 196608, 0);
    add(512, 4096, 4096, 0, 3584);
    add(512, 512, 512, 4194304, 0);
    add(4096, 4096, 4096, 0, 0);
    add(512, 512, 196608, 0, 0);
    return out;
  }();
  for (int seed = 0; seed < kLayouts / 4; ++seed) {
    test::RandomLayout r(static_cast<uint64_t>(seed) + 1000000);
    Topology topology = shapes[r.Uniform(0, shapes.size() - 1)];
    test::RandomLayoutOptions o;
    o.label = r.Chance(0.5) ? LabelType::kGpt : LabelType::kDos;
    o.sector_size = topology.logical_sector_size;
    o.dos_first_lba = kMiB / o.sector_size;
    PartitionTable t = r.Make(o);
    topology.size_bytes = t.disk_size_sectors * t.sector_size;
    std::optional<uint64_t> grain;
    if (r.Chance(0.2)) grain = r.Chance(0.5) ? 4 * kMiB : 64 * kKiB;
    const Alignment a = RecommendAlignment(topology, grain).alignment;
    AuditReport before = AuditTable(t, topology, {.grain_bytes = grain});
    for (const PartitionAudit& p : before.partitions) {
      ASSERT_EQ(p.aligned, a.IsAligned(p.start_sector * t.sector_size))
          << "seed " << seed << " partition " << p.number;
    }
    Result<std::vector<PlanAction>> actions = PlanPartitions(t, a);
    ASSERT_TRUE(actions) << "seed " << seed << ": " << actions.error().message;
    AuditReport after = AuditTable(ApplyPlanToTable(t, *actions), topology, {.grain_bytes = grain});
    for (const PartitionAudit& p : after.partitions) {
      auto x = std::find_if(actions->begin(), actions->end(),
                            [&](const PlanAction& y) { return y.partition == p.number; });
      ASSERT_NE(x, actions->end());
      EXPECT_EQ(p.aligned, x->kind != ActionKind::kImpossible)
          << "seed " << seed << " partition " << p.number;
    }
  }
}

}  // namespace
}  // namespace partalign
