#include "cli/apply_bench.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <ostream>
#include <utility>

#include <fmt/format.h>

#include "cli/bench_output.h"
#include "io/bench_session.h"
#include "partalign/bench_render.h"
#include "partalign/units.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;

// Trials of 50 ms: a sequential 1 MiB cell at QD8 on a disk doing ~800 reads a second still
// completes ~40 reads per trial (at bench's 10 ms it would be 8, a coarse rate). Three cells
// in 2 s per side still give 12 rounds, enough for intervals at the Bonferroni level of 3.
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
  command->add_flag("--bench", options->enabled,
                    "benchmark every partition that changes place, read-only, before and after "
                    "(random 4 KiB at QD1/QD32, sequential 1 MiB), and compare");
  command
      ->add_option("--bench-seconds", options->seconds,
                   fmt::format("--bench: seconds per partition and side (default {:g})",
                               kDefaultApplyBenchSeconds))
      ->check(CLI::PositiveNumber);
  command->add_option("--bench-report", options->report_dir,
                      "--bench: write each partition's before/after JSON and comparison HTML "
                      "into DIR");
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

Result<BenchReport> ApplyBench::Measure(Streams io, const BenchedPlace& place, bool after) {
  const uint64_t start = after ? place.new_start_bytes : place.old_start_bytes;
  BenchSession session;
  session.path = path_;
  session.cells = CellsForWindow(BenchWindowBytes(place));
  // The partition as a device of its own: aligned offsets count from its start, as on
  // /dev/sdb1, and no I/O leaves it.
  session.range = BenchRange{start, BenchWindowBytes(place), start};
  session.seed = options_.seed;
  session.seconds = options_.seconds;
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
    PrintWarning(io.err, fmt::format("benchmark of partition {}: {}", place.partition, note));
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
  before_started_.clear();
  for (const BenchedPlace& place : places_) {
    before_started_.push_back(std::chrono::steady_clock::now());
    Result<BenchReport> report = Measure(io, place, /*after=*/false);
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
      "\nBenchmark after the change (same cells, seed and time), at the new places:\n");
  comparisons_.clear();
  for (size_t i = 0; i < places_.size(); ++i) {
    const BenchedPlace& place = places_[i];
    const double apart =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - before_started_[i])
            .count();
    Result<BenchReport> after = Measure(io, place, /*after=*/true);
    if (!after) return after.error();
    const std::string before_name =
        fmt::format("partition {} before (byte {})", place.partition, place.old_start_bytes);
    const std::string after_name =
        fmt::format("partition {} after (byte {})", place.partition, place.new_start_bytes);
    Result<BenchComparison> cmp = CompareReports(before_[i], *after, before_name, after_name);
    if (!cmp) return cmp.error();
    io.out << '\n';
    PrintBenchComparison(
        io.out, *cmp,
        fmt::format("partition {}: byte {} -> {} ({} read), {} rounds before, {} after, "
                    "{:.0f} s apart, {}",
                    place.partition, place.old_start_bytes, place.new_start_bytes,
                    FormatSize(BenchWindowBytes(place)), cmp->before.settings.rounds,
                    cmp->after.settings.rounds, apart, ComparisonConfidence(*cmp)));
    if (!options_.report_dir.empty()) {
      const std::string stem = ReportStem(options_.report_dir, path_, place.partition);
      for (const auto& [side, report] :
           {std::pair{"before", &before_[i]}, std::pair{"after", &*after}}) {
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
  // The intervals cover the scatter of trials within a run, not what changed between the two
  // runs; say so where the numbers are read (docs/apply.md, "What the interval means").
  io.out << "The before and after runs of a partition are seconds or minutes apart: anything that "
            "changed in between (the machine's load, caches, data just written) is part of the "
            "difference, which the intervals do not cover.\n";
  return {};
}

}  // namespace partalign
