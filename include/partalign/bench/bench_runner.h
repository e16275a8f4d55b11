// SPDX-License-Identifier: GPL-3.0-or-later
// Runs a BenchPlan on an engine: round after round, each group once per round in the round's
// order, the I/Os of a group's cells interleaved one by one in each of its windows. Windows take
// longer than planned (a deadline is noticed at the next completion, queues drain, the machine
// is busy): the runner shortens the next windows (to half their planned length at most) so that
// the remaining rounds fit the budget, and stops after the last complete round that fits; the
// first kMinRounds rounds always run, their windows as short as it takes.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "partalign/bench/bench_engine.h"
#include "partalign/bench/bench_plan.h"
#include "partalign/bench/latency_histogram.h"
#include "partalign/util/result.h"

namespace partalign {

/// Where the I/Os may go, in bytes from the start of the target.
struct BenchRange {
  uint64_t start = 0;
  uint64_t bytes = 0;
  /// Offset alignments are counted from this byte: 0, or `start` for a window that stands for
  /// a device of its own (a partition benchmarked through its disk or image file, which has no
  /// device node: its "aligned" offsets are aligned relative to the partition's start, as
  /// they would be on /dev/sdb1).
  uint64_t origin = 0;
};

/// How a cell's rates in its windows were computed (CellMeasurement::trial_iops). Rates of two
/// kinds differ on the same device (the median latency of a window is not its mean), so two
/// runs compare only cells whose rates are of one kind.
enum class WindowRateKind {
  kCount,          ///< alone in its group: I/Os completed in the window / the window
  kMedianLatency,  ///< sharing windows I/O by I/O: 1 / the median latency (MedianRate)
  kMeanLatency,    ///< taking turns: queue depth / the mean of the fastest 90% (WindowRate)
};

/// The JSON name of `kind` ("count", "median_latency", "mean_latency").
std::string_view WindowRateKindName(WindowRateKind kind);
std::optional<WindowRateKind> ParseWindowRateKind(std::string_view name);

struct CellMeasurement {
  BenchCell cell;
  uint32_t place = 0;  ///< index of its range
  uint32_t group = 0;  ///< index of its group in the plan: cells of a group share windows
  /// One rate per completed round, in round order. A cell measured alone: I/Os counted in the
  /// window / the window (its IOPS then). A cell sharing windows I/O by I/O (queue depth 1,
  /// random offsets): 1 / the median latency of its I/Os in the window (MedianRate). A cell
  /// taking turns (TakesTurns): queue depth / the mean latency of its I/Os in its slots without
  /// their slowest tenth (WindowRate). The i-th values of two cells of one group come from the
  /// same window and form a pair.
  std::vector<double> trial_iops;
  WindowRateKind rate_kind = WindowRateKind::kCount;  ///< how trial_iops were computed
  uint64_t ios = 0;
  uint64_t bytes = 0;
  /// A cell alone: the windows' length; sharing windows I/O by I/O: its I/Os' summed latency /
  /// queue depth; taking turns (TakesTurns): its slots' length.
  uint64_t measured_ns = 0;
  LatencyHistogram latency;  ///< every counted I/O of every trial
};

/// The runner never shortens a window below this: a fast SSD still does hundreds of I/Os in it.
inline constexpr uint64_t kMinTrialNs = 1'000'000;

/// Submission-order blocks generated per window; a window with more I/Os reuses them cyclically.
inline constexpr uint32_t kOrderBlocks = 64;

/// Latencies kept per cell and window for MedianRate and WindowRate (a fast NVMe device does ~500
/// I/Os per millisecond; a window shares that among its cells). Beyond, the first ones count.
inline constexpr size_t kMaxWindowSamples = 16384;

/// The rate of a cell in the slots of a window it takes turns in (TakesTurns): `queue_depth` /
/// the mean of `latencies_ns` without its slowest tenth (rounded up; with fewer than 4
/// latencies, all of them): by Little's law the IOPS it would have alone at that latency. Its
/// I/Os queue behind each other, and a deep queue is reaped in batches, so a single latency is
/// not the I/O's own: the mean is what follows the throughput. A slot in which the machine
/// stalls one I/O for milliseconds would otherwise give that cell a rate many times too low.
/// Reorders `latencies_ns`. 0 when it is empty.
double WindowRate(std::vector<uint64_t>& latencies_ns, uint32_t queue_depth);

/// The rate of a cell in a window it shares I/O by I/O (queue depth 1, random offsets): 1 / the
/// median of `latencies_ns` (of the two middle ones, their mean), the rate of its typical I/O.
/// Each latency there is one I/O's own. Where they fall in two modes (an I/O that finds the
/// device's thread awake and one that waits for it to wake: FUSE, a USB bridge, a CPU in deep
/// idle) and the share of each changes from window to window, the mean follows the share and
/// drowns a small penalty; the median stays in the larger mode. A stall is one latency among
/// the others. Reorders `latencies_ns`. 0 when it is empty.
double MedianRate(std::vector<uint64_t>& latencies_ns);

struct BenchMeasurements {
  std::vector<CellMeasurement> cells;  ///< in plan order
  uint32_t rounds = 0;                 ///< complete rounds measured
  uint64_t wall_ns = 0;                ///< as reported by the engine, drains included
  uint64_t planned_ns = 0;             ///< the window lengths asked for, summed
};

/// Whether the windows of `group` are cut into slots, each cell alone in its slot, instead of
/// the cells' I/Os sharing one queue. Cells at a queue depth above 1 would share the queue: an
/// I/O then waits behind the others' I/Os, and a slow cell slows both sides alike, so that
/// their latencies cannot tell them apart (a paired comparison of two places at QD32 came out
/// exactly 0% +-0). Sequential cells would break each other's sequence. Such a cell's rate in a
/// window is WindowRate of the latencies of its I/Os in its slots (queue depth over their mean
/// without the slowest tenth): every I/O counts, those drained at a slot's end too, so a slot
/// holding a few long I/Os (sequential 1 MiB at QD8) does not give a rate rounded to whole
/// I/Os, and a stall of the machine inside one slot is left out as in a shared window.
/// (Counting the I/Os completed in a slot over its length, as first done, gave apply --bench's
/// comparisons that take turns intervals 2 to 7 times wider on a loaded machine: docs/bench.md.)
bool TakesTurns(const BenchPlan& plan, const BenchGroup& group);

/// How far a run is, after each complete round.
struct BenchProgress {
  uint32_t rounds_done = 0;
  uint32_t rounds = 0;     ///< planned; the runner may stop earlier to keep to the budget
  uint64_t spent_ns = 0;   ///< the engine's wall time so far, drains included
  uint64_t budget_ns = 0;  ///< the trial budget (BenchPlan::trial_budget_ns)
};
using BenchProgressFn = std::function<void(const BenchProgress&)>;

/// "round 5 of 32, about 2.1 s left": the text of a progress line.
std::string BenchProgressText(const BenchProgress& progress);

/// `ranges[plan.places[i]]` is where cell i's I/Os go. `progress`, when set, is called after
/// every complete round.
Result<BenchMeasurements> RunBench(const BenchPlan& plan, const std::vector<BenchRange>& ranges,
                                   BenchEngine& engine, const BenchProgressFn& progress = {});

}  // namespace partalign
