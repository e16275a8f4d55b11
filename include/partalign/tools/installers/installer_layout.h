// SPDX-License-Identifier: GPL-3.0-or-later
// The installers (YaST, Anaconda, Calamares, Ubuntu's installer) as rows of the views that show
// every tool (ToolViews(): explain --layout, the planner's verdict columns and its `p`
// placement screen): where each puts every partition of a layout, from the whole-layout models
// of their partitioning libraries (LibstorageLayoutPrediction, BlivetLayoutPrediction,
// CalamaresLayoutPrediction, CurtinLayoutPrediction), and Calamares' verdict on a partition
// (KPMcore's isAligned()). A partition a model does not place is listed as omitted with its reason.
// Pure.
#pragma once

#include <vector>

#include "partalign/tools/installers/installer_version.h"
#include "partalign/tools/layout_prediction.h"

namespace partalign {

/// Where `installer`, at the newest version partalign knows, puts the layout; blivet and YaST's
/// commit read libparted at `versions.parted`.
LayoutPrediction InstallerLayout(Installer installer, const Topology& topology,
                                 const ToolVersions& versions, const LayoutRequest& request);

/// One view per installer, in kAllInstallers order, at the newest versions partalign knows
/// (installers never run here); blivet reads libparted at `versions.parted`.
std::vector<ToolView> InstallerViews();

}  // namespace partalign
