// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/installers/installer_layout.h"

#include <fmt/format.h>

#include "partalign/tools/installers/blivet_model.h"
#include "partalign/tools/installers/curtin_model.h"
#include "partalign/tools/installers/installer_report.h"
#include "partalign/tools/installers/installer_version.h"
#include "partalign/tools/installers/kpmcore_model.h"
#include "partalign/tools/installers/libstorage_model.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

// How each installer is asked for the layout, shown above its own commands.
std::string HowAsked(Installer installer) {
  switch (installer) {
    case Installer::kLibstorageNg:
      return "the Partitioner: Add Partition with a custom size for each, Maximum Size for the "
             "rest";
    case Installer::kBlivet:
      return "custom partitioning: one request per partition, the rest growing; "
             "do_partitioning()";
    case Installer::kKpmcore:
      return "erase disk with a partitionLayout of these sizes, the rest as 100% (UEFI on GPT, "
             "BIOS on msdos, no swap)";
    case Installer::kCurtin:
      return "storage config v1 from subiquity, the rest as subiquity's gap";
  }
  return "";
}

}  // namespace

LayoutPrediction InstallerLayout(Installer installer, const Topology& t, const ToolVersions& v,
                                 const LayoutRequest& r) {
  const ToolVersion version = NewestKnownInstallerVersion(installer);
  LayoutPrediction p;
  switch (installer) {
    case Installer::kLibstorageNg:
      p = LibstorageLayoutPrediction(t, version, v.parted.version, r);
      break;
    case Installer::kBlivet:
      p = BlivetLayoutPrediction(t, version, v.parted.version, r);
      break;
    case Installer::kKpmcore:
      p = CalamaresLayoutPrediction(t, version, v.util_linux.version, r);
      break;
    case Installer::kCurtin:
      p = CurtinLayoutPrediction(t, version, r);
      break;
  }
  std::vector<std::string> command{fmt::format(
      "{} ({} {}) on a fresh {} label: {}", InstallerProductName(installer), ToString(installer),
      version.ToString(), r.label == LabelType::kGpt ? "GPT" : "msdos", HowAsked(installer))};
  command.insert(command.end(), p.command.begin(), p.command.end());
  p.command = std::move(command);
  return p;
}

std::vector<ToolView> InstallerViews() {
  std::vector<ToolView> views;
  for (Installer i : kAllInstallers) {
    ToolView view{std::string(InstallerRowName(i)), std::string(InstallerRowName(i)), nullptr,
                  [i](const Topology& t, const ToolVersions& v, const LayoutRequest& r) {
                    return std::vector<LayoutPrediction>{InstallerLayout(i, t, v, r)};
                  }};
    view.installer = true;
    // KPMcore is the one installer that checks existing partitions (Calamares' disk scan).
    if (i == Installer::kKpmcore) {
      view.verdict = [](const VerdictInput& in) {
        return KpmcoreVerdict(in.topology, in.number, in.start_sector, in.end_sector);
      };
    }
    views.push_back(std::move(view));
  }
  return views;
}

}  // namespace partalign
