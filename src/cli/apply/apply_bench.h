// `apply --bench`: the product's "measure the disk before and after". Each partition whose place
// a plan changes is benchmarked read-only at its old place before the first write and at its
// new place after the last one, with the same cells, seed and time, and the two runs are
// compared cell by cell with intervals (bench --compare's table). docs/apply.md, "Measuring
// before and after".
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "partalign/bench/bench_plan.h"
#include "partalign/bench/bench_report.h"
#include "partalign/layout/partition_table.h"
#include "partalign/layout/plan.h"
#include "partalign/util/result.h"

namespace partalign {

/// Seconds per partition and per side when --bench-seconds is not given: with three cells,
/// about 24 rounds of 50 ms trials per side, which resolve changes of roughly 10% per cell.
inline constexpr double kDefaultApplyBenchSeconds = 4.0;

struct ApplyBenchOptions {
  bool enabled = false;                        ///< --bench
  double seconds = kDefaultApplyBenchSeconds;  ///< --bench-seconds: per partition, per side
  std::string report_dir;  ///< --bench-report DIR: before/after JSON + compare HTML per partition
  uint64_t seed = 1;
};

/// Registers --bench, --bench-seconds and --bench-report.
void AddApplyBenchOptions(CLI::App* command, ApplyBenchOptions* options);

/// A partition's place before and after the plan, in bytes from the start of the disk.
struct BenchedPlace {
  uint32_t partition;
  uint64_t old_start_bytes, old_bytes, new_start_bytes, new_bytes;
  bool operator==(const BenchedPlace&) const = default;
};

/// The partitions of `plan` whose place changes (table-only and move-data actions), in bytes.
/// With `table` (the disk's table the plan was made from), DOS extended partitions are left
/// out: they are containers, and their logical partitions are benchmarked on their own.
std::vector<BenchedPlace> BenchedPlaces(const Plan& plan, uint64_t sector_size,
                                        const PartitionTable* table = nullptr);

/// What apply measures: reads at offsets aligned relative to the partition's start, as the
/// filesystem will issue them: random 4 KiB at QD1 and QD32, sequential 1 MiB at QD8.
std::vector<BenchCell> ApplyBenchCells();

/// The byte window of `place` that both runs read, relative to the partition's start: the
/// first min(old, new) bytes, so that with the same seed both runs read the same
/// partition-relative offsets (the same data, for a partition whose data moves).
uint64_t BenchWindowBytes(const BenchedPlace& place);

/// Blocks of old-place and new-place runs after the change, in ABBA order (old, new, new, old):
/// a drift that is linear in time then hits both places alike. Two blocks keep each run long
/// enough for trials of tens of milliseconds at the default --bench-seconds.
inline constexpr int kInterleavedBlocks = 2;

class ApplyBench {
 public:
  ApplyBench(ApplyBenchOptions options, std::string path, std::vector<BenchedPlace> places);

  /// Before any write: benchmarks each place at its old position. Prints a line per partition. An
  /// error means apply stops before writing anything (the lead handles the exit).
  Status Before(Streams io);
  /// After the last write and its verification: benchmarks each partition's old and new place
  /// in kInterleavedBlocks alternating blocks (same cells, seed and time per place), so that
  /// drift between them - the machine's load, caches, data just written - hits both alike, and
  /// prints the new place against the old one per partition (bench --compare's table); writes
  /// the reports when asked. Reading the old place after the change is sound: nothing is
  /// written, and a read costs the same whatever the bytes. Fails only on I/O errors (apply has
  /// already succeeded then; the lead prints a warning).
  Status After(Streams io);

  /// The comparisons After made, one per benchmarked partition, in partition order.
  const std::vector<BenchComparison>& comparisons() const { return comparisons_; }

 private:
  /// One run at the old or new place; its notes are printed with `print_notes`.
  Result<BenchReport> Measure(Streams io, const BenchedPlace& place, bool after, double seconds,
                              bool print_notes = true);

  ApplyBenchOptions options_;
  std::string path_;
  std::vector<BenchedPlace> places_;
  /// Parallel to places_ after Before: the run of each place before the change (printed, and
  /// kept in the reports; the comparison is made after the change, interleaved).
  std::vector<BenchReport> before_;
  std::vector<BenchComparison> comparisons_;
};

}  // namespace partalign
