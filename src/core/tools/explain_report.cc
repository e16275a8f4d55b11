// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/explain_report.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "partalign/tools/gdisk_model.h"
#include "partalign/tools/installers/installer_report.h"
#include "partalign/tools/libfdisk_model.h"
#include "partalign/tools/parted_disk.h"
#include "partalign/tools/repart_model.h"
#include "partalign/topology/alignment.h"
#include "partalign/topology/probe_report.h"
#include "partalign/util/json_util.h"
#include "partalign/util/units.h"
#include "partalign/util/version.h"

namespace partalign {
namespace {

// GPT header sectors before the 16 KiB entry array (protective MBR, header).
constexpr uint64_t kExplainGptHeaderSectors = 2;
constexpr uint64_t kExplainGptEntryArrayBytes = 128 * 128;

std::string OrDash(const std::optional<uint64_t>& v) { return v ? std::to_string(*v) : "-"; }
std::string OrDash(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : "-"; }

ToolPrediction Base(std::string tool, Tool project, const ResolvedVersion& v) {
  ToolPrediction p;
  p.tool = std::move(tool);
  p.project = project;
  p.version = v.version;
  p.version_source = v.source;
  if (Result<ToolEra> era = EraOf(project, v.version)) p.era = std::string(era->name);
  return p;
}

void Append(std::vector<std::string>* to, const std::vector<std::string>& from,
            std::string_view prefix = "") {
  for (const std::string& s : from) to->push_back(std::string(prefix) + s);
}

std::vector<ToolPrediction> PredictParted(const Topology& t, const ResolvedVersion& v) {
  std::vector<ToolPrediction> out;
  Result<PartedModel> model = MakePartedModel(t, v.version);
  for (PartedMode mode : {PartedMode::kOptimal, PartedMode::kMinimal}) {
    ToolPrediction p = Base(fmt::format("parted-{}", ToString(mode)), Tool::kParted, v);
    if (!model) {
      p.error = model.error().message;
      out.push_back(std::move(p));
      continue;
    }
    const PartedModel& m = *model;
    const SectorAlignment& a = m.For(mode);
    p.grain_sectors = a.grain_sectors;
    p.offset_sectors = a.offset_sectors;
    Append(&p.reasons, m.device_reasons);
    Append(&p.reasons, m.ReasonsFor(mode));
    p.key_reason = m.ReasonsFor(mode).front();
    if (a.offset_sectors != 0) {
      p.key_reason = fmt::format(
          "parted keeps a {}-sector grain and shifts every start by the alignment offset {} / "
          "{} = {} sectors",
          a.grain_sectors, m.device.alignment_offset, m.device.sector_size, a.offset_sectors);
    }
    for (LabelType label : {LabelType::kGpt, LabelType::kDos}) {
      MkpartOutcome o = PredictMkpart(m, mode, label, "0%", "100%");
      std::string prefix = fmt::format("mkpart primary 0% 100% on {}: ", PartedLabelName(label));
      Append(&p.reasons, o.reasons, prefix);
      if (o.created) {
        (label == LabelType::kGpt ? p.first_start_gpt : p.first_start_dos) = o.start_sector;
        if (o.warning) p.warnings.push_back(prefix + *o.warning);
      } else {
        (label == LabelType::kGpt ? p.gpt_error : p.dos_error) = o.error;
        p.reasons.push_back(prefix + "parted fails: " + o.error);
      }
    }
    MkpartOutcome at_1mib = PredictMkpart(m, mode, LabelType::kGpt, "1MiB", "100%");
    std::string prefix = "mkpart primary 1MiB 100% on gpt: ";
    if (at_1mib.created) {
      p.warns_at_1mib = at_1mib.warning.has_value();
      p.warning_at_1mib = at_1mib.warning;
      p.align_check_at_1mib = PredictAlignCheck(m, mode, 1, at_1mib.start_sector).output;
      p.reasons.push_back(prefix + (at_1mib.warning ? "warns \"" + *at_1mib.warning + "\""
                                                    : std::string("no warning")));
    } else {
      // parted 3.5 prints its error and no warning (checked under the topology simulator).
      p.warns_at_1mib = false;
      p.error_at_1mib = at_1mib.error;
      p.reasons.push_back(prefix + "parted fails: " + at_1mib.error);
    }
    out.push_back(std::move(p));
  }
  return out;
}

ToolPrediction PredictSfdiskRow(const Topology& t, const ResolvedVersion& v) {
  ToolPrediction p = Base("sfdisk", Tool::kUtilLinux, v);
  Result<LibfdiskContext> cxt = DiscoverLibfdisk(t, v.version);
  if (!cxt) {
    p.error = cxt.error().message;
    return p;
  }
  const uint64_t ss = cxt->sector_size;
  p.grain_sectors = static_cast<int64_t>(cxt->grain_bytes / ss);
  p.offset_sectors = static_cast<int64_t>(cxt->alignment_offset / ss);
  p.reasons = cxt->reasons;
  p.key_reason = cxt->key_reason;
  const uint64_t probe_sectors = kSecondStartProbeBytes / ss;
  for (LabelType label : {LabelType::kGpt, LabelType::kDos}) {
    std::string prefix = label == LabelType::kGpt ? "GPT: " : "DOS: ";
    Result<LibfdiskLabel> l = CreateLibfdiskLabel(*cxt, label);
    if (!l) {
      (label == LabelType::kGpt ? p.gpt_error : p.dos_error) = l.error().message;
      p.reasons.push_back(prefix + l.error().message);
      continue;
    }
    Append(&p.reasons, l->reasons, prefix);
    SfdiskPlacement s = PredictSfdisk(*l, probe_sectors);
    Append(&p.reasons, s.reasons, prefix);
    if (!s.first_start) {
      (label == LabelType::kGpt ? p.gpt_error : p.dos_error) = s.error;
      continue;
    }
    (label == LabelType::kGpt ? p.first_start_gpt : p.first_start_dos) = s.first_start;
    (label == LabelType::kGpt ? p.second_start_gpt : p.second_start_dos) = s.second_start;
    if (!s.first_start_phys_aligned) p.warnings.push_back(prefix + FdiskPhysBoundaryWarning(1));
    if (label == LabelType::kGpt) {
      bool aligned = FdiskLbaIsPhyAligned(l->cxt, kMiB / ss);
      p.warns_at_1mib = !aligned;
      if (!aligned) p.warning_at_1mib = FdiskPhysBoundaryWarning(1);
    }
  }
  if (p.first_start_gpt && p.first_start_gpt != cxt->first_lba) {
    p.key_reason += fmt::format("; its GPT starts at {}", *p.first_start_gpt);
  }
  return p;
}

ToolPrediction PredictSgdiskRow(const Topology& t, const ResolvedVersion& v,
                                const std::vector<uint64_t>& existing) {
  ToolPrediction p = Base("sgdisk", Tool::kGptfdisk, v);
  const uint64_t lbs = t.logical_sector_size;
  Result<GdiskPrediction> g = PredictGdisk(t, v.version, existing, kSecondStartProbeBytes / lbs);
  if (!g) {
    p.error = g.error().message;
    return p;
  }
  p.grain_sectors = static_cast<int64_t>(g->alignment_sectors);
  p.offset_sectors = 0;
  p.first_start_gpt = g->first_start;
  p.second_start_gpt = g->second_start;
  p.dos_error = "sgdisk writes GPT only";
  p.reasons = g->reasons;
  p.key_reason = g->key_reason;
  if (g->verify_warning) p.warnings.push_back(*g->verify_warning);
  const uint64_t at = kMiB / lbs;
  uint64_t inferred = GdiskComputeAlignment(v.version, lbs, t.size_bytes / lbs, {at});
  std::optional<std::string> w = GdiskVerifyBeginWarning(t, inferred, 1, at);
  p.warns_at_1mib = w.has_value();
  p.warning_at_1mib = w;
  return p;
}

ToolPrediction PredictRepartRow(const Topology& t, const ResolvedVersion& systemd,
                                const ResolvedVersion& util_linux) {
  ToolPrediction p = Base("systemd-repart", Tool::kSystemd, systemd);
  Result<RepartPrediction> r =
      PredictRepart(t, systemd.version, util_linux.version, {}, kSecondStartProbeBytes);
  if (!r) {
    p.error = r.error().message;
    return p;
  }
  p.grain_sectors = static_cast<int64_t>(r->grain_bytes / r->sector_size);
  p.offset_sectors = 0;
  p.first_start_gpt = r->first_start;
  p.second_start_gpt = r->second_start;
  p.gpt_error = r->error;
  p.dos_error = "systemd-repart writes GPT only";
  p.reasons = r->reasons;
  p.key_reason = r->key_reason;
  return p;
}

ToolPrediction PredictPartalignRow(const Topology& t) {
  ToolPrediction p;
  p.tool = "partalign";
  p.version = ParseToolVersion(kVersion).has_value()
                  ? std::optional<ToolVersion>(*ParseToolVersion(kVersion))
                  : std::nullopt;
  p.version_source = VersionSource::kInstalled;
  p.era = "partalign";
  AlignmentRecommendation r = RecommendAlignment(t);
  const uint64_t lbs = t.logical_sector_size;
  p.grain_sectors = static_cast<int64_t>(r.alignment.grain_bytes / lbs);
  p.offset_sectors = static_cast<int64_t>(r.alignment.offset_bytes / lbs);
  p.reasons = r.reasons;
  p.key_reason = r.reasons.size() > 1 ? r.reasons[1] : r.reasons.front();
  const uint64_t gpt_first_usable =
      kExplainGptHeaderSectors + (kExplainGptEntryArrayBytes + lbs - 1) / lbs;
  const uint64_t size = t.size_bytes;
  auto first = [&](uint64_t first_usable) -> std::optional<uint64_t> {
    uint64_t start = r.alignment.Up(std::max(kMiB, first_usable * lbs));
    if (start >= size) return std::nullopt;
    return start / lbs;
  };
  p.first_start_gpt = first(gpt_first_usable);
  p.first_start_dos = first(1);
  p.reasons.push_back(fmt::format(
      "first start: the first aligned sector at or after 1 MiB and the label's first usable LBA "
      "(GPT {}, DOS 1): GPT {}, DOS {}",
      gpt_first_usable, OrDash(p.first_start_gpt), OrDash(p.first_start_dos)));
  p.warns_at_1mib = !r.alignment.IsAligned(kMiB);
  if (*p.warns_at_1mib) {
    p.warning_at_1mib = fmt::format("a start at 1 MiB is not a multiple of {} after offset {}",
                                    FormatSize(r.alignment.grain_bytes), r.alignment.offset_bytes);
  }
  return p;
}

const ToolPrediction* Find(const std::vector<ToolPrediction>& all, std::string_view tool) {
  for (const ToolPrediction& p : all) {
    if (p.tool == tool) return &p;
  }
  return nullptr;
}

struct ExplainHeadliner {
  std::string_view tool;
  std::string_view name;  ///< what a person calls it
};

// The tools of the headline: each project's default behaviour.
constexpr ExplainHeadliner kExplainHeadliners[] = {{"parted-optimal", "parted"},
                                                   {"sfdisk", "fdisk"},
                                                   {"sgdisk", "gdisk"},
                                                   {"systemd-repart", "systemd-repart"}};

std::string JoinNames(const std::vector<std::string>& names) {
  if (names.size() == 1) return names[0];
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) s += i + 1 == names.size() ? " and " : ", ";
    s += names[i];
  }
  return s;
}

