// SPDX-License-Identifier: GPL-3.0-or-later
// explain's installer section: one prediction per installer (YaST, Anaconda, Calamares,
// Ubuntu's installer), in the shape of the partitioners' predictions (ToolPrediction), the
// lines that say what each will do and why, and audit's verdict for the one installer that
// checks alignment itself (KPMcore, which Calamares uses). Pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "partalign/tools/explain_report.h"
#include "partalign/tools/installers/installer_version.h"
#include "partalign/tools/tool_verdicts.h"
#include "partalign/topology/topology.h"

namespace partalign {

/// The predictions, in kAllInstallers order: rows "yast", "anaconda", "calamares", "ubuntu".
/// blivet is evaluated with libparted `parted_version` (what the parted row uses). FIRST-GPT of
/// Calamares is its UEFI layout (GPT), FIRST-DOS its BIOS layout (msdos).
std::vector<ToolPrediction> PredictInstallers(const Topology& topology,
                                              const InstallerVersions& versions,
                                              const ToolVersion& parted_version);

/// One line per installer: "YaST (libstorage-ng 4.5.338): first partition at 65535 (GPT) /
/// 65535 (msdos), not on a physical sector boundary; because libstorage-ng takes ...".
std::vector<std::string> InstallerSummaryLines(const std::vector<ToolPrediction>& predictions,
                                               const Topology& topology);

/// The rule chains, like ExplainDetailLines for the partitioners.
std::vector<std::string> InstallerDetailLines(const std::vector<ToolPrediction>& predictions);

/// KPMcore's isAligned() on an existing partition at the newest KPMcore partalign knows: what
/// Calamares' log says when it scans the disk ("Partition 1 is not properly aligned (first
/// sector: 63, modulo: 63)."). The other installers never check existing partitions.
ToolVerdict KpmcoreVerdict(const Topology& topology, uint32_t number, uint64_t start_sector,
                           uint64_t end_sector);

}  // namespace partalign
