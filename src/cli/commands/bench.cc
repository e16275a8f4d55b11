// SPDX-License-Identifier: GPL-3.0-or-later
// partalign bench TARGET: a short O_DIRECT benchmark (the block size x offset alignment grid,
// sequential 1 MiB, random 4 KiB at QD1 and QD32) with intervals, the aligned-vs-misaligned
// comparison paired window by window, and an SVG heatmap in an HTML report; --write writes new
// data where nothing can be lost, --rewrite writes back what it read; --compare BEFORE AFTER
// compares two runs. The method is in docs/bench.md.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <ostream>
#include <sstream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/bench/bench_output.h"
#include "cli/bench/bench_progress.h"
#include "cli/commands.h"
#include "io/bench/bench_session.h"
#include "io/device/in_use.h"
#include "partalign/bench/bench_render.h"
#include "partalign/bench/bench_report.h"
#include "partalign/bench/bench_runner.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;

constexpr double kDefaultDurationSeconds = 5.0;
// One buffer pool holds queue depth x block size; 1 GiB is io_uring's limit for one
// registered buffer and far beyond any useful benchmark.
constexpr uint64_t kMaxPoolBytes = kGiB;
constexpr uint64_t kDefaultSeed = 1;
// A grid of the user's: at most this many values per axis (16 x 16 = 256 cells), each at most
// this large.
constexpr size_t kMaxGridValues = 16;
constexpr uint64_t kMaxGridValue = 16 * kMiB;

struct BenchCommand {
  std::string target;
  bool json = false;
  double budget_seconds = kDefaultBenchBudgetSeconds;
  std::string pattern;
  std::string block_size;
  std::string offset_align;
  uint32_t queue_depth = 0;  // 0: not given
  double duration_seconds = 0;
  bool write = false;
  bool rewrite = false;
  std::string engine = "auto";
  uint64_t seed = kDefaultSeed;
  std::string report_dir;
  std::string output;
  bool no_report = false;
  std::vector<std::string> compare;
  std::string grid_blocks;  ///< comma-separated sizes
  std::string grid_aligns;

  bool SingleMode() const {
    return !pattern.empty() || !block_size.empty() || !offset_align.empty() || queue_depth != 0 ||
           duration_seconds != 0;
  }
};

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Where the SVG and HTML go: into --report DIR, only when asked. nullopt: no report files
// (never into the current directory unasked).
std::optional<std::string> ReportStem(const BenchCommand& c, const std::string& name) {
  if (c.no_report || c.report_dir.empty()) return std::nullopt;
  return (fs::path(c.report_dir) / ("partalign-bench-" + name)).string();
}

Status PrepareReportDir(const BenchCommand& c) {
  if (c.report_dir.empty() || c.no_report) return {};
  std::error_code ec;
  fs::create_directories(c.report_dir, ec);
  if (ec) return MakeError(fmt::format("cannot create '{}': {}", c.report_dir, ec.message()));
  return {};
}

// Writes the JSON document to --output and prints it (--json) or nothing.
Status EmitJson(const BenchCommand& c, const nlohmann::json& doc, Streams io) {
  if (!c.output.empty()) {
    if (Status s = WriteTextFile(c.output, doc.dump(2) + "\n"); !s) return s;
  }
  if (c.json) io.out << doc.dump(2) << '\n';
  return {};
}

Result<std::vector<uint64_t>> ParseSizeList(const std::string& list, const char* option) {
  std::vector<std::string> values;
  std::stringstream stream(list);
  for (std::string v; std::getline(stream, v, ',');) values.push_back(v);
  if (values.size() > kMaxGridValues) {
    return MakeError(fmt::format("{}: at most {} values", option, kMaxGridValues));
  }
  std::vector<uint64_t> sizes;
  for (const std::string& v : values) {
    Result<uint64_t> size = ParseSize(v);
    if (!size || *size == 0 || *size > kMaxGridValue) {
      return MakeError(fmt::format("{}: '{}' is not a size between 1 and 16 MiB", option, v));
    }
    sizes.push_back(*size);
  }
  return sizes;
}

