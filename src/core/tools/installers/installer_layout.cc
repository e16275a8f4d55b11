#include "partalign/tools/installers/installer_layout.h"

#include <algorithm>
#include <optional>

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

// The first two starts an installer model gives for a first partition of a size, or why none.
struct TwoStarts {
  std::optional<uint64_t> first;
  std::optional<uint64_t> second;
  std::string error;
  /// Why the model gives no second start, when it gives a first.
  std::string no_second;
};

// The GPT entry array of 128 entries (16 KiB) and a header at each end; DOS: 32-bit sectors.
uint64_t LastUsableSector(LabelType label, const Topology& t) {
  const uint64_t lbs = t.logical_sector_size;
  const uint64_t sectors = t.size_bytes / lbs;
  if (label == LabelType::kGpt) {
    const uint64_t reserved = 2 + (16 * 1024 + lbs - 1) / lbs;
    return sectors > reserved ? sectors - reserved : 0;
  }
  return std::min<uint64_t>(sectors - 1, 0xFFFFFFFFull);
}

TwoStarts Starts(Installer installer, const Topology& t, const ToolVersions& v, LabelType label,
                 uint64_t first_size) {
  const ToolVersion version = NewestKnownInstallerVersion(installer);
  TwoStarts s;
  switch (installer) {
    case Installer::kLibstorageNg: {
      Result<LibstoragePrediction> p = PredictLibstorage(t, version, label, first_size);
      if (!p) return {{}, {}, p.error().message};
      s = {p->first_start, p->second_start, "", ""};
      if (!s.first) s.error = "no aligned partition slot on this disk";
      if (s.first && !s.second) {
        s.no_second = fmt::format(
            "no aligned slot is left after a {} partition 1 ({})", FormatSize(first_size),
            p->key_reason.empty() ? "its starts and ends are aligned to its grain" : p->key_reason);
      }
      return s;
    }
    case Installer::kBlivet: {
      Result<BlivetPrediction> p = PredictBlivet(t, version, v.parted.version, label, first_size);
      if (!p) return {{}, {}, p.error().message};
      return {p->first_start, p->second_start, p->error,
              p->second_start ? ""
                              : fmt::format("no aligned start is left after a {} partition 1",
                                            FormatSize(first_size))};
    }
    case Installer::kKpmcore: {
      Result<KpmcorePrediction> p = PredictKpmcore(t, version, first_size);
      if (!p) return {{}, {}, p.error().message};
      if (label == LabelType::kGpt) return {p->first_start_efi, p->second_start_efi, "", ""};
      return {p->first_start_bios, p->second_start_bios, "", ""};
    }
    case Installer::kCurtin: {
      Result<CurtinPrediction> p = PredictCurtin(t, version, first_size);
      if (!p) return {{}, {}, p.error().message};
      return {p->first_start, p->second_start, "", ""};
    }
  }
  return s;
}

LayoutPrediction Place(Installer installer, const Topology& t, const ToolVersions& v,
                       const LayoutRequest& r) {
  LayoutPrediction out;
  out.tool = std::string(InstallerRowName(installer));
  out.command.push_back(
      fmt::format("{} ({} {}): custom partitions of these sizes on a fresh {} label",
                  InstallerProductName(installer), ToString(installer),
                  NewestKnownInstallerVersion(installer).ToString(),
                  r.label == LabelType::kGpt ? "GPT" : "msdos"));
  // Shown under the command (LayoutPreviewLines), so that nobody takes the ends for a model.
  out.command.push_back(fmt::format(
      "(modelled: where partitions 1 and 2 start; each end is its start plus the requested "
      "size{})",
      r.sizes_bytes.size() > 2 ? "; partitions 3 and up are not modelled" : ""));
  if (r.sizes_bytes.empty()) return out;
  const uint64_t lbs = t.logical_sector_size;
  const uint64_t last = LastUsableSector(r.label, t);
  // A first partition of "the rest" is asked as the probe size the installer rows use; only
  // its start is used then.
  const std::optional<uint64_t> first_size = r.sizes_bytes.front();
  TwoStarts s = Starts(installer, t, v, r.label, first_size.value_or(kSecondStartProbeBytes));
  if (!s.error.empty() || !s.first) {
    out.error = s.error.empty() ? "the model places no partition on this disk" : s.error;
    return out;
  }
  auto end_of = [&](uint64_t start, const std::optional<uint64_t>& size) {
    return size ? std::min(last, start + std::max<uint64_t>(*size / lbs, 1) - 1) : last;
  };
  out.partitions.push_back({1, PlacedKind::kPrimary, *s.first, end_of(*s.first, first_size)});
  if (r.sizes_bytes.size() < 2) return out;
  // Every row shows partition 2 or says why not (issue #30: the YaST row dropped it silently).
  if (!first_size) {
    out.error = "partition 2: partition 1 takes the rest of the disk, so there is no room for it";
  } else if (!s.second) {
    out.error = "partition 2: " +
                (s.no_second.empty() ? std::string("the model gives no start") : s.no_second);
  } else if (*s.second > last) {
    out.error = fmt::format("partition 2: its start {} lies past the last usable sector {}",
                            *s.second, last);
  } else {
    out.partitions.push_back(
        {2, PlacedKind::kPrimary, *s.second, end_of(*s.second, r.sizes_bytes[1])});
  }
  return out;
}

}  // namespace

std::vector<ToolView> InstallerViews() {
  std::vector<ToolView> views;
  for (Installer i : kAllInstallers) {
    ToolView view{std::string(InstallerRowName(i)), std::string(InstallerRowName(i)), nullptr,
                  [i](const Topology& t, const ToolVersions& v, const LayoutRequest& r) {
                    return std::vector<LayoutPrediction>{Place(i, t, v, r)};
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
