// The installers (YaST, Anaconda, Calamares, Ubuntu's installer) as rows of the views that show
// every tool (ToolViews(): the planner's verdict columns and its `p` placement screen): where
// each would start the first two partitions of a layout, from the installer models
// (installer_report.h), and Calamares' verdict on a partition (KPMcore's isAligned()). The
// models predict the first two starts only: a prediction lists partitions 1 and 2 with the
// requested sizes as their ends and says that later partitions are not modelled. Pure.
#pragma once

#include <vector>

#include "partalign/tools/layout_prediction.h"

namespace partalign {

/// One view per installer, in kAllInstallers order, at the newest versions partalign knows
/// (installers never run here); blivet reads libparted at `versions.parted`.
std::vector<ToolView> InstallerViews();

}  // namespace partalign
