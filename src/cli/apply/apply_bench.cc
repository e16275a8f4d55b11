#include "cli/apply/apply_bench.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <ostream>
#include <utility>

#include <fmt/format.h>

#include "cli/bench_output.h"
#include "io/bench/bench_session.h"
#include "partalign/bench/bench_render.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;

// Trials of up to 50 ms: a sequential 1 MiB cell at QD8 on a disk doing ~800 reads a second
// still completes ~40 reads per trial (at bench's 10 ms it would be 8, a coarse rate). The
// runner shortens them to fit at least 8 rounds of three cells into a run.
constexpr uint64_t kApplyTrialNs = 50'000'000;

std::string Headline(const CellSummary& s) {
  return fmt::format("{} {} QD{} {} IOPS ({}-{})", ToString(s.cell.pattern),
                     FormatSize(s.cell.block_size), s.cell.queue_depth, FormatIops(s.iops),
                     FormatIops(s.iops_ci.low), FormatIops(s.iops_ci.high));
}

// The cells that fit a window of `bytes` (a partition smaller than 1 MiB has no room for the
// sequential cell).
std::vector<BenchCell> CellsForWindow(uint64_t bytes) {
  std::vector<BenchCell> cells;
  for (const BenchCell& cell : ApplyBenchCells()) {
    if (cell.block_size <= bytes) cells.push_back(cell);
  }
  return cells;
}

// "partalign-bench-demo.img-p3": the file name stem of one partition's reports.
std::string ReportStem(const std::string& dir, const std::string& path, uint32_t partition) {
  return (fs::path(dir) /
          fmt::format("partalign-bench-{}-p{}", fs::path(path).filename().string(), partition))
      .string();
}

}  // namespace

void AddApplyBenchOptions(CLI::App* command, ApplyBenchOptions* options) {
  command->add_flag(
      "--bench", options->enabled,
      "benchmark every partition that changes place, read-only, before the change and "
      "after it at its old and new place, interleaved (random 4 KiB at QD1/QD32, "
      "sequential 1 MiB), and compare");
  command
      ->add_option("--bench-seconds", options->seconds,
                   fmt::format("--bench: seconds per partition and place (default {:g})",
                               kDefaultApplyBenchSeconds))
      ->check(CLI::PositiveNumber);
  command->add_option("--bench-report", options->report_dir,
                      "--bench: write each partition's runs (before, old, new) as JSON and the "
                      "comparison as HTML into DIR");
}

std::vector<BenchedPlace> BenchedPlaces(const Plan& plan, uint64_t sector_size,
                                        const PartitionTable* table) {
  std::vector<BenchedPlace> places;
  for (const PlanAction& a : plan.actions) {
    if (a.kind != ActionKind::kTableOnly && a.kind != ActionKind::kMoveData) continue;
    if (a.old_start_sector == a.new_start_sector && a.old_end_sector == a.new_end_sector) continue;
    if (table) {
      const Partition* p = table->Find(a.partition);
      if (p && p->kind == PartitionKind::kExtended) continue;
    }
    places.push_back({a.partition, a.old_start_sector * sector_size,
                      (a.old_end_sector - a.old_start_sector + 1) * sector_size,
                      a.new_start_sector * sector_size,
                      (a.new_end_sector - a.new_start_sector + 1) * sector_size});
  }
  std::sort(places.begin(), places.end(),
            [](const BenchedPlace& a, const BenchedPlace& b) { return a.partition < b.partition; });
  return places;
}

std::vector<BenchCell> ApplyBenchCells() {
  // Offsets aligned to the block size, counted from the partition's start: what a filesystem
  // on the partition issues. The misaligned grid cells of `bench` answer another question
  // (what if the filesystem issued misaligned I/O), not what the move changed.
  return {
      {IoPattern::kRandRead, kRandomBlock, kRandomBlock, 1, false},
      {IoPattern::kRandRead, kRandomBlock, kRandomBlock, kDeepQueueDepth, false},
      {IoPattern::kSeqRead, kSequentialBlock, kSequentialBlock, kSequentialQueueDepth, false},
  };
}

uint64_t BenchWindowBytes(const BenchedPlace& place) {
  return std::min(place.old_bytes, place.new_bytes);
}

ApplyBench::ApplyBench(ApplyBenchOptions options, std::string path,
                       std::vector<BenchedPlace> places)
    : options_(std::move(options)), path_(std::move(path)), places_(std::move(places)) {}

Result<BenchReport> ApplyBench::Measure(Streams io, const BenchedPlace& place, bool after,
                                        double seconds, bool print_notes) {
  const uint64_t start = after ? place.new_start_bytes : place.old_start_bytes;
  BenchSession session;
  session.path = path_;
  session.cells = CellsForWindow(BenchWindowBytes(place));
  // The partition as a device of its own: aligned offsets count from its start, as on
  // /dev/sdb1, and no I/O leaves it.
  session.range = BenchRange{start, BenchWindowBytes(place), start};
  session.seed = options_.seed;
  session.seconds = seconds;
  session.preferred_trial_ns = kApplyTrialNs;
  session.time_options = "--bench-seconds";
  session.started = std::chrono::steady_clock::now();
  Result<BenchOutcome> outcome = RunBenchSession(session);
  if (!outcome) {
    return MakeError(fmt::format("benchmark of partition {} at its {} place (byte {}): {}",
                                 place.partition, after ? "new" : "old", start,
                                 outcome.error().message));
  }
  if (!outcome->fallback_reason.empty()) {
    PrintWarning(io.err, outcome->fallback_reason + "; using pread");
  }
  for (const std::string& note : outcome->report.notes) {
    if (print_notes) {
      PrintWarning(io.err, fmt::format("benchmark of partition {} at its {} place: {}",
                                       place.partition, after ? "new" : "old", note));
    }
  }
  return std::move(outcome->report);
}