bool StartsPhysicallyAligned(const Topology& t, uint64_t start) {
  uint64_t bytes = start * t.logical_sector_size;
  uint64_t pbs = std::max<uint64_t>(t.physical_sector_size, 1);
  return bytes >= t.alignment_offset && (bytes - t.alignment_offset) % pbs == 0;
}

struct Group {
  std::optional<uint64_t> start;
  std::vector<std::string> names;
  std::vector<const ToolPrediction*> tools;
};

const std::optional<uint64_t>& FirstStart(const ToolPrediction& p, LabelType label) {
  return label == LabelType::kDos ? p.first_start_dos : p.first_start_gpt;
}

// Tools that write only GPT have a DOS error that says so.
bool Supports(const ToolPrediction& p, LabelType label) {
  return label != LabelType::kDos || p.dos_error.find("GPT only") == std::string::npos;
}

std::vector<Group> GroupByStart(const std::vector<ToolPrediction>& all, LabelType label) {
  std::vector<Group> groups;
  for (const ExplainHeadliner& h : kExplainHeadliners) {
    const ToolPrediction* p = Find(all, h.tool);
    if (p == nullptr || !p->error.empty() || !Supports(*p, label)) continue;
    const std::optional<uint64_t>& start = FirstStart(*p, label);
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const Group& g) { return g.start == start; });
    if (it == groups.end()) {
      groups.push_back({start, {}, {}});
      it = groups.end() - 1;
    }
    it->names.push_back(std::string(h.name));
    it->tools.push_back(p);
  }
  // The largest group goes last ("...; fdisk, gdisk and systemd-repart will start at 2048").
  std::stable_sort(groups.begin(), groups.end(),
                   [](const Group& a, const Group& b) { return a.names.size() < b.names.size(); });
  return groups;
}

}  // namespace