Result<std::vector<BenchCell>> CellsFromOptions(const BenchCommand& c) {
  const bool custom_grid = !c.grid_blocks.empty() || !c.grid_aligns.empty();
  if (custom_grid && c.SingleMode()) {
    return MakeError(
        "--block-sizes and --offset-aligns shape the grid; they do not mix with "
        "the single-workload options");
  }
  if (!c.SingleMode()) {
    GridSpec grid = DefaultGrid();
    if (!c.grid_blocks.empty()) {
      Result<std::vector<uint64_t>> blocks = ParseSizeList(c.grid_blocks, "--block-sizes");
      if (!blocks) return blocks.error();
      grid.block_sizes = *blocks;
    }
    if (!c.grid_aligns.empty()) {
      Result<std::vector<uint64_t>> aligns = ParseSizeList(c.grid_aligns, "--offset-aligns");
      if (!aligns) return aligns.error();
      grid.offset_aligns = *aligns;
    }
    return DefaultCells(c.write     ? BenchOp::kWrite
                        : c.rewrite ? BenchOp::kRewrite
                                    : BenchOp::kRead,
                        grid);
  }
  BenchCell cell;
  const std::string pattern = !c.pattern.empty() ? c.pattern
                              : c.write          ? "randwrite"
                              : c.rewrite        ? "randrewrite"
                                                 : "randread";
  std::optional<IoPattern> parsed = ParseIoPattern(pattern);
  if (!parsed) {
    return MakeError(fmt::format(
        "--pattern: '{}' is not one of randread, seqread, randwrite, seqwrite, randrewrite, "
        "seqrewrite",
        pattern));
  }
  cell.pattern = *parsed;
  cell.block_size = kRandomBlock;
  if (!c.block_size.empty()) {
    Result<uint64_t> size = ParseSize(c.block_size);
    if (!size || *size == 0)
      return MakeError(fmt::format("--block-size: '{}' is not a size", c.block_size));
    cell.block_size = *size;
  }
  // Like fio's blockalign: random offsets align to the block size unless told otherwise.
  cell.offset_align = cell.block_size;
  if (!c.offset_align.empty()) {
    Result<uint64_t> align = ParseSize(c.offset_align);
    if (!align || *align == 0) {
      return MakeError(fmt::format("--offset-align: '{}' is not a size", c.offset_align));
    }
    cell.offset_align = *align;
  }
  cell.queue_depth = c.queue_depth == 0 ? 1 : c.queue_depth;
  if (cell.queue_depth > kMaxQueueDepth) {
    return MakeError(fmt::format("--queue-depth: {} is above the maximum of {}", cell.queue_depth,
                                 kMaxQueueDepth));
  }
  if (cell.block_size * cell.queue_depth > kMaxPoolBytes) {
    return MakeError("--block-size x --queue-depth is above 1 GiB of buffers");
  }
  return std::vector<BenchCell>{cell};
}

