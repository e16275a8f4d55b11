// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/plan_mutation_run.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/content/content_proof.h"
#include "io/device/device_probe.h"
#include "io/device/target.h"
#include "io/device/zero_scan.h"
#include "io/table/fdisk_table.h"
#include "partalign/layout/planner.h"
#include "partalign/table/plan_check.h"
#include "support/disk_invariant.h"
#include "support/plan_mutations.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign::test {
namespace {

namespace fs = std::filesystem;

// The first offset where the files `a` and `b` differ (or their sizes), if any.
std::optional<uint64_t> FirstDifference(const std::string& a, const std::string& b) {
  const int fa = ::open(a.c_str(), O_RDONLY);
  const int fb = ::open(b.c_str(), O_RDONLY);
  if (fa < 0 || fb < 0) {
    if (fa >= 0) ::close(fa);
    if (fb >= 0) ::close(fb);
    throw std::runtime_error("cannot open '" + a + "' or '" + b + "'");
  }
  constexpr size_t kChunk = 4 << 20;
  std::vector<char> x(kChunk), y(kChunk);
  std::optional<uint64_t> out;
  for (uint64_t at = 0;; at += kChunk) {
    const ssize_t n = ::pread(fa, x.data(), kChunk, static_cast<off_t>(at));
    const ssize_t m = ::pread(fb, y.data(), kChunk, static_cast<off_t>(at));
    if (n != m || n < 0) {
      out = at;
      break;
    }
    if (n == 0) break;
    if (std::memcmp(x.data(), y.data(), static_cast<size_t>(n)) != 0) {
      size_t i = 0;
      while (x[i] == y[i]) ++i;
      out = at + i;
      break;
    }
  }
  ::close(fa);
  ::close(fb);
  return out;
}

std::vector<PlanAction> WithoutReasons(std::vector<PlanAction> actions) {
  for (PlanAction& a : actions) a.reason.clear();
  return actions;
}

// The disk as `plan` sees it, with the proofs plan makes, for the oracle.
struct Oracle {
  DeviceInfo device;
  PartitionTable table;
  std::vector<uint32_t> empty;  ///< partitions whose every byte is zero
};

Oracle ReadOracle(const std::string& image, unsigned sector_size, const Plan& plan,
                  const std::vector<uint32_t>& consent) {
  ProbeOptions options;
  options.assume.logical_sector_size = sector_size;
  Result<DeviceInfo> device = ProbeTarget(image, options);
  if (!device) throw std::runtime_error(device.error().message);
  Result<TableRead> read =
      ReadPartitionTable(image, {.sector_size = sector_size, .probe_contents = true});
  if (!read) throw std::runtime_error(read.error().message);
  Oracle o{*device, read->table, {}};
  std::ostringstream quiet;
  Result<Plan> proven = MakeProvenPlan({quiet, quiet}, image, &o.table, o.device, plan.alignment,
                                       {.discard = consent, .no_scan = false});
  if (!proven) throw std::runtime_error(proven.error().message);
  Result<Target> disk = OpenTarget(image);
  if (!disk) throw std::runtime_error(disk.error().message);
  for (const Partition& p : o.table.partitions) {
    if (p.kind == PartitionKind::kExtended) continue;
    Result<std::optional<uint64_t>> data = FindFirstNonZero(
        disk->fd.get(), image, p.start_sector * sector_size, p.size_sectors * sector_size);
    if (!data) throw std::runtime_error(data.error().message);
    if (!*data) o.empty.push_back(p.number);
  }
  return o;
}

// What differs between the accepted plan file `file` and the plan `plan` makes for its target
// layout on the oracle's disk ("" when they agree): the same header as plan's own `original`
// (but the alignment, a choice: plan --grain) and the actions plan describes for that layout,
// its tails read as plan reads them.
std::string DifferenceFromPlansOwn(const Plan& file, const Plan& original, const Oracle& oracle,
                                   const std::string& image, const std::vector<uint32_t>& consent) {
  PartitionTable table = oracle.table;
  const PlanOptions options{.discard = consent};
  const std::vector<std::pair<uint64_t, uint64_t>> target = TargetExtents(file, table);
  std::vector<PlanAction> stated;
  for (size_t i = 0; i < target.size(); ++i) {
    const Partition& p = table.partitions[i];
    stated.push_back({p.number, p.start_sector, p.end_sector(), target[i].first, target[i].second,
                      ActionKind::kTableOnly, 0, ""});
  }
  std::ostringstream quiet;
  if (Status s =
          ProveTailsZero({quiet, quiet}, image, &table, TailsToProve(table, stated, options));
      !s) {
    return s.error().message;
  }
  Result<std::vector<PlanAction>> described =
      PlanFileActions(table, file.alignment, options, target);
  if (!described) return "plan describes no such layout: " + described.error().message;
  Plan expected = original;
  expected.alignment = file.alignment;
  expected.actions = WithoutReasons(*described);
  Plan got = file;
  got.actions = WithoutReasons(got.actions);
  // An image file's topology is a default or an assumed one: one claim when the values agree
  // (PlanMismatches).
  if (got.topology.origin != TopologyOrigin::kKernel &&
      expected.topology.origin != TopologyOrigin::kKernel) {
    got.topology.origin = expected.topology.origin;
  }
  // The table's identifier is optional (plans of older versions lack it) and apply refuses one
  // that differs from the disk's (PlanMismatches): removed, it is plan's plan all the same, as
  // in the core sweep (tests/core/table/plan_mutation_test.cc).
  if (got.disk.table_id.empty()) got.disk.table_id = expected.disk.table_id;
  if (got == expected) return "";
  return fmt::format("the file says\n{}\nplan says\n{}", PlanToJson(got).dump(1),
                     PlanToJson(expected).dump(1));
}

}  // namespace

