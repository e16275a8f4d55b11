// SPDX-License-Identifier: GPL-3.0-or-later
// Crash safety of translate (docs/migration.md): translate is killed with SIGKILL between any
// two sectors it writes (PARTALIGN_TEST_KILL_AFTER_SECTORS) or at a random time during a
// slowed-down write (a real external kill -9). After each kill the disk is read by libfdisk and
// sfdisk with the old sector size (a loop device attached with it) and with the new one: the old
// table, the new one, or neither ("mixed"); then `restore` must bring back every byte of the
// disk. A GPT must never be mixed.
//
// CI runs a few points per layout; scripts/bench-translate-kill runs the disabled KillBench test
// with many (PARTALIGN_KILL_POINTS, PARTALIGN_KILL_EXTERNAL, PARTALIGN_KILL_SEED).
//
// Issue 37 item 5: after a kill at every point, what audit and translate itself then say is run
// word for word (the restore of translate's backup, then translate again, where the table is
// torn), and the disk must end translated with every partition's bytes as they were.
#include <signal.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <unistd.h>
#include <algorithm>
#include <cstdlib>

#include <filesystem>
#include <random>

#include "support/advice.h"
#include "support/crash_support.h"
#include "support/device_test.h"
#include "support/loop_device.h"
#include "support/moved_disk.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::LibfdiskPlaces;
using test::Places;
using test::RunPartalign;
using test::SfdiskPlaces;

constexpr int kKilledExit = 128 + SIGKILL;
constexpr unsigned long long kDiskBytes = 16ull << 20;

struct TranslateLayout {
  std::string name;
  std::string script;  ///< for `from`-byte sectors
  unsigned from;
  unsigned to;
};

// Partitions on whole MiBs, so that every layout translates both ways; DOS with two logical
// partitions (EBRs at 5 MiB and 8 MiB).
std::vector<TranslateLayout> Layouts() {
  const std::string gpt4k = "label: gpt\nstart=256, size=1024\nstart=1280, size=1024\n";
  const std::string dos4k =
      "label: dos\nstart=256, size=1024, type=83\nstart=1280, size=2304, type=5\n"
      "start=1536, size=512, type=83\nstart=2304, size=1280, type=83\n";
  const std::string gpt512 = "label: gpt\nstart=2048, size=8192\nstart=10240, size=8192\n";
  const std::string dos512 =
      "label: dos\nstart=2048, size=8192, type=83\nstart=10240, size=18432, type=5\n"
      "start=12288, size=4096, type=83\nstart=18432, size=10240, type=83\n";
  return {{"Gpt4096To512", gpt4k, 4096, 512},
          {"Dos4096To512", dos4k, 4096, 512},
          {"Gpt512To4096", gpt512, 512, 4096},
          {"Dos512To4096", dos512, 512, 4096}};
}

struct Outcome {
  std::string state;  ///< "old", "new", "mixed", or "completed" (the kill came too late)
  bool restorable = false;
  bool untouched = false;
  std::string detail;
};