ExitCode RunMeasure(const BenchCommand& c, Streams io) {
  const auto started = std::chrono::steady_clock::now();
  if (c.target.empty()) return Fail(io, "bench: TARGET is required (or --compare BEFORE AFTER)");
  if (c.write && c.rewrite) {
    return Fail(io,
                "--write and --rewrite do not mix: --write writes new data where nothing can "
                "be lost, --rewrite writes back what it read");
  }
  Result<std::vector<BenchCell>> requested = CellsFromOptions(c);
  if (!requested) return Fail(io, requested.error().message);
  auto any = [&](bool (*test)(IoPattern)) {
    return std::any_of(requested->begin(), requested->end(),
                       [&](const BenchCell& cell) { return test(cell.pattern); });
  };
  const bool writes = any(IsWrite);
  const bool rewrites = any(IsRewrite);
  if (writes && !c.write) {
    return Fail(io, fmt::format("--pattern {} writes to '{}'; add --write to allow it", c.pattern,
                                c.target));
  }
  if (rewrites && !c.rewrite) {
    return Fail(io, fmt::format("--pattern {} rewrites '{}'; add --rewrite to allow it", c.pattern,
                                c.target));
  }
  std::optional<EngineChoice> choice = ParseEngineChoice(c.engine);
  if (!choice)
    return Fail(io, fmt::format("--engine: '{}' is not auto, io_uring or psync", c.engine));
  if (Status s = PrepareReportDir(c); !s) return Fail(io, s.error().message);

  BenchSession session;
  session.path = c.target;
  session.cells = std::move(*requested);
  session.access = writes     ? BenchAccess::kWrite
                   : rewrites ? BenchAccess::kRewrite
                              : BenchAccess::kRead;
  session.engine = *choice;
  session.seed = c.seed;
  session.single = c.SingleMode();
  session.seconds = session.single
                        ? (c.duration_seconds > 0 ? c.duration_seconds : kDefaultDurationSeconds)
                        : c.budget_seconds;
  session.started = started;
  if (writes) {
    Result<WriteDecision> decision = DecideWrite(c.target);
    if (!decision) return Fail(io, decision.error().message);
    if (decision->refusal) {
      PrintError(io.err, *decision->refusal);
      return ExitCode::kRefused;
    }
    if (decision->range) session.ranges = {*decision->range};
    if (!decision->note.empty()) session.notes.push_back(decision->note);
  }
  if (rewrites) {
    Result<std::optional<std::string>> refusal = RewriteRefusal(c.target);
    if (!refusal) return Fail(io, refusal.error().message);
    if (*refusal) {
      PrintError(io.err, **refusal);
      return ExitCode::kRefused;
    }
  }
  Result<BenchOutcome> outcome = [&] {
    BenchProgressLine progress(io.err,
                               fmt::format("'{}' ({} cell{}{})", c.target, session.cells.size(),
                                           session.cells.size() == 1 ? "" : "s",
                                           rewrites ? ", rewrites"
                                           : writes ? ", writes"
                                                    : ", reads"),
                               session.seconds);
    session.progress = progress.Callback();
    return RunBenchSession(session);
  }();
  if (!outcome) {
    if (rewrites && IsBusy(outcome.error())) {
      PrintError(io.err,
                 fmt::format("refusing to rewrite '{}': {}", c.target, outcome.error().message));
      return ExitCode::kRefused;
    }
    return Fail(io, outcome.error().message);
  }
  if (!outcome->fallback_reason.empty()) {
    PrintWarning(io.err, outcome->fallback_reason + "; using pread/pwrite");
  }
  BenchReport& report = outcome->report;
  for (const std::string& note : report.notes) PrintWarning(io.err, note);

  const std::string name = fs::path(c.target).filename().string();
  std::optional<std::string> stem = ReportStem(c, name);
  std::optional<Heatmap> heatmap =
      AlignmentHeatmap(report, fmt::format("{}: median IOPS by block size and offset", name));
  report.elapsed_seconds = SecondsSince(started);

  if (Status s = EmitJson(c, BenchJson(report), io); !s) return Fail(io, s.error().message);
  if (!c.json) PrintBenchReport(io.out, report);
  if (stem) {
    if (Status s = WriteBenchReports(*stem, heatmap, BenchHtml(report), c.json ? io.err : io.out);
        !s) {
      return Fail(io, s.error().message);
    }
  }
  return ExitCode::kOk;
}