void MutationTally::Add(const MutationTally& o) {
  plans += o.plans;
  mutations += o.mutations;
  refused += o.refused;
  applied += o.applied;
  differ += o.differ;
  violations += o.violations;
  failures.insert(failures.end(), o.failures.begin(), o.failures.end());
}

MutationTally RunPlanMutations(const MutationRun& run) {
  MutationTally tally;
  fs::create_directories(run.scratch);
  const std::string pristine = run.scratch + "/pristine.img";
  RunOrThrow({"cp", "--sparse=always", run.image, pristine});
  const std::string text = ReadFile(run.plan_file);
  Result<Plan> original = PlanFromJson(text);
  if (!original) throw std::runtime_error(original.error().message);
  const std::vector<uint32_t> consent = PlanDiscards(*original);
  const Oracle oracle = ReadOracle(pristine, run.sector_size, *original, consent);
  Plan own = *original;
  own.actions = WithoutReasons(own.actions);
  // Left behind by an apply: only what held nothing, or what the person gave up.
  DiskInvariantOptions invariant;
  invariant.before_sector_size = invariant.after_sector_size = run.sector_size;
  invariant.left_behind = oracle.empty;
  invariant.left_behind.insert(invariant.left_behind.end(), consent.begin(), consent.end());

  const std::vector<PlanMutation> mutations = PlanMutations(nlohmann::json::parse(text));
  ++tally.plans;
  const size_t stride = std::max<size_t>(run.stride, 1);
  for (size_t i = 0; i < mutations.size(); ++i) {
    const PlanMutation& m = mutations[i];
    const bool sampled = i >= run.offset && (i - run.offset) % stride == 0;
    if (!sampled && (run.always.empty() || m.name.find(run.always) == std::string::npos)) {
      continue;
    }
    ++tally.mutations;
    const std::string file = run.scratch + "/mutated.json";
    const std::string backups = run.scratch + "/backups";
    const std::string journals = run.scratch + "/journals";
    WriteFile(file, m.text);
    std::vector<std::string> args = {"apply", "--yes",         "--backup-dir",
                                     backups, "--journal-dir", journals};
    if (run.sector_size != 512) {
      args.insert(args.end(), {"--sector-size", std::to_string(run.sector_size)});
    }
    for (uint32_t n : consent) args.insert(args.end(), {"--discard", std::to_string(n)});
    args.push_back(file);
    const CommandResult r =
        RunPartalign(args, "", {{"PARTALIGN_STATE_DIR", run.scratch + "/state"}});
    auto fail = [&](const std::string& what) {
      ++tally.violations;
      tally.failures.push_back(fmt::format("{}: {}\n{}", m.name, what, Describe(args, r)));
    };
    if (r.exit_code != 0) {
      ++tally.refused;
      if (r.exit_code != 1 && r.exit_code != 3)
        fail("refused with exit status " + std::to_string(r.exit_code));
      if (std::optional<uint64_t> at = FirstDifference(pristine, run.image)) {
        fail(fmt::format("refused, but byte {} of the image changed", *at));
        RunOrThrow({"cp", "--sparse=always", pristine, run.image});
      } else if (!FilesIn(backups, ".partalign-backup").empty()) {
        fail("refused, but a backup was written");
      }
      fs::remove_all(backups);
      continue;
    }
    // Accepted: the plan `plan` makes for its layout, applied keeping every byte.
    Result<Plan> accepted = PlanFromJson(m.text);
    const std::string differs =
        accepted ? DifferenceFromPlansOwn(*accepted, own, oracle, pristine, consent)
                 : "apply accepted a file PlanFromJson refuses: " + accepted.error().message;
    if (!differs.empty()) {
      ++tally.differ;
      tally.failures.push_back(
          fmt::format("{}: accepted, but not plan's plan for its layout: {}", m.name, differs));
    } else {
      ++tally.applied;
    }
    for (const std::string& v : DiskInvariantViolations(pristine, run.image, invariant)) {
      fail("the disk invariant: " + v);
    }
    RunOrThrow({"cp", "--sparse=always", pristine, run.image});
    fs::remove_all(backups);
    fs::remove_all(journals);
  }
  return tally;
}

}  // namespace partalign::test