class TranslateKill {
 public:
  explicit TranslateKill(const TranslateLayout& layout)
      : layout_(layout), disk_(layout.script, layout.from, kDiskBytes) {
    old_places_ = LibfdiskPlaces(disk_.device(), layout.from).value_or(Places{});
    for (auto [n, start, end] : old_places_) {
      new_places_.emplace_back(n, start * layout.from / layout.to,
                               (end + 1) * layout.from / layout.to - 1);
    }
    FillPartitions();
    disk_.Reattach(layout.to, /*partitions=*/false);
    before_ = disk_.Copy("before.img");
    CommandResult dry = RunPartalign(Args({"--dry-run", "--json"}), "", Env());
    nlohmann::json doc = nlohmann::json::parse(dry.out, nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << dry.out << dry.err;
    if (doc.is_discarded()) return;
    old_or_new_ = doc["table_write"]["crash_safety"] == "old-or-new";
    boundaries_.push_back(0);
    for (const nlohmann::json& r : doc["table_write"]["ranges"]) {
      if (!r["changed"].get<bool>()) continue;
      boundaries_.push_back(sectors_ + 1);
      sectors_ += r["sectors"].get<uint64_t>();
      boundaries_.push_back(sectors_);
    }
    boundaries_.erase(std::unique(boundaries_.begin(), boundaries_.end()), boundaries_.end());
  }

  uint64_t sectors() const { return sectors_; }
  /// How many kill points FollowAdviceAfterKill ended which way: "restore+translate" (a torn
  /// table), "translate" (the old table whole), "nothing" (the new table whole).
  const std::map<std::string, int>& ways() const { return ways_; }
  const std::vector<uint64_t>& boundaries() const { return boundaries_; }
  bool old_or_new() const { return old_or_new_; }
  const TranslateLayout& layout() const { return layout_; }

  Outcome KillAfterSectors(uint64_t k) {
    const std::string backups = NextBackupDir();
    CommandResult r = RunPartalign(Args({"--yes", "--backup-dir", backups}), "",
                                   Env({{"PARTALIGN_TEST_KILL_AFTER_SECTORS", std::to_string(k)}}));
    const bool killed = r.exit_code == kKilledExit;
    EXPECT_TRUE(killed || k >= sectors_) << "k=" << k << " " << r.out << r.err;
    return Classify(backups, killed);
  }

  Outcome KillAt(std::chrono::microseconds delay, uint64_t sector_delay_us) {
    const std::string backups = NextBackupDir();
    std::vector<std::string> args = Args({"--yes", "--backup-dir", backups});
    bool killed = test::RunAndKill(
        args, Env({{"PARTALIGN_TEST_SLOW_WRITES_US", std::to_string(sector_delay_us)}}), delay);
    return Classify(backups, killed);
  }

  // Kills translate after `k` sectors, then does what a person would: reads what audit says,
  // and runs it word for word (RunAdvice; --yes added, as for a person at a terminal) - on a
  // torn table the restore of translate's backup, then translate, which translate's own
  // refusal names too; otherwise the translate that was interrupted, again. "" when the disk
  // ends translated with every partition's bytes as before, else what went wrong. The disk is
  // put back as it was before translate after each point.
  std::string FollowAdviceAfterKill(uint64_t k) {
    const std::string backups = NextBackupDir();
    CommandResult killed =
        RunPartalign(Args({"--yes", "--backup-dir", backups}), "",
                     Env({{"PARTALIGN_TEST_KILL_AFTER_SECTORS", std::to_string(k)}}));
    std::string problem = FollowAdvice(killed);
    test::RunOrThrow(
        {"dd", "if=" + before_, "of=" + disk_.device(), "bs=1M", "conv=fsync", "status=none"});
    test::RunOrThrow({"blockdev", "--flushbufs", disk_.device()});
    if (!test::CmpFiles(disk_.image(), before_).empty()) problem += "; the disk was not reset";
    return problem;
  }

 private:
  // partalign's state (the table write markers, the restore's backups) where RunAdvice keeps
  // it, so that the advice run later finds what translate left.
  std::map<std::string, std::string> Env(std::map<std::string, std::string> more = {}) const {
    more["PARTALIGN_STATE_DIR"] = disk_.File("partalign-state");
    return more;
  }

  // Pseudo-random bytes over every partition (not the DOS extended one), read with the old
  // sector size: their digests must survive every kill and what follows it; and restore tells
  // the disk is the backup's by them when no table is left.
  void FillPartitions() {
    std::mt19937_64 rng(7);
    const int fd = ::open(disk_.image().c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    for (auto [n, start, end] : old_places_) {
      std::string bytes((end - start + 1) * layout_.from, '\0');
      for (char& c : bytes) c = static_cast<char>(rng());
      const off_t at = static_cast<off_t>(start * layout_.from);
      EXPECT_EQ(::pwrite(fd, bytes.data(), bytes.size(), at), static_cast<ssize_t>(bytes.size()));
    }
    ::fsync(fd);
    ::close(fd);
    for (auto [n, start, end] : old_places_) {
      digests_.push_back(
          test::DigestBytes(disk_.image(), start * layout_.from, (end - start + 1) * layout_.from));
    }
  }

  // "" when every partition holds the bytes it held before translate.
  std::string PartitionsIntact() const {
    test::RunOrThrow({"sync"});
    std::string problem;
    size_t i = 0;
    for (auto [n, start, end] : old_places_) {
      if (test::DigestBytes(disk_.image(), start * layout_.from,
                            (end - start + 1) * layout_.from) != digests_[i++]) {
        problem += "; partition " + std::to_string(n) + "'s bytes changed";
      }
    }
    return problem;
  }

  std::string FollowAdvice(const CommandResult& killed) {
    const std::string dir = disk_.dir().path();
    std::string log = "translate: exit " + std::to_string(killed.exit_code) + "\n";
    CommandResult audit = RunPartalign({"audit", disk_.device()}, "", Env());
    log += "audit: exit " + std::to_string(audit.exit_code) + "\n" + audit.out + audit.err;
    std::vector<std::string> commands;
    if (audit.err.find("'partalign restore ") != std::string::npos) {
      const std::string restore = test::AdviceIn(audit.err, "'(partalign restore [^']+)'");
      const std::string translate =
          test::AdviceIn(audit.err, "then run '(partalign translate [^']+)' again");
      // translate itself refuses the torn table, naming the same two commands.
      CommandResult again = RunPartalign(Args({"--yes"}), "", Env());
      if (again.exit_code != 3 || again.err.find("'" + restore + "'") == std::string::npos ||
          again.err.find("'" + translate + "'") == std::string::npos) {
        return log + "translate again: exit " + std::to_string(again.exit_code) +
               ", does not name the restore and the translate audit named: " + again.err;
      }
      commands = {restore, translate};
    } else if (audit.err.find("'partalign translate ") != std::string::npos) {
      commands = {test::AdviceIn(audit.err, "'(partalign translate [^']+)'")};
    } else if (LibfdiskPlaces(disk_.device(), layout_.to) != new_places_) {
      // No advice (a DOS table says nothing of its sector size): the command that was
      // interrupted, as it was given.
      std::string again = "partalign";
      for (const std::string& a : Args({})) again += " " + a;
      commands = {again};
    }
    for (const std::string& c : commands) {
      CommandResult r = test::RunAdvice(c + " --yes", dir);
      log += c + ": exit " + std::to_string(r.exit_code) + "\n" + r.out + r.err;
      if (r.exit_code != 0) return log;
      // The restore undid the interrupted write: its mark is gone with it.
      if (c == commands.front() && commands.size() == 2 &&
          !test::FilesIn(disk_.File("partalign-state/table-writes"), ".table-write").empty()) {
        return log + "; the restore left the table write marker";
      }
    }
    ++ways_[commands.size() == 2 ? "restore+translate"
            : commands.empty()   ? "nothing"
                                 : "translate"];
    std::string problem;
    if (LibfdiskPlaces(disk_.device(), layout_.to) != new_places_ ||
        SfdiskPlaces(disk_.device()) != new_places_) {
      problem += "; the disk is not translated";
    }
    problem += PartitionsIntact();
    // The translate that completed removed its mark, and every earlier one of this disk (a
    // kill after the last sector leaves one that says nothing: the table is whole).
    if (!commands.empty() &&
        !test::FilesIn(disk_.File("partalign-state/table-writes"), ".table-write").empty()) {
      problem += "; a table write marker is left";
    }
    return problem.empty() ? "" : log + problem;
  }

  std::vector<std::string> Args(std::vector<std::string> tail) const {
    std::vector<std::string> args{"translate", disk_.device(), "--from-sector-size",
                                  std::to_string(layout_.from)};
    args.insert(args.end(), tail.begin(), tail.end());
    return args;
  }

  std::string NextBackupDir() { return disk_.File("backups-" + std::to_string(++runs_)); }

  // sfdisk's view with the old sector size: a loop device attached with it, for the moment.
  std::optional<Places> SfdiskPlacesAtOldSize() const {
    test::RunOrThrow({"sync"});
    test::LoopDevice view(disk_.image(), layout_.from);
    return SfdiskPlaces(view.path());
  }

  Outcome Classify(const std::string& backups, bool killed) {
    Outcome o;
    std::optional<Places> fdisk_old = LibfdiskPlaces(disk_.device(), layout_.from);
    std::optional<Places> fdisk_new = LibfdiskPlaces(disk_.device(), layout_.to);
    if (fdisk_old == old_places_ && SfdiskPlacesAtOldSize() == old_places_) {
      o.state = "old";
    } else if (fdisk_new == new_places_ && SfdiskPlaces(disk_.device()) == new_places_) {
      o.state = "new";
    } else {
      o.state = "mixed";
      o.detail = "neither libfdisk nor sfdisk read the old or the new table";
    }
    if (!killed) o.state = "completed";
    o.untouched = test::CmpFiles(disk_.image(), before_).empty();
    std::vector<std::string> files = test::FilesIn(backups, ".partalign-backup");
    if (files.empty()) {
      o.restorable = o.untouched;
      if (!o.restorable) o.detail += "; no backup, but the disk changed";
      return o;
    }
    CommandResult r = RunPartalign(
        {"restore", "--yes", "--backup-dir", backups + "-undo", files.front()}, "", Env());
    std::string cmp = test::CmpFiles(disk_.image(), before_);
    o.restorable = r.exit_code == 0 && cmp.empty();
    if (!o.restorable) {
      o.detail += "; restore: exit " + std::to_string(r.exit_code) + " " + r.err + cmp;
    }
    return o;
  }

  TranslateLayout layout_;
  test::MovedDisk disk_;
  std::string before_;
  Places old_places_;
  Places new_places_;
  std::vector<std::string> digests_;  ///< of each partition of old_places_, before translate
  std::map<std::string, int> ways_;
  bool old_or_new_ = true;
  uint64_t sectors_ = 0;
  std::vector<uint64_t> boundaries_;
  int runs_ = 0;
};

void ExpectPromisesKept(const TranslateKill& h, const Outcome& o, const std::string& point) {
  EXPECT_TRUE(o.restorable) << h.layout().name << " " << point << ": " << o.state << " "
                            << o.detail;
  if (h.old_or_new()) {
    EXPECT_NE(o.state, "mixed") << h.layout().name << " " << point << ": " << o.detail;
  }
}

class TranslateCrashTest : public ::testing::TestWithParam<TranslateLayout> {};

TEST_P(TranslateCrashTest, KillsAtEveryStepLeaveOldNewOrRestorable) {
  PARTALIGN_REQUIRE_DEVICES();
  TranslateKill h(GetParam());
  ASSERT_GT(h.sectors(), 0u);
  if (GetParam().name.rfind("Gpt", 0) == 0) {
    EXPECT_TRUE(h.old_or_new());
  }
  std::vector<uint64_t> points = h.boundaries();
  std::mt19937_64 rng(1);
  points.push_back(std::uniform_int_distribution<uint64_t>(0, h.sectors())(rng));
  for (uint64_t k : points) {
    Outcome o = h.KillAfterSectors(k);
    ExpectPromisesKept(h, o, "after sector " + std::to_string(k));
    if (k == 0) {
      EXPECT_TRUE(o.untouched && o.state == "old") << o.state << " " << o.detail;
    }
    if (k == h.sectors()) {
      EXPECT_EQ(o.state, "new") << o.detail;
    }
  }
}

TEST_P(TranslateCrashTest, EveryKillPointsAdviceWorksWordForWord) {
  PARTALIGN_REQUIRE_DEVICES();
  TranslateKill h(GetParam());
  ASSERT_GT(h.sectors(), 0u);
  for (uint64_t k = 0; k <= h.sectors(); ++k) {
    EXPECT_EQ(h.FollowAdviceAfterKill(k), "") << h.layout().name << " killed after sector " << k;
  }
  std::map<std::string, int> ways = h.ways();
  std::printf(
      "translate kill points: layout=%s points=%llu restore+translate=%d translate=%d "
      "nothing=%d\n",
      h.layout().name.c_str(), static_cast<unsigned long long>(h.sectors() + 1),
      ways["restore+translate"], ways["translate"], ways["nothing"]);
  // Killed before the first sector: the table is the old one, whole; after the last: the new.
  EXPECT_GE(ways["translate"], 1);
  EXPECT_GE(ways["nothing"], 1);
}

// scripts/bench-translate-kill runs this with many points and prints the counts.
TEST_P(TranslateCrashTest, DISABLED_KillBench) {
  PARTALIGN_REQUIRE_DEVICES();
  auto env = [](const char* name, uint64_t fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::stoull(v) : fallback;
  };
  const uint64_t points = env("PARTALIGN_KILL_POINTS", 15);
  const uint64_t external = env("PARTALIGN_KILL_EXTERNAL", 5);
  std::mt19937_64 rng(env("PARTALIGN_KILL_SEED", 1));
  TranslateKill h(GetParam());
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

INSTANTIATE_TEST_SUITE_P(Layouts, TranslateCrashTest, ::testing::ValuesIn(Layouts()),
                         [](const auto& param_info) { return param_info.param.name; });

}  // namespace
}  // namespace partalign
