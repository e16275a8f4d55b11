// SPDX-License-Identifier: GPL-3.0-or-later
// partalign plan TARGET: the smallest change that aligns every partition (or, with --layout,
// a fresh aligned table for an empty disk), rendered as text with a disk map, Markdown, JSON
// (the plan file) or an sfdisk script; -o writes the plan file for `partalign apply`. Never
// writes to TARGET.

#include <unistd.h>

#include <ostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/advice/plan_advice.h"
#include "cli/commands.h"
#include "cli/content/content_proof.h"
#include "cli/content/sleeping_systems.h"
#include "cli/interactive/planner_session.h"
#include "cli/move/unfinished_move.h"
#include "cli/room/make_room.h"
#include "cli/stack/disk_stacks.h"
#include "cli/target/load_disk.h"
#include "cli/target/target_options.h"
#include "io/boot/boot_records.h"
#include "io/device/in_use.h"
#include "io/device/target.h"
#include "io/table/backup_file.h"
#include "io/util/smartcols_table.h"
#include "io/util/text_file.h"
#include "partalign/boot/boot_disk.h"
#include "partalign/layout/layout_spec.h"
#include "partalign/layout/plan_render.h"
#include "partalign/layout/planner.h"
#include "partalign/stack/stack_advice.h"
#include "partalign/stack/stack_check.h"
#include "partalign/topology/alignment.h"

