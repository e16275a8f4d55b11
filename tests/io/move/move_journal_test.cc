// SPDX-License-Identifier: GPL-3.0-or-later
// How the journal reaches its disk: a journal is initialized with every region of its body in
// flight at once (one batch, a flush, the header, a flush), and its table regions are read back
// in one batch, a mirror copy only where a first copy fails its check. A move of used chunks
// keeps a region after each run of them; one at a time, each waited for, they cost a round trip
// each (a seek each on a rotating disk). Simulated disks, no root needed.
#include "io/move/move_journal.h"

#include <algorithm>
#include <cstddef>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "partalign/move/journal_format.h"
#include "support/simulated_disk.h"
#include "support/simulated_move.h"

namespace partalign {
namespace {

using test::kSimSector;
using test::SimulatedDisk;
using test::SimulatedMove;

// The calls made to the BlockIo it wraps.
class CountingIo final : public BlockIo {
 public:
  explicit CountingIo(BlockIo& inner) : inner_(inner) {}
  Status Read(std::span<const IoSpan> requests) override {
    ++reads;
    read_spans += requests.size();
    return inner_.Read(requests);
  }
  Status Write(std::span<const IoSpan> requests) override {
    ++writes;
    write_spans += requests.size();
    return inner_.Write(requests);
  }
  Status Flush() override {
    ++flushes;
    return inner_.Flush();
  }
  uint64_t size_bytes() const override { return inner_.size_bytes(); }
  const std::string& name() const override { return inner_.name(); }

  int reads = 0, writes = 0, flushes = 0;
  size_t read_spans = 0, write_spans = 0;

