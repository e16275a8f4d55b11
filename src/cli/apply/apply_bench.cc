// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/apply/apply_bench.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <ostream>
#include <utility>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/bench/bench_output.h"
#include "cli/bench/bench_progress.h"
#include "io/bench/bench_session.h"
#include "io/bench/bench_setup.h"
#include "partalign/bench/bench_render.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;

// Windows of at least 20 ms: a sequential 1 MiB cell at QD8 on a disk doing ~800 reads a
// second still completes ~16 reads per window and place (at bench's 10 ms it would be 8).
constexpr uint64_t kApplyMinWindowNs = 20'000'000;

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
      "benchmark every partition that changes place before the change, and after it at its old "
      "and new place, interleaved I/O by I/O (random 4 KiB reads and rewrites of the same bytes "
      "at QD1/QD32, sequential 1 MiB reads), and compare, paired");
  command
      ->add_option("--bench-seconds", options->seconds,
                   fmt::format("--bench: seconds per partition and place (default {:g})",
                               kDefaultApplyBenchSeconds))
      ->check(CLI::PositiveNumber);
  command->add_option("--bench-report", options->report_dir,
                      "--bench: write each partition's runs (before, old, new) and the "
                      "comparison as JSON, and the comparison as HTML, into DIR");
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
      {IoPattern::kRandRewrite, kRandomBlock, kRandomBlock, 1, false},
      {IoPattern::kRandRewrite, kRandomBlock, kRandomBlock, kDeepQueueDepth, false},
  };
}

uint64_t BenchWindowBytes(const BenchedPlace& place) {
  return std::min(place.old_bytes, place.new_bytes);
}

ApplyBench::ApplyBench(ApplyBenchOptions options, std::string path,
                       std::vector<BenchedPlace> places)
    : options_(std::move(options)), path_(std::move(path)), places_(std::move(places)) {}

namespace {

// A session of apply's benchmark on `path`: its cells at `ranges`, reads and rewrites.
BenchSession ApplySession(const std::string& path, const ApplyBenchOptions& options,
                          double seconds) {
  BenchSession session;
  session.path = path;
  session.access = BenchAccess::kRewrite;
  session.seed = options.seed;
  session.seconds = seconds;
  session.min_window_ns = kApplyMinWindowNs;
  session.time_options = "--bench-seconds";
  session.started = std::chrono::steady_clock::now();
  return session;
}

// Runs `session`, saying on stderr what it measures and how long is left.
Result<BenchOutcome> MeasureWithProgress(Streams io, BenchSession& session,
                                         const std::string& what) {
  BenchProgressLine progress(io.err, what, session.seconds);
  session.progress = progress.Callback();
  return RunBenchSession(session);
}

// The partition at `start` as a device of its own: aligned offsets count from its start, as
// on /dev/sdb1, and no I/O leaves it.
BenchRange PlaceRange(const BenchedPlace& place, bool new_place) {
  const uint64_t start = new_place ? place.new_start_bytes : place.old_start_bytes;
  return {start, BenchWindowBytes(place), start};
}

}  // namespace

Result<BenchReport> ApplyBench::MeasureBefore(Streams io, const BenchedPlace& place) {
  BenchSession session = ApplySession(path_, options_, options_.seconds);
  session.cells = CellsForWindow(BenchWindowBytes(place));
  session.ranges = {PlaceRange(place, /*new_place=*/false)};
  Result<BenchOutcome> outcome =
      MeasureWithProgress(io, session,
                          fmt::format("partition {} at its old place (byte {})", place.partition,
                                      place.old_start_bytes));
  if (!outcome) {
    return MakeError(fmt::format("benchmark of partition {} at its old place (byte {}): {}",
                                 place.partition, place.old_start_bytes, outcome.error().message));
  }
  if (!outcome->fallback_reason.empty()) {
    PrintWarning(io.err, outcome->fallback_reason + "; using pread/pwrite");
  }
  for (const std::string& note : outcome->report.notes) {
    PrintWarning(io.err, fmt::format("benchmark of partition {} at its old place: {}",
                                     place.partition, note));
  }
  return std::move(outcome->report);
}

