// SPDX-License-Identifier: GPL-3.0-or-later
// `apply --bench`: the product's "measure the disk before and after". Each partition whose place
// a plan changes is benchmarked at its old place before the first write; after the last one its
// old and new places are measured in one run, every cell's I/Os at the two places interleaved
// one by one, and compared cell by cell with paired intervals (bench --compare's table). Reads,
// and rewrites that write back the bytes they read. docs/apply.md, "Measuring before and
// after".
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cli/cli11_fwd.h"

#include "cli/commands.h"
#include "partalign/bench/bench_plan.h"
#include "partalign/bench/bench_report.h"
#include "partalign/layout/partition_table.h"
#include "partalign/layout/plan.h"
#include "partalign/util/result.h"

namespace partalign {

/// Seconds per partition and per place when --bench-seconds is not given: the paired run after
/// the change, 8 s for both places, gives each of the five cells 64 windows of both places.
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

/// What apply measures, at offsets aligned relative to the partition's start, as the filesystem
/// will issue them: random 4 KiB reads at QD1 and QD32, sequential 1 MiB reads at QD8, and random
/// 4 KiB rewrites (read, write the same bytes back) at QD1 and QD32 - small random writes are
/// where misalignment cost the seeds' 2018 SSD 2.5-14%.
std::vector<BenchCell> ApplyBenchCells();

/// The byte window of `place` that both runs read, relative to the partition's start: the
/// first min(old, new) bytes, so that with the same seed both runs read the same
/// partition-relative offsets (the same data, for a partition whose data moves).
uint64_t BenchWindowBytes(const BenchedPlace& place);

class ApplyBench {
 public:
  ApplyBench(ApplyBenchOptions options, std::string path, std::vector<BenchedPlace> places);

  /// Before any write: benchmarks each place at its old position. Prints a line per partition.
  /// When the disk is in use nothing is measured (apply refuses it right after, naming who uses
  /// it). An error means apply stops before writing anything (the lead handles the exit).
  Status Before(Streams io);
  /// After the last write and its verification, with the disk held by apply (O_EXCL and flock):
  /// measures each partition's old and new place in one run whose windows interleave every
  /// cell's I/Os at both places one by one (same cells, seed, time per place), so that drift
  /// between them - the machine's load, caches, data just written - hits both alike, and
  /// prints the new place against the old one per partition, paired (bench --compare's table);
  /// writes the reports when asked. Measuring the old place after the change is sound: reads
  /// and rewrites leave every byte as it is, and cost the same whatever the bytes. Fails only
  /// on I/O errors (apply has already succeeded then; the lead prints a warning).
  Status After(Streams io);

  /// The comparisons After made, one per benchmarked partition, in partition order.
  const std::vector<BenchComparison>& comparisons() const { return comparisons_; }

 private:
  /// The run before the change, at the old place.
  Result<BenchReport> MeasureBefore(Streams io, const BenchedPlace& place);
  /// The paired run after the change: the old place's report and the new place's.
  Result<std::pair<BenchReport, BenchReport>> MeasureBoth(Streams io, const BenchedPlace& place);

  ApplyBenchOptions options_;
  std::string path_;
  std::vector<BenchedPlace> places_;
  /// Parallel to places_ after Before: the run of each place before the change (printed, and
  /// kept in the reports; the comparison is made after the change, paired).
  std::vector<BenchReport> before_;
  std::vector<BenchComparison> comparisons_;
};

}  // namespace partalign
