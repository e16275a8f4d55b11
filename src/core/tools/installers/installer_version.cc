// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/installers/installer_version.h"

#include <array>

#include <fmt/format.h>

namespace partalign {
namespace {

constexpr ToolVersion InstallerV(uint32_t major, uint32_t minor, uint32_t patch = 0,
                                 int components = 2) {
  return ToolVersion{major, minor, patch, components};
}

struct InstallerAlias {
  std::string_view name;
  Installer installer;
};

constexpr std::array<InstallerAlias, 9> kInstallerAliases{{
    {"libstorage-ng", Installer::kLibstorageNg},
    {"yast", Installer::kLibstorageNg},
    {"blivet", Installer::kBlivet},
    {"anaconda", Installer::kBlivet},
    {"kpmcore", Installer::kKpmcore},
    {"calamares", Installer::kKpmcore},
    {"curtin", Installer::kCurtin},
    {"ubuntu", Installer::kCurtin},
    {"subiquity", Installer::kCurtin},
}};

}  // namespace

std::string_view ToString(Installer installer) {
  switch (installer) {
    case Installer::kLibstorageNg:
      return "libstorage-ng";
    case Installer::kBlivet:
      return "blivet";
    case Installer::kKpmcore:
      return "kpmcore";
    case Installer::kCurtin:
      return "curtin";
  }
  return "unknown";
}

std::string_view InstallerRowName(Installer installer) {
  switch (installer) {
    case Installer::kLibstorageNg:
      return "yast";
    case Installer::kBlivet:
      return "anaconda";
    case Installer::kKpmcore:
      return "calamares";
    case Installer::kCurtin:
      return "ubuntu";
  }
  return "unknown";
}

std::string_view InstallerProductName(Installer installer) {
  switch (installer) {
    case Installer::kLibstorageNg:
      return "YaST";
    case Installer::kBlivet:
      return "Anaconda";
    case Installer::kKpmcore:
      return "Calamares";
    case Installer::kCurtin:
      return "Ubuntu's installer";
  }
  return "unknown";
}

const std::vector<ToolEra>& InstallerEras(Installer installer) {
  static const std::vector<ToolEra> kLibstorageNg{
      {"libstorage-ng >= 3.3", InstallerV(3, 3, 0, 3), std::nullopt,
       "grain = optimal I/O doubled until it reaches 1 MiB, shifted by the alignment offset "
       "(5bb3a064, 2016; unchanged through 4.5.x: Leap 15.0-16.0, Tumbleweed)"},
  };
  static const std::vector<ToolEra> kBlivet{
      {"blivet 0.65-1.15", InstallerV(0, 65), InstallerV(1, 16),
       "every new partition is aligned to libparted's optimum, its end aligned up (85c74494)"},
      {"blivet 1.16-3.1", InstallerV(1, 16), InstallerV(3, 2),
       "a partition smaller than the optimal grain gets the minimal alignment; one smaller than "
       "the minimal grain cannot be allocated (93c805d7, blivet#228)"},
      {"blivet >= 3.2", InstallerV(3, 2), std::nullopt,
       "a partition smaller than the minimal grain gets the minimal alignment and is rounded up "
       "to it (4815c4e0, rhbz#1781106)"},
  };
  static const std::vector<ToolEra> kKpmcore{
      {"kpmcore 2.0-24.05", InstallerV(2, 0), InstallerV(24, 7, 80, 3),
       "2048 sectors whatever the sector size; msdos tables with mostly cylinder-aligned "
       "partitions are judged from the track (63)"},
      {"kpmcore 24.08-25.08", InstallerV(24, 7, 80, 3), InstallerV(25, 11, 80, 3),
       "cylinder alignment removed (7f304be3); still 2048 sectors whatever the sector size"},
      {"kpmcore >= 25.12", InstallerV(25, 11, 80, 3), std::nullopt,
       "2048 x 512 / logical sector: 1 MiB on 4Kn disks too (a599a433, KDE bug 504128)"},
  };
  static const std::vector<ToolEra> kCurtin{
      {"curtin 18.1-21.3", InstallerV(18, 1), InstallerV(22, 1),
       "storage config v1 only: partition 1 at 1 MiB, the next right after the previous one "
       "(parted mkpart / sgdisk --new)"},
      {"curtin >= 22.1", InstallerV(22, 1), std::nullopt,
       "storage config v2 (bc849fe1) writes an sfdisk script with every default start rounded "
       "up to 1 MiB; v1 configs (subiquity's default) are placed as before"},
  };
  switch (installer) {
    case Installer::kLibstorageNg:
      return kLibstorageNg;
    case Installer::kBlivet:
      return kBlivet;
    case Installer::kKpmcore:
      return kKpmcore;
    case Installer::kCurtin:
      return kCurtin;
  }
  return kLibstorageNg;
}

Result<ToolEra> InstallerEraOf(Installer installer, const ToolVersion& version) {
  return FindEra(InstallerEras(installer), ToString(installer), version);
}

ToolVersion NewestKnownInstallerVersion(Installer installer) {
  switch (installer) {
    case Installer::kLibstorageNg:
      return InstallerV(4, 5, 338, 3);
    case Installer::kBlivet:
      return InstallerV(3, 14, 0, 3);
    case Installer::kKpmcore:
      return InstallerV(26, 4, 3, 3);
    case Installer::kCurtin:
      return InstallerV(24, 0, 0, 3);
  }
  return InstallerV(0, 0);
}

ResolvedVersion& InstallerVersions::For(Installer installer) {
  switch (installer) {
    case Installer::kLibstorageNg:
      return libstorage_ng;
    case Installer::kBlivet:
      return blivet;
    case Installer::kKpmcore:
      return kpmcore;
    case Installer::kCurtin:
      return curtin;
  }
  return libstorage_ng;
}

const ResolvedVersion& InstallerVersions::For(Installer installer) const {
  return const_cast<InstallerVersions*>(this)->For(installer);
}

InstallerVersions NewestKnownInstallerVersions() {
  InstallerVersions v;
  for (Installer i : kAllInstallers) {
    v.For(i) = ResolvedVersion{NewestKnownInstallerVersion(i), VersionSource::kNewestKnown};
  }
  return v;
}

Result<std::pair<Installer, ToolVersion>> ParseInstallerVersionOverride(std::string_view item) {
  std::vector<std::string_view> names;
  for (const InstallerAlias& a : kInstallerAliases) names.push_back(a.name);
  Result<std::pair<size_t, ToolVersion>> o = ParseVersionOverride(item, names, "installer", "4.5");
  if (!o) return o.error();
  const Installer installer = kInstallerAliases[o->first].installer;
  if (Result<ToolEra> era = InstallerEraOf(installer, o->second); !era) return era.error();
  return std::make_pair(installer, o->second);
}

LayoutPrediction NewInstallerLayoutPrediction(Installer installer, const ToolVersion& version) {
  LayoutPrediction p;
  p.tool = std::string(InstallerRowName(installer));
  if (Result<ToolEra> era = InstallerEraOf(installer, version); !era) p.error = era.error().message;
  return p;
}

}  // namespace partalign
