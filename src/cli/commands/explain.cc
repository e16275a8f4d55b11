// SPDX-License-Identifier: GPL-3.0-or-later
// partalign explain TARGET: what parted, fdisk/sfdisk, gdisk/sgdisk and systemd-repart will do
// on this disk (grain, offset, first partition on a fresh GPT and DOS label, warnings), why,
// what the installers (YaST, Anaconda, Calamares, Ubuntu) will do, a live cross-check of the
// models against the libparted and libfdisk linked into partalign, and where pvcreate and
// cryptsetup put their data (docs/stack.md). Never writes.
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <ostream>

#include "cli/commands.h"
#include "cli/target/target_options.h"
#include "io/device/device_probe.h"
#include "io/tools/fdisk_alignment.h"
#include "io/tools/parted_alignment.h"
#include "io/tools/stack_tool_versions.h"
#include "io/tools/tool_versions.h"
#include "io/util/smartcols_table.h"
#include "partalign/layout/layout_preview.h"
#include "partalign/stack/stack_predictions.h"
#include "partalign/tools/explain_report.h"
#include "partalign/tools/installers/installer_report.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

struct ExplainCommand {
  TargetOptions target;
  std::string size;
  std::string label = "gpt";
  std::vector<std::string> tool_versions;
  std::vector<std::string> installer_versions;
  bool no_cross_check = false;
  std::optional<std::string> layout;  ///< --layout SPEC: every tool's placement of a layout
};

// Applies `--tool-version` or `--installer-version` items to `versions`.
template <typename Versions, typename Parse>
Result<Versions> ApplyOverrides(Versions versions, const std::vector<std::string>& overrides,
                                std::string_view option, VersionSource source, Parse parse) {
  for (const std::string& item : overrides) {
    auto o = parse(item);
    if (!o) return MakeError(fmt::format("{}: {}", option, o.error().message));
    versions.For(o->first) = ResolvedVersion{o->second, source};
  }
  return versions;
}

// The device to explain: a probed TARGET, or with --size alone a hypothetical block device
// reporting the default (or --assume'd) topology.
Result<DeviceInfo> LoadDevice(const ExplainCommand& command, const ProbeOptions& options) {
  if (!command.target.target.empty()) return ProbeTarget(command.target.target, options);
  DeviceInfo device;
  device.identity.transport = Transport::kUnknown;
  uint64_t lbs = options.assume.logical_sector_size.value_or(512);
  Result<Topology> t = ApplyOverride(DefaultTopology(lbs, 0), options.assume);
  if (!t) return MakeError(fmt::format("hypothetical disk: {}", t.error().message));
  device.topology = *t;
  return device;
}

// Asks the linked libparted and libfdisk about TARGET and compares with the models on the
// topology those libraries see: the kernel's (or an image's defaults), never an assumed one.
CrossCheck RunCrossCheck(const ExplainCommand& command, const DeviceInfo& device,
                         const ProbeOptions& options) {
  const std::string& path = command.target.target;
  Topology seen = device.topology;
  std::string note;
  if (!options.assume.empty()) {
    ProbeOptions plain = options;
    plain.assume = TopologyOverride();
    if (Result<DeviceInfo> real = ProbeTarget(path, plain)) seen = real->topology;
    note = device.identity.is_block_device
               ? "on the kernel's topology: the libraries do not see --assume"
               : "on the image's defaults: the libraries do not see --assume";
  }
  LiveAlignment live;
  QueryPartedAlignment(path, &live);
  QueryFdiskAlignment(path, &live);
  CrossCheck check = CompareWithModels(live, seen);
  check.note = note;
  return check;
}

std::string TopologyLine(const ExplainReport& r) {
  const Topology& t = r.device.topology;
  std::string where = r.hypothetical ? "hypothetical disk" : r.device.identity.path;
  return fmt::format(
      "{}: {} ({} sectors of {}); physical {}, minimum I/O {}, optimal I/O {}, alignment offset "
      "{} ({})",
      where, FormatSize(t.size_bytes), t.size_sectors(), t.logical_sector_size,
      t.physical_sector_size, t.minimum_io_size, t.optimal_io_size, t.alignment_offset,
      ToString(t.origin));
}