std::vector<ToolPrediction> PredictAll(const Topology& t, const ToolVersions& v,
                                       const std::vector<uint64_t>& existing_gpt_starts) {
  std::vector<ToolPrediction> all = PredictParted(t, v.parted);
  all.push_back(PredictSfdiskRow(t, v.util_linux));
  all.push_back(PredictSgdiskRow(t, v.gptfdisk, existing_gpt_starts));
  all.push_back(PredictRepartRow(t, v.systemd, v.util_linux));
  all.push_back(PredictPartalignRow(t));
  return all;
}

std::string DisagreementSentence(const std::vector<ToolPrediction>& all, const Topology& t,
                                 LabelType label) {
  std::vector<Group> groups = GroupByStart(all, label);
  std::vector<std::string> gpt_only;
  for (const ExplainHeadliner& h : kExplainHeadliners) {
    const ToolPrediction* p = Find(all, h.tool);
    if (p != nullptr && !Supports(*p, label)) gpt_only.push_back(std::string(h.name));
  }
  std::string tail = gpt_only.empty() ? std::string(".")
                                      : fmt::format("; {} write{} GPT only.", JoinNames(gpt_only),
                                                    gpt_only.size() == 1 ? "s" : "");
  if (groups.empty()) return "no tool could be predicted";
  const int64_t mib_sectors = static_cast<int64_t>(kMiB / t.logical_sector_size);
  auto describe = [&](const Group& g) {
    std::vector<std::string> parts;
    std::vector<std::string> plain;
    for (size_t i = 0; i < g.tools.size(); ++i) {
      const ToolPrediction& p = *g.tools[i];
      if (p.tool == "parted-optimal" && p.grain_sectors && *p.grain_sectors != mib_sectors) {
        std::string s = fmt::format("parted will want {}-sector alignment here", *p.grain_sectors);
        if (p.offset_sectors && *p.offset_sectors != 0) {
          s += fmt::format(" (offset {})", *p.offset_sectors);
        }
        if (p.warns_at_1mib.value_or(false)) s += " and warns at 1 MiB";
        if (g.start && *g.start != static_cast<uint64_t>(*p.grain_sectors)) {
          // `0%` is a range of 0.5% of the disk: on small disks it holds no aligned sector.
          s += (*g.start - static_cast<uint64_t>(p.offset_sectors.value_or(0))) %
                           static_cast<uint64_t>(*p.grain_sectors) !=
                       0
                   ? fmt::format(
                         " (on this disk `mkpart 0%` cannot reach it and falls back to "
                         "{}, with the warning)",
                         *g.start)
                   : fmt::format(", starting at {}", *g.start);
        }
        parts.push_back(s);
      } else {
        plain.push_back(g.names[i]);
      }
    }
    if (!plain.empty()) {
      std::string s = JoinNames(plain);
      if (!g.start) {
        s += fmt::format(" will refuse a fresh {} layout here",
                         label == LabelType::kDos ? "DOS" : "GPT");
      } else {
        s += fmt::format(" will start at {}", *g.start);
        if (!StartsPhysicallyAligned(t, *g.start)) s += " (not on a physical sector boundary)";
      }
      bool parted_here = std::find(plain.begin(), plain.end(), "parted") != plain.end();
      const ToolPrediction* parted = Find(all, "parted-optimal");
      if (parted_here && parted && parted->warns_at_1mib.value_or(false)) {
        s += plain.size() == 1 ? " and warns at 1 MiB" : " (parted warns at 1 MiB)";
      }
      parts.push_back(s);
    }
    return fmt::format("{}", fmt::join(parts, "; "));
  };
  if (groups.size() == 1) {
    const Group& g = groups.front();
    const ToolPrediction* parted = Find(all, "parted-optimal");
    bool parted_odd = parted && parted->grain_sectors && *parted->grain_sectors != mib_sectors;
    if (!parted_odd && g.start) {
      std::string s = fmt::format("{} {} the first partition at {} here", JoinNames(g.names),
                                  g.names.size() == 2 ? "both start" : "all start", *g.start);
      if (!StartsPhysicallyAligned(t, *g.start)) s += " (not on a physical sector boundary)";
      if (parted && parted->warns_at_1mib.value_or(false)) s += "; parted warns at 1 MiB";
      return s + tail;
    }
  }
  std::vector<std::string> sentences;
  for (const Group& g : groups) sentences.push_back(describe(g));
  return fmt::format("{}{}", fmt::join(sentences, "; "), tail);
}

