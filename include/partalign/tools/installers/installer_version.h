// SPDX-License-Identifier: GPL-3.0-or-later
// The installers partalign models (YaST's libstorage-ng, Anaconda's blivet, Calamares' KPMcore,
// Ubuntu's curtin), their versions, and the eras in which their alignment rules differ
// (docs/explain.md, "Installers"). Eras reuse ToolEra: a named half-open version range.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include "partalign/tools/layout_prediction.h"
#include "partalign/tools/tool_version.h"
#include "partalign/util/result.h"

namespace partalign {

/// The partitioning libraries behind the installers.
enum class Installer { kLibstorageNg, kBlivet, kKpmcore, kCurtin };

inline constexpr Installer kAllInstallers[] = {Installer::kLibstorageNg, Installer::kBlivet,
                                               Installer::kKpmcore, Installer::kCurtin};

/// The project whose version is meant: "libstorage-ng", "blivet", "kpmcore", "curtin".
std::string_view ToString(Installer installer);

/// The row name in explain: "yast", "anaconda", "calamares", "ubuntu".
std::string_view InstallerRowName(Installer installer);

/// What a person calls it: "YaST", "Anaconda", "Calamares", "Ubuntu's installer".
std::string_view InstallerProductName(Installer installer);

/// The eras of `installer`, oldest first.
const std::vector<ToolEra>& InstallerEras(Installer installer);

/// The era `version` falls in, or an error for versions older than the first modelled era.
Result<ToolEra> InstallerEraOf(Installer installer, const ToolVersion& version);

/// The newest version partalign knows the behaviour of (the installers never run here, so this
/// is the default).
ToolVersion NewestKnownInstallerVersion(Installer installer);

/// The version of every installer a prediction uses.
struct InstallerVersions {
  ResolvedVersion libstorage_ng;
  ResolvedVersion blivet;
  ResolvedVersion kpmcore;
  ResolvedVersion curtin;

  ResolvedVersion& For(Installer installer);
  const ResolvedVersion& For(Installer installer) const;
};

InstallerVersions NewestKnownInstallerVersions();

/// An empty layout prediction for `installer` (its row name as the tool), with the error when
/// `version` lies in no modelled era: what each installer's whole-layout model starts from.
LayoutPrediction NewInstallerLayoutPrediction(Installer installer, const ToolVersion& version);

/// Parses one `--installer-version NAME=X.Y` item. NAME is a project or its installer:
/// libstorage-ng, yast; blivet, anaconda; kpmcore, calamares; curtin, ubuntu, subiquity. The
/// version must lie in a modelled era.
Result<std::pair<Installer, ToolVersion>> ParseInstallerVersionOverride(std::string_view item);

}  // namespace partalign
