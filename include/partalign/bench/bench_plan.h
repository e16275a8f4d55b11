// SPDX-License-Identifier: GPL-3.0-or-later
// What the benchmark measures and in which order: the cells (pattern, block size, offset
// alignment, queue depth), the groups of cells measured together with their I/Os interleaved
// (the two sides of every comparison), and the schedule of rounds that measures every group
// once per round, so that drift (thermal, background load, caches) hits every cell alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "partalign/bench/bench_random.h"
#include "partalign/util/result.h"
#include "partalign/util/units.h"

namespace partalign {

/// Rewrites read a block and write the same bytes back to it (badblocks -n): the write cost of
/// a device that holds data, without changing a byte.
enum class IoPattern { kRandRead, kSeqRead, kRandWrite, kSeqWrite, kRandRewrite, kSeqRewrite };

/// "randread", "seqread", "randwrite", "seqwrite", "randrewrite", "seqrewrite" (the --pattern
/// values and JSON strings).
std::string_view ToString(IoPattern pattern);
std::optional<IoPattern> ParseIoPattern(std::string_view text);
/// Writes new data (bench --write): only where nothing can be lost.
bool IsWrite(IoPattern pattern);
/// Reads and writes the same bytes back (bench --rewrite): on a disk nobody uses.
bool IsRewrite(IoPattern pattern);
AccessOrder OrderOf(IoPattern pattern);

/// What the default run's cells do: read, write new data, or rewrite what they read.
enum class BenchOp { kRead, kWrite, kRewrite };

/// The Rebench-style grid of the seeds: block sizes and offset alignments 512..4096 in steps of
/// 512 (rethinkdb.com "Rebench: cutting through the myths of I/O performance").
inline constexpr uint64_t kGridStep = 512;
inline constexpr uint64_t kGridMax = 4096;
/// The aligned reference of each default grid row: offsets on 4 KiB boundaries, the physical
/// sector of 512e/4Kn drives and the page size. (In a grid of the user's, the row's largest
/// offset alignment.)
inline constexpr uint64_t kGridReferenceAlign = kGridMax;
/// Grid cells run at QD1, so that the latency of a single I/O, where a misalignment penalty
/// shows, is not hidden by parallelism.
inline constexpr uint32_t kGridQueueDepth = 1;
/// CrystalDiskMark's SEQ1M Q8T1 and RND4K Q1T1 / Q32T1 presets (anchors.md A12).
inline constexpr uint64_t kSequentialBlock = kMiB;
inline constexpr uint32_t kSequentialQueueDepth = 8;
inline constexpr uint64_t kRandomBlock = 4 * kKiB;
inline constexpr uint32_t kDeepQueueDepth = 32;
/// io_uring rings are sized to the queue depth; 128 keeps pinned buffers small.
inline constexpr uint32_t kMaxQueueDepth = 128;

struct BenchCell {
  IoPattern pattern = IoPattern::kRandRead;
  uint64_t block_size = 4096;
  uint64_t offset_align = 4096;
  uint32_t queue_depth = 1;
  /// Part of the block size x offset alignment grid: drawn in the heatmap and compared with
  /// the aligned cell of its row.
  bool in_grid = false;
  bool operator==(const BenchCell&) const = default;
};

/// "randread bs=4096 align=512 qd=1".
std::string Describe(const BenchCell& cell);

/// The cells a summary names one by one: those outside the grid, and the grid cell that is
/// random 4 KiB at QD1 (the seeds' RND4K Q1T1).
bool IsHeadline(const BenchCell& cell);

/// The block sizes and offset alignments of the grid.
struct GridSpec {
  std::vector<uint64_t> block_sizes;
  std::vector<uint64_t> offset_aligns;
};

/// 512..4096 in steps of 512, both ways: 64 cells.
GridSpec DefaultGrid();

/// The default run: the grid (random I/O at QD1, whose 4096 x 4096 cell is random 4 KiB at
/// QD1), sequential 1 MiB at QD8 and random 4 KiB at QD32, all doing `op`.
std::vector<BenchCell> DefaultCells(BenchOp op, const GridSpec& grid = DefaultGrid());

/// O_DIRECT needs offsets and lengths in whole logical sectors: keeps the cells that a device
/// with `logical_sector_size` can run and moves the others to `skipped`.
std::vector<BenchCell> CellsForSectorSize(const std::vector<BenchCell>& cells,
                                          uint64_t logical_sector_size,
                                          std::vector<BenchCell>* skipped);

/// Rounds of the schedule. A paired comparison has one pair of per-window rates per round; with
/// 16 pairs the sign test's tail 2^-16 = 1.5e-5 still allows simultaneous 95% intervals over
/// families of up to 1600 comparisons, and two runs' cells (16 trials each) can
/// be compared unpaired at the Bonferroni level of up to 10^7 comparisons (Mann-Whitney tail
/// 1 / C(32, 16)).
inline constexpr uint32_t kMinRounds = 16;
inline constexpr uint32_t kMaxRounds = 256;
/// The default run aims at this many rounds: 64 windows per comparison, each window about 2 ms
/// of I/O per cell on a fast device.
inline constexpr uint32_t kPreferredRounds = 64;
/// The most cells one group (one window) interleaves: a grid row of 16 offset alignments.
inline constexpr size_t kMaxGroupCells = 16;

/// Cells measured in the same windows, their I/Os interleaved one by one in a random order
/// (randomized blocks: each block holds every cell once, shuffled). Two cells of one group form
/// a paired comparison: each window gives one ratio of their rates, and drift or a noisy
/// neighbour hits both sides of it alike. Every cell gets the same number of I/Os in a window
/// (give or take the last, incomplete block), so that without a difference between two cells
/// their places in a window are exchangeable and the ratio's distribution symmetric about 1,
/// which the paired interval needs. (Giving the reference of a grid row more I/Os, as
/// Dunnett's allocation would, breaks that: the log of a mean of more I/Os is larger on
/// average, and a uniform device showed significant "differences".) All cells of a group share
/// the queue depth.
struct BenchGroup {
  std::vector<uint32_t> cells;  ///< indices into BenchPlan::cells
  uint64_t window_ns = 0;       ///< planned length of one window of this group
};

/// The default grouping: each grid row (same pattern, block size and queue depth) is a group;
/// every cell outside the grid is a group of its own.
std::vector<BenchGroup> GridGroups(const std::vector<BenchCell>& cells);

struct BenchPlanOptions {
  /// Time for the windows themselves; the caller keeps the rest of its budget for setup and
  /// the queue drain at the end of each window.
  uint64_t trial_budget_ns = 0;
  /// Rounds to aim at: fewer when the budget cannot give every window its minimum length.
  uint32_t preferred_rounds = kPreferredRounds;
  /// Every group gets the same time per cell, and each window at least this: sequential 1 MiB
  /// at QD8, a group of its own, needs a few milliseconds for a rate worth the name.
  uint64_t min_window_ns = 10'000'000;
  uint64_t seed = 1;
  /// The groups; empty: GridGroups(cells).
  std::vector<BenchGroup> groups;
  /// Where each cell's I/Os go, as an index into the caller's ranges (apply --bench measures
  /// the old and the new place of a partition in one group); empty: all in range 0.
  std::vector<uint32_t> places;
};

struct BenchPlan {
  std::vector<BenchCell> cells;
  std::vector<uint32_t> places;  ///< parallel to cells
  std::vector<BenchGroup> groups;
  uint32_t rounds = 0;
  uint64_t trial_budget_ns = 0;
  uint64_t seed = 0;
  /// order[r]: the group indices of round r, a seeded random permutation, so that no group is
  /// always measured right after the same neighbour (randomized complete blocks).
  std::vector<std::vector<uint32_t>> order;
  /// The group of each cell.
  std::vector<uint32_t> group_of;
};

Result<BenchPlan> PlanBench(const std::vector<BenchCell>& cells, const BenchPlanOptions& options);

/// The seed of a cell's offset stream: a function of the run's seed, of the cell itself and of
/// its place, not of its position, so a cell gets the same offsets whatever else the run
/// measures.
uint64_t CellSeed(uint64_t seed, const BenchCell& cell, uint32_t place = 0);

/// The submission order of one window of `group`: `blocks` blocks, each holding every cell slot
/// (0-based within the group) once in a random order drawn from `rng`. Written into `order`
/// (resized), so that a runner reuses one buffer.
void WindowOrder(const BenchGroup& group, uint32_t blocks, Xoshiro256& rng,
                 std::vector<uint8_t>& order);

}  // namespace partalign