 private:
  BlockIo& inner_;
};

constexpr uint64_t kDevice = 1 << 20;

// Four runs of used chunks moved beyond their source (800 sectors from sector 8 to 1000): the
// table at both ends of the device, and each run's destination, outside the source, kept for
// a rollback (its preimage).
MoveGeometry UsedRuns() {
  MoveGeometry move{8 * kSimSector, 1000 * kSimSector, 800 * kSimSector, 16384, 2, 2};
  move.copy = *CopySet::FromRuns({{0, 1}, {5, 3}, {20, 2}, {24, 1}}, RangeChunkCount(move));
  return move;
}

void ExpectSameTable(const std::vector<TableUpdate>& read, const std::vector<TableUpdate>& want) {
  ASSERT_EQ(read.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(read[i].offset_bytes, want[i].offset_bytes) << i;
    EXPECT_EQ(read[i].old_bytes, want[i].old_bytes) << i;
    EXPECT_EQ(read[i].new_bytes, want[i].new_bytes) << i;
    EXPECT_EQ(read[i].in_data, want[i].in_data) << i;
    EXPECT_EQ(read[i].restore_only, want[i].restore_only) << i;
  }
}

// The journal on `disk` loaded, and its table regions read back; `reads` counts the reads of
// the latter.
std::vector<TableUpdate> ReadBack(SimulatedDisk& disk, const SimulatedMove& sim, int& reads) {
  CountingIo io(disk);
  Result<MoveJournal> journal = MoveJournal::Load(io, sim.hasher());
  EXPECT_TRUE(journal) << journal.error().message;
  if (!journal) return {};
  io.reads = 0;
  Result<std::vector<TableUpdate>> read = journal->ReadTableUpdates();
  EXPECT_TRUE(read) << read.error().message;
  reads = io.reads;
  return read ? *read : std::vector<TableUpdate>{};
}

// The error of reading back the table regions of the journal on `disk`, which must load and
// must fail to read them; empty (and a test failure) otherwise.
std::string ReadBackError(SimulatedDisk& disk, const SimulatedMove& sim) {
  Result<MoveJournal> journal = MoveJournal::Load(disk, sim.hasher());
  EXPECT_TRUE(journal) << journal.error().message;
  if (!journal) return {};
  Result<std::vector<TableUpdate>> read = journal->ReadTableUpdates();
  EXPECT_FALSE(read) << "the table regions read back";
  return read ? std::string() : read.error().message;
}

TEST(MoveJournalTest, ItsRegionsAreWrittenTogetherAndReadBackTogether) {
  SimulatedMove sim(kDevice, UsedRuns(), true, 11);
  const std::vector<TableUpdate>& table = sim.table();
  size_t preimages = 0;
  for (const TableUpdate& u : table) preimages += u.restore_only;
  ASSERT_GE(preimages, 3u) << "the move should write several runs outside its source";
  ASSERT_NE(sim.header().layout.mirror_bytes, 0u);

  SimulatedDisk journal_disk = sim.NewJournalDisk();
  CountingIo init(journal_disk);
  ASSERT_TRUE(MoveJournal::Initialize(init, sim.header(), table, sim.hasher()));
  // The body (old and new bytes of each region, the copy map, the empty states, each with its
  // mirror), a flush, the header and its copy, a flush.
  EXPECT_EQ(init.writes, 2);
  EXPECT_EQ(init.flushes, 2);
  EXPECT_GE(init.write_spans, 4 * table.size() + 2);

  int reads = 0;
  ExpectSameTable(ReadBack(journal_disk, sim, reads), table);
  EXPECT_EQ(reads, 1);
  // A preimage's old and new bytes are one buffer written at four places: each holds them.
  const std::vector<uint8_t> file = journal_disk.current();
  const JournalLayout& layout = sim.header().layout;
  for (size_t i = 0; i < table.size(); ++i) {
    if (!table[i].restore_only) continue;
    for (bool new_bytes : {false, true}) {
      const uint64_t at = TableDataOffset(layout, sim.header().table, i, new_bytes);
      for (uint64_t place : {at, at + layout.mirror_bytes}) {
        const auto first = file.begin() + static_cast<std::ptrdiff_t>(place);
        EXPECT_TRUE(std::equal(table[i].old_bytes.begin(), table[i].old_bytes.end(), first))
            << "region " << i << (new_bytes ? " new" : " old") << " bytes at " << place;
      }
    }
  }
}

TEST(MoveJournalTest, ATableRegionWhoseFirstCopyIsDamagedIsReadFromItsMirror) {
  SimulatedMove sim(kDevice, UsedRuns(), true, 12);
  const std::vector<TableUpdate>& table = sim.table();
  SimulatedDisk journal_disk = sim.NewJournalDisk();
  ASSERT_TRUE(MoveJournal::Initialize(journal_disk, sim.header(), table, sim.hasher()));
  // The new bytes of the last table region (not a preimage, whose new bytes are its old ones),
  // first copy, overwritten.
  size_t last = table.size();
  for (size_t i = 0; i < table.size(); ++i) {
    if (!table[i].restore_only) last = i;
  }
  ASSERT_LT(last, table.size());
  const uint64_t at = TableDataOffset(sim.header().layout, sim.header().table, last, true);
  const std::vector<uint8_t> noise(table[last].new_bytes.size(), 0xa5);
  journal_disk.Poke(at, noise);

  int reads = 0;
  ExpectSameTable(ReadBack(journal_disk, sim, reads), table);
  EXPECT_EQ(reads, 2);  // the batch, then the one mirror

  // Both copies damaged: the error names the region, as before.
  journal_disk.Poke(at + sim.header().layout.mirror_bytes, noise);
  const std::string error = ReadBackError(journal_disk, sim);
  EXPECT_NE(error.find(fmt::format("new table bytes at device byte {}", table[last].offset_bytes)),
            std::string::npos)
      << error;
}

// The destination's preimage keeps the same bytes as old and new (a rollback puts them back, a
// completed move leaves what it wrote): one copy of them is read, not two. Its new copy may be
// damaged beyond repair without harm; its old one is read from the mirror as any region's.
TEST(MoveJournalTest, APreimageIsReadOnceForItsOldAndNewBytes) {
  SimulatedMove sim(kDevice, UsedRuns(), true, 13);
  const std::vector<TableUpdate>& table = sim.table();
  SimulatedDisk journal_disk = sim.NewJournalDisk();
  ASSERT_TRUE(MoveJournal::Initialize(journal_disk, sim.header(), table, sim.hasher()));
  size_t preimages = 0;
  size_t preimage = table.size();
  for (size_t i = 0; i < table.size(); ++i) {
    if (!table[i].restore_only) continue;
    ASSERT_EQ(table[i].new_bytes, table[i].old_bytes) << i;
    ++preimages;
    preimage = i;
  }
  ASSERT_GE(preimages, 3u);

  CountingIo io(journal_disk);
  Result<MoveJournal> journal = MoveJournal::Load(io, sim.hasher());
  ASSERT_TRUE(journal) << journal.error().message;
  io.reads = 0;
  io.read_spans = 0;
  Result<std::vector<TableUpdate>> read = journal->ReadTableUpdates();
  ASSERT_TRUE(read) << read.error().message;
  ExpectSameTable(*read, table);
  EXPECT_EQ(io.reads, 1);
  EXPECT_EQ(io.read_spans, 2 * (table.size() - preimages) + preimages);

  // Both copies of a preimage's new bytes overwritten: never read, nothing lost.
  const JournalLayout& layout = sim.header().layout;
  const uint64_t new_at = TableDataOffset(layout, sim.header().table, preimage, true);
  const std::vector<uint8_t> noise(table[preimage].old_bytes.size(), 0x5a);
  journal_disk.Poke(new_at, noise);
  journal_disk.Poke(new_at + layout.mirror_bytes, noise);
  int reads = 0;
  ExpectSameTable(ReadBack(journal_disk, sim, reads), table);
  EXPECT_EQ(reads, 1);

  // Its old bytes' first copy overwritten: read from the mirror.
  const uint64_t old_at = TableDataOffset(layout, sim.header().table, preimage, false);
  journal_disk.Poke(old_at, noise);
  ExpectSameTable(ReadBack(journal_disk, sim, reads), table);
  EXPECT_EQ(reads, 2);

  // And the mirror too: the error names the old bytes, as for any region.
  journal_disk.Poke(old_at + layout.mirror_bytes, noise);
  const std::string error = ReadBackError(journal_disk, sim);
  EXPECT_NE(
      error.find(fmt::format("old table bytes at device byte {}", table[preimage].offset_bytes)),
      std::string::npos)
      << error;
}

}  // namespace
}  // namespace partalign