namespace partalign {
namespace {

struct PlanCommand {
  TargetOptions target;
  std::optional<std::string> grain;
  std::string output;
  std::string format = "text";
  std::optional<std::string> layout;
  bool interactive = false;   ///< --interactive: the terminal planner
  std::string label = "gpt";  ///< --label: the table the planner starts on an empty disk
  std::string backup_dir = DefaultBackupDir();  ///< --backup-dir: where the planner's w writes
  ContentOptions content;                       ///< --discard, --no-scan
};

void PrintText(const Plan& plan, const PartitionTable& table, Streams io) {
  io.out << PlanHeadline(plan) << '\n';
  std::vector<TextTable::Column> columns;
  for (const std::string& name : PlanColumns()) {
    columns.push_back({name, name != "KIND"});
  }
  TextTable out(columns);
  for (std::vector<std::string>& row : PlanRows(plan)) out.AddRow(std::move(row));
  io.out << out.Render();
  for (const PlanAction& a : plan.actions) {
    io.out << fmt::format("partition {}: {}: {}\n", a.partition, ToString(a.kind), a.reason);
  }
  if (plan.relocate_backup_gpt) io.out << DescribeRelocation(*plan.relocate_backup_gpt) << '\n';
  if (std::optional<std::string> tail = DescribeFreeTail(plan, table)) io.out << *tail << '\n';
  if (!plan.layout) io.out << PlanSummary(plan) << '\n';
  io.out << '\n';
  for (const std::string& line : DiskMap(plan, table)) io.out << line << '\n';
}

// What the plan cannot fix inside the partitions' stacks, and what its moves fix
// (docs/stack.md): one line per misaligned layer, with the command that would fix it.
Result<std::vector<std::string>> StackAdviceFor(const Plan& plan, const LoadedDisk& disk,
                                                const std::string& path) {
  Result<DiskStacks> stacks = ReadDiskStacks(disk, path);
  if (!stacks) return stacks.error();
  const Topology& t = disk.device.topology;
  const uint64_t ss = disk.table.table.sector_size;
  const StackCheckOptions options{plan.alignment.grain_bytes, stacks->lvm2_version};
  std::vector<StackAdvice> advice;
  for (auto& [number, walk] : stacks->partitions) {
    const Partition* p = disk.table.table.Find(number);
    if (p == nullptr) continue;
    CheckStack(&walk, t, p->start_sector * ss, options);
    std::optional<uint64_t> new_start;
    for (const PlanAction& a : plan.actions) {
      if (a.partition == number && a.new_start_sector != a.old_start_sector &&
          a.kind != ActionKind::kImpossible) {
        new_start = a.new_start_sector * ss;
      }
    }
    std::vector<StackAdvice> more =
        AdviseStack(walk, t, number, p->start_sector * ss, new_start, plan.alignment.grain_bytes);
    advice.insert(advice.end(), more.begin(), more.end());
  }
  if (stacks->whole_disk) {
    CheckStack(&*stacks->whole_disk, t, 0, options);
    std::vector<StackAdvice> more =
        AdviseStack(*stacks->whole_disk, t, 0, 0, std::nullopt, plan.alignment.grain_bytes);
    advice.insert(advice.end(), more.begin(), more.end());
  }
  return StackAdviceLines(advice);
}

// One line per user of the disk: whether apply may leave it in use (the plan neither changes the
// partition nor writes its bytes) or needs it released first. A fresh layout changes all.
Result<std::vector<std::string>> InUseLines(const Plan& plan, const std::string& path,
                                            bool fresh_layout) {
  Result<std::vector<DiskUser>> users = FindDiskUsers(path);
  if (!users) return users.error();
  WriteScope scope;
  scope.whole_disk = fresh_layout;
  const uint64_t ss = plan.disk.logical_sector_size;
  for (const PlanAction& a : plan.actions) {
    if (a.kind != ActionKind::kTableOnly && a.kind != ActionKind::kMoveData) continue;
    scope.partitions.push_back(a.partition);
    if (a.kind == ActionKind::kMoveData) {
      scope.bytes.push_back(
          {a.old_start_sector * ss, (a.old_end_sector + 1 - a.old_start_sector) * ss});
      scope.bytes.push_back(
          {a.new_start_sector * ss, (a.new_end_sector + 1 - a.new_start_sector) * ss});
    }
  }
  std::vector<std::string> lines;
  for (const DiskUser& u : *users) {
    const bool changed = Blocks(u, scope);
    lines.push_back(
        Describe(u) +
        (!changed ? ": stays in use; the plan neither moves it nor writes its bytes, and apply "
                    "leaves it alone"
         : plan.at_next_boot && u.partition != 0
             ? ": the plan changes it at the next boot, before anything mounts it ('apply "
               "--at-next-boot' stages it)"
             : ": the plan changes it; apply refuses until it is released"));
  }
  return lines;
}

ExitCode RunPlan(const PlanCommand& command, Streams io) {
  // A plan of a half-moved disk would move its data again from the wrong place.
  if (!command.target.target.empty() &&
      RefuseIfUnfinished(io, command.target.target,
                         command.target.json || command.format == "json")) {
    return ExitCode::kUnfinished;
  }
  if (command.interactive) {
    if (command.layout || !command.output.empty() || command.target.json ||
        command.format != "text" || command.content.make_room || command.content.at_next_boot) {
      PrintError(io.err,
                 "plan --interactive takes no --layout, -o, --format, --json, --make-room or "
                 "--at-next-boot");
      return ExitCode::kFailure;
    }
    if (!command.content.discard.empty() && (!::isatty(STDIN_FILENO) || !::isatty(STDOUT_FILENO))) {
      // Without a terminal, the plan file that gives them up, for this disk and these
      // partitions.
      PrintError(io.err, fmt::format("plan --interactive needs a terminal; without one, a "
                                     "partition's contents are given up with '{}', then applied",
                                     PlanFileAdviceFor(command.target, command.grain, std::nullopt,
                                                       command.content)
                                         .command));
      return ExitCode::kFailure;
    }
    return RunPlannerSession(
        command.target, command.label == "dos" ? LabelType::kDos : LabelType::kGpt,
        command.backup_dir, !command.content.no_scan, io, command.content.discard);
  }
  std::string format = command.format;
  if (command.target.json) {
    if (format != "text" && format != "json") {
      PrintError(io.err, "--json and --format " + format + " contradict each other");
      return ExitCode::kFailure;
    }
    format = "json";
  }
  Result<std::optional<uint64_t>> grain = ParseGrain(command.grain);
  if (!grain) {
    PrintError(io.err, grain.error().message);
    return ExitCode::kFailure;
  }
  Result<std::optional<LayoutSpec>> parsed = ParseOptionalLayoutSpec(command.layout);
  if (!parsed) {
    PrintError(io.err, parsed.error().message);
    return ExitCode::kFailure;
  }
  const std::optional<LayoutSpec>& spec = *parsed;
  // plan --json (and -o) of the disk's own table prints the plan alone: the partitions'
  // contents are read only if they can change it (MakeProvenPlan).
  const bool plan_alone = format == "json" && !spec && !command.content.make_room;
  // Held open from before the disk is read to the end, as audit does: a block device's page
  // cache is emptied at its last close, and the sleeping-system and boot-record scans below read
  // again the first sectors of the partitions libblkid has just read. Only a holder: what cannot
  // be opened is reported by LoadDisk.
  [[maybe_unused]] const Result<Target> holder = OpenTarget(command.target.target);
  Result<LoadedDisk> disk = LoadDisk(command.target, io, !plan_alone);
  if (!disk) {
    PrintError(io.err, disk.error().message);
    return ExitCode::kFailure;
  }
  PartitionTable& table = disk->table.table;
  if (Status fits = CheckGrainFits(disk->device.topology, *grain); !fits) {
    PrintError(io.err, fmt::format("'{}': {}", command.target.target, fits.error().message));
    return ExitCode::kFailure;
  }
  const AlignmentRecommendation alignment = RecommendAlignment(disk->device.topology, *grain);
  if (spec && !command.content.discard.empty()) {
    PrintError(io.err, "plan --layout makes a fresh table: --discard does not apply");
    return ExitCode::kFailure;
  }
  if (spec && table.label == LabelType::kNone) {
    if (Status s = CheckNothingOnTheWholeDisk(command.target.target, table.sector_size); !s) {
      PrintError(io.err, s.error().message);
      return ExitCode::kFailure;
    }
  }
  if (spec && command.content.make_room) {
    PrintError(io.err, "plan --layout makes a fresh table: --make-room does not apply");
    return ExitCode::kFailure;
  }
  if (spec && command.content.at_next_boot) {
    PrintError(io.err, "plan --layout makes a fresh table: --at-next-boot does not apply");
    return ExitCode::kFailure;
  }
  // --make-room: the least invasive shrink that aligns more (cli/room/make_room.h).
  std::vector<std::string> made_room;
  Result<Plan> plan = MakeError("no plan");
  if (spec) {
    plan = MakeLayoutPlan(*spec, table, disk->device, alignment.alignment);
  } else if (command.content.make_room) {
    Result<MadeRoom> made = MakeRoomPlan(io, command.target.target, &table, disk->device,
                                         alignment.alignment, command.content);
    plan = made ? Result<Plan>(std::move(made->plan)) : Result<Plan>(made.error());
    if (made) made_room = std::move(made->lines);
  } else {
    plan = MakeProvenPlan(io, command.target.target, &table, disk->device, alignment.alignment,
                          command.content, {}, &disk->table.contents_probed);
  }
  if (!plan) {
    PrintError(io.err, fmt::format("'{}': {}", command.target.target, plan.error().message));
    return ExitCode::kFailure;
  }
  // A hibernated system on the disk (docs/used-map.md): the plan is made, and says that apply
  // will refuse it until the system has resumed and shut down.
  const SleepScan sleeping =
      ScanForSleepingSystems(command.target.target, table, disk->table.contents_probed);
  // The records outside the table that name a moved partition's place (docs/boot-records.md):
  // what apply will update with each move, or why it will refuse.
  std::vector<std::string> boot;
  if (!spec && (format == "text" || format == "markdown")) {
    Result<Target> target = OpenTarget(command.target.target);
    Result<BootReport> report =
        target ? ScanBootRecords(target->fd.get(), command.target.target, target->size_bytes,
                                 BootDiskFromTable(table), MovesFromPlan(*plan))
               : Result<BootReport>(target.error());
    if (!report) {
      PrintError(io.err, report.error().message);
      return ExitCode::kFailure;
    }
    boot = BootReportLines(*report);
  }
  // Who uses the disk, and whether apply may leave them (issue #29): what stays in use and what
  // must be released first.
  std::vector<std::string> in_use;
  if (format == "text" || format == "markdown") {
    Result<std::vector<std::string>> lines =
        InUseLines(*plan, command.target.target, spec.has_value());
    if (!lines) {
      PrintError(io.err, lines.error().message);
      return ExitCode::kFailure;
    }
    in_use = std::move(*lines);
  }
  std::vector<std::string> advice;
  if (!spec && (format == "text" || format == "markdown")) {
    Result<std::vector<std::string>> lines = StackAdviceFor(*plan, *disk, command.target.target);
    if (!lines) {
      PrintError(io.err, lines.error().message);
      return ExitCode::kFailure;
    }
    advice = std::move(*lines);
  }
  std::vector<std::string> way_through;
  if (!spec && (format == "text" || format == "markdown")) {
    way_through = WayThroughLines(*plan, table, command.target, command.grain, command.content);
  }
  const std::vector<std::string> hibernated = SleepingLines(sleeping);
  auto plan_json = [&] {
    nlohmann::json doc = PlanToJson(*plan);
    if (sleeping.asleep()) doc["sleeping_systems"] = SleepingJson(sleeping);
    return doc.dump(2) + "\n";
  };
  std::string rendered;
  if (format == "json") {
    rendered = plan_json();
  } else if (format == "markdown") {
    rendered = RenderPlanMarkdown(
        *plan, table,
        PlanFileAdviceFor(command.target, command.grain, command.layout, command.content,
                          command.output.empty() ? "plan.json" : command.output));
    if (!hibernated.empty()) {
      rendered += "\n## Hibernation\n\n";
      for (const std::string& line : hibernated) rendered += "- " + line + "\n";
    }
    if (!made_room.empty()) {
      rendered += "\n## Make room\n\n";
      for (const std::string& line : made_room) rendered += "- " + line + "\n";
    }
    if (!way_through.empty()) {
      rendered += "\n## Way through\n\n";
      for (const std::string& line : way_through) rendered += "- " + line + "\n";
    }
    if (!in_use.empty()) {
      rendered += "\n## In use\n\n";
      for (const std::string& line : in_use) rendered += "- " + line + "\n";
    }
    if (!boot.empty()) {
      rendered += "\n## Boot records\n\n";
      for (const std::string& line : boot) rendered += "- " + line + "\n";
    }
    if (!advice.empty()) {
      rendered += "\n## Inside the partitions\n\n";
      for (const std::string& line : advice) rendered += "- " + line + "\n";
    }
  } else if (format == "sfdisk") {
    Result<std::string> script = RenderSfdiskScript(*plan, table);
    if (!script) {
      PrintError(io.err, script.error().message);
      return ExitCode::kFailure;
    }
    rendered = *script;
  }
  if (!command.output.empty()) {
    if (Status s = WriteFileAtomically(command.output, plan_json()); !s) {
      PrintError(io.err, s.error().message);
      return ExitCode::kFailure;
    }
  }
  if (format == "text") {
    PrintText(*plan, table, io);
    if (!hibernated.empty()) {
      io.out << "\nhibernation:\n";
      for (const std::string& line : hibernated) io.out << line << '\n';
    }
    if (!made_room.empty()) {
      io.out << '\n';
      for (const std::string& line : made_room) io.out << line << '\n';
    }
    if (!way_through.empty()) {
      io.out << '\n';
      for (const std::string& line : way_through) io.out << line << '\n';
    }
    if (!in_use.empty()) {
      io.out << "\nin use:\n";
      for (const std::string& line : in_use) io.out << line << '\n';
    }
    if (!boot.empty()) {
      io.out << "\nboot records:\n";
      for (const std::string& line : boot) io.out << line << '\n';
    }
    if (!advice.empty()) {
      io.out << "\ninside the partitions:\n";
      for (const std::string& line : advice) io.out << line << '\n';
    }
    if (!command.output.empty()) {
      io.out << fmt::format("\nplan file written to '{}'; nothing was written to '{}'\n",
                            command.output, command.target.target);
    }
  } else {
    io.out << rendered;
  }
  return ExitCode::kOk;
}

}  // namespace

void AddPlanCommand(CLI::App& app, CommandRunners& runners) {
  auto command = std::make_shared<PlanCommand>();
  CLI::App* sub = app.add_subcommand(
      "plan", "propose the smallest change that aligns every partition (writes nothing)");
  AddTargetOptions(sub, &command->target);
  AddGrainOption(sub, &command->grain);
  sub->add_option("-o,--output", command->output, "write the plan file (JSON) for 'apply'");
  sub->add_option("--format", command->format, "text (default), markdown, json or sfdisk")
      ->check(CLI::IsMember({"text", "markdown", "json", "sfdisk"}));
  sub->add_option("--layout", command->layout,
                  "plan a fresh table for an empty disk: 'size=512M,type=uefi;type=linux' ...");
  AddContentOptions(sub, &command->content);
  sub->add_flag("--make-room", command->content.make_room,
                "when aligned starts do not fit, shrink one partition's contents at its end by "
                "the few MiB needed (the least invasive: a swap area, then a filesystem by its "
                "own tool); apply asks for --make-room again");
  sub->add_flag("--at-next-boot", command->content.at_next_boot,
                "plan the partitions the running system uses (its root, /boot) like the others, "
                "to be moved at the next boot before anything mounts them: apply --at-next-boot "
                "stages the plan (docs/at-boot.md)");
  sub->add_flag("--interactive", command->interactive,
                "the full-screen planner (keys: ? in it); needs a terminal");
  sub->add_option("--label", command->label,
                  "--interactive on a disk without partitions: gpt (default) or dos")
      ->check(CLI::IsMember({"gpt", "dos"}));
  sub->add_option("--backup-dir", command->backup_dir,
                  "--interactive: where w keeps the plan it applies and apply its table backup "
                  "(default: " +
                      DefaultBackupDir() + ")");
  runners[sub] = [command](Streams io) { return RunPlan(*command, io); };
}

}  // namespace partalign
