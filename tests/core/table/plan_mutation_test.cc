// SPDX-License-Identifier: GPL-3.0-or-later
// A plan file is a claim, never an instruction (issue 37): thousands of mutations of real plans
// - made as `plan` makes them (MakeProvenPlan, its proofs read from a model of the disk) on
// random GPT and DOS tables with logical partitions, 512- and 4096-byte sectors, empty and
// data partitions, filesystems with zeros or data past their end, discards, impossible rows -
// each fed to apply's checks in apply's order (PlanFromJson, PlanMismatches, the consent to
// discards, the proofs apply makes itself, PlanInconsistencies, RecomputePlan:
// src/cli/apply/apply_plan.cc). Each must be refused, or be equal to the plan `plan` makes for
// its target layout; and what is accepted must keep every byte of the model (no data left
// behind, no tail with data given up, nothing below a filesystem). The device test
// (tests/cli/commands/plan_mutation_test.cc) and scripts/plan-mutation-sweep apply them for real.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "partalign/layout/plan.h"
#include "partalign/layout/planner.h"
#include "partalign/table/plan_check.h"
#include "partalign/topology/alignment.h"
#include "partalign/util/units.h"
#include "support/plan_mutations.h"
#include "support/random_layout.h"

namespace partalign {
namespace {

// What a partition really holds, which only reading tells.
struct Truth {
  bool empty = false;
  /// Data of unknown size: the first byte that is not zero.
  std::optional<uint64_t> data_at;
  /// A filesystem's partition: the one byte past the filesystem that is not zero, if any.
  std::optional<uint64_t> tail_data_at;
};

struct Disk {
  DeviceInfo device;
  /// What reading the table with contents gives, before any proof (plan's and apply's start).
  PartitionTable probed;
  std::map<uint32_t, Truth> truth;
};

// A random disk: RandomLayout's table and contents, made into what a probe sees and what the
// bytes are. Partitions of zeros are seen as unscanned (or as holes); some become raw data
// (seen as data when it starts in the first MiB, else unscanned); filesystems smaller than
// their partition have zeros or one byte of data past their end.
Disk RandomDisk(uint64_t seed) {
  test::RandomLayout r(seed);
  test::RandomLayoutOptions o;
  o.label = r.Chance(0.5) ? LabelType::kGpt : LabelType::kDos;
  o.sector_size = r.Chance(0.75) ? 512 : 4096;
  o.dos_first_lba = kMiB / o.sector_size;
  o.disk_sectors = r.Uniform(64, 512) * (kMiB / o.sector_size);
  Disk d;
  d.probed = r.Make(o);
  d.probed.fingerprint = fmt::format("xxh64:{:016x}", seed);
  const uint64_t ss = o.sector_size;
  Topology& t = d.device.topology;
  t.logical_sector_size = ss;
  t.physical_sector_size = ss == 512 && r.Chance(0.5) ? 4096 : ss;
  t.minimum_io_size = t.physical_sector_size;
  t.alignment_offset = t.physical_sector_size == 4096 && ss == 512 && r.Chance(0.3) ? 3584 : 0;
  t.size_bytes = d.probed.disk_size_sectors * ss;
  t.origin = TopologyOrigin::kKernel;
  d.device.identity.path = "/dev/sdz";
  for (Partition& p : d.probed.partitions) {
    if (p.kind == PartitionKind::kExtended) continue;
    Truth& truth = d.truth[p.number];
    const uint64_t size = p.size_sectors * ss;
    PartitionContents& c = p.contents;
    if (c.proof == ContentProof::kZeros) {
      if (r.Chance(0.25)) {
        truth.data_at = r.Uniform(0, size - 1);
        c.proof = *truth.data_at < kMiB ? ContentProof::kData : ContentProof::kUnscanned;
        if (c.proof == ContentProof::kData) c.data_offset_bytes = truth.data_at;
      } else {
        truth.empty = true;
        c.proof = r.Chance(0.3) ? ContentProof::kHoles : ContentProof::kUnscanned;
      }
      continue;
    }
    if (std::optional<uint64_t> fs = FilesystemSectors(p, ss); fs && *fs < p.size_sectors) {
      if (r.Chance(0.5)) truth.tail_data_at = r.Uniform(*fs * ss, size - 1);
    }
  }
  return d;
}

// The proofs, read from the model as the CLI reads the disk.
PlanProofs ModelProofs(const Disk& d) {
  PlanProofs proofs;
  proofs.partitions = [&d](PartitionTable* t, const std::vector<uint32_t>& numbers) {
    for (Partition& p : t->partitions) {
      if (p.contents.proof != ContentProof::kUnscanned ||
          std::find(numbers.begin(), numbers.end(), p.number) == numbers.end()) {
        continue;
      }
      const Truth& truth = d.truth.at(p.number);
      p.contents.proof = truth.empty ? ContentProof::kZeros : ContentProof::kData;
      if (!truth.empty) p.contents.data_offset_bytes = truth.data_at.value_or(0);
    }
    return Status{};
  };
  proofs.tails = [&d](PartitionTable* t, const std::vector<TailProof>& tails) {
    for (const TailProof& tail : tails) {
      for (Partition& p : t->partitions) {
        if (p.number != tail.partition) continue;
        const Truth& truth = d.truth.at(p.number);
        if (truth.tail_data_at && *truth.tail_data_at >= tail.from_bytes) {
          p.contents.tail_data_bytes = truth.tail_data_at;
        } else {
          p.contents.zeros_from_bytes =
              std::min(p.contents.zeros_from_bytes.value_or(tail.from_bytes), tail.from_bytes);
        }
      }
    }
    return Status{};
  };
  return proofs;
}

// apply's checks in apply's order (src/cli/apply/apply_plan.cc): the verdict on one plan file.
struct Verdict {
  std::optional<std::string> refused;  ///< why, or nullopt when accepted
  Plan plan;                           ///< accepted: the plan file as read
  Plan executed;                       ///< accepted: what apply executes (recomputed actions)
  PartitionTable table;                ///< accepted: the table with apply's proofs
};

Verdict ApplyChecks(const std::string& text, const Disk& d, const std::vector<uint32_t>& consent) {
  Verdict v;
  Result<Plan> plan = PlanFromJson(text);
  if (!plan) return {plan.error().message};
  std::vector<std::string> stale = PlanMismatches(*plan, d.device, d.probed);
  if (!stale.empty()) return {"stale: " + stale.front()};
  std::vector<std::string> consent_problems = DiscardConsentProblems(*plan, consent, "apply");
  if (!consent_problems.empty()) return {consent_problems.front()};
  PartitionTable table = d.probed;
  const PlanProofs proofs = ModelProofs(d);
  if (Status s = proofs.partitions(&table, PartitionsLeftBehind(*plan, table).to_prove); !s) {
    return {s.error().message};
  }
  if (Status s = proofs.tails(&table, TailsToProve(table, plan->actions, {.discard = consent}));
      !s) {
    return {s.error().message};
  }
  std::vector<std::string> bad = PlanInconsistencies(*plan, table);
  if (!bad.empty()) return {"inconsistent: " + bad.front()};
  RecomputedPlan recomputed = RecomputePlan(*plan, table, consent);
  if (!recomputed.refusals.empty()) return {"claims: " + recomputed.refusals.front()};
  v.plan = *plan;
  v.executed = *plan;
  if (!plan->layout) v.executed.actions = recomputed.actions;
  v.table = std::move(table);
  return v;
}

std::vector<PlanAction> WithoutReasons(std::vector<PlanAction> actions) {
  for (PlanAction& a : actions) a.reason.clear();
  return actions;
}

// Whether what apply executes keeps every byte of the model: nothing that holds data is left
// behind (a start moved by the table alone, a shrink over data), nothing is cut below a
// filesystem, a move copies the partition's bytes that its new place holds. Independent of the
// planner: it reads the model's truth. Empty when it holds.
std::string ByteViolation(const Disk& d, const Plan& executed,
                          const std::vector<uint32_t>& consent) {
  const uint64_t ss = d.probed.sector_size;
  for (const PlanAction& a : executed.actions) {
    const Partition* p = d.probed.Find(a.partition);
    if (p == nullptr || p->kind == PartitionKind::kExtended) continue;
    if (std::find(consent.begin(), consent.end(), a.partition) != consent.end()) continue;
    const Truth& truth = d.truth.at(a.partition);
    const uint64_t old_size = a.old_end_sector - a.old_start_sector + 1;
    const uint64_t new_size = a.new_end_sector - a.new_start_sector + 1;
    const bool moved = a.new_start_sector != a.old_start_sector;
    const std::string part = fmt::format("partition {}", a.partition);
    if (truth.empty) continue;
    if (moved && a.kind != ActionKind::kMoveData) return part + " holds data, moved by the table";
    if (a.kind == ActionKind::kMoveData && a.bytes_to_move != std::min(old_size, new_size) * ss) {
      return part + " copies " + std::to_string(a.bytes_to_move) + " bytes";
    }
    if (new_size >= old_size) continue;
    // Made smaller: only past a filesystem, and only over zeros.
    std::optional<uint64_t> fs = FilesystemSectors(*p, ss);
    if (!fs || IsEndAnchored(p->contents)) return part + " (no filesystem size) shrinks";
    if (new_size < *fs) return part + " shrinks below its filesystem";
    if (truth.tail_data_at && *truth.tail_data_at >= new_size * ss) {
      return part + " gives up a tail that holds data";
    }
  }
  return {};
}

struct Tally {
  int plans = 0;
  int mutations = 0;
  int refused = 0;
  int accepted = 0;
  int differ = 0;
  int violations = 0;
};

void RunOne(uint64_t seed, Tally* tally) {
  Disk d = RandomDisk(seed);
  test::RandomLayout r(seed ^ 0x9e3779b97f4a7c15ull);
  const std::optional<uint64_t> user_grain =
      r.Chance(0.2) ? std::optional<uint64_t>(4 * kMiB) : std::nullopt;
  const Alignment alignment = RecommendAlignment(d.device.topology, user_grain).alignment;
  // plan --discard for a partition that holds data, now and then.
  PlanOptions options;
  for (const Partition& p : d.probed.partitions) {
    if (p.kind != PartitionKind::kExtended && !d.truth.at(p.number).empty && r.Chance(0.15)) {
      options.discard.push_back(p.number);
    }
  }
  PartitionTable planned = d.probed;
  Result<Plan> made = MakeProvenPlan(&planned, d.device, alignment, options, ModelProofs(d));
  ASSERT_TRUE(made) << "seed " << seed << ": " << made.error().message;
  const nlohmann::json document = PlanToJson(*made);
  const std::vector<uint32_t> consent = PlanDiscards(*made);
  ++tally->plans;

  // The plan itself applies, and is what plan made.
  Verdict own = ApplyChecks(document.dump(), d, consent);
  ASSERT_FALSE(own.refused) << "seed " << seed << ": plan's own plan refused: " << *own.refused
                            << "\n"
                            << document.dump(1);
  ASSERT_EQ(WithoutReasons(own.executed.actions), WithoutReasons(made->actions)) << "seed " << seed;
  ASSERT_EQ(ByteViolation(d, own.executed, consent), "") << "seed " << seed;

  for (const test::PlanMutation& m : test::PlanMutations(document)) {
    ++tally->mutations;
    Verdict v = ApplyChecks(m.text, d, consent);
    if (v.refused) {
      ++tally->refused;
      continue;
    }
    ++tally->accepted;
    // Equal to the plan `plan` makes for the mutated plan's target layout: the same disk, the
    // same header, and the actions plan describes for that layout with the proofs `plan`
    // makes (DescribeExtents on a table proven as MakeProvenPlan proves it, and the tails of
    // that layout read as plan reads them).
    Plan expected = *made;
    expected.alignment = v.plan.alignment;
    PartitionTable proven = planned;
    PlanOptions with = options;
    const std::vector<std::pair<uint64_t, uint64_t>> target = TargetExtents(v.plan, proven);
    std::vector<PlanAction> stated;
    for (size_t i = 0; i < target.size(); ++i) {
      PlanAction a;
      a.partition = proven.partitions[i].number;
      a.old_start_sector = proven.partitions[i].start_sector;
      a.old_end_sector = proven.partitions[i].end_sector();
      a.new_start_sector = target[i].first;
      a.new_end_sector = target[i].second;
      a.kind = ActionKind::kTableOnly;
      stated.push_back(a);
    }
    ASSERT_TRUE(ModelProofs(d).tails(&proven, TailsToProve(proven, stated, with)));
    Result<std::vector<PlanAction>> described =
        PlanFileActions(proven, expected.alignment, with, target);
    Plan file = v.plan;
    file.actions = WithoutReasons(file.actions);
    if (described) expected.actions = WithoutReasons(*described);
    expected.topology = file.topology;  // compared by PlanMismatches
    // Only what apply's refusal of a stale plan says (which case it is) reads it: optional,
    // absent in plans of older versions.
    expected.disk.table_id = file.disk.table_id;
    if (!described || file != expected) {
      ++tally->differ;
      ADD_FAILURE() << "seed " << seed << ": " << m.name << " was accepted but differs from "
                    << "plan's plan for its layout"
                    << (described ? "" : ": " + described.error().message) << "\n"
                    << PlanToJson(file).dump(1) << "\n"
                    << PlanToJson(expected).dump(1);
      continue;
    }
    if (std::string why = ByteViolation(d, v.executed, consent); !why.empty()) {
      ++tally->violations;
      ADD_FAILURE() << "seed " << seed << ": " << m.name << " was accepted and " << why;
    }
  }
}

TEST(PlanMutationTest, EveryMutationOfRealPlansIsRefusedOrIsPlansOwnPlan) {
  Tally tally;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    RunOne(seed, &tally);
    if (HasFatalFailure()) return;
  }
  std::printf(
      "plans %d, mutations %d, refused %d, accepted %d (equal to plan's: %d), "
      "invariant violations %d\n",
      tally.plans, tally.mutations, tally.refused, tally.accepted, tally.accepted - tally.differ,
      tally.violations);
  EXPECT_GE(tally.mutations, 5000);
  EXPECT_GT(tally.refused, 0);
  EXPECT_GT(tally.accepted, 0);
  EXPECT_EQ(tally.differ, 0);
  EXPECT_EQ(tally.violations, 0);
}

// The issue's cases, one by one: each refused, naming the field and both values.
TEST(PlanMutationTest, TheIssuesEditsAreRefusedNamingTheField) {
  // A DOS disk: partition 1 at 63 with a 19.5 MiB ext4, moved to 2048 by plan.
  Disk d;
  d.device.topology = {512, 512, 512, 0, 0, 128 * kMiB, TopologyOrigin::kKernel};
  d.device.identity.path = "/dev/sdz";
  PartitionTable& t = d.probed;
  t.label = LabelType::kDos;
  t.sector_size = 512;
  t.disk_size_sectors = 262144;
  t.first_usable_lba = 2048;
  t.last_usable_lba = 262143;
  t.fingerprint = "xxh64:0000000000000001";
  Partition p;
  p.number = 1;
  p.start_sector = 63;
  p.size_sectors = 39936;  // 19.5 MiB
  p.type_code = "0x83";
  p.contents.proof = ContentProof::kSignature;
  p.contents.fs_type = "ext4";
  p.contents.fs_size_bytes = 39936ull * 512;
  t.partitions = {p};
  d.truth[1] = {};
  PartitionTable planned = t;
  const Alignment al{kMiB, 0};
  Result<Plan> made = MakeProvenPlan(&planned, d.device, al, {}, ModelProofs(d));
  ASSERT_TRUE(made) << made.error().message;
  ASSERT_EQ(made->actions[0].kind, ActionKind::kMoveData);
  ASSERT_EQ(made->actions[0].bytes_to_move, 20447232u);
  auto refused = [&](std::function<void(nlohmann::json&)> edit,
                     std::vector<uint32_t> consent = {}) {
    nlohmann::json j = PlanToJson(*made);
    edit(j);
    Verdict v = ApplyChecks(j.dump(), d, consent);
    return v.refused.value_or("accepted");
  };
  EXPECT_EQ(refused([](nlohmann::json& j) { j["actions"][0]["bytes_to_move"] = 4096; }),
            "claims: actions[0].bytes_to_move: the plan says 4096, partition 1 needs 20447232 "
            "(ext4 of 19.50 MiB)");
  // A higher start with the end kept: the new extent is smaller than the filesystem.
  const uint64_t end = made->actions[0].new_end_sector;
  EXPECT_EQ(refused([&](nlohmann::json& j) {
              j["actions"][0]["new_start_sector"] = 4096;
              j["actions"][0]["bytes_to_move"] = (end - 4096 + 1) * 512;
            }),
            fmt::format("claims: the layout the plan asks for (new_start_sector, "
                        "new_end_sector): partition 1: sectors 4096-{} ({} sectors) are fewer "
                        "than it keeps: its ext4 filesystem needs 39936 sectors (19.50 MiB), all "
                        "of the partition",
                        end, end - 4096 + 1));
  // "empty": "discarded" edited in, as table-only: consent is not a field of a file.
  EXPECT_NE(refused([](nlohmann::json& j) {
              j["actions"][0]["kind"] = "table-only";
              j["actions"][0]["bytes_to_move"] = 0;
              j["actions"][0]["empty"] = "discarded";
            }).find("partition 1: the plan gives up its contents"),
            std::string::npos);
  // With the consent said again, the same edit is what plan --discard 1 makes.
  EXPECT_EQ(refused(
                [](nlohmann::json& j) {
                  j["actions"][0]["kind"] = "table-only";
                  j["actions"][0]["bytes_to_move"] = 0;
                  j["actions"][0]["empty"] = "discarded";
                },
                {1}),
            "accepted");
  // A key twice: the last one does not win, the file is refused.
  nlohmann::json j = PlanToJson(*made);
  std::string twice =
      test::DumpWithDuplicateKey(j, nlohmann::json::json_pointer("/actions/0/bytes_to_move"), 4096);
  Verdict v = ApplyChecks(twice, d, {});
  ASSERT_TRUE(v.refused);
  EXPECT_EQ(*v.refused,
            "actions[0].bytes_to_move: appears twice (which one counts is not for partalign to "
            "guess)");
}

}  // namespace
}  // namespace partalign
