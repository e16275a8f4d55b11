// SPDX-License-Identifier: GPL-3.0-or-later
// The flash cost model of scripts/ssd-sim: pages touched, read-modify-write of partial pages,
// and the dies that work in parallel.
#include "partalign/sim/flash_model.h"

#include <gtest/gtest.h>

namespace partalign {
namespace {

constexpr FlashParams kFlash{};  // 4 KiB pages, read 25 us, program 200 us, 8 dies, 64 KiB stripes

TEST(FlashWorkTest, AlignedAndMisalignedFourKReadsAndWrites) {
  FlashWork aligned_read = WorkOf(FlashOp::kRead, 8192, 4096, kFlash);
  EXPECT_EQ(aligned_read.pages, 1u);
  EXPECT_EQ(aligned_read.page_reads, 1u);
  EXPECT_EQ(aligned_read.page_programs, 0u);
  FlashWork misaligned_read = WorkOf(FlashOp::kRead, 8192 + 512, 4096, kFlash);
  EXPECT_EQ(misaligned_read.pages, 2u);
  EXPECT_EQ(misaligned_read.page_reads, 2u);
  FlashWork aligned_write = WorkOf(FlashOp::kWrite, 8192, 4096, kFlash);
  EXPECT_EQ(aligned_write.page_programs, 1u);
  EXPECT_EQ(aligned_write.partial_pages, 0u);
  EXPECT_EQ(aligned_write.page_reads, 0u);
  // Two pages, each covered in part: both read, merged and programmed.
  FlashWork misaligned_write = WorkOf(FlashOp::kWrite, 8192 + 3584, 4096, kFlash);
  EXPECT_EQ(misaligned_write.page_programs, 2u);
  EXPECT_EQ(misaligned_write.partial_pages, 2u);
  EXPECT_EQ(misaligned_write.page_reads, 2u);
}

TEST(FlashWorkTest, SmallAndLargeWrites) {
  // 512 bytes inside a page: one partial page.
  FlashWork small = WorkOf(FlashOp::kWrite, 1024, 512, kFlash);
  EXPECT_EQ(small.pages, 1u);
  EXPECT_EQ(small.partial_pages, 1u);
  // 1 MiB from 512 bytes past a page: 257 pages, the first and the last partial.
  FlashWork big = WorkOf(FlashOp::kWrite, 512, 1 << 20, kFlash);
  EXPECT_EQ(big.pages, 257u);
  EXPECT_EQ(big.partial_pages, 2u);
  EXPECT_EQ(big.page_reads, 2u);
  // Ending exactly on a page boundary: only the head is partial.
  EXPECT_EQ(WorkOf(FlashOp::kWrite, 512, 4096 - 512, kFlash).partial_pages, 1u);
  EXPECT_EQ(WorkOf(FlashOp::kWrite, 0, 0, kFlash).pages, 0u);
  // Another page size: 16 KiB pages make every 4 KiB write partial.
  FlashParams sixteen{.page_bytes = 16384};
  EXPECT_EQ(WorkOf(FlashOp::kWrite, 0, 4096, sixteen).partial_pages, 1u);
  EXPECT_EQ(WorkOf(FlashOp::kWrite, 0, 16384, sixteen).partial_pages, 0u);
}

TEST(FlashTimelineTest, MisalignedSmallIosPayTwiceOnTheirDie) {
  FlashTimeline t(kFlash);
  // An aligned 4 KiB read on an idle device: one page read.
  EXPECT_EQ(t.Schedule(FlashOp::kRead, 0, 4096, 1'000'000), 1'025'000u);
  // A misaligned one across pages 1 and 2 of the first stripe (die 0): two reads in a row.
  EXPECT_EQ(t.Schedule(FlashOp::kRead, 4096 + 512, 4096, 2'000'000), 2'050'000u);
  // A misaligned 4 KiB write: two read-modify-writes of 225 us, one after the other.
  EXPECT_EQ(t.Schedule(FlashOp::kWrite, 3 * 4096 + 512, 4096, 3'000'000), 3'450'000u);
  // An aligned write: one program.
  EXPECT_EQ(t.Schedule(FlashOp::kWrite, 8 * 4096, 4096, 4'000'000), 4'200'000u);
  // Across a stripe boundary the two pages are on two dies and overlap.
  EXPECT_EQ(t.Schedule(FlashOp::kRead, 65536 - 512, 4096, 5'000'000), 5'025'000u);
  EXPECT_EQ(t.totals().partial_pages, 2u);
  EXPECT_EQ(t.totals().page_reads, 1u + 2u + 2u + 2u);
}

TEST(FlashTimelineTest, DiesWorkInParallelAndQueueWhenBusy) {
  // Two I/Os on one die queue behind each other; on another die they overlap.
  FlashTimeline busy(kFlash);
  EXPECT_EQ(busy.Schedule(FlashOp::kRead, 0, 4096, 0), 25'000u);
  EXPECT_EQ(busy.Schedule(FlashOp::kRead, 8 * 65536, 4096, 0), 50'000u);  // stripe 8: die 0
  EXPECT_EQ(busy.Schedule(FlashOp::kRead, 65536, 4096, 0), 25'000u);      // die 1: free
  // 1 MiB aligned write: 16 stripes of 16 pages on 8 dies, 32 programs each.
  FlashTimeline wide(kFlash);
  EXPECT_EQ(wide.Schedule(FlashOp::kWrite, 0, 1 << 20, 0), 32u * 200'000u);
  EXPECT_EQ(wide.totals().page_programs, 256u);
}

TEST(FlashParamsTest, ZeroPageOrDiesIsAnError) {
  EXPECT_TRUE(CheckFlashParams(kFlash));
  EXPECT_FALSE(CheckFlashParams({.page_bytes = 0}));
  EXPECT_FALSE(CheckFlashParams({.units = 0}));
  EXPECT_FALSE(CheckFlashParams({.stripe_bytes = 6144}));
  EXPECT_TRUE(CheckFlashParams({.read_ns = 0, .program_ns = 0}));
}

}  // namespace
}  // namespace partalign
