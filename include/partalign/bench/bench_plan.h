// What the benchmark measures and in which order: the cells (pattern, block size, offset
// alignment, queue depth), and the schedule that measures them in interleaved rounds so that
// drift (thermal, background load, caches) hits every cell alike.
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

enum class IoPattern { kRandRead, kSeqRead, kRandWrite, kSeqWrite };

/// "randread", "seqread", "randwrite", "seqwrite" (the --pattern values and JSON strings).
std::string_view ToString(IoPattern pattern);
std::optional<IoPattern> ParseIoPattern(std::string_view text);
bool IsWrite(IoPattern pattern);
AccessOrder OrderOf(IoPattern pattern);

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
/// QD1), sequential 1 MiB at QD8 and random 4 KiB at QD32. Reads, or writes when `write`.
std::vector<BenchCell> DefaultCells(bool write, const GridSpec& grid = DefaultGrid());

/// O_DIRECT needs offsets and lengths in whole logical sectors: keeps the cells that a device
/// with `logical_sector_size` can run and moves the others to `skipped`.
std::vector<BenchCell> CellsForSectorSize(const std::vector<BenchCell>& cells,
                                          uint64_t logical_sector_size,
                                          std::vector<BenchCell>* skipped);

/// Rounds of the schedule: at least 8. With 8 trials a cell, the median has a distribution-free
/// 95% interval (99.2%), and two cells can be compared at the Bonferroni level of a family of
/// up to 160 comparisons (the Mann-Whitney tail 1 / C(16, 8) = 7.8e-5 is below 0.05 / 320).
inline constexpr uint32_t kMinRounds = 8;
inline constexpr uint32_t kMaxRounds = 64;

struct PlanOptions {
  /// Time for the trials themselves; the caller keeps the rest of its budget for setup and
  /// the queue drain at the end of each trial.
  uint64_t trial_budget_ns = 0;
  /// Preferred length of one trial. Shorter trials mean more rounds (more degrees of freedom,
  /// finer interleaving); each trial must still hold enough I/Os to measure a rate.
  uint64_t preferred_trial_ns = 10'000'000;
  uint64_t seed = 1;
};

struct BenchPlan {
  std::vector<BenchCell> cells;
  uint32_t rounds = 0;
  uint64_t trial_ns = 0;
  uint64_t trial_budget_ns = 0;
  uint64_t seed = 0;
  /// order[r]: the cell indices of round r, a seeded random permutation, so that no cell is
  /// always measured right after the same neighbour (randomized complete blocks).
  std::vector<std::vector<uint32_t>> order;
};

Result<BenchPlan> PlanBench(const std::vector<BenchCell>& cells, const PlanOptions& options);

/// The seed of a cell's offset stream: a function of the run's seed and of the cell itself,
/// not of its position, so a cell gets the same offsets whatever else the run measures.
uint64_t CellSeed(uint64_t seed, const BenchCell& cell);

}  // namespace partalign