std::vector<std::string> DisagreementReasons(const std::vector<ToolPrediction>& all) {
  std::vector<std::string> lines;
  for (const ExplainHeadliner& h : kExplainHeadliners) {
    const ToolPrediction* p = Find(all, h.tool);
    if (p == nullptr) continue;
    std::string why = p->error.empty() ? p->key_reason : p->error;
    if (!why.empty()) lines.push_back(fmt::format("{}: {}", h.name, why));
  }
  return lines;
}

int CrossCheck::mismatches() const {
  return static_cast<int>(
      std::count_if(items.begin(), items.end(), [](const CrossCheckItem& i) { return !i.match; }));
}

CrossCheck CompareWithModels(const LiveAlignment& live, const Topology& seen) {
  CrossCheck check;
  check.topology = seen;
  auto add = [&](std::string what, const std::string& live_value, const std::string& model_value) {
    check.items.push_back({std::move(what), live_value, model_value, live_value == model_value});
  };
  auto align_text = [](const SectorAlignment& a) {
    return fmt::format("grain {} offset {}", a.grain_sectors, a.offset_sectors);
  };
  if (!live.parted_error.empty()) check.errors.push_back("libparted: " + live.parted_error);
  if (live.libparted_version && (live.parted_minimum || live.parted_optimum)) {
    Result<PartedModel> m = MakePartedModel(seen, *live.libparted_version);
    std::string v = live.libparted_version->ToString();
    if (!m) {
      check.errors.push_back(fmt::format("libparted {}: {}", v, m.error().message));
    } else {
      if (live.parted_optimum) {
        add(fmt::format("libparted {} optimum alignment", v), align_text(*live.parted_optimum),
            align_text(m->optimum));
      }
      if (live.parted_minimum) {
        add(fmt::format("libparted {} minimum alignment", v), align_text(*live.parted_minimum),
            align_text(m->minimum));
      }
    }
  }
  if (!live.fdisk_error.empty()) check.errors.push_back("libfdisk: " + live.fdisk_error);
  if (live.libfdisk_version) {
    Result<LibfdiskContext> c = DiscoverLibfdisk(seen, *live.libfdisk_version);
    std::string v = live.libfdisk_version->ToString();
    if (!c) {
      check.errors.push_back(fmt::format("libfdisk {}: {}", v, c.error().message));
    } else {
      auto cmp = [&](std::string_view what, const std::optional<uint64_t>& value, uint64_t model) {
        if (value)
          add(fmt::format("libfdisk {} {}", v, what), std::to_string(*value),
              std::to_string(model));
      };
      cmp("sector size", live.fdisk_sector_size, c->sector_size);
      cmp("physical sector size", live.fdisk_physical_sector_size, c->phy_sector_size);
      cmp("minimum I/O size", live.fdisk_minimum_io_size, c->min_io_size);
      cmp("optimal I/O size", live.fdisk_optimal_io_size,
          c->optimal_io_size != 0 ? c->optimal_io_size : c->io_size);
      cmp("alignment offset", live.fdisk_alignment_offset, c->alignment_offset);
      cmp("grain (bytes)", live.fdisk_grain_bytes, c->grain_bytes);
      cmp("first LBA", live.fdisk_first_lba, c->first_lba);
      Result<LibfdiskLabel> gpt = CreateLibfdiskLabel(*c, LabelType::kGpt);
      Result<LibfdiskLabel> dos = CreateLibfdiskLabel(*c, LabelType::kDos);
      if (gpt) {
        cmp("fresh GPT first usable LBA", live.fdisk_gpt_first_usable_lba, gpt->first_usable_lba);
        SfdiskPlacement s = PredictSfdisk(*gpt);
        if (s.first_start)
          cmp("fresh GPT first partition", live.fdisk_first_start_gpt, *s.first_start);
      }
      if (dos) {
        SfdiskPlacement s = PredictSfdisk(*dos);
        if (s.first_start)
          cmp("fresh DOS first partition", live.fdisk_first_start_dos, *s.first_start);
      }
    }
  }
  return check;
}

