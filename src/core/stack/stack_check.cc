// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/stack/stack_check.h"

#include <algorithm>

#include <fmt/format.h>

#include "partalign/tools/pvcreate_model.h"
#include "partalign/tools/stack_tool_version.h"
#include "partalign/topology/alignment.h"

namespace partalign {
namespace {

// (value - offset) mod m, as the mathematical remainder (m > 0).
uint64_t OffsetMod(uint64_t value, uint64_t offset, uint64_t m) {
  return (value % m + m - offset % m) % m;
}

std::string Arithmetic(uint64_t value, uint64_t offset, uint64_t m) {
  const uint64_t rest = OffsetMod(value, offset, m);
  if (offset == 0) return fmt::format("data at {} bytes, {} % {} = {}", value, value, m, rest);
  return fmt::format("data at {} bytes, ({} - {}) % {} = {}", value, value, offset, m, rest);
}

StackCheck Modulo(std::string key, bool required, uint64_t value, uint64_t offset, uint64_t m) {
  return {std::move(key), true, OffsetMod(value, offset, m) == 0, required,
          Arithmetic(value, offset, m)};
}

StackCheck NotApplicable(std::string key, bool required, std::string why) {
  return {std::move(key), false, true, required, std::move(why)};
}

// The layer this one sits on (the nearest earlier layer one level down), or nullptr.
const StackLayer* Parent(const std::vector<StackLayer>& layers, size_t i) {
  for (size_t j = i; j-- > 0;) {
    if (layers[j].depth == layers[i].depth - 1) return &layers[j];
    if (layers[j].depth < layers[i].depth - 1) return nullptr;
  }
  return nullptr;
}

// A layer that spreads the data above it over several devices in units: an MD member of a
// striped level, an LV segment with more than one stripe.
bool Stripes(const StackLayer& l) {
  return l.geometry.stripe_unit_bytes && *l.geometry.stripe_unit_bytes != 0 &&
         l.kind != LayerKind::kFilesystem && l.geometry.stripe_count &&
         (*l.geometry.stripe_count > 1 || l.kind == LayerKind::kMdMember);
}

// The nearest striped layer below layer i.
const StackLayer* StripedAncestor(const std::vector<StackLayer>& layers, size_t i) {
  for (const StackLayer* p = Parent(layers, i); p != nullptr;
       p = Parent(layers, static_cast<size_t>(p - layers.data()))) {
    if (Stripes(*p)) return p;
  }
  return nullptr;
}

// The smallest stripe unit of the layers above layer i (its subtree), if any.
std::optional<uint64_t> SmallestStripeAbove(const std::vector<StackLayer>& layers, size_t i) {
  std::optional<uint64_t> smallest;
  for (size_t j = i + 1; j < layers.size() && layers[j].depth > layers[i].depth; ++j) {
    if (Stripes(layers[j])) {
      smallest = std::min(smallest.value_or(UINT64_MAX), *layers[j].geometry.stripe_unit_bytes);
    }
  }
  return smallest;
}

// "every 8 KiB stripe unit spans 3 physical 4 KiB blocks instead of 2" for a start `rest`
// bytes past a `block` boundary. A read-modify-write is claimed only where the disk's
// `physical` sector makes one: a start off by a multiple of it writes whole physical sectors.
std::string Consequence(uint64_t rest, uint64_t block, std::optional<uint64_t> stripe,
                        uint64_t physical) {
  const uint64_t unit = stripe.value_or(block);
  const uint64_t spans = (rest + unit + block - 1) / block;
  const uint64_t ideal = (unit + block - 1) / block;
  if (stripe) {
    return fmt::format("every {} stripe unit spans {} {}-byte blocks instead of {}",
                       FormatSize(unit), spans, block, ideal);
  }
  if (physical != 0 && rest % physical == 0) {
    return fmt::format(
        "every {}-byte block written spans {} 4 KiB blocks instead of {}: no read-modify-write "
        "on this disk's {}-byte physical sectors, one on a disk with 4 KiB physical sectors "
        "(512e) or flash pages",
        block, spans, ideal, physical);
  }
  if (physical != 0 && physical != block) {
    const uint64_t p_spans = (rest % physical + block + physical - 1) / physical;
    return fmt::format(
        "every {}-byte block written spans {} physical {}-byte sectors instead of {} "
        "(a read-modify-write)",
        block, p_spans, physical, (block + physical - 1) / physical);
  }
  return fmt::format(
      "every {}-byte block written spans {} physical blocks instead of {} "
      "(a read-modify-write)",
      block, spans, ideal);
}

std::string CheckLabel(std::string_view key, const Topology& t) {
  if (key == "physical_sector") return fmt::format("physical sector ({})", t.physical_sector_size);
  if (key == "minimum_io") return fmt::format("minimum I/O size ({})", t.minimum_io_size);
  if (key == "optimal_io") return fmt::format("optimal I/O size ({})", t.optimal_io_size);
  if (key == "layer_below") return "stripe unit of the layer below";
  return std::string(key);
}

std::string Where(const StackLayer& l, uint64_t parent_start) {
  return fmt::format("{} data starts at byte {} = {} + {}", l.name, l.data_offset_bytes,
                     parent_start, l.offset_in_parent_bytes);
}

// The stripe geometry a filesystem should record: the striped layer below, or a device that
// reports a chunk (minimum I/O above the physical sector) and a stripe (sane optimal I/O).
struct ExpectedStripes {
  uint64_t unit = 0;
  uint64_t width = 0;
  std::string source;
};

std::optional<ExpectedStripes> StripesBelow(const std::vector<StackLayer>& layers, size_t i,
                                            const Topology& t) {
  if (const StackLayer* s = StripedAncestor(layers, i)) {
    const uint64_t unit = *s->geometry.stripe_unit_bytes;
    return ExpectedStripes{
        unit, s->geometry.stripe_width_bytes.value_or(unit * s->geometry.stripe_count.value_or(1)),
        s->name};
  }
  if (t.minimum_io_size > t.physical_sector_size && IsSaneOptimalIo(t)) {
    return ExpectedStripes{t.minimum_io_size, t.optimal_io_size,
                           "the disk (minimum/optimal I/O size)"};
  }
  return std::nullopt;
}

std::string FsStripeAdvice(const StackLayer& fs, const ExpectedStripes& below) {
  const uint64_t block = fs.geometry.block_size_bytes.value_or(4096);
  if (fs.name.rfind("xfs", 0) == 0) {
    return fmt::format("mkfs.xfs -d su={},sw={} (or mount -o sunit={},swidth={})", below.unit,
                       below.unit ? below.width / below.unit : 0, below.unit / 512,
                       below.width / 512);
  }
  return fmt::format("tune2fs -E stride={},stripe_width={}", below.unit / block,
                     below.width / block);
}

StackCheck FsStripeCheck(const StackLayer& fs, const std::optional<ExpectedStripes>& below) {
  const uint64_t su = fs.geometry.stripe_unit_bytes.value_or(0);
  const uint64_t sw = fs.geometry.stripe_width_bytes.value_or(0);
  const std::string has =
      su == 0 ? std::string("records no stripe geometry")
              : fmt::format("records stripe unit {} and width {}", FormatSize(su), FormatSize(sw));
  if (!below) {
    if (su == 0) return NotApplicable("stripe_geometry", false, "nothing below is striped");
    return {"stripe_geometry", true, false, false,
            fmt::format("the filesystem {}, but nothing below it is striped", has)};
  }
  const bool ok = su == below->unit && (sw == below->width || below->width == 0);
  return {"stripe_geometry",
          true,
          ok,
          false,
          fmt::format("the filesystem {}; {} stripes {} units, {} wide", has, below->source,
                      FormatSize(below->unit), FormatSize(below->width)),
          ok ? std::string() : FsStripeAdvice(fs, *below)};
}

void AddPvcreateReason(StackLayer* pv, const Topology& t, uint64_t parent_start,
                       const StackLayer* parent, const ToolVersion& lvm2) {
  if (parent != nullptr) return;  // a PV on an MD or LUKS device saw that device's limits
  Topology seen = t;
  seen.alignment_offset = PartitionAlignmentOffset(t, parent_start);
  seen.size_bytes = 0;
  const PvcreatePrediction p = PredictPvcreate(seen, lvm2);
  if (!p.error.empty()) return;
  const uint64_t pe_start = pv->offset_in_parent_bytes;
  const std::string lvm = VersionText(StackTool::kLvm2, lvm2);
  if (pe_start == p.pe_start_bytes) {
    if (pe_start != kMiB) {
      pv->reasons.push_back(
          fmt::format("pe_start {} is what pvcreate (lvm2 {}) chooses on this "
                      "topology: {}",
                      pe_start, lvm, p.key_reason));
    }
  } else if (pe_start != kMiB) {
    pv->reasons.push_back(fmt::format(
        "(informational) pe_start {} is not what pvcreate (lvm2 {}) chooses on this topology "
        "({}): it was set with --dataalignment or --dataalignmentoffset, by another lvm2 "
        "version, or under another topology",
        pe_start, lvm, p.pe_start_bytes));
  }
}

void CheckLayer(std::vector<StackLayer>& layers, size_t i, const Topology& t,
                uint64_t container_start, const StackCheckOptions& options) {
  StackLayer& l = layers[i];
  const StackLayer* parent = Parent(layers, i);
  const uint64_t parent_start = parent ? parent->data_offset_bytes : container_start;
  const uint64_t d = l.data_offset_bytes;
  const uint64_t off = t.alignment_offset;
  l.checks.clear();
  l.reasons.clear();
  l.checks.push_back(Modulo("four_kib", true, d, off, kStackBlockBytes));
  if (t.physical_sector_size != 0) {
    l.checks.push_back(Modulo("physical_sector", true, d, off, t.physical_sector_size));
  } else {
    l.checks.push_back(NotApplicable("physical_sector", true, "no physical sector size"));
  }
  if (t.minimum_io_size != 0) {
    l.checks.push_back(Modulo("minimum_io", true, d, off, t.minimum_io_size));
  } else {
    l.checks.push_back(NotApplicable("minimum_io", true, "no minimum I/O size reported"));
  }
  if (IsSaneOptimalIo(t)) {
    l.checks.push_back(Modulo("optimal_io", true, d, off, t.optimal_io_size));
  } else {
    l.checks.push_back(NotApplicable(
        "optimal_io", true,
        t.optimal_io_size == 0 ? std::string("no optimal I/O size reported")
                               : fmt::format("optimal I/O {} is not a usable stripe size, ignored",
                                             t.optimal_io_size)));
  }
  l.checks.push_back(Modulo("grain", false, d, off, options.grain_bytes));
  if (const StackLayer* s = StripedAncestor(layers, i)) {
    const uint64_t unit = *s->geometry.stripe_unit_bytes;
    const uint64_t inside = d >= s->data_offset_bytes ? d - s->data_offset_bytes : 0;
    l.checks.push_back({"layer_below", true, inside % unit == 0, true,
                        fmt::format("{} bytes into {}, whose stripe unit is {}: {} % {} = {}",
                                    inside, s->name, unit, inside, unit, inside % unit)});
  } else {
    l.checks.push_back(NotApplicable("layer_below", true, "nothing below is striped"));
  }
  if (Stripes(l)) {
    const uint64_t unit = *l.geometry.stripe_unit_bytes;
    const bool ok =
        unit >= kSmallStripeBytes && unit % std::max<uint64_t>(1, t.physical_sector_size) == 0;
    l.checks.push_back(
        {"stripe_unit", true, ok, false,
         fmt::format("stripe unit {} bytes, at least {} wanted", unit, kSmallStripeBytes)});
  } else {
    l.checks.push_back(NotApplicable("stripe_unit", false, "not striped"));
  }
  if (l.kind == LayerKind::kFilesystem) {
    l.checks.push_back(FsStripeCheck(l, StripesBelow(layers, i, t)));
  } else {
    l.checks.push_back(NotApplicable("stripe_geometry", false, "not a filesystem"));
  }
  if (l.kind == LayerKind::kLvmPv && l.geometry.extent_size_bytes) {
    const uint64_t unit = StackRequiredUnit(t);
    const uint64_t extent = *l.geometry.extent_size_bytes;
    l.checks.push_back(
        {"extent_size", true, extent % unit == 0, false,
         fmt::format("extent size {} bytes, {} % {} = {}", extent, extent, unit, extent % unit)});
  } else {
    l.checks.push_back(NotApplicable("extent_size", false, "not an LVM2 PV"));
  }
  l.aligned = std::all_of(l.checks.begin(), l.checks.end(),
                          [](const StackCheck& c) { return !c.required || !c.applicable || c.ok; });

  // A layer inside a misaligned one starts where it does because of it: one sentence says so,
  // instead of repeating the arithmetic (its own stripe and geometry notes still follow).
  Topology relative = t;  // the offset inside the parent, without the disk's alignment offset
  relative.alignment_offset = 0;
  const bool inherits = parent != nullptr && !parent->aligned && !l.aligned &&
                        StackOffsetAligned(relative, l.offset_in_parent_bytes);
  if (inherits) {
    l.reasons.push_back(
        fmt::format("{} starts {} bytes into {}, whose data is misaligned: it "
                    "inherits that offset",
                    l.name, l.offset_in_parent_bytes, parent->name));
  }
  // The sentences: required failures first, with what they cost.
  const StackCheck& four = l.checks[0];
  if (!four.ok && !inherits) {
    const uint64_t rest = OffsetMod(d, off, kStackBlockBytes);
    l.reasons.push_back(fmt::format(
        "{}, {} bytes past a 4 KiB boundary: {}", Where(l, parent_start), rest,
        Consequence(rest, kStackBlockBytes,
                    Stripes(l) ? l.geometry.stripe_unit_bytes : SmallestStripeAbove(layers, i),
                    t.physical_sector_size)));
  }
  for (const StackCheck& c : l.checks) {
    if (!c.applicable || c.ok || &c == &four) continue;
    // A physical sector or minimum I/O of 4 KiB fails exactly like four_kib: said once.
    if (c.required && c.detail != four.detail && !inherits) {
      l.reasons.push_back(
          fmt::format("{}: data is off the {}: {}", l.name, CheckLabel(c.key, t), c.detail));
    }
  }
  for (const StackCheck& c : l.checks) {
    if (!c.applicable || c.ok || c.required) continue;
    if (c.key == "grain") {
      if (inherits) continue;
      l.reasons.push_back(fmt::format("(informational) {} data is not on a {} boundary: {}", l.name,
                                      FormatSize(options.grain_bytes), c.detail));
    } else if (c.key == "stripe_unit") {
      l.reasons.push_back(fmt::format(
          "(risk) {}: stripe unit {} is below {}: every I/O larger than it is split across "
          "devices, and on flash a unit smaller than a NAND page (16 KiB is common) costs a "
          "read-modify-write",
          l.name, FormatSize(*l.geometry.stripe_unit_bytes), FormatSize(kSmallStripeBytes)));
    } else if (c.key == "stripe_geometry") {
      std::string fix = c.fix.empty() ? "" : "; " + c.fix + " would match it";
      l.reasons.push_back(fmt::format("(informational) {}: {}{}", l.name, c.detail, fix));
    } else {
      l.reasons.push_back(fmt::format("(informational) {}: {}: {}", l.name, c.key, c.detail));
    }
  }
  if (l.kind == LayerKind::kLvmPv && options.lvm2_version) {
    AddPvcreateReason(&l, t, parent_start, parent, *options.lvm2_version);
  }
}

}  // namespace

uint64_t StackRequiredUnit(const Topology& t) {
  uint64_t unit = kStackBlockBytes;
  if (t.physical_sector_size != 0) unit = Lcm(unit, t.physical_sector_size);
  if (t.minimum_io_size != 0) unit = Lcm(unit, t.minimum_io_size);
  if (IsSaneOptimalIo(t)) unit = Lcm(unit, t.optimal_io_size);
  return unit;
}

bool StackOffsetAligned(const Topology& t, uint64_t data_offset_bytes) {
  return OffsetMod(data_offset_bytes, t.alignment_offset, StackRequiredUnit(t)) == 0;
}

void CheckStack(StackWalk* walk, const Topology& topology, uint64_t container_start_bytes,
                const StackCheckOptions& options) {
  for (size_t i = 0; i < walk->layers.size(); ++i) {
    CheckLayer(walk->layers, i, topology, container_start_bytes, options);
  }
}

}  // namespace partalign
