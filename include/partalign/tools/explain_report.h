// SPDX-License-Identifier: GPL-3.0-or-later
// The `explain` report: one prediction per tool (parted -a optimal/minimal, sfdisk, sgdisk,
// systemd-repart, partalign's own rule), the sentence that calls out the tools that disagree,
// the live cross-check against the linked libparted/libfdisk, and the JSON and human renderings.
// Pure: the CLI supplies the probed device, the tool versions and the live library values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "partalign/tools/installers/installer_version.h"
#include "partalign/tools/parted_model.h"
#include "partalign/tools/tool_version.h"
#include "partalign/topology/device.h"
#include "partalign/topology/topology_check.h"

namespace partalign {

/// The size of the first partition in the two-partition layouts of alignment-heuristics.md §6
/// (`,100M` for sfdisk, `+100M` for sgdisk, a 100M definition for repart); the second start
/// shows how each tool rounds sizes.
inline constexpr uint64_t kSecondStartProbeBytes = 100ull * 1024 * 1024;

/// What one tool will do on a fresh label of this disk.
struct ToolPrediction {
  /// "parted-optimal", "parted-minimal", "sfdisk", "sgdisk", "systemd-repart", "partalign".
  std::string tool;
  /// The project whose version applies; nullopt for partalign itself.
  std::optional<Tool> project;
  std::optional<ToolVersion> version;
  VersionSource version_source = VersionSource::kNewestKnown;
  std::string era;
  std::optional<int64_t> grain_sectors;
  std::optional<int64_t> offset_sectors;
  std::optional<uint64_t> first_start_gpt;
  std::optional<uint64_t> first_start_dos;
  std::optional<uint64_t> second_start_gpt;
  std::optional<uint64_t> second_start_dos;
  /// parted: does `mkpart primary 1MiB 100%` warn. sfdisk: does fdisk -l say "does not start on
  /// physical sector boundary" for a partition at 1 MiB. sgdisk: does `sgdisk -v` caution about
  /// it. partalign: is 1 MiB off its own alignment. systemd-repart: null (no explicit starts).
  std::optional<bool> warns_at_1mib;
  /// The text of that warning.
  std::optional<std::string> warning_at_1mib;
  /// parted: why `mkpart primary 1MiB 100%` fails, when it does (a disk of a few MiB, where
  /// 100% leaves no room after 1 MiB); warns_at_1mib is then null.
  std::optional<std::string> error_at_1mib;
  /// parted: `align-check TYPE 1` for a partition at 1 MiB (interactive output).
  std::optional<std::string> align_check_at_1mib;
  /// Messages the tool prints about its own default placement (e.g. fdisk's physical-boundary
  /// warning, parted's alignment warning on the fallback path).
  std::vector<std::string> warnings;
  /// The rule chain: short sentences naming the values they used, in order.
  std::vector<std::string> reasons;
  /// The one sentence that decides the result, for the headline's "why".
  std::string key_reason;
  /// Non-empty when the model cannot predict this tool (e.g. a version older than modelled).
  std::string error;
  /// Per label, why the tool refuses the fresh-label layout (empty when it does not).
  std::string gpt_error;
  std::string dos_error;
};

/// The prediction for every tool, in the order of the table.
std::vector<ToolPrediction> PredictAll(const Topology& topology, const ToolVersions& versions,
                                       const std::vector<uint64_t>& existing_gpt_starts = {});

/// The sentence at the top of the report: which headline tools (parted -a optimal, fdisk, gdisk,
/// systemd-repart) disagree, e.g. "parted will want 65535-sector alignment here and warns at
/// 1 MiB; fdisk, gdisk and systemd-repart will start at 2048."
/// `label` selects which fresh label the starts are compared on (gdisk and systemd-repart
/// write GPT only; on DOS the sentence says so).
std::string DisagreementSentence(const std::vector<ToolPrediction>& predictions,
                                 const Topology& topology, LabelType label = LabelType::kGpt);

/// "why" lines under the sentence: the key reason of each headline tool, grouped like the
/// sentence.
std::vector<std::string> DisagreementReasons(const std::vector<ToolPrediction>& predictions);

/// What the libparted and libfdisk linked into partalign computed for the target (live). Each
/// value is nullopt when the library could not be asked.
struct LiveAlignment {
  std::optional<ToolVersion> libparted_version;
  std::optional<SectorAlignment> parted_minimum;
  std::optional<SectorAlignment> parted_optimum;
  std::string parted_error;
  std::optional<ToolVersion> libfdisk_version;
  std::optional<uint64_t> fdisk_sector_size;
  std::optional<uint64_t> fdisk_physical_sector_size;
  std::optional<uint64_t> fdisk_minimum_io_size;
  std::optional<uint64_t> fdisk_optimal_io_size;
  std::optional<uint64_t> fdisk_alignment_offset;
  std::optional<uint64_t> fdisk_grain_bytes;
  std::optional<uint64_t> fdisk_first_lba;  ///< device level, before any label
  std::optional<uint64_t> fdisk_gpt_first_usable_lba;
  std::optional<uint64_t> fdisk_first_start_gpt;
  std::optional<uint64_t> fdisk_first_start_dos;
  std::string fdisk_error;
};

struct CrossCheckItem {
  std::string what;
  std::string live;
  std::string model;
  bool match = false;
};

struct CrossCheck {
  /// The topology the libraries saw (the kernel's, even under --assume).
  Topology topology;
  /// Set when the report's topology is assumed: the check is about the kernel's topology.
  std::string note;
  std::vector<CrossCheckItem> items;
  std::vector<std::string> errors;
  int mismatches() const;
};

/// Compares the live values with the models evaluated at the linked library versions on the
/// topology the libraries saw.
CrossCheck CompareWithModels(const LiveAlignment& live, const Topology& seen_topology);

struct ExplainReport {
  DeviceInfo device;
  std::vector<TopologyFinding> findings;
  std::vector<ToolPrediction> predictions;
  /// YaST, Anaconda, Calamares and Ubuntu's installer (installers/installer_report.h).
  std::vector<ToolPrediction> installer_predictions;
  std::string sentence;
  std::vector<std::string> why;
  std::optional<CrossCheck> cross_check;
  bool hypothetical = false;          ///< --size without a TARGET
  LabelType label = LabelType::kGpt;  ///< the label the sentence compares (--label)
};

ExplainReport BuildExplainReport(
    const DeviceInfo& device, const ToolVersions& versions,
    const std::vector<uint64_t>& existing_gpt_starts = {}, LabelType label = LabelType::kGpt,
    const InstallerVersions& installers = NewestKnownInstallerVersions());

/// The `explain --json` document: schema_version, partalign_version, topology (as probe),
/// sentence, why, predictions, installer_predictions (same shape), cross_check (null when not
/// run).
nlohmann::json ExplainJson(const ExplainReport& report);

/// One prediction as JSON (tool, version, era, grain_sectors, ..., error).
nlohmann::json PredictionJson(const ToolPrediction& prediction);

/// One row of the human table: TOOL, VERSION, GRAIN, OFFSET, FIRST-GPT, FIRST-DOS,
/// WARNS-AT-1MIB.
std::vector<std::vector<std::string>> ExplainTableRows(const ExplainReport& report);

/// The same rows for any list of predictions (the installers' table).
std::vector<std::vector<std::string>> PredictionRows(
    const std::vector<ToolPrediction>& predictions);

/// The lines after the table: each tool's rule chain (indented), then the cross-check.
std::vector<std::string> ExplainDetailLines(const ExplainReport& report);

}  // namespace partalign
