// SPDX-License-Identifier: GPL-3.0-or-later
// The cost model of scripts/ssd-sim (src/sim/ssd_sim.cc): a flash device without a write cache,
// whose I/Os cost time per flash page they touch. A read costs one page read per page it
// touches; a write programs every page it touches, and a page it covers only in part is read
// first and programmed with the old bytes around the new ones (read-modify-write). Pages sit on
// `units` dies that work in parallel, each doing one page operation at a time; the device is
// striped over them in stripes of `stripe_bytes` (stripe s on die s mod units), so that a large
// I/O spreads over the dies while a small one stays on one. So a 4 KiB I/O at an offset that is
// not a multiple of a 4 KiB page touches two pages of one die: a read costs two page reads
// instead of one, a write two read-modify-writes instead of one program, one after the other;
// many such I/Os at once keep the dies twice as busy. Pure: the caller passes the time and
// sleeps until the completion it gets back.
#pragma once

#include <cstdint>
#include <vector>

#include "partalign/util/result.h"

namespace partalign {

/// Defaults: the flash of the SSD simulated in Agrawal, Prabhakaran, Wobber, Davis, Manasse and
/// Panigrahy, "Design Tradeoffs for SSD Performance", USENIX ATC 2008, Table 2 (from the
/// Samsung K9XXG08UXM datasheet): 4 KiB pages, 25 us page read, 200 us page program. Eight dies:
/// the eight flash packages of their simulated SSD. The 64 KiB stripe is this model's choice
/// (16 pages a die before the next), not a datasheet figure.
struct FlashParams {
  uint64_t page_bytes = 4096;
  uint64_t read_ns = 25'000;
  uint64_t program_ns = 200'000;
  uint32_t units = 8;
  uint64_t stripe_bytes = 65536;
};

/// Fails when the page size or the number of dies is 0, or the stripe is not a multiple of
/// the page (a page read or program may cost 0 ns).
Status CheckFlashParams(const FlashParams& params);

enum class FlashOp { kRead, kWrite };

/// The page operations of one I/O.
struct FlashWork {
  uint64_t pages = 0;          ///< pages touched
  uint64_t page_reads = 0;     ///< reads: every page; writes: the partial pages (RMW)
  uint64_t page_programs = 0;  ///< writes: every page
  uint64_t partial_pages = 0;  ///< writes: pages covered only in part
};

/// What an I/O of `length` bytes at `offset` does to the flash. `length` 0 touches nothing.
FlashWork WorkOf(FlashOp op, uint64_t offset, uint64_t length, const FlashParams& params);

/// When each die is free again. Not thread-safe: the caller serialises Schedule().
class FlashTimeline {
 public:
  explicit FlashTimeline(const FlashParams& params);

  /// Books the page operations of an I/O arriving at `now_ns` on their dies, each starting
  /// when its die is free, and returns the time the last one ends (`now_ns` when it costs
  /// nothing). Counts the work in totals().
  uint64_t Schedule(FlashOp op, uint64_t offset, uint64_t length, uint64_t now_ns);

  /// Everything scheduled so far.
  const FlashWork& totals() const { return totals_; }

 private:
  FlashParams params_;
  std::vector<uint64_t> free_at_ns_;
  FlashWork totals_;
};

}  // namespace partalign
