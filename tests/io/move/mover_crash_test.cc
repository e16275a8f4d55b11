// SPDX-License-Identifier: GPL-3.0-or-later
// The recovery argument of docs/mover.md, tested: the real mover (threads, pipeline, journal)
// runs on simulated disks whose power fails at a random write or flush; the disks then hold the
// durable bytes plus any subset of the unflushed writes, torn and reordered sector by sector.
// Resume (complete or roll back, chosen at random, itself interrupted again at random) must end
// with every byte of the data at its old or new place and the matching table bytes. Seeded, so
// that a failure names the seed that reproduces it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <stdexcept>

#include <fmt/format.h>

#include "io/move/move_engine.h"
#include "io/move/move_journal.h"
#include "partalign/move/move_way.h"
#include "support/simulated_disk.h"
#include "support/simulated_move.h"

namespace partalign {
namespace {

using test::CrashClock;
using test::SimulatedDisk;

constexpr uint64_t kSector = test::kSimSector;

struct Scenario {
  const char* name;
  uint64_t device_bytes;
  MoveGeometry move;
  bool table;  ///< with a table transition at both ends of the device
  /// and a table sector in the part of the source the move vacates (a DOS head EBR)
  bool table_in_vacated_source = false;
  /// Only these chunks are copied (a used map); empty: every chunk.
  std::vector<ChunkRun> copy = {};
  /// The journal's format: version 1 journals (pre-scan, every chunk) and version 2 ones (no
  /// mirror, no repair trailers) must still recover.
  uint32_t version = kJournalVersion;
  /// Updates in the middle of the device: the changes of a step that moves no data (a shrink).
  uint64_t patches = 0;
};

MoveGeometry WithCopy(const Scenario& scenario) {
  MoveGeometry move = scenario.move;
  if (!scenario.copy.empty()) {
    Result<CopySet> copy = CopySet::FromRuns(scenario.copy, RangeChunkCount(move));
    EXPECT_TRUE(copy) << copy.error().message;
    if (copy) move.copy = *copy;
  }
  return move;
}

struct Images {
  std::vector<uint8_t> device;
  std::vector<uint8_t> journal;
};

class CrashHarness {
 public:
  CrashHarness(const Scenario& scenario, uint64_t seed)
      : sim_(scenario.device_bytes, WithCopy(scenario), scenario.table, seed,
             scenario.table_in_vacated_source, scenario.version, scenario.patches) {}

  /// Writes and flushes of a whole uninterrupted move (the range to pick crash points from).
  uint64_t CountOperations() {
    CrashClock clock;
    SimulatedDisk device = sim_.NewDevice(&clock);
    SimulatedDisk journal_disk = sim_.NewJournalDisk(&clock);
    Result<MoveJournal> journal =
        MoveJournal::Initialize(journal_disk, sim_.header(), sim_.table(), sim_.hasher());
    EXPECT_TRUE(journal) << journal.error().message;
    Result<MoveOutcome> outcome = DriveJournal(device, *journal, ResumeMode::kComplete, {});
    EXPECT_TRUE(outcome && outcome->status == MoveStatus::kCompleted);
    return clock.ticks();
  }

  /// Runs the move with power failures at random points until it is over; checks the result.
  void Run(uint64_t operations, std::string* trace) {
    std::mt19937_64& rng = sim_.rng();
    CrashClock clock(1 + rng() % operations);
    SimulatedDisk device = sim_.NewDevice(&clock);
    SimulatedDisk journal_disk = sim_.NewJournalDisk(&clock);
    std::optional<MoveOutcome> outcome;
    std::vector<uint8_t> final_image;
    if (Result<MoveJournal> journal =
            MoveJournal::Initialize(journal_disk, sim_.header(), sim_.table(), sim_.hasher())) {
      Result<MoveOutcome> ran = DriveJournal(device, *journal, ResumeMode::kComplete, {});
      ASSERT_TRUE(ran) << ran.error().message;
      if (!clock.crashed()) {
        outcome = *ran;
        final_image = device.current();
      }
    }
    *trace += fmt::format("start: crash at op {} of {}", clock.ticks(), operations);
    Images images{device.SurvivingImage(rng), journal_disk.SurvivingImage(rng)};
    for (int round = 0; !outcome && round < 8; ++round) {
      const ResumeMode mode = rng() % 3 == 0 ? ResumeMode::kRollback : ResumeMode::kComplete;
      // The last rounds run to the end; the others may lose power again.
      const uint64_t crash_at = round < 5 && rng() % 2 == 0 ? 1 + rng() % operations : 0;
      CrashClock again(crash_at);
      SimulatedDisk dev("device", images.device, kSector, &again);
      SimulatedDisk jr("journal", images.journal, kSector, &again);
      *trace += fmt::format("; resume {} (crash at {})",
                            mode == ResumeMode::kRollback ? "rollback" : "complete", crash_at);
      Result<MoveJournal> journal = MoveJournal::Load(jr, sim_.hasher());
      if (!journal) {
        // Only a journal whose header never became durable is unreadable, and then the device
        // was never written.
        ASSERT_EQ(images.device, sim_.original()) << *trace << ": " << journal.error().message;
        return;
      }
      Result<MoveOutcome> ran = DriveJournal(dev, *journal, mode, {});
      ASSERT_TRUE(ran) << *trace << ": " << ran.error().message;
      if (again.crashed()) {
        images = {dev.SurvivingImage(rng), jr.SurvivingImage(rng)};
        continue;
      }
      ASSERT_NE(ran->status, MoveStatus::kStopped) << *trace << ": " << ran->message;
      outcome = *ran;
      final_image = dev.current();
    }
    ASSERT_TRUE(outcome) << *trace << ": did not finish";
    const std::string mismatch = sim_.Mismatch(outcome->status, final_image);
    ASSERT_EQ(mismatch, "") << *trace;
  }