ExplainReport BuildExplainReport(const DeviceInfo& device, const ToolVersions& versions,
                                 const std::vector<uint64_t>& existing_gpt_starts, LabelType label,
                                 const InstallerVersions& installers) {
  ExplainReport r;
  r.device = device;
  r.label = label;
  r.findings = CheckDevice(device);
  r.predictions = PredictAll(device.topology, versions, existing_gpt_starts);
  r.installer_predictions = PredictInstallers(device.topology, installers, versions.parted.version);
  r.sentence = DisagreementSentence(r.predictions, device.topology, label);
  r.why = DisagreementReasons(r.predictions);
  return r;
}

nlohmann::json PredictionJson(const ToolPrediction& p) {
  nlohmann::json j;
  j["tool"] = p.tool;
  j["version"] = p.version ? nlohmann::json(p.version->ToString()) : nlohmann::json(nullptr);
  j["version_source"] = ToString(p.version_source);
  j["era"] = p.era;
  j["grain_sectors"] = OptionalJson(p.grain_sectors);
  j["offset_sectors"] = OptionalJson(p.offset_sectors);
  j["first_start_gpt"] = OptionalJson(p.first_start_gpt);
  j["first_start_dos"] = OptionalJson(p.first_start_dos);
  j["second_start_gpt"] = OptionalJson(p.second_start_gpt);
  j["second_start_dos"] = OptionalJson(p.second_start_dos);
  j["warns_at_1mib"] = OptionalJson(p.warns_at_1mib);
  j["warning_at_1mib"] = OptionalJson(p.warning_at_1mib);
  j["error_at_1mib"] = OptionalJson(p.error_at_1mib);
  j["align_check_at_1mib"] = OptionalJson(p.align_check_at_1mib);
  j["warnings"] = p.warnings;
  j["reasons"] = p.reasons;
  j["gpt_error"] = p.gpt_error.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.gpt_error);
  j["dos_error"] = p.dos_error.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.dos_error);
  j["error"] = p.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.error);
  return j;
}