void PrintStackSection(const std::vector<StackToolPrediction>& stack, std::ostream& out) {
  out << "\ninside a partition (docs/stack.md):\n";
  TextTable table({{"TOOL"},
                   {"VERSION"},
                   {"DISK-DATA", true},
                   {"ALIGNED"},
                   {"IN-PARTITION", true},
                   {"ALIGNED"}});
  for (std::vector<std::string>& row : StackPredictionRows(stack)) table.AddRow(std::move(row));
  out << table.Render();
  for (const std::string& line : StackPredictionLines(stack)) out << line << '\n';
}

void PrintHuman(const ExplainReport& r, const std::string& profile, std::ostream& out) {
  out << r.sentence << '\n';
  out << "why:\n";
  for (const std::string& why : r.why) out << "  " << why << '\n';
  out << '\n' << TopologyLine(r) << '\n';
  if (!profile.empty()) out << fmt::format("assumed topology: profile '{}'\n", profile);
  for (const TopologyFinding& f : r.findings) out << "warning: " << f.message << '\n';
  out << '\n';
  TextTable table({{"TOOL"},
                   {"VERSION"},
                   {"GRAIN", true},
                   {"OFFSET", true},
                   {"FIRST-GPT", true},
                   {"FIRST-DOS", true},
                   {"WARNS-AT-1MIB"}});
  for (std::vector<std::string>& row : ExplainTableRows(r)) table.AddRow(std::move(row));
  out << table.Render() << '\n';
  for (const std::string& line : ExplainDetailLines(r)) out << line << '\n';
  out << "\ninstallers (their partitioners do not run here; modelled from their sources):\n";
  for (const std::string& line :
       InstallerSummaryLines(r.installer_predictions, r.device.topology)) {
    out << "  " << line << '\n';
  }
  out << '\n';
  TextTable installers({{"INSTALLER"},
                        {"VERSION"},
                        {"GRAIN", true},
                        {"OFFSET", true},
                        {"FIRST-GPT", true},
                        {"FIRST-DOS", true},
                        {"WARNS-AT-1MIB"}});
  for (std::vector<std::string>& row : PredictionRows(r.installer_predictions)) {
    installers.AddRow(std::move(row));
  }
  out << installers.Render() << '\n';
  for (const std::string& line : InstallerDetailLines(r.installer_predictions)) {
    out << line << '\n';
  }
}

void PrintLayoutPreview(const LayoutPreview& preview, const std::string& spec, std::ostream& out) {
  out << fmt::format("\nlayout '{}' ({}): where each tool puts it\n", spec,
                     preview.request.label == LabelType::kGpt ? "GPT" : "DOS");
  std::vector<TextTable::Column> columns;
  for (const std::string& name : LayoutPreviewColumns()) {
    columns.push_back({name, name != "TOOL" && name != "KIND" && name != "ALIGNED"});
  }
  TextTable table(columns);
  for (std::vector<std::string>& row : LayoutPreviewRows(preview)) table.AddRow(std::move(row));
  out << table.Render() << '\n';
  for (const std::string& line : LayoutPreviewLines(preview)) out << line << '\n';
}