 private:
  test::SimulatedMove sim_;
};

MoveGeometry Geometry(uint64_t source, uint64_t dest, uint64_t length, uint64_t chunk,
                      uint32_t per_batch, uint32_t ring) {
  return {source, dest, length, chunk, per_batch, ring};
}

// The flush-ordered way of a geometry (partalign/move/move_way.h): no saved copies, a window
// within the shift.
MoveGeometry FlushOrdered(const MoveGeometry& move) {
  std::optional<MoveGeometry> ordered = FlushOrderedGeometry(move, kSector);
  if (!ordered) throw std::logic_error("no flush-ordered way for a crash scenario");
  return *ordered;
}

// Shifts smaller than a chunk (every chunk needs a saved copy), between one chunk and the ring
// (some do), larger than the ring (none do); both directions; a range that is not a multiple of
// the chunk; a single chunk; table transitions or none, and table sectors in the vacated part
// of the source.
const Scenario kScenarios[] = {
    {"up by one sector", 1 << 20, Geometry(16 * kSector, 17 * kSector, 300 * kSector, 16384, 2, 2),
     true},
    {"down by one sector", 1 << 20,
     Geometry(17 * kSector, 16 * kSector, 300 * kSector, 16384, 2, 2), true},
    {"up 63 -> 2048 scaled", 1 << 20,
     Geometry(9 * kSector, 72 * kSector, 700 * kSector, 8192, 2, 3), true},
    {"down 2048 -> 63 scaled", 1 << 20,
     Geometry(72 * kSector, 9 * kSector, 700 * kSector, 8192, 2, 3), true},
    {"up beyond the ring", 1 << 20,
     Geometry(8 * kSector, 600 * kSector, 1000 * kSector, 4096, 2, 2), false},
    {"down beyond the ring", 1 << 20,
     Geometry(600 * kSector, 8 * kSector, 1000 * kSector, 4096, 2, 2), false},
    {"up by exactly a chunk", 1 << 20,
     Geometry(16 * kSector, 32 * kSector, 500 * kSector, 8192, 3, 2), true},
    {"one short chunk", 1 << 19, Geometry(8 * kSector, 11 * kSector, 5 * kSector, 65536, 4, 4),
     true},
    {"no overlap at all", 1 << 20,
     Geometry(8 * kSector, 1200 * kSector, 400 * kSector, 16384, 2, 4), true},
    {"up with a table sector in the vacated source", 1 << 20,
     Geometry(9 * kSector, 72 * kSector, 700 * kSector, 8192, 2, 3), true, true},
    {"down by one sector with a table sector in the vacated source", 1 << 20,
     Geometry(17 * kSector, 16 * kSector, 300 * kSector, 16384, 2, 2), true, true},
    // Used maps: only some chunks are copied (gaps of one and of several chunks, the range's
    // short last chunk copied or not), small and mid shifts, both directions.
    {"used only, up by one sector",
     1 << 20,
     Geometry(16 * kSector, 17 * kSector, 300 * kSector, 8192, 2, 2),
     true,
     false,
     {{0, 2}, {3, 1}, {6, 4}, {12, 3}, {18, 1}}},
    {"used only, down by one sector",
     1 << 20,
     Geometry(17 * kSector, 16 * kSector, 300 * kSector, 8192, 2, 2),
     true,
     false,
     {{0, 1}, {4, 5}, {10, 1}, {16, 3}}},
    {"used only, up 63 -> 2048 scaled",
     1 << 20,
     Geometry(9 * kSector, 72 * kSector, 700 * kSector, 8192, 2, 3),
     true,
     true,
     {{0, 1}, {2, 2}, {7, 10}, {20, 2}, {30, 14}}},
    {"used only, down 2048 -> 63 scaled",
     1 << 20,
     Geometry(72 * kSector, 9 * kSector, 700 * kSector, 8192, 2, 3),
     true,
     false,
     {{1, 3}, {9, 1}, {11, 20}, {40, 4}}},
    {"used only, up by a chunk and a half",
     1 << 20,
     Geometry(16 * kSector, 40 * kSector, 500 * kSector, 8192, 3, 2),
     false,
     false,
     {{0, 3}, {5, 2}, {10, 1}, {14, 9}, {30, 2}}},
    // The flush-ordered way: 4 KiB chunks, 7 in flight within the 63-sector shift, no saved
    // copies; both directions, and a used map (its gaps give a few steps saved copies).
    {"flush-ordered, up 63 -> 2048 scaled", 1 << 20,
     FlushOrdered(Geometry(9 * kSector, 72 * kSector, 700 * kSector, 8192, 2, 3)), true},
    {"flush-ordered, down 2048 -> 63 scaled", 1 << 20,
     FlushOrdered(Geometry(72 * kSector, 9 * kSector, 700 * kSector, 8192, 2, 3)), true, true},
    {"flush-ordered, used only, up 63 -> 2048 scaled",
     1 << 20,
     FlushOrdered(Geometry(9 * kSector, 72 * kSector, 700 * kSector, 8192, 2, 3)),
     true,
     false,
     {{0, 5}, {7, 10}, {20, 1}, {30, 40}, {80, 8}}},
    // Version 1 journals: the pre-scan, every chunk.
    {"version 1, up 63 -> 2048 scaled",
     1 << 20,
     Geometry(9 * kSector, 72 * kSector, 700 * kSector, 8192, 2, 3),
     true,
     false,
     {},
     kJournalVersionV1},
    {"version 1, down by one sector",
     1 << 20,
     Geometry(17 * kSector, 16 * kSector, 300 * kSector, 16384, 2, 2),
     true,
     true,
     {},
     kJournalVersionV1},
    // Version 2 journals (no mirror, no repair trailers) written before version 3.
    {"version 2, up by one sector",
     1 << 20,
     Geometry(16 * kSector, 17 * kSector, 300 * kSector, 16384, 2, 2),
     true,
     false,
     {{0, 3}, {5, 5}},
     kJournalVersionV2},
    // Steps that move no data: a shrink's changes inside a partition, with the table or alone.
    {"no data, a shrink's changes and the table",
     1 << 20,
     Geometry(0, 0, 0, 8192, 2, 2),
     true,
     false,
     {},
     kJournalVersion,
     7},
    {"no data, a shrink's changes alone",
     1 << 20,
     Geometry(0, 0, 0, 8192, 2, 2),
     false,
     false,
     {},
     kJournalVersion,
     12},
};

class MoverCrashTest : public ::testing::TestWithParam<Scenario> {};

// Seeds per scenario: enough to hit every phase (scan, copy, verify, table, rollback) many times
// while keeping the suite fast; PARTALIGN_CRASH_TEST_SEEDS=N runs a deeper sweep.
constexpr uint64_t kDefaultSeedsPerScenario = 25;

uint64_t SeedsPerScenario() {
  const char* value = std::getenv("PARTALIGN_CRASH_TEST_SEEDS");
  return value != nullptr && std::atoi(value) > 0 ? static_cast<uint64_t>(std::atoi(value))
                                                  : kDefaultSeedsPerScenario;
}

TEST_P(MoverCrashTest, EveryPowerFailureIsRecoverable) {
  const Scenario& scenario = GetParam();
  const uint64_t operations = CrashHarness(scenario, 0).CountOperations();
  ASSERT_GT(operations, 5u);
  for (uint64_t seed = 1; seed <= SeedsPerScenario(); ++seed) {
    CrashHarness harness(scenario, seed);
    std::string trace = fmt::format("{}, seed {}", scenario.name, seed);
    harness.Run(operations, &trace);
    if (HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Scenarios, MoverCrashTest, ::testing::ValuesIn(kScenarios),
                         [](const ::testing::TestParamInfo<Scenario>& param_info) {
                           std::string name = param_info.param.name;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace partalign
