// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/installers/installer_report.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "partalign/tools/installers/blivet_model.h"
#include "partalign/tools/installers/curtin_model.h"
#include "partalign/tools/installers/kpmcore_model.h"
#include "partalign/tools/installers/libstorage_model.h"
#include "partalign/tools/parted_disk.h"
#include "partalign/tools/parted_model.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

ToolPrediction Base(Installer installer, const ResolvedVersion& v) {
  ToolPrediction p;
  p.tool = std::string(InstallerRowName(installer));
  p.version = v.version;
  p.version_source = v.source;
  if (Result<ToolEra> era = InstallerEraOf(installer, v.version)) p.era = std::string(era->name);
  return p;
}

ToolPrediction YastRow(const Topology& t, const ResolvedVersion& v,
                       const ToolVersion& parted_version) {
  ToolPrediction p = Base(Installer::kLibstorageNg, v);
  Result<LibstoragePrediction> gpt =
      PredictLibstorage(t, v.version, LabelType::kGpt, kSecondStartProbeBytes);
  Result<LibstoragePrediction> dos =
      PredictLibstorage(t, v.version, LabelType::kDos, kSecondStartProbeBytes);
  if (!gpt || !dos) {
    p.error = (!gpt ? gpt : dos).error().message;
    return p;
  }
  const uint64_t lbs = t.logical_sector_size;
  p.grain_sectors = static_cast<int64_t>(gpt->grain_bytes / lbs);
  p.offset_sectors = gpt->offset_sectors;
  p.first_start_gpt = gpt->first_start;
  p.first_start_dos = dos->first_start;
  p.second_start_gpt = gpt->second_start;
  p.second_start_dos = dos->second_start;
  if (!gpt->first_start) p.gpt_error = "no aligned partition slot on this disk";
  if (!dos->first_start) p.dos_error = "no aligned partition slot on this disk";
  p.reasons = gpt->reasons;
  if (dos->reasons.size() > 1) p.reasons.push_back("msdos: " + dos->reasons.back());
  p.key_reason = gpt->key_reason;
  // At commit libstorage-ng runs `parted --script DEV unit s mkpart ... START END` with
  // parted's default -a optimal: parted keeps the exact sectors and warns when they are off its
  // own optimum.
  if (Result<PartedModel> parted = MakePartedModel(t, parted_version)) {
    auto mkpart = [&](uint64_t start) {
      return PredictMkpart(*parted, PartedMode::kOptimal, LabelType::kGpt,
                           fmt::format("{}s", start), "100%");
    };
    MkpartOutcome at_1mib = mkpart(kMiB / lbs);
    p.warns_at_1mib = at_1mib.warning.has_value();
    p.warning_at_1mib = at_1mib.warning;
    if (p.first_start_gpt) {
      MkpartOutcome own = mkpart(*p.first_start_gpt);
      if (own.warning) {
        p.warnings.push_back("parted (at commit): " + *own.warning);
        p.reasons.push_back(fmt::format(
            "at commit libstorage-ng runs `parted --script DEV unit s mkpart ... {}s ...`; "
            "parted {} keeps the sectors and warns: {}",
            *p.first_start_gpt, parted_version.ToString(), *own.warning));
      } else {
        p.reasons.push_back(fmt::format(
            "at commit libstorage-ng runs `parted --script DEV unit s mkpart ... {}s ...`; "
            "parted {} accepts the start silently",
            *p.first_start_gpt, parted_version.ToString()));
      }
    }
    if (at_1mib.warning) {
      p.reasons.push_back(fmt::format(
          "a custom start at 1 MiB (the Partitioner aligns custom regions only to REQUIRED) is "
          "written, and parted warns: {}",
          *at_1mib.warning));
    }
  }
  return p;
}

ToolPrediction AnacondaRow(const Topology& t, const ResolvedVersion& v,
                           const ToolVersion& parted_version) {
  ToolPrediction p = Base(Installer::kBlivet, v);
  Result<BlivetPrediction> gpt =
      PredictBlivet(t, v.version, parted_version, LabelType::kGpt, kSecondStartProbeBytes);
  Result<BlivetPrediction> dos =
      PredictBlivet(t, v.version, parted_version, LabelType::kDos, kSecondStartProbeBytes);
  if (!gpt || !dos) {
    p.error = (!gpt ? gpt : dos).error().message;
    return p;
  }
  p.grain_sectors = gpt->optimal.grain_sectors;
  p.offset_sectors = gpt->optimal.offset_sectors;
  p.first_start_gpt = gpt->first_start;
  p.first_start_dos = dos->first_start;
  p.second_start_gpt = gpt->second_start;
  p.second_start_dos = dos->second_start;
  p.gpt_error = gpt->error;
  p.dos_error = dos->error;
  p.reasons = gpt->reasons;
  if (dos->first_start) {
    p.reasons.push_back(fmt::format("msdos: the first partition starts at {}", *dos->first_start));
  }
  p.key_reason = gpt->key_reason;
  return p;
}

