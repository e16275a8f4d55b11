// partalign bench TARGET: a short O_DIRECT benchmark (the block size x offset alignment grid,
// sequential 1 MiB, random 4 KiB at QD1 and QD32) with intervals, the aligned-vs-misaligned
// comparison, and an SVG heatmap in an HTML report; --compare BEFORE AFTER compares two runs.
// The method is in docs/bench.md.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "io/bench_setup.h"
#include "io/smartcols_table.h"
#include "partalign/bench_render.h"
#include "partalign/bench_report.h"
#include "partalign/bench_runner.h"
#include "partalign/units.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;

// The default run's total wall time: "short" in product.md's benchmark method.
constexpr double kDefaultBudgetSeconds = 10.0;
// Share of the budget for the trials, drains included (the runner adapts the trial length to
// what trials really take). The rest covers opening the target, the io_uring set-up, the
// statistics and the report files; see docs/bench.md.
constexpr double kTrialShare = 0.92;
// Single-workload mode: trials of about this length, at least kMinRounds of them.
constexpr uint64_t kSingleTrialNs = 250'000'000;
constexpr double kDefaultDurationSeconds = 5.0;
// Fewer I/Os than this per trial make a trial's IOPS a coarse number: warn.
constexpr uint64_t kFewIosPerTrial = 20;
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
  double budget_seconds = kDefaultBudgetSeconds;
  std::string pattern;
  std::string block_size;
  std::string offset_align;
  uint32_t queue_depth = 0;  // 0: not given
  double duration_seconds = 0;
  bool write = false;
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

Status WriteTextFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  out.close();
  if (!out) return MakeError(fmt::format("cannot write '{}'", path));
  return {};
}

Result<nlohmann::json> ReadJsonFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ErrnoError(errno, fmt::format("cannot open '{}'", path));
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return MakeError(fmt::format("'{}' is not valid JSON", path));
  return j;
}