Result<std::pair<BenchReport, BenchReport>> ApplyBench::MeasureBoth(Streams io,
                                                                    const BenchedPlace& place) {
  // Both places in one run: each cell at the old place (range 0) and the new one (range 1)
  // shares its windows with itself at the other place.
  BenchSession session = ApplySession(path_, options_, 2 * options_.seconds);
  session.held = true;
  session.ranges = {PlaceRange(place, false), PlaceRange(place, true)};
  for (const BenchCell& cell : CellsForWindow(BenchWindowBytes(place))) {
    const auto index = static_cast<uint32_t>(session.cells.size());
    session.cells.insert(session.cells.end(), {cell, cell});
    session.places.insert(session.places.end(), {0, 1});
    session.groups.push_back({{index, index + 1}, 0});
  }
  Result<BenchOutcome> outcome = MeasureWithProgress(
      io, session,
      fmt::format("partition {} at its old and new place, interleaved", place.partition));
  if (!outcome) {
    return MakeError(fmt::format("benchmark of partition {} at its old and new place: {}",
                                 place.partition, outcome.error().message));
  }
  if (!outcome->fallback_reason.empty()) {
    PrintWarning(io.err, outcome->fallback_reason + "; using pread/pwrite");
  }
  for (const std::string& note : outcome->report.notes) {
    PrintWarning(io.err, fmt::format("benchmark of partition {} after the change: {}",
                                     place.partition, note));
  }
  // The run's cells alternate old, new: one report per place.
  const BenchReport& run = outcome->report;
  std::pair<BenchReport, BenchReport> sides{run, run};
  sides.first.cells.clear();
  sides.second.cells.clear();
  for (size_t i = 0; i < run.cells.size(); ++i) {
    (i % 2 == 0 ? sides.first : sides.second).cells.push_back(run.cells[i]);
  }
  for (auto [report, new_place] :
       {std::pair{&sides.first, false}, std::pair{&sides.second, true}}) {
    const BenchRange range = PlaceRange(place, new_place);
    report->target.range_start_bytes = range.start;
    report->target.range_bytes = range.bytes;
    report->target.offset_origin_bytes = range.origin;
    AddAlignmentAnalysis(*report);
  }
  return sides;
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
  // Rewrites need a disk nobody uses; apply refuses one that is in use right after this.
  Result<std::optional<std::string>> refusal = RewriteRefusal(path_);
  if (!refusal) return refusal.error();
  if (*refusal) {
    PrintWarning(io.err, "--bench: nothing measured: " + **refusal);
    places_.clear();
    return {};
  }
  io.out << fmt::format(
      "\nBenchmark before the change ({:g} s per partition, seed {}; rewrites write back the "
      "bytes they read), at the old places:\n",
      options_.seconds, options_.seed);
  io.out.flush();
  before_.clear();
  for (const BenchedPlace& place : places_) {
    Result<BenchReport> report = MeasureBefore(io, place);
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
      "\nBenchmark after the change: the old and the new place of each partition in one run, "
      "their I/Os interleaved one by one ({:g} s per place), so that the machine's load and "
      "caches change both alike; intervals paired window by window:\n",
      options_.seconds);
  comparisons_.clear();
  size_t family = 0;
  for (const BenchedPlace& place : places_)
    family += CellsForWindow(BenchWindowBytes(place)).size();
  for (size_t i = 0; i < places_.size(); ++i) {
    const BenchedPlace& place = places_[i];
    Result<std::pair<BenchReport, BenchReport>> both = MeasureBoth(io, place);
    if (!both) return both.error();
    const BenchReport* old_place = &both->first;
    const BenchReport* new_place = &both->second;
    const std::string old_name =
        fmt::format("partition {} old place (byte {})", place.partition, place.old_start_bytes);
    const std::string new_name =
        fmt::format("partition {} new place (byte {})", place.partition, place.new_start_bytes);
    // Simultaneous over every cell of every partition: one false alarm in the whole report is
    // what the 95% bounds.
    Result<BenchComparison> cmp =
        CompareReports(*old_place, *new_place, old_name, new_name, family, /*same_run=*/true);
    if (!cmp) return cmp.error();
    io.out << '\n';
    PrintBenchComparison(
        io.out, *cmp,
        fmt::format("partition {}: byte {} -> {} ({} measured), {} windows, {}; BEFORE "
                    "is the old place, AFTER the new one",
                    place.partition, place.old_start_bytes, place.new_start_bytes,
                    FormatSize(BenchWindowBytes(place)), old_place->cells.front().trials,
                    ComparisonConfidence(*cmp)));
    if (!options_.report_dir.empty()) {
      const std::string stem = ReportStem(options_.report_dir, path_, place.partition);
      for (const auto& [side, report] :
           {std::pair{"before", static_cast<const BenchReport*>(&before_[i])},
            std::pair{"old", old_place}, std::pair{"new", new_place}}) {
        const std::string file = fmt::format("{}-{}.json", stem, side);
        if (Status s = WriteTextFile(file, BenchJson(*report).dump(2) + "\n"); !s) return s;
        io.out << "data:    " << file << '\n';
      }
      const std::string compare = stem + "-compare.json";
      if (Status s = WriteTextFile(compare, ComparisonJson(*cmp).dump(2) + "\n"); !s) return s;
      io.out << "data:    " << compare << '\n';
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