ToolPrediction CalamaresRow(const Topology& t, const ResolvedVersion& v) {
  ToolPrediction p = Base(Installer::kKpmcore, v);
  Result<KpmcorePrediction> k = PredictKpmcore(t, v.version, kSecondStartProbeBytes);
  if (!k) {
    p.error = k.error().message;
    return p;
  }
  p.grain_sectors = static_cast<int64_t>(k->alignment_sectors);
  p.offset_sectors = 0;
  p.first_start_gpt = k->first_start_efi;
  p.first_start_dos = k->first_start_bios;
  p.second_start_gpt = k->second_start_efi;
  p.second_start_dos = k->second_start_bios;
  p.warns_at_1mib = k->warning_at_1mib.has_value();
  p.warning_at_1mib = k->warning_at_1mib;
  p.reasons = k->reasons;
  p.key_reason = k->key_reason;
  return p;
}

ToolPrediction UbuntuRow(const Topology& t, const ResolvedVersion& v) {
  ToolPrediction p = Base(Installer::kCurtin, v);
  Result<CurtinPrediction> c = PredictCurtin(t, v.version, kSecondStartProbeBytes);
  if (!c) {
    p.error = c.error().message;
    return p;
  }
  p.grain_sectors = static_cast<int64_t>(c->grain_sectors);
  p.offset_sectors = 0;
  p.first_start_gpt = c->first_start;
  p.first_start_dos = c->first_start;
  p.second_start_gpt = c->second_start;
  p.second_start_dos = c->second_start;
  p.reasons = c->reasons;
  p.key_reason = c->key_reason;
  return p;
}

Installer InstallerOfRow(const std::string& row) {
  for (Installer i : kAllInstallers) {
    if (InstallerRowName(i) == row) return i;
  }
  return Installer::kLibstorageNg;
}

bool InstallerPhysicallyAligned(const Topology& t, uint64_t start) {
  uint64_t bytes = start * t.logical_sector_size;
  uint64_t pbs = std::max<uint64_t>(t.physical_sector_size, 1);
  return bytes >= t.alignment_offset && (bytes - t.alignment_offset) % pbs == 0;
}

std::string StartText(const Topology& t, const std::optional<uint64_t>& start,
                      std::string_view label) {
  if (!start) return fmt::format("no partition ({})", label);
  std::string s = fmt::format("{} ({})", *start, label);
  if (!InstallerPhysicallyAligned(t, *start)) s += ", not on a physical sector boundary";
  return s;
}

}  // namespace

std::vector<ToolPrediction> PredictInstallers(const Topology& t, const InstallerVersions& v,
                                              const ToolVersion& parted_version) {
  return {YastRow(t, v.libstorage_ng, parted_version), AnacondaRow(t, v.blivet, parted_version),
          CalamaresRow(t, v.kpmcore), UbuntuRow(t, v.curtin)};
}

std::vector<std::string> InstallerSummaryLines(const std::vector<ToolPrediction>& all,
                                               const Topology& t) {
  std::vector<std::string> lines;
  for (const ToolPrediction& p : all) {
    Installer i = InstallerOfRow(p.tool);
    std::string head = fmt::format("{} ({} {})", InstallerProductName(i), ToString(i),
                                   p.version ? p.version->ToString() : "-");
    if (!p.error.empty()) {
      lines.push_back(fmt::format("{}: cannot predict: {}", head, p.error));
      continue;
    }
    std::string where =
        i == Installer::kKpmcore
            ? fmt::format("first partition at {} / {}",
                          StartText(t, p.first_start_gpt, "UEFI, GPT"),
                          StartText(t, p.first_start_dos, "BIOS, msdos"))
            : fmt::format("first partition at {} / {}", StartText(t, p.first_start_gpt, "GPT"),
                          StartText(t, p.first_start_dos, "msdos"));
    lines.push_back(fmt::format("{}: {}; {}", head, where, p.key_reason));
  }
  return lines;
}

std::vector<std::string> InstallerDetailLines(const std::vector<ToolPrediction>& all) {
  std::vector<std::string> lines;
  bool any_newest = false;
  for (const ToolPrediction& p : all) {
    Installer i = InstallerOfRow(p.tool);
    lines.push_back(fmt::format("{}: {} {} ({}, {})", p.tool, ToString(i),
                                p.version ? p.version->ToString() : "-", ToString(p.version_source),
                                p.era));
    any_newest |= p.version_source == VersionSource::kNewestKnown;
    if (!p.error.empty()) lines.push_back("  cannot predict: " + p.error);
    for (const std::string& reason : p.reasons) lines.push_back("  " + reason);
    for (const std::string& w : p.warnings) lines.push_back("  prints: " + w);
  }
  if (any_newest) {
    lines.push_back(
        "* the installers do not run here: the newest version partalign knows is assumed "
        "(--installer-version NAME=X.Y asks about another)");
  }
  return lines;
}

ToolVerdict KpmcoreVerdict(const Topology& t, uint32_t number, uint64_t start, uint64_t end) {
  const ToolVersion v = NewestKnownInstallerVersion(Installer::kKpmcore);
  KpmcorePartition p{number, start, end, false, false};
  KpmcoreCheck c =
      KpmcoreIsAligned(v, t.logical_sector_size, LabelType::kGpt, true, p, std::to_string(number));
  if (c.aligned) return {true, ""};
  return {false, fmt::format("{}", fmt::join(c.messages, " "))};
}

}  // namespace partalign