// Where the SVG and HTML go: --report DIR, else next to --output, else (human output only)
// the current directory. nullopt: no report files.
std::optional<std::string> ReportStem(const BenchCommand& c, const std::string& name) {
  if (c.no_report) return std::nullopt;
  if (!c.report_dir.empty()) return (fs::path(c.report_dir) / ("partalign-bench-" + name)).string();
  if (!c.output.empty()) return fs::path(c.output).replace_extension().string();
  if (c.json) return std::nullopt;
  return "partalign-bench-" + name;
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

// Writes the files and names them: on stdout with the human output, on stderr with --json.
Status WriteReports(const std::optional<std::string>& stem, const std::optional<Heatmap>& heatmap,
                    const std::string& html, std::ostream& names) {
  if (!stem) return {};
  if (heatmap) {
    const std::string svg = *stem + ".svg";
    if (Status s = WriteTextFile(svg, HeatmapSvg(*heatmap)); !s) return s;
    names << "heatmap: " << svg << '\n';
  }
  const std::string page = *stem + ".html";
  if (Status s = WriteTextFile(page, html); !s) return s;
  names << "report:  " << page << '\n';
  return {};
}

TextTable MakeTable(const std::vector<std::string>& columns, size_t left_columns) {
  std::vector<TextTable::Column> spec;
  for (size_t i = 0; i < columns.size(); ++i) spec.push_back({columns[i], i >= left_columns});
  return TextTable(spec);
}

ExitCode Fail(Streams io, const std::string& message) {
  PrintError(io.err, message);
  return ExitCode::kFailure;
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
    return DefaultCells(c.write, grid);
  }
  BenchCell cell;
  const std::string pattern = c.pattern.empty() ? "randread" : c.pattern;
  std::optional<IoPattern> parsed = ParseIoPattern(pattern);
  if (!parsed) {
    return MakeError(fmt::format(
        "--pattern: '{}' is not one of randread, seqread, randwrite, seqwrite", pattern));
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

// "partalign bench: '/dev/loop0' (disk, 1 GiB, 512-byte sectors), io_uring, ..."
std::string Headline(const BenchReport& r) {
  return fmt::format(
      "partalign bench: '{}' ({}, {}, {}-byte sectors), engine {}, {} rounds x {} cells of "
      "{:.1f} ms, seed {}, {:.1f} s",
      r.target.path, r.target.kind, FormatSize(r.target.size_bytes), r.target.logical_sector_size,
      r.settings.engine, r.settings.rounds, r.cells.size(), r.settings.trial_seconds * 1e3,
      r.settings.seed, r.elapsed_seconds);
}

ExitCode RunMeasure(const BenchCommand& c, Streams io) {
  const auto started = std::chrono::steady_clock::now();
  if (c.target.empty()) return Fail(io, "bench: TARGET is required (or --compare BEFORE AFTER)");
  Result<std::vector<BenchCell>> requested = CellsFromOptions(c);
  if (!requested) return Fail(io, requested.error().message);
  const bool writes = std::any_of(requested->begin(), requested->end(),
                                  [](const BenchCell& cell) { return IsWrite(cell.pattern); });
  if (writes && !c.write) {
    return Fail(io, fmt::format("--pattern {} writes to '{}'; add --write to allow it", c.pattern,
                                c.target));
  }
  std::optional<EngineChoice> choice = ParseEngineChoice(c.engine);
  if (!choice)
    return Fail(io, fmt::format("--engine: '{}' is not auto, io_uring or psync", c.engine));
  if (Status s = PrepareReportDir(c); !s) return Fail(io, s.error().message);

  BenchReport report;
  std::optional<BenchRange> range;
  if (writes) {
    Result<WriteDecision> decision = DecideWrite(c.target);
    if (!decision) return Fail(io, decision.error().message);
    if (decision->refusal) {
      PrintError(io.err, *decision->refusal);
      return ExitCode::kRefused;
    }
    range = decision->range;
    if (!decision->note.empty()) report.notes.push_back(decision->note);
  }
  Result<BenchTarget> target = OpenBenchTarget(c.target, writes, range);
  if (!target) return Fail(io, target.error().message);
  report.target = target->info;
  std::vector<BenchCell> skipped;
  std::vector<BenchCell> cells =
      CellsForSectorSize(*requested, target->info.logical_sector_size, &skipped);
  if (!skipped.empty()) {
    report.notes.push_back(fmt::format(
        "{} cells skipped: O_DIRECT on {}-byte sectors needs block sizes and offsets in whole "
        "sectors",
        skipped.size(), target->info.logical_sector_size));
  }
  if (cells.empty()) {
    return Fail(io,
                fmt::format("{}: O_DIRECT on '{}' needs multiples of its {}-byte sectors",
                            Describe(skipped.front()), c.target, target->info.logical_sector_size));
  }

  uint32_t max_depth = 1;
  uint64_t pool_bytes = 0;
  for (const BenchCell& cell : cells) {
    max_depth = std::max(max_depth, cell.queue_depth);
    pool_bytes = std::max(pool_bytes, cell.block_size * cell.queue_depth);
  }
  Result<BenchEngineSetup> engine = MakeBenchEngine(*choice, target->target, max_depth, pool_bytes);
  if (!engine) return Fail(io, engine.error().message);
  if (!engine->fallback_reason.empty()) {
    PrintWarning(io.err, engine->fallback_reason + "; using pread/pwrite");
  }

  PlanOptions options;
  options.seed = c.seed;
  if (c.SingleMode()) {
    const double duration = c.duration_seconds > 0 ? c.duration_seconds : kDefaultDurationSeconds;
    options.trial_budget_ns = static_cast<uint64_t>(duration * 1e9);
    options.preferred_trial_ns = kSingleTrialNs;
    report.settings = {"single", duration, c.seed, engine->engine->name(), 0, 0};
  } else {
    const double left = c.budget_seconds * kTrialShare - SecondsSince(started);
    options.trial_budget_ns = static_cast<uint64_t>(std::max(left, 0.0) * 1e9);
    report.settings = {"grid", c.budget_seconds, c.seed, engine->engine->name(), 0, 0};
  }
  Result<BenchPlan> plan = PlanBench(cells, options);
  if (!plan) return Fail(io, plan.error().message);
  Result<BenchMeasurements> measured = RunBench(*plan, target->range, *engine->engine);
  if (!measured) return Fail(io, measured.error().message);

  report.settings.rounds = measured->rounds;
  if (measured->rounds > 0) {
    report.settings.trial_seconds = static_cast<double>(measured->planned_ns) / 1e9 /
                                    (measured->rounds * static_cast<double>(cells.size()));
  }
  for (const CellMeasurement& m : measured->cells) {
    report.cells.push_back(Summarize(m));
    if (measured->rounds > 0 && m.ios / measured->rounds < kFewIosPerTrial) {
      report.notes.push_back(fmt::format(
          "{}: only {} I/Os per trial; a slow device needs a larger --budget or --duration",
          Describe(m.cell), m.ios / measured->rounds));
    }
  }
  AddAlignmentAnalysis(report);
  for (const std::string& note : report.notes) PrintWarning(io.err, note);

  const std::string name = fs::path(c.target).filename().string();
  std::optional<std::string> stem = ReportStem(c, name);
  std::optional<Heatmap> heatmap =
      AlignmentHeatmap(report, fmt::format("{}: median IOPS by block size and offset", name));
  report.elapsed_seconds = SecondsSince(started);

  if (Status s = EmitJson(c, BenchJson(report), io); !s) return Fail(io, s.error().message);
  if (!c.json) {
    io.out << Headline(report) << '\n';
    TextTable table = MakeTable(CellColumns(), 1);
    for (const auto& row : CellRows(report)) table.AddRow(row);
    io.out << table.Render();
    if (!report.alignment.empty()) {
      io.out << fmt::format(
          "VS-ALIGNED: change of IOPS against offset alignment {} of the same block size, with "
          "simultaneous 95% intervals over {} comparisons (each at {:.3f}%); * = significant\n",
          report.alignment.front().reference.offset_align, report.alignment.size(),
          report.alignment.front().change.confidence * 100);
    }
    io.out << "IOPS-95%CI: distribution-free 95% interval of the median over the trials\n";
    if (!report.summary.empty()) io.out << "summary: " << report.summary << '\n';
  }
  if (Status s = WriteReports(stem, heatmap, BenchHtml(report), c.json ? io.err : io.out); !s) {
    return Fail(io, s.error().message);
  }
  return ExitCode::kOk;
}

ExitCode RunCompare(const BenchCommand& c, Streams io) {
  if (!c.target.empty()) return Fail(io, "bench: --compare takes no TARGET");
  std::vector<BenchReport> reports;
  for (const std::string& path : c.compare) {
    Result<nlohmann::json> j = ReadJsonFile(path);
    if (!j) return Fail(io, j.error().message);
    Result<BenchReport> r = ParseBenchJson(*j, path);
    if (!r) return Fail(io, r.error().message);
    reports.push_back(std::move(*r));
  }
  Result<BenchComparison> cmp = CompareReports(reports[0], reports[1], c.compare[0], c.compare[1]);
  if (!cmp) return Fail(io, cmp.error().message);
  if (Status s = PrepareReportDir(c); !s) return Fail(io, s.error().message);
  if (Status s = EmitJson(c, ComparisonJson(*cmp), io); !s) return Fail(io, s.error().message);
  if (!c.json) {
    io.out << fmt::format(
        "partalign bench --compare: '{}' -> '{}', {} cells, simultaneous 95% intervals "
        "(Bonferroni, each at {:.2f}%)\n",
        c.compare[0], c.compare[1], cmp->cells.size(), cmp->cells.front().change.confidence * 100);
    TextTable table = MakeTable(ComparisonColumns(), 1);
    for (const auto& row : ComparisonRows(*cmp)) table.AddRow(row);
    io.out << table.Render();
    for (const std::string& u : cmp->unmatched) io.out << "not compared: " << u << '\n';
    io.out << "summary: " << cmp->summary << '\n';
  }
  if (Status s = WriteReports(ReportStem(c, "compare"), ChangeHeatmap(*cmp), ComparisonHtml(*cmp),
                              c.json ? io.err : io.out);
      !s) {
    return Fail(io, s.error().message);
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
                  "single workload: randread, seqread, randwrite or seqwrite");
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
  sub->add_option("--engine", c->engine, "auto, io_uring or psync (default auto)");
  sub->add_option("--seed", c->seed, "seed of the offsets and the trial order (default 1)");
  sub->add_option("--report", c->report_dir, "write the SVG heatmap and HTML report into DIR");
  sub->add_option("--output", c->output,
                  "write the JSON document to FILE, and the SVG/HTML next to it");
  sub->add_flag("--no-report", c->no_report, "write no SVG/HTML files");
  sub->add_option("--compare", c->compare, "compare two --json documents: BEFORE AFTER")
      ->expected(2);
  runners[sub] = [c](Streams io) {
    return c->compare.empty() ? RunMeasure(*c, io) : RunCompare(*c, io);
  };
}

}  // namespace partalign