ExitCode RunExplain(const ExplainCommand& command, Streams io) {
  Result<ProbeOptions> options = MakeProbeOptions(command.target);
  if (!options) {
    PrintError(io.err, options.error().message);
    return ExitCode::kFailure;
  }
  if (!command.size.empty()) {
    Result<uint64_t> size = ParseSize(command.size);
    if (!size || *size == 0) {
      PrintError(io.err, fmt::format("--size: '{}' is not a size", command.size));
      return ExitCode::kFailure;
    }
    if (options->assume.size_bytes && *options->assume.size_bytes != *size) {
      PrintError(io.err, "--size and --assume size= disagree");
      return ExitCode::kFailure;
    }
    options->assume.size_bytes = *size;
  }
  if (command.target.target.empty() && command.size.empty()) {
    PrintError(io.err, "explain: TARGET is required (or --size for a hypothetical disk)");
    return ExitCode::kFailure;
  }
  Result<std::optional<LayoutSpec>> parsed = ParseOptionalLayoutSpec(command.layout);
  if (!parsed) {
    PrintError(io.err, parsed.error().message);
    return ExitCode::kFailure;
  }
  const std::optional<LayoutSpec>& spec = *parsed;
  LabelType label = command.label == "dos" ? LabelType::kDos : LabelType::kGpt;
  // lvm2 and cryptsetup have eras of their own (partalign/tools/stack_tool_version.h).
  std::vector<std::string> partitioner_items, stack_items;
  for (const std::string& item : command.tool_versions) {
    (IsStackToolOverride(item) ? stack_items : partitioner_items).push_back(item);
  }
  Result<ToolVersions> versions =
      ApplyOverrides(DetectToolVersions(), partitioner_items, "--tool-version",
                     VersionSource::kUserOverride, ParseToolVersionOverride);
  if (!versions) {
    PrintError(io.err, versions.error().message);
    return ExitCode::kFailure;
  }
  Result<StackToolVersions> stack_versions =
      ApplyOverrides(DetectStackToolVersions(), stack_items, "--tool-version",
                     VersionSource::kUserOverride, ParseStackToolVersionOverride);
  if (!stack_versions) {
    PrintError(io.err, stack_versions.error().message);
    return ExitCode::kFailure;
  }
  Result<InstallerVersions> installers = ApplyOverrides(
      NewestKnownInstallerVersions(), command.installer_versions, "--installer-version",
      VersionSource::kInstallerOverride, ParseInstallerVersionOverride);
  if (!installers) {
    PrintError(io.err, installers.error().message);
    return ExitCode::kFailure;
  }
  Result<DeviceInfo> device = LoadDevice(command, *options);
  if (!device) {
    PrintError(io.err, device.error().message);
    return ExitCode::kFailure;
  }
  std::vector<uint64_t> existing;
  if (!command.target.target.empty() && device->table.label == LabelType::kGpt) {
    if (Result<std::vector<uint64_t>> starts = ReadGptPartitionStarts(command.target.target)) {
      existing = *starts;
    }
  }
  ExplainReport report = BuildExplainReport(*device, *versions, existing, label, *installers);
  report.hypothetical = command.target.target.empty();
  if (!report.hypothetical && !command.no_cross_check) {
    report.cross_check = RunCrossCheck(command, *device, *options);
    for (const CrossCheckItem& i : report.cross_check->items) {
      if (!i.match) {
        PrintWarning(io.err, fmt::format("cross-check MISMATCH: {}: the library says {}, the "
                                         "model {}; the model is wrong for this version",
                                         i.what, i.live, i.model));
      }
    }
  }
  const std::vector<StackToolPrediction> stack =
      PredictStackTools(device->topology, *stack_versions);
  std::optional<LayoutPreview> preview;
  if (spec) {
    preview = PreviewLayout(*spec, device->topology, *versions);
    NameTarget(*preview, command.target.target);
  }
  if (command.target.json) {
    nlohmann::json j = ExplainJson(report);
    j["stack_predictions"] = StackPredictionsJson(stack);
    j["layout_predictions"] = preview ? LayoutPredictionsJson(*preview) : nlohmann::json(nullptr);
    io.out << j.dump(2) << '\n';
  } else {
    PrintHuman(report, options->assume.profile, io.out);
    PrintStackSection(stack, io.out);
    if (preview) PrintLayoutPreview(*preview, *command.layout, io.out);
  }
  return ExitCode::kOk;
}

}  // namespace

void AddExplainCommand(CLI::App& app, CommandRunners& runners) {
  auto command = std::make_shared<ExplainCommand>();
  CLI::App* sub = app.add_subcommand(
      "explain",
      "what parted, fdisk, gdisk, systemd-repart and the installers will do on a disk, and why");
  AddTargetOptions(sub, &command->target, /*target_required=*/false);
  sub->add_option("--size", command->size,
                  "disk size; without TARGET, explain a hypothetical disk of this size");
  sub->add_option("--label", command->label, "label the headline compares: gpt (default) or dos")
      ->check(CLI::IsMember({"gpt", "dos"}));
  sub->add_option("--tool-version", command->tool_versions,
                  "predict another version: TOOL=X.Y (parted, sfdisk, sgdisk, systemd-repart, "
                  "lvm2, cryptsetup); repeatable")
      ->expected(1)
      ->allow_extra_args(false)  // one value each: TARGET may follow
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  sub->add_option("--installer-version", command->installer_versions,
                  "predict another installer version: NAME=X.Y (yast/libstorage-ng, "
                  "anaconda/blivet, calamares/kpmcore, ubuntu/curtin); repeatable")
      ->expected(1)
      ->allow_extra_args(false)  // one value each: TARGET may follow
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  sub->add_flag("--no-cross-check", command->no_cross_check,
                "do not ask the linked libparted and libfdisk");
  sub->add_option("--layout", command->layout,
                  "where each tool puts every partition of a layout (SPEC as in plan --layout)");
  runners[sub] = [command](Streams io) { return RunExplain(*command, io); };
}

}  // namespace partalign