ExitCode RunCompare(const BenchCommand& c, Streams io) {
  if (!c.target.empty()) return Fail(io, "bench: --compare takes no TARGET");
  std::vector<BenchReport> reports;
  for (const std::string& path : c.compare) {
    Result<BenchReport> r = ReadBenchResult(path);
    if (!r) return Fail(io, r.error().message);
    reports.push_back(std::move(*r));
  }
  Result<BenchComparison> cmp = CompareReports(reports[0], reports[1], c.compare[0], c.compare[1]);
  if (!cmp) return Fail(io, cmp.error().message);
  if (Status s = PrepareReportDir(c); !s) return Fail(io, s.error().message);
  if (Status s = EmitJson(c, ComparisonJson(*cmp), io); !s) return Fail(io, s.error().message);
  if (!c.json) {
    PrintBenchComparison(
        io.out, *cmp,
        fmt::format("partalign bench --compare: '{}' -> '{}', {} cells, {}", c.compare[0],
                    c.compare[1], cmp->cells.size(), ComparisonConfidence(*cmp)));
  }
  if (std::optional<std::string> stem = ReportStem(c, "compare")) {
    if (Status s = WriteBenchReports(*stem, ChangeHeatmap(*cmp), ComparisonHtml(*cmp),
                                     c.json ? io.err : io.out);
        !s) {
      return Fail(io, s.error().message);
    }
  }
  return ExitCode::kOk;
}

}  // namespace

void AddBenchCommand(CLI::App& app, CommandRunners& runners) {
  auto c = std::make_shared<BenchCommand>();
  CLI::App* sub = app.add_subcommand(
      "bench", "measure IOPS and latency by block size and offset alignment, with intervals");
  sub->add_option("TARGET", c->target, "block device, partition or image file");
  sub->add_flag("-J,--json", c->json, "print JSON");
  sub->add_option("--budget", c->budget_seconds, "total seconds of the default run (default 10)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--block-sizes", c->grid_blocks,
                  "grid: block sizes, comma-separated (default 512,1024,...,4096)");
  sub->add_option("--offset-aligns", c->grid_aligns,
                  "grid: offset alignments, comma-separated (default 512,1024,...,4096); the "
                  "largest is the aligned reference");
  sub->add_option("--pattern", c->pattern,
                  "single workload: randread, seqread, randwrite, seqwrite, randrewrite or "
                  "seqrewrite");
  sub->add_option("--block-size", c->block_size, "single workload: bytes per I/O (default 4K)");
  sub->add_option("--offset-align", c->offset_align,
                  "single workload: random offsets are multiples of this (default: block size)");
  sub->add_option("--queue-depth", c->queue_depth, "single workload: I/Os in flight, 1..128")
      ->check(CLI::Range(1u, kMaxQueueDepth));
  sub->add_option("--duration", c->duration_seconds, "single workload: seconds of I/O (default 5)")
      ->check(CLI::PositiveNumber);
  sub->add_flag("--write", c->write,
                "allow writes: write patterns, or writes instead of reads in the default run; "
                "refused on anything with a signature");
  sub->add_flag("--rewrite", c->rewrite,
                "measure writes without changing a byte: read each block and write the same bytes "
                "back (O_DIRECT, the target opened exclusively and locked; refused while anything "
                "uses it); rewrite patterns, or rewrites instead of reads in the default run");
  sub->add_option("--engine", c->engine, "auto, io_uring or psync (default auto)");
  sub->add_option("--seed", c->seed, "seed of the offsets and the trial order (default 1)");
  sub->add_option("--report", c->report_dir,
                  "write the SVG heatmap and HTML report into DIR (without it, no files)");
  sub->add_option("--output", c->output, "write the JSON document to FILE");
  sub->add_flag("--no-report", c->no_report, "write no SVG/HTML files, even with --report");
  sub->add_option("--compare", c->compare, "compare two --json documents: BEFORE AFTER")
      ->expected(2);
  runners[sub] = [c](Streams io) {
    return c->compare.empty() ? RunMeasure(*c, io) : RunCompare(*c, io);
  };
}

}  // namespace partalign
