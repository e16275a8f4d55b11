// SPDX-License-Identifier: GPL-3.0-or-later
// Crash safety of apply's table write: apply is killed with SIGKILL between any two sectors it
// writes (PARTALIGN_TEST_KILL_AFTER_SECTORS, which also writes sector by sector, as a torn
// multi-sector write would land) or at a random time during a slowed-down write (a real
// external kill -9). After each kill the disk is classified by libfdisk and sfdisk: the old
// table, the new one, or neither ("mixed"); then `restore` must bring back every byte of the
// old disk. GPT (and DOS transitions assessed old-or-new) must never be mixed.
//
// CI runs a few seeded points per layout; scripts/bench-apply-kill runs the disabled
// KillBench test with many (PARTALIGN_KILL_POINTS, PARTALIGN_KILL_EXTERNAL, PARTALIGN_KILL_SEED).
#include <signal.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>

#include "support/apply_layouts.h"
#include "support/crash_support.h"
#include "support/device_test.h"
#include "support/partitioned_loop.h"
#include "support/plan_maker.h"
#include "support/run_command.h"

namespace partalign {
namespace {

using test::ApplyLayout;
using test::CommandResult;
using test::LibfdiskPlaces;
using test::Places;
using test::RunAndKill;
using test::RunCommand;
using test::RunPartalign;
using test::SfdiskPlaces;

// 128 + SIGKILL: how RunCommand reports a process killed by signal 9.
constexpr int kKilledExit = 128 + SIGKILL;

struct Outcome {
  std::string state;        ///< "old", "new", "mixed", or "completed" (the kill came too late)
  bool restorable = false;  ///< restore (or nothing written) gave back every byte
  bool untouched = false;   ///< the disk was byte-identical to before, without a restore
  std::string detail;
};

// One disk of `layout`, its plan, and what it looks like before and after the plan.
class KillHarness {
 public:
  explicit KillHarness(const ApplyLayout& layout)
      : layout_(layout), disk_(layout.script, layout.sector_size) {
    before_ = disk_.Snapshot("before.img");
    plan_file_ = disk_.File("plan.json");
    Plan plan = test::MakeTableOnlyPlan(disk_.device());
    test::WritePlanFile(plan_file_, plan);
    old_places_ = *LibfdiskPlaces(disk_.device(), layout.sector_size);
    new_places_ = old_places_;
    for (auto& [number, start, end] : new_places_) {
      for (const PlanAction& a : plan.actions) {
        if (a.partition == number && a.kind == ActionKind::kTableOnly) {
          start = a.new_start_sector;
          end = a.new_end_sector;
        }
      }
    }
    CommandResult dry = RunPartalign({"apply", "--dry-run", "--json", plan_file_});
    nlohmann::json doc = nlohmann::json::parse(dry.out, nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << dry.err;
    old_or_new_ = doc["table_write"]["crash_safety"] == "old-or-new";
    for (const nlohmann::json& r : doc["table_write"]["ranges"]) {
      if (!r["changed"].get<bool>()) continue;
      // Sectors written before the first one the old table uses: the old table is intact.
      if (r["role"] == "ebr" && !in_place_started_ && IsNewPlace(r)) {
        fresh_sectors_ += r["sectors"].get<uint64_t>();
      } else {
        in_place_started_ = true;
      }
      // Every state between two steps, and each step torn after its first sector.
      boundaries_.push_back(sectors_ + 1);
      sectors_ += r["sectors"].get<uint64_t>();
      boundaries_.push_back(sectors_);
    }
    boundaries_.insert(boundaries_.begin(), 0);
    boundaries_.erase(std::unique(boundaries_.begin(), boundaries_.end()), boundaries_.end());
  }

  uint64_t sectors() const { return sectors_; }
  /// 0, and after the first and the last sector of each step.
  const std::vector<uint64_t>& boundaries() const { return boundaries_; }
  uint64_t fresh_sectors() const { return fresh_sectors_; }
  bool old_or_new() const { return old_or_new_; }
  const ApplyLayout& layout() const { return layout_; }

  Outcome KillAfterSectors(uint64_t k) {
    const std::string backups = NextBackupDir();
    CommandResult r = RunPartalign({"apply", "--yes", "--backup-dir", backups, plan_file_}, "",
                                   {{"PARTALIGN_TEST_KILL_AFTER_SECTORS", std::to_string(k)}});
    bool killed = r.exit_code == kKilledExit;
    EXPECT_TRUE(killed || k >= sectors_) << "k=" << k << " " << r.out << r.err;
    return Classify(backups, killed);
  }

  Outcome KillAt(std::chrono::microseconds delay, uint64_t sector_delay_us) {
    const std::string backups = NextBackupDir();
    bool killed =
        RunAndKill({"apply", "--yes", "--backup-dir", backups, plan_file_},
                   {{"PARTALIGN_TEST_SLOW_WRITES_US", std::to_string(sector_delay_us)}}, delay);
    return Classify(backups, killed);
  }

 private:
  static bool IsNewPlace(const nlohmann::json& range) {
    return range["area"].get<std::string>().find("(new place)") != std::string::npos;
  }

  std::string NextBackupDir() { return disk_.File("backups-" + std::to_string(++runs_)); }

  Outcome Classify(const std::string& backups, bool killed) {
    Outcome o;
    std::optional<Places> fdisk = LibfdiskPlaces(disk_.device(), layout_.sector_size);
    std::optional<Places> sfdisk = SfdiskPlaces(disk_.device());
    if (fdisk && sfdisk && *fdisk == *sfdisk && *fdisk == old_places_) {
      o.state = "old";
    } else if (fdisk && sfdisk && *fdisk == *sfdisk && *fdisk == new_places_) {
      o.state = "new";
    } else {
      o.state = "mixed";
      o.detail = fdisk ? "libfdisk reads a table that is neither" : "libfdisk cannot read it";
    }
    if (!killed) o.state = "completed";
    o.untouched = test::CmpFiles(disk_.image(), before_).empty();
    std::vector<std::string> files;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(backups, ec)) {
      if (e.path().extension() == ".partalign-backup") files.push_back(e.path().string());
    }
    if (files.empty()) {
      // Killed before the backup existed: nothing may have been written.
      o.restorable = o.untouched;
      if (!o.restorable) o.detail += "; no backup, but the disk changed";
      return o;
    }
    CommandResult r =
        RunPartalign({"restore", "--yes", "--backup-dir", backups + "-undo", files.front()});
    std::string cmp = test::CmpFiles(disk_.image(), before_);
    o.restorable = r.exit_code == 0 && cmp.empty();
    if (!o.restorable)
      o.detail += "; restore: exit " + std::to_string(r.exit_code) + " " + r.err + cmp;
    return o;
  }

