// SPDX-License-Identifier: GPL-3.0-or-later
// The mover's refusals to carry on: a read error in the source stops the copy pass, naming the
// sector, with what was moved undoable; a write that reads back wrong, a moved chunk changed
// while the move was stopped, a table someone else rewrote - each stops it with the journal kept
// and consistent, and the outcome of resuming is what docs/mover.md promises. And a move that
// copies only the used chunks writes nothing else. Simulated disks, no root needed.
#include "io/move/move_engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>

#include "io/move/move_journal.h"
#include "support/simulated_disk.h"
#include "support/simulated_move.h"

namespace partalign {
namespace {

using test::CrashClock;
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
  // A resume that may be refused before it writes anything (the disk no longer in the
  // journal's state): the refusal's message, or the outcome's when it ran and stopped. Either
  // way it must not complete, and a refusal must leave the device as it was.
  std::string ResumeThatMustNotComplete(ResumeMode mode) {
    const std::vector<uint8_t> before = device.current();
    Result<MoveJournal> journal = MoveJournal::Load(journal_disk, sim.hasher());
    EXPECT_TRUE(journal);
    Result<MoveOutcome> outcome = DriveJournal(device, *journal, mode, {});
    if (!outcome) {
      EXPECT_TRUE(device.current() == before) << "a refused resume wrote the device";
      return outcome.error().message;
    }
    EXPECT_EQ(outcome->status, MoveStatus::kStopped);
    return outcome->message;
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

// There is no pre-scan: the copy pass meets the bad sector, possibly after moving the chunks
// above it (moving up, the highest go first), names it, and the journal rolls back what was
// moved.
TEST(MoveEngineTest, ReadErrorInTheSourceStopsTheCopyAndRollsBack) {
  EngineRun run;
  const uint64_t bad = kUp.source_bytes + 300 * kSimSector;
  run.device.FailReads(bad, kSimSector);
  MoveOutcome outcome = run.Start();
  ASSERT_EQ(outcome.status, MoveStatus::kStopped);
  EXPECT_TRUE(outcome.source_unreadable);
  EXPECT_NE(outcome.message.find("at byte " + std::to_string(bad)), std::string::npos)
      << "the first bad sector is named: " << outcome.message;
  std::optional<JournalState> state = run.State();
  ASSERT_TRUE(state) << "the first state is written before the first read";
  EXPECT_LT(state->forward_done, ChunkCount(kUp));
  run.device.FailReads(0, 0);
  MoveOutcome back = run.Resume(ResumeMode::kRollback);
  ASSERT_EQ(back.status, MoveStatus::kRolledBack) << back.message;
  EXPECT_EQ(run.sim.Mismatch(MoveStatus::kRolledBack, run.device.current()), "");
}

// A move that copies only some chunks (a used map) writes their destinations and nothing
// else: free space at the destination keeps its bytes, and only the copied bytes are moved.
TEST(MoveEngineTest, UsedOnlyMovesWriteOnlyTheCopiedChunks) {
  MoveGeometry used = kUp;
  used.chunk_bytes = 16384;
  used.copy = *CopySet::FromRuns({{0, 1}, {5, 3}, {20, 2}, {24, 1}}, RangeChunkCount(used));
  EngineRun run(true, 11, used);
  MoveOutcome done = run.Start();
  ASSERT_EQ(done.status, MoveStatus::kCompleted) << done.message;
  EXPECT_EQ(done.stats.moved_bytes, 7u * 16384);
  EXPECT_EQ(run.sim.Mismatch(MoveStatus::kCompleted, run.device.current()), "");
  // Stopped part-way and rolled back: the copied chunks are back, and nothing outside the
  // source range was touched (inside it, unused blocks may hold what the forward pass wrote).
  EngineRun stopped(true, 12, used);
  std::atomic<int> asked{0};
  MoverHooks hooks;
  hooks.stop_requested = [&] { return ++asked > 2; };
  ASSERT_EQ(stopped.Start(hooks).status, MoveStatus::kStopped);
  MoveOutcome back = stopped.Resume(ResumeMode::kRollback);
  ASSERT_EQ(back.status, MoveStatus::kRolledBack) << back.message;
  EXPECT_EQ(stopped.sim.Mismatch(MoveStatus::kRolledBack, stopped.device.current()), "");
}

// A move of used chunks keeps, for a rollback, only what it writes outside its source range:
// here the last chunk's destination, a shift past the source's end. Stopped once it is written
// and rolled back, those bytes are as they were; inside the range, the unused bytes a copied
// chunk's destination covered keep the moved data (no data of the partition).
TEST(MoveEngineTest, ARollbackPutsBackWhatTheMoveWrotePastItsSource) {
  MoveGeometry used = kUp;
  used.chunk_bytes = 16384;
  used.dest_bytes = used.source_bytes + 8 * kSimSector;  // a shift below a chunk
  std::vector<ChunkRun> runs;
  for (uint64_t c = 0; c < RangeChunkCount(used); c += 2) runs.push_back({c, 1});
  used.copy = *CopySet::FromRuns(runs, RangeChunkCount(used));
  const uint64_t past = used.source_bytes + used.length_bytes;
  const uint64_t shift = ShiftBytes(used);
  const std::vector<ByteExtent> outside = DestinationOutsideSource(used);
  ASSERT_EQ(outside.size(), 1u);
  EXPECT_EQ(outside[0].offset_bytes, past);
  EXPECT_EQ(outside[0].length_bytes, shift);

  EngineRun run(true, 13, used);
  const std::vector<uint8_t> original = run.device.current();
  const auto changed = [&](const std::vector<uint8_t>& now, uint64_t at) {
    return !std::equal(now.begin() + at, now.begin() + at + shift, original.begin() + at);
  };
  // Chunk 23 is unused: its first `shift` bytes are chunk 22's destination. The pass goes from
  // the highest chunk down (a move up), so both are written early.
  const uint64_t unused = used.source_bytes + 23 * used.chunk_bytes;
  MoverHooks hooks;
  hooks.stop_requested = [&] {
    const std::vector<uint8_t> now = run.device.current();
    return changed(now, past) && changed(now, unused);
  };
  ASSERT_EQ(run.Start(hooks).status, MoveStatus::kStopped);
  const std::vector<uint8_t> stopped = run.device.current();
  ASSERT_TRUE(changed(stopped, past) && changed(stopped, unused)) << "stopped too early";
  MoveOutcome back = run.Resume(ResumeMode::kRollback);
  ASSERT_EQ(back.status, MoveStatus::kRolledBack) << back.message;
  const std::vector<uint8_t> rolled = run.device.current();
  EXPECT_FALSE(changed(rolled, past));
  EXPECT_EQ(run.sim.Mismatch(MoveStatus::kRolledBack, rolled), "");
  EXPECT_TRUE(std::equal(rolled.begin() + unused, rolled.begin() + unused + shift,
                         original.begin() + unused - shift));
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

  // Completing finds the bad chunk again: in the proof that the disk holds the journal's
  // state before anything is written, or in the final verification pass.
  run.device.OnWrite(nullptr);
  const std::string resumed = run.ResumeThatMustNotComplete(ResumeMode::kComplete);
  EXPECT_TRUE(resumed.find("verification failed") != std::string::npos ||
              resumed.find("no longer holds the interrupted move") != std::string::npos)
      << resumed;
  // Rolling back refuses to move the bad chunk back as if it were the data.
  const std::string back = run.ResumeThatMustNotComplete(ResumeMode::kRollback);
  EXPECT_TRUE(back.find("not what was read before") != std::string::npos ||
              back.find("no longer holds the interrupted move") != std::string::npos)
      << back;
}

// The digests of moved chunks are durable: a moved chunk that another program changes while
// the move is stopped is found by the resumed run, whichever way it goes.
TEST(MoveEngineTest, AMovedChunkChangedWhileStoppedIsFound) {
  for (ResumeMode mode : {ResumeMode::kComplete, ResumeMode::kRollback}) {
    EngineRun run;
    std::atomic<int> asked{0};
    MoverHooks hooks;
    hooks.stop_requested = [&] { return ++asked > 2; };
    ASSERT_EQ(run.Start(hooks).status, MoveStatus::kStopped);
    std::optional<JournalState> state = run.State();
    ASSERT_TRUE(state);
    ASSERT_GT(state->forward_done, 0u);
    // Moving up, step 0 is the highest chunk: change its destination.
    const ChunkExtent top = ChunkExtentOf(kUp, ChunkCount(kUp) - 1);
    run.device.Poke(kUp.dest_bytes + top.position_bytes, std::vector<uint8_t>(kSimSector, 0x5a));
    const std::string resumed = run.ResumeThatMustNotComplete(mode);
    const char* expected =
        mode == ResumeMode::kComplete ? "verification failed" : "not what was read before";
    EXPECT_TRUE(resumed.find(expected) != std::string::npos ||
                resumed.find("no longer holds the interrupted move") != std::string::npos)
        << resumed;
  }
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

// The writes and flushes of an uninterrupted move of `sim` (0 if it fails).
uint64_t KillPoints(const SimulatedMove& sim) {
  CrashClock count;
  SimulatedDisk device = sim.NewDevice(&count);
  SimulatedDisk journal_disk = sim.NewJournalDisk(&count);
  Result<MoveJournal> journal =
      MoveJournal::Initialize(journal_disk, sim.header(), sim.table(), sim.hasher());
  if (!journal || !DriveJournal(device, *journal, ResumeMode::kComplete, {})) return 0;
  return count.ticks();
}

// The device and the journal of the move of `sim` killed at its `kill`-th write or flush: every
// write that completed before it is kept.
std::pair<std::vector<uint8_t>, std::vector<uint8_t>> KilledAt(const SimulatedMove& sim,
                                                               uint64_t kill) {
  CrashClock clock(kill);
  SimulatedDisk device = sim.NewDevice(&clock);
  SimulatedDisk journal_disk = sim.NewJournalDisk(&clock);
  if (Result<MoveJournal> journal =
          MoveJournal::Initialize(journal_disk, sim.header(), sim.table(), sim.hasher())) {
    (void)DriveJournal(device, *journal, ResumeMode::kComplete, {});
  }
  return {device.current(), journal_disk.current()};
}

// Version 3 (docs/mover.md §3): a move killed at any write or flush, whose journal then has any
// one 4 KiB block overwritten with other bytes - the header, the table data, a digest block, a
// state block, a saved copy that is the only copy of its chunk - still completes (or rolls back)
// with every byte intact. Version 2 lost the move when the block held that only copy.
TEST(MoveEngineTest, AnyOneDamagedJournalBlockStillResumesIntact) {
  SimulatedMove sim(kDevice, kUp, true, 11);
  const uint64_t operations = KillPoints(sim);
  ASSERT_GT(operations, 0u);
  const uint64_t blocks = sim.header().layout.file_bytes / kJournalBlockBytes;
  std::vector<uint8_t> noise(kJournalBlockBytes);
  for (size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<uint8_t>(i * 131 + 17);
  uint64_t resumed = 0, repaired = 0;
  for (uint64_t kill = 1; kill <= operations; ++kill) {
    const auto [disk_image, journal_image] = KilledAt(sim, kill);
    {
      SimulatedDisk intact("journal", journal_image, kSimSector, nullptr);
      if (!MoveJournal::Load(intact, sim.hasher())) continue;  // killed before its header
    }
    // Every 12th block, a different twelfth at each kill point: each block of the file is
    // damaged at several kill points, and the test stays within seconds.
    for (uint64_t block = kill % 12; block < blocks; block += 12) {
      std::vector<uint8_t> damaged = journal_image;
      std::copy(noise.begin(), noise.end(), damaged.begin() + block * kJournalBlockBytes);
      const ResumeMode mode = block % 4 == 3 ? ResumeMode::kRollback : ResumeMode::kComplete;
      SimulatedDisk disk("device", disk_image, kSimSector, nullptr);
      SimulatedDisk journal_disk2("journal", damaged, kSimSector, nullptr);
      Result<MoveJournal> journal = MoveJournal::Load(journal_disk2, sim.hasher());
      if (!journal) {
        // Killed between the two copies of the header, the first one damaged: unreadable, which
        // by I8 means a move that never wrote its disk (resume removes such a journal).
        ASSERT_TRUE(disk_image == sim.original())
            << "kill " << kill << ", block " << block << ": " << journal.error().message;
        continue;
      }
      Result<MoveOutcome> outcome = DriveJournal(disk, *journal, mode, {});
      ASSERT_TRUE(outcome) << "kill " << kill << ", block " << block << ": "
                           << outcome.error().message;
      // A rollback of a move that had completed leaves it complete; one that never wrote the
      // device writes nothing.
      const MoveStatus status = outcome->status == MoveStatus::kNothingWritten
                                    ? MoveStatus::kRolledBack
                                    : outcome->status;
      ASSERT_TRUE(status == MoveStatus::kCompleted || status == MoveStatus::kRolledBack)
          << "kill " << kill << ", block " << block << ": " << outcome->message;
      ASSERT_EQ(sim.Mismatch(status, disk.current()), "") << "kill " << kill << ", block " << block;
      ++resumed;
      for (const std::string& note : outcome->notes) {
        repaired += note.find("repaired from its repair trailer") != std::string::npos;
      }
    }
  }
  EXPECT_GT(resumed, blocks * operations / 24);
  // Some of them needed a saved copy that the damage hit, and got it back from its trailer.
  EXPECT_GT(repaired, 0u);
}

// Beyond what the journal can repair (here a version 2 journal, which has no repair trailer,
// with a damaged block in the data of every saved copy): a resume that needs a lost copy stops
// before writing it and says that the journal is damaged - it used to say "the disk changed
// under the move" when the chunk's digest was known. One that needs none completes intact.
TEST(MoveEngineTest, ALostSavedCopyIsCalledAJournalDamageNotADiskChange) {
  SimulatedMove sim(kDevice, kUp, true, 5, false, kJournalVersionV2);
  const JournalLayout& layout = sim.header().layout;
  ASSERT_EQ(layout.repair_bytes, 0u);
  const uint64_t operations = KillPoints(sim);
  ASSERT_GT(operations, 0u);
  uint64_t stopped = 0, known = 0;
  for (uint64_t kill = 1; kill <= operations; ++kill) {
    auto [disk_image, damaged] = KilledAt(sim, kill);
    for (uint64_t slot = 0; slot < layout.slot_count; ++slot) {
      const uint64_t data = layout.ring_offset + slot * layout.slot_bytes + kJournalBlockBytes;
      for (uint64_t i = 0; i < 512; ++i) damaged[data + i] ^= 0x5a;
    }
    SimulatedDisk disk("device", disk_image, kSimSector, nullptr);
    SimulatedDisk journal_copy("journal", damaged, kSimSector, nullptr);
    Result<MoveJournal> journal = MoveJournal::Load(journal_copy, sim.hasher());
    if (!journal) continue;  // killed before its header
    const uint64_t vouched = journal->KnownDigestSteps();
    Result<MoveOutcome> outcome = DriveJournal(disk, *journal, ResumeMode::kComplete, {});
    ASSERT_TRUE(outcome) << "kill " << kill << ": " << outcome.error().message;
    if (outcome->status == MoveStatus::kCompleted) {
      EXPECT_EQ(sim.Mismatch(MoveStatus::kCompleted, disk.current()), "") << "kill " << kill;
      continue;
    }
    ++stopped;
    known += vouched > 0;
    EXPECT_TRUE(outcome->journal_damaged) << "kill " << kill << ": " << outcome->message;
    EXPECT_EQ(outcome->message.rfind("the journal is damaged: its saved copy of chunk ", 0), 0u)
        << "kill " << kill << ": " << outcome->message;
    EXPECT_EQ(outcome->message.find("changed under the move"), std::string::npos)
        << "kill " << kill << ": " << outcome->message;
  }
  EXPECT_GT(stopped, 0u);
  EXPECT_GT(known, 0u);
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
  EXPECT_EQ(last.count("scanning"), 0u) << "no pre-scan";
  ASSERT_EQ(last.count("moving"), 1u);
  for (const auto& [phase, bytes] : last) {
    EXPECT_EQ(bytes.first, kUp.length_bytes) << phase;
    EXPECT_EQ(bytes.second, kUp.length_bytes) << phase;
  }
}

}  // namespace
}  // namespace partalign
