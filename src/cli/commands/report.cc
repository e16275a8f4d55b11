// SPDX-License-Identifier: GPL-3.0-or-later
// partalign report TARGET -o FILE: one self-contained page about a disk - probe and its
// warnings, explain, audit, the plan with an SVG disk map before and after, optionally a short
// benchmark (--bench) or a saved one (--bench-json) with its heatmap, and the comparison with a
// snapshot (--against). HTML (no external resources, a Content-Security-Policy, no script) or
// Markdown. Written atomically; never to a block device; never writes to TARGET. Exit 0 when
// the report is written, 1 on an error (docs/report.md).
#include <chrono>
#include <ostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/advice/plan_advice.h"
#include "cli/bench/bench_output.h"
#include "cli/bench/bench_progress.h"
#include "cli/commands.h"
#include "cli/content/content_proof.h"
#include "cli/content/sleeping_systems.h"
#include "cli/migrate/verify_target.h"
#include "cli/move/unfinished_move.h"
#include "cli/room/make_room.h"
#include "cli/stack/disk_stacks.h"
#include "cli/target/load_disk.h"
#include "cli/target/target_options.h"
#include "io/bench/bench_session.h"
#include "io/tools/fdisk_alignment.h"
#include "io/tools/tool_versions.h"
#include "io/util/text_file.h"
#include "partalign/bench/bench_plan.h"
#include "partalign/layout/layout_preview.h"
#include "partalign/layout/planner.h"
#include "partalign/report/report_render.h"
#include "partalign/topology/alignment.h"

namespace partalign {
namespace {

// --bench: a short run - a 2 x 4 grid (512 and 4096-byte blocks at each offset alignment up to
// 4096) plus the sequential and deep-queue cells, in a few seconds. `partalign bench` runs the
// full grid for 10 s.
constexpr double kDefaultReportBenchSeconds = 4;
const GridSpec kReportBenchGrid{{512, 4096}, {512, 1024, 2048, 4096}};

struct ReportCommand {
  TargetOptions target;
  std::string output;
  std::string format = "html";
  std::optional<std::string> grain;
  bool bench = false;
  double bench_seconds = kDefaultReportBenchSeconds;
  std::optional<std::string> bench_json;
  std::optional<std::string> against;
  ContentOptions content;  ///< --discard, --no-scan, --make-room: as plan takes them
};

// The short benchmark of --bench on the whole target, reads only.
Result<BenchReport> RunShortBench(const ReportCommand& c, Streams io) {
  BenchSession session;
  session.path = c.target.target;
  session.cells = DefaultCells(BenchOp::kRead, kReportBenchGrid);
  session.access = BenchAccess::kRead;
  session.seconds = c.bench_seconds;
  session.time_options = "--bench-seconds";
  session.started = std::chrono::steady_clock::now();
  Result<BenchOutcome> outcome = [&] {
    BenchProgressLine progress(io.err, fmt::format("'{}' for the report", session.path),
                               session.seconds);
    session.progress = progress.Callback();
    return RunBenchSession(session);
  }();
  if (!outcome) return outcome.error();
  if (!outcome->fallback_reason.empty()) {
    PrintWarning(io.err, outcome->fallback_reason + "; using pread/pwrite");
  }
  outcome->report.elapsed_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - session.started).count();
  return std::move(outcome->report);
}

ExitCode RunReport(const ReportCommand& c, Streams io) {
  if (c.bench && c.bench_json) {
    return Fail(io, "--bench runs a benchmark, --bench-json embeds a saved one: give one of them");
  }
  Result<std::optional<uint64_t>> grain = ParseGrain(c.grain);
  if (!grain) return Fail(io, grain.error().message);
  if (Status s = CheckReplaceableFile(c.output, "the report", c.target.target); !s) {
    return Fail(io, s.error().message);
  }
  // A saved benchmark is checked before the disk is read: a bad file fails fast.
  DiskReport r;
  if (c.bench_json) {
    Result<BenchReport> bench = ReadBenchResult(*c.bench_json);
    if (!bench) return Fail(io, bench.error().message);
    r.bench = std::move(*bench);
    r.bench_source = fmt::format("'{}'", *c.bench_json);
  }
  if (RefuseIfUnfinished(io, c.target.target, false)) return ExitCode::kUnfinished;
  Result<LoadedDisk> disk = LoadDisk(c.target, io);
  if (!disk) return Fail(io, disk.error().message);
  Result<AuditReport> audit = AuditLoadedDisk(*disk, c.target.target, *grain);
  if (!audit) return Fail(io, audit.error().message);

  r.target = c.target.target;
  r.device = disk->device;
  r.findings = disk->findings;
  r.assumed_profile = disk->probe_options.assume.profile;
  r.table = disk->table.table;
  r.audit = std::move(*audit);
  r.hibernation = SleepingLines(ScanForSleepingSystems(c.target.target, r.table));

  // explain, as `explain TARGET --no-cross-check` makes it (the live cross-check asks the
  // libraries about the device; the report describes the disk, not the libraries).
  std::vector<uint64_t> existing;
  if (r.device.table.label == LabelType::kGpt) {
    if (Result<std::vector<uint64_t>> starts = ReadGptPartitionStarts(c.target.target)) {
      existing = *starts;
    }
  }
  const ToolVersions tool_versions = DetectToolVersions();
  r.explain = BuildExplainReport(r.device, tool_versions, existing);
  if (std::optional<LayoutRequest> request = RequestOfTable(r.table)) {
    r.layouts = PreviewRequest(*request, r.device.topology, tool_versions);
  }

  if (c.bench) {
    Result<BenchReport> bench = RunShortBench(c, io);
    if (!bench) return Fail(io, bench.error().message);
    r.bench = std::move(*bench);
    r.bench_source = fmt::format("a short run of partalign bench ({:g} s)", c.bench_seconds);
  }
  if (c.against) {
    Result<VerifyOutcome> verified = VerifyTarget(c.target.target, disk->probe_options, *c.against);
    if (!verified) return Fail(io, verified.error().message);
    r.verify = std::move(verified->report);
    r.snapshot = std::move(verified->before);
    r.snapshot_path = *c.against;
  }

  // Last: the plan may read partitions in full to prove them empty (docs/audit-plan.md), which
  // a refusal of the inputs above should not wait for.
  const AlignmentRecommendation alignment = RecommendAlignment(r.device.topology, *grain);
  // --make-room: the plan plan --make-room makes, and what it says of the room
  // (cli/room/make_room.h).
  Result<Plan> plan = MakeError("no plan");
  if (c.content.make_room) {
    Result<MadeRoom> made =
        MakeRoomPlan(io, c.target.target, &r.table, r.device, alignment.alignment, c.content);
    plan = made ? Result<Plan>(std::move(made->plan)) : Result<Plan>(made.error());
    if (made) r.made_room = std::move(made->lines);
  } else {
    plan = MakeProvenPlan(io, c.target.target, &r.table, r.device, alignment.alignment, c.content);
  }
  if (plan) {
    r.plan = std::move(*plan);
    r.plan_advice = PlanFileAdviceFor(c.target, c.grain, std::nullopt, c.content);
    r.way_through = WayThroughLines(*r.plan, r.table, c.target, c.grain, c.content);
  } else {
    r.plan_error = plan.error().message;
  }

  const std::string page = c.format == "markdown" ? ReportMarkdown(r) : ReportHtml(r);
  if (Status s = WriteFileAtomically(c.output, page); !s) return Fail(io, s.error().message);
  io.out << fmt::format("report written to '{}'; nothing was written to '{}'\n", c.output,
                        c.target.target);
  return ExitCode::kOk;
}

}  // namespace