nlohmann::json ExplainJson(const ExplainReport& r) {
  nlohmann::json predictions = nlohmann::json::array();
  for (const ToolPrediction& p : r.predictions) predictions.push_back(PredictionJson(p));
  nlohmann::json installer_predictions = nlohmann::json::array();
  for (const ToolPrediction& p : r.installer_predictions) {
    installer_predictions.push_back(PredictionJson(p));
  }
  nlohmann::json topology = TopologyJson(r.device, r.findings);
  if (r.hypothetical) topology["device"] = nullptr;
  nlohmann::json cross = nullptr;
  if (r.cross_check) {
    const CrossCheck& c = *r.cross_check;
    nlohmann::json items = nlohmann::json::array();
    for (const CrossCheckItem& i : c.items) {
      items.push_back({{"what", i.what}, {"live", i.live}, {"model", i.model}, {"match", i.match}});
    }
    const Topology& t = c.topology;
    cross = {{"topology",
              {{"logical_sector_size", t.logical_sector_size},
               {"physical_sector_size", t.physical_sector_size},
               {"minimum_io_size", t.minimum_io_size},
               {"optimal_io_size", t.optimal_io_size},
               {"alignment_offset", t.alignment_offset},
               {"source", ToString(t.origin)}}},
             {"note", c.note.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.note)},
             {"items", items},
             {"mismatches", c.mismatches()},
             {"errors", c.errors}};
  }
  return {{"schema_version", kJsonSchemaVersion},
          {"partalign_version", kVersion},
          {"topology", topology},
          {"sentence", r.sentence},
          {"why", r.why},
          {"predictions", predictions},
          {"installer_predictions", installer_predictions},
          {"cross_check", cross}};
}