Status ApplyBench::Before(Streams io) {
  if (!options_.enabled) return {};
  std::vector<BenchedPlace> measurable;
  for (const BenchedPlace& place : places_) {
    if (CellsForWindow(BenchWindowBytes(place)).empty()) {
      PrintWarning(io.err, fmt::format("partition {} is smaller than one {} read: not benchmarked",
                                       place.partition, FormatSize(kRandomBlock)));
    } else {
      measurable.push_back(place);
    }
  }
  places_ = std::move(measurable);
  if (places_.empty()) return {};
  io.out << fmt::format(
      "\nBenchmark before the change (read-only, {:g} s per partition, seed {}), at the old "
      "places:\n",
      options_.seconds, options_.seed);
  io.out.flush();
  before_.clear();
  for (const BenchedPlace& place : places_) {
    Result<BenchReport> report = Measure(io, place, /*after=*/false, options_.seconds);
    if (!report) return report.error();
    std::string cells;
    for (const CellSummary& s : report->cells) cells += (cells.empty() ? "" : "; ") + Headline(s);
    io.out << fmt::format("  partition {} at byte {} ({}): {}\n", place.partition,
                          place.old_start_bytes, FormatSize(BenchWindowBytes(place)), cells);
    io.out.flush();
    before_.push_back(std::move(*report));
  }
  return {};
}

Status ApplyBench::After(Streams io) {
  if (!options_.enabled || before_.empty()) return {};
  if (!options_.report_dir.empty()) {
    std::error_code ec;
    fs::create_directories(options_.report_dir, ec);
    if (ec) {
      return MakeError(fmt::format("cannot create '{}': {}", options_.report_dir, ec.message()));
    }
  }
  io.out << fmt::format(
      "\nBenchmark after the change: the old and the new place of each partition in {} "
      "interleaved blocks ({:g} s per place), so that the machine's load and caches change "
      "both alike:\n",
      kInterleavedBlocks, options_.seconds);
  comparisons_.clear();
  size_t family = 0;
  for (const BenchedPlace& place : places_)
    family += CellsForWindow(BenchWindowBytes(place)).size();
  for (size_t i = 0; i < places_.size(); ++i) {
    const BenchedPlace& place = places_[i];
    // old, new, new, old: neither place always goes first (ABBA).
    std::vector<BenchReport> old_runs, new_runs;
    for (int block = 0; block < kInterleavedBlocks; ++block) {
      for (int k = 0; k < 2; ++k) {
        const bool new_place = (block % 2 == 0) == (k == 1);
        // The notes of a place's first run stand for its other runs.
        Result<BenchReport> run =
            Measure(io, place, new_place, options_.seconds / kInterleavedBlocks, block == 0);
        if (!run) return run.error();
        (new_place ? new_runs : old_runs).push_back(std::move(*run));
      }
    }
    Result<BenchReport> old_place = MergeRuns(old_runs);
    if (!old_place) return old_place.error();
    Result<BenchReport> new_place = MergeRuns(new_runs);
    if (!new_place) return new_place.error();
    const std::string old_name =
        fmt::format("partition {} old place (byte {})", place.partition, place.old_start_bytes);
    const std::string new_name =
        fmt::format("partition {} new place (byte {})", place.partition, place.new_start_bytes);
    // Simultaneous over every cell of every partition: one false alarm in the whole report is
    // what the 95% bounds.
    Result<BenchComparison> cmp =
        CompareReports(*old_place, *new_place, old_name, new_name, family);
    if (!cmp) return cmp.error();
    io.out << '\n';
    PrintBenchComparison(
        io.out, *cmp,
        fmt::format("partition {}: byte {} -> {} ({} read), {} trials per place, {}; BEFORE "
                    "is the old place, AFTER the new one",
                    place.partition, place.old_start_bytes, place.new_start_bytes,
                    FormatSize(BenchWindowBytes(place)), old_place->cells.front().trials,
                    ComparisonConfidence(*cmp)));
    if (!options_.report_dir.empty()) {
      const std::string stem = ReportStem(options_.report_dir, path_, place.partition);
      for (const auto& [side, report] :
           {std::pair{"before", &before_[i]}, std::pair{"old", &*old_place},
            std::pair{"new", &*new_place}}) {
        const std::string file = fmt::format("{}-{}.json", stem, side);
        if (Status s = WriteTextFile(file, BenchJson(*report).dump(2) + "\n"); !s) return s;
        io.out << "data:    " << file << '\n';
      }
      if (Status s = WriteBenchReports(stem + "-compare", ChangeHeatmap(*cmp), ComparisonHtml(*cmp),
                                       io.out);
          !s) {
        return s;
      }
    }
    comparisons_.push_back(std::move(*cmp));
    io.out.flush();
  }
  return {};
}

}  // namespace partalign