  ApplyLayout layout_;
  test::PartitionedLoop disk_;
  std::string before_;
  std::string plan_file_;
  Places old_places_;
  Places new_places_;
  bool old_or_new_ = true;
  bool in_place_started_ = false;
  uint64_t sectors_ = 0;
  uint64_t fresh_sectors_ = 0;
  std::vector<uint64_t> boundaries_;
  int runs_ = 0;
};

// Checks the promises for one outcome; returns false (after reporting) when one is broken.
void ExpectPromisesKept(const KillHarness& h, const Outcome& o, const std::string& point) {
  EXPECT_TRUE(o.restorable) << h.layout().name << " " << point << ": " << o.state << " "
                            << o.detail;
  if (h.old_or_new()) {
    EXPECT_NE(o.state, "mixed") << h.layout().name << " " << point << ": " << o.detail;
  }
}

class ApplyCrashTest : public ::testing::TestWithParam<ApplyLayout> {};

TEST_P(ApplyCrashTest, KillsAtEveryStepLeaveOldNewOrRestorable) {
  PARTALIGN_REQUIRE_DEVICES();
  KillHarness h(GetParam());
  ASSERT_GT(h.sectors(), 0u);
  // Between any two steps and inside each one, plus one seeded point (reproducible).
  std::vector<uint64_t> points = h.boundaries();
  std::mt19937_64 rng(1);
  points.push_back(std::uniform_int_distribution<uint64_t>(0, h.sectors())(rng));
  for (uint64_t k : points) {
    Outcome o = h.KillAfterSectors(k);
    ExpectPromisesKept(h, o, "after sector " + std::to_string(k));
    if (k <= h.fresh_sectors()) {
      EXPECT_EQ(o.state, "old") << "k=" << k << ": only sectors the old table does not use";
    }
    if (k == h.sectors()) {
      // The last sector completes the write: the new table.
      EXPECT_EQ(o.state, "new") << o.detail;
    }
  }
}

// scripts/bench-apply-kill runs this with many points and prints the counts.
TEST_P(ApplyCrashTest, DISABLED_KillBench) {
  PARTALIGN_REQUIRE_DEVICES();
  auto env = [](const char* name, uint64_t fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::stoull(v) : fallback;
  };
  const uint64_t points = env("PARTALIGN_KILL_POINTS", 15);
  const uint64_t external = env("PARTALIGN_KILL_EXTERNAL", 5);
  std::mt19937_64 rng(env("PARTALIGN_KILL_SEED", 1));
  KillHarness h(GetParam());
  std::map<std::string, int> counts;
  int lost = 0;
  int untouched = 0;
  auto record = [&](const Outcome& o, const std::string& point) {
    ++counts[o.state];
    untouched += o.untouched && o.state == "old";
    if (!o.restorable) {
      ++lost;
      ADD_FAILURE() << h.layout().name << " " << point << ": NOT RESTORABLE: " << o.detail;
    }
    ExpectPromisesKept(h, o, point);
  };
  std::uniform_int_distribution<uint64_t> sector(0, h.sectors());
  for (uint64_t i = 0; i < points; ++i) {
    uint64_t k = sector(rng);
    record(h.KillAfterSectors(k), "after sector " + std::to_string(k));
  }
  // Real kills: each sector write is slowed to 3 ms; the kill lands anywhere from start-up to
  // a little after the write should have finished.
  constexpr uint64_t kSectorDelayUs = 3000;
  std::uniform_int_distribution<uint64_t> delay_us(0, 150000 + h.sectors() * kSectorDelayUs);
  for (uint64_t i = 0; i < external; ++i) {
    uint64_t d = delay_us(rng);
    record(h.KillAt(std::chrono::microseconds(d), kSectorDelayUs),
           "external kill at " + std::to_string(d) + " us");
  }
  std::printf(
      "kill-bench: layout=%s sectors=%llu crash_safety=%s points=%llu old=%d "
      "old_untouched=%d new=%d mixed=%d completed=%d not_restorable=%d\n",
      h.layout().name.c_str(), static_cast<unsigned long long>(h.sectors()),
      h.old_or_new() ? "old-or-new" : "restore-needed",
      static_cast<unsigned long long>(points + external), counts["old"], untouched, counts["new"],
      counts["mixed"], counts["completed"], lost);
}

INSTANTIATE_TEST_SUITE_P(Layouts, ApplyCrashTest, ::testing::ValuesIn(test::ApplyLayouts()),
                         [](const auto& param_info) { return param_info.param.name; });

}  // namespace
}  // namespace partalign