std::vector<std::vector<std::string>> ExplainTableRows(const ExplainReport& r) {
  return PredictionRows(r.predictions);
}

std::vector<std::vector<std::string>> PredictionRows(const std::vector<ToolPrediction>& all) {
  std::vector<std::vector<std::string>> rows;
  for (const ToolPrediction& p : all) {
    std::string version = p.version ? p.version->ToString() : "-";
    if (p.version_source == VersionSource::kNewestKnown && p.version) version += "*";
    std::string warns = p.error_at_1mib   ? "no (refuses)"
                        : p.warns_at_1mib ? (*p.warns_at_1mib ? "yes" : "no")
                                          : "-";
    if (!p.error.empty()) {
      rows.push_back({p.tool, version, "-", "-", "-", "-", "-"});
      continue;
    }
    rows.push_back({p.tool, version, OrDash(p.grain_sectors), OrDash(p.offset_sectors),
                    OrDash(p.first_start_gpt), OrDash(p.first_start_dos), warns});
  }
  return rows;
}

std::vector<std::string> ExplainDetailLines(const ExplainReport& r) {
  std::vector<std::string> lines;
  bool any_newest = false;
  for (const ToolPrediction& p : r.predictions) {
    std::string head = p.tool;
    if (p.project && p.version) {
      head += fmt::format(": {} {} ({}, {})", ToString(*p.project), p.version->ToString(),
                          ToString(p.version_source), p.era);
      any_newest |= p.version_source == VersionSource::kNewestKnown;
    }
    lines.push_back(head);
    if (!p.error.empty()) lines.push_back("  cannot predict: " + p.error);
    for (const std::string& reason : p.reasons) lines.push_back("  " + reason);
    if (p.align_check_at_1mib) {
      lines.push_back(fmt::format("  align-check {} 1 on a partition at 1 MiB: {}",
                                  p.tool == "parted-optimal" ? "opt" : "min",
                                  *p.align_check_at_1mib));
    }
    for (const std::string& w : p.warnings) lines.push_back("  prints: " + w);
  }
  if (any_newest) {
    lines.push_back(
        "* not installed here: the newest version partalign knows is assumed "
        "(--tool-version TOOL=X.Y asks about another)");
  }
  if (r.cross_check) {
    const CrossCheck& c = *r.cross_check;
    int bad = c.mismatches();
    lines.push_back(
        fmt::format("cross-check against the linked libraries{}: {} values, {}",
                    c.note.empty() ? "" : " (" + c.note + ")", c.items.size(),
                    bad == 0 ? "all match the models" : fmt::format("{} MISMATCH", bad)));
    for (const CrossCheckItem& i : c.items) {
      lines.push_back(fmt::format("  {}{}: live {}, model {}", i.match ? "" : "MISMATCH ", i.what,
                                  i.live, i.model));
    }
    for (const std::string& e : c.errors) lines.push_back("  not checked: " + e);
  }
  return lines;
}

}  // namespace partalign