void AddReportCommand(CLI::App& app, CommandRunners& runners) {
  auto c = std::make_shared<ReportCommand>();
  CLI::App* sub = app.add_subcommand(
      "report",
      "write one self-contained page (HTML or Markdown): probe, explain, audit, the plan with a "
      "disk map, a benchmark, a snapshot comparison");
  AddTargetOptions(sub, &c->target, /*target_required=*/true, /*json=*/false);
  sub->add_option("-o,--output", c->output, "the file to write (replaced atomically)")->required();
  sub->add_option("--format", c->format, "html (default) or markdown")
      ->check(CLI::IsMember({"html", "markdown"}));
  AddGrainOption(sub, &c->grain);
  AddContentOptions(sub, &c->content);
  sub->add_flag("--make-room", c->content.make_room,
                "as plan --make-room: when aligned starts do not fit, the plan shrinks one "
                "partition's contents at its end by the few MiB needed, and the report shows it");
  sub->add_flag("--bench", c->bench,
                "run a short read-only benchmark of TARGET and show its heatmap");
  sub->add_option(
         "--bench-seconds", c->bench_seconds,
         fmt::format("--bench: seconds of the run (default {:g})", kDefaultReportBenchSeconds))
      ->check(CLI::PositiveNumber);
  sub->add_option("--bench-json", c->bench_json,
                  "embed a saved benchmark (a 'partalign bench --json' document) and its heatmap");
  sub->add_option("--against", c->against,
                  "compare with a snapshot (partalign snapshot), as 'partalign verify' does");
  runners[sub] = [c](Streams io) { return RunReport(*c, io); };
}

}  // namespace partalign
