// The mover's refusals to carry on: a read error in the pre-scan stops it before any write,
// naming the sector; a write that reads back wrong, a source that changed after the scan, a
// table someone else rewrote - each stops it with the journal kept and consistent, and the
// outcome of resuming is what docs/mover.md promises. Simulated disks, no root needed.
#include "io/move/move_engine.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>

#include "io/move/move_journal.h"
#include "support/simulated_disk.h"
#include "support/simulated_move.h"

namespace partalign {
namespace {

using test::kSimSector;
using test::SimulatedDisk;
using test::SimulatedMove;

constexpr uint64_t kDevice = 1 << 20;
// Up by 63 sectors over 400 KiB: every chunk needs a saved copy (shift < chunk).
const MoveGeometry kUp{8 * kSimSector, 71 * kSimSector, 800 * kSimSector, 65536, 2, 2};

struct EngineRun {
  SimulatedMove sim;
  SimulatedDisk device;
  SimulatedDisk journal_disk;
  explicit EngineRun(bool table = true, uint64_t seed = 7, const MoveGeometry& move = kUp)
      : sim(kDevice, move, table, seed),
        device(sim.NewDevice()),
        journal_disk(sim.NewJournalDisk()) {}

  MoveOutcome Start(const MoverHooks& hooks = {}) {
    Result<MoveJournal> journal =
        MoveJournal::Initialize(journal_disk, sim.header(), sim.table(), sim.hasher());
    EXPECT_TRUE(journal);
    Result<MoveOutcome> outcome = DriveJournal(device, *journal, ResumeMode::kComplete, hooks);
    EXPECT_TRUE(outcome);
    return *outcome;
  }
  MoveOutcome Resume(ResumeMode mode, const MoverHooks& hooks = {}) {
    Result<MoveJournal> journal = MoveJournal::Load(journal_disk, sim.hasher());
    EXPECT_TRUE(journal);
    Result<MoveOutcome> outcome = DriveJournal(device, *journal, mode, hooks);
    EXPECT_TRUE(outcome);
    return *outcome;
  }
  std::optional<JournalState> State() {
    Result<MoveJournal> journal = MoveJournal::Load(journal_disk, sim.hasher());
    return journal ? journal->state() : std::nullopt;
  }
};

TEST(MoveEngineTest, CompletesWithTheTableAndADoneJournalRollsNothingBack) {
  EngineRun run;
  MoveOutcome done = run.Start();
  ASSERT_EQ(done.status, MoveStatus::kCompleted) << done.message;
  EXPECT_EQ(run.sim.Mismatch(MoveStatus::kCompleted, run.device.current()), "");
  EXPECT_EQ(done.stats.moved_bytes, kUp.length_bytes);
  EXPECT_EQ(done.stats.saved_copy_bytes, kUp.length_bytes) << "every chunk overlaps itself";
  ASSERT_TRUE(done.stats.range_digest);

  // A journal left in "done" (the process died before removing it) rolls nothing back.
  MoveOutcome again = run.Resume(ResumeMode::kRollback);
  EXPECT_EQ(again.status, MoveStatus::kCompleted);
  ASSERT_EQ(again.notes.size(), 1u);
  EXPECT_NE(again.notes[0].find("already completed"), std::string::npos);
}

TEST(MoveEngineTest, LargeShiftNeedsNoSavedCopies) {
  const MoveGeometry far{8 * kSimSector, 8 * kSimSector + 600 * 1024, 256 * 1024, 16384, 2, 2};
  EngineRun run(false, 3, far);
  MoveOutcome done = run.Start();
  ASSERT_EQ(done.status, MoveStatus::kCompleted) << done.message;
  EXPECT_EQ(done.stats.saved_copy_bytes, 0u);
  EXPECT_EQ(run.sim.Mismatch(MoveStatus::kCompleted, run.device.current()), "");
}

TEST(MoveEngineTest, ReadErrorInThePreScanStopsBeforeAnyWrite) {
  EngineRun run;
  const uint64_t bad = kUp.source_bytes + 300 * kSimSector;
  run.device.FailReads(bad, kSimSector);
  MoveOutcome outcome = run.Start();
  ASSERT_EQ(outcome.status, MoveStatus::kStopped);
  EXPECT_NE(outcome.message.find("pre-scan"), std::string::npos) << outcome.message;
  EXPECT_NE(outcome.message.find("at byte " + std::to_string(bad)), std::string::npos)
      << "the first bad sector is named: " << outcome.message;
  EXPECT_NE(outcome.message.find("nothing was written"), std::string::npos);
  EXPECT_EQ(run.device.current(), run.sim.original());
  EXPECT_EQ(run.State(), std::nullopt) << "no state: resume knows nothing was written";
  EXPECT_EQ(run.Resume(ResumeMode::kRollback).status, MoveStatus::kNothingWritten);
}

TEST(MoveEngineTest, AWriteThatReadsBackWrongStopsAndIsNeverAccepted) {
  EngineRun run;
  // The disk silently corrupts one write to the destination of the chunk at position 128 KiB.
  const uint64_t target = kUp.dest_bytes + 2 * kUp.chunk_bytes;
  std::atomic<bool> corrupted{false};
  run.device.OnWrite([&](uint64_t offset, std::span<uint8_t> data) {
    if (offset == target && !corrupted.exchange(true)) data[100] ^= 0xff;
  });
  MoveOutcome outcome = run.Start();
  ASSERT_TRUE(corrupted.load());
  ASSERT_EQ(outcome.status, MoveStatus::kStopped);
  EXPECT_NE(outcome.message.find("verification failed"), std::string::npos) << outcome.message;
  EXPECT_NE(outcome.message.find(std::to_string(target)), std::string::npos) << outcome.message;
  std::optional<JournalState> state = run.State();
  ASSERT_TRUE(state);
  EXPECT_EQ(state->phase, JournalPhase::kMoving) << "never marked as moved";

  // Completing finds the bad chunk again in the final verification pass.
  run.device.OnWrite(nullptr);
  MoveOutcome resumed = run.Resume(ResumeMode::kComplete);
  ASSERT_EQ(resumed.status, MoveStatus::kStopped);
  EXPECT_NE(resumed.message.find("verification failed"), std::string::npos) << resumed.message;
  // Rolling back refuses to move the bad chunk back as if it were the data.
  MoveOutcome back = run.Resume(ResumeMode::kRollback);
  ASSERT_EQ(back.status, MoveStatus::kStopped);
  EXPECT_NE(back.message.find("not what the pre-scan read"), std::string::npos) << back.message;
}

TEST(MoveEngineTest, ASourceChangedAfterTheScanIsNotCopied) {
  EngineRun run;
  // Another program writes into the lowest chunk (moved last) once the copy has begun.
  const uint64_t at = kUp.source_bytes + kSimSector;
  const std::vector<uint8_t> junk(kSimSector, 0x5a);
  MoverHooks hooks;
  hooks.on_phase = [&](const char* phase) {
    if (std::string(phase) == "move") run.device.Poke(at, junk);
  };
  MoveOutcome outcome = run.Start(hooks);
  ASSERT_EQ(outcome.status, MoveStatus::kStopped);
  EXPECT_NE(outcome.message.find("changed under the move"), std::string::npos) << outcome.message;
  std::optional<JournalState> state = run.State();
  ASSERT_TRUE(state);
  EXPECT_LT(state->forward_done, ChunkCount(kUp));
  // The chunks already moved go back; the changed one is reported, not hidden.
  MoveOutcome back = run.Resume(ResumeMode::kRollback);
  ASSERT_EQ(back.status, MoveStatus::kStopped);
  EXPECT_NE(back.message.find("verification failed"), std::string::npos) << back.message;
  std::vector<uint8_t> image = run.device.current();
  std::vector<uint8_t> expected = run.sim.original();
  std::copy(junk.begin(), junk.end(), expected.begin() + static_cast<ptrdiff_t>(at));
  EXPECT_TRUE(std::equal(expected.begin() + kUp.source_bytes,
                         expected.begin() + kUp.source_bytes + kUp.length_bytes,
                         image.begin() + kUp.source_bytes))
      << "everything else is back at its source";
}

TEST(MoveEngineTest, ATableChangedByAnotherProgramIsNotOverwritten) {
  EngineRun run;
  const std::vector<uint8_t> foreign(kSimSector, 0xee);
  MoverHooks hooks;
  hooks.on_phase = [&](const char* phase) {
    if (std::string(phase) == "table") run.device.Poke(kSimSector, foreign);
  };
  MoveOutcome outcome = run.Start(hooks);
  ASSERT_EQ(outcome.status, MoveStatus::kStopped);
  EXPECT_NE(outcome.message.find("neither the old nor the new table"), std::string::npos)
      << outcome.message;
  std::vector<uint8_t> image = run.device.current();
  EXPECT_TRUE(std::equal(foreign.begin(), foreign.end(), image.begin() + kSimSector));
}

TEST(MoveEngineTest, AStopRequestLeavesAResumableJournal) {
  EngineRun run;
  std::atomic<int> asked{0};
  MoverHooks hooks;
  hooks.stop_requested = [&] { return ++asked > 2; };
  MoveOutcome outcome = run.Start(hooks);
  ASSERT_EQ(outcome.status, MoveStatus::kStopped);
  EXPECT_NE(outcome.message.find("interrupted"), std::string::npos);
  std::optional<JournalState> state = run.State();
  ASSERT_TRUE(state);
  EXPECT_GT(state->forward_done, 0u);
  EXPECT_LT(state->forward_done, ChunkCount(kUp));
  MoveOutcome resumed = run.Resume(ResumeMode::kComplete);
  ASSERT_EQ(resumed.status, MoveStatus::kCompleted) << resumed.message;
  EXPECT_EQ(run.sim.Mismatch(MoveStatus::kCompleted, run.device.current()), "");
}

TEST(MoveEngineTest, ProgressReachesTheTotalOfEachPhase) {
  EngineRun run(false);
  std::mutex mutex;
  std::map<std::string, std::pair<uint64_t, uint64_t>> last;
  MoverHooks hooks;
  hooks.progress = [&](const MoveProgress& p) {
    std::lock_guard lock(mutex);
    last[p.phase] = {p.done_bytes, p.total_bytes};
  };
  ASSERT_EQ(run.Start(hooks).status, MoveStatus::kCompleted);
  ASSERT_EQ(last.count("scanning"), 1u);
  ASSERT_EQ(last.count("moving"), 1u);
  for (const auto& [phase, bytes] : last) {
    EXPECT_EQ(bytes.first, kUp.length_bytes) << phase;
    EXPECT_EQ(bytes.second, kUp.length_bytes) << phase;
  }
}

}  // namespace
}  // namespace partalign
