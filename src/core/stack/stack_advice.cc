// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/stack/stack_advice.h"

#include <fmt/format.h>

#include "partalign/stack/stack_check.h"
#include "partalign/tools/luks_format_model.h"
#include "partalign/topology/alignment.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

// lvm2 and mdadm sizes: "1m", "3m", or bytes with a "b" suffix when not whole MiB.
std::string SizeArgument(uint64_t bytes, const char* byte_suffix) {
  if (bytes % kMiB == 0) return fmt::format("{}m", bytes / kMiB);
  if (bytes % kKiB == 0) return fmt::format("{}k", bytes / kKiB);
  return fmt::format("{}{}", bytes, byte_suffix);
}

bool ParentAligned(const std::vector<StackLayer>& layers, size_t i) {
  for (size_t j = i; j-- > 0;) {
    if (layers[j].depth == layers[i].depth - 1) return layers[j].aligned;
    if (layers[j].depth < layers[i].depth - 1) break;
  }
  return true;
}

std::string Property(const StackLayer& l, const char* key) {
  auto it = l.properties.find(key);
  return it != l.properties.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// What fixes `l` inside its own layer, with an offset that is a multiple of `unit`.
std::string FixInside(const StackLayer& l, uint64_t unit) {
  switch (l.kind) {
    case LayerKind::kLvmPv: {
      const std::string vg = Property(l, "vg");
      if (vg.empty()) {
        return fmt::format(
            "a new PV (it is in no VG: no extents to move): pvremove DEV, then pvcreate "
            "--dataalignment {} DEV",
            SizeArgument(unit, "b"));
      }
      return fmt::format(
          "a new PV: move the extents off it (vgextend {0} OTHER_PV; pvmove DEV), vgreduce {0} "
          "DEV; pvremove DEV, then pvcreate --dataalignment {1} DEV",
          vg, SizeArgument(unit, "b"));
    }
    case LayerKind::kLvmSegment:
      return fmt::format(
          "move the segment to extents that start on a multiple of {} bytes (pvmove), or use a VG "
          "whose extent size is a multiple of it (vgcreate -s {})",
          unit, SizeArgument(Lcm(unit, 4 * kMiB), "b"));
    case LayerKind::kLuks: {
      const uint64_t offset = AlignUp(kLuks2DefaultHeaderBytes, unit);
      // cryptsetup 2.6 cannot move the payload of a header kept on the device in place:
      // reencrypt --encrypt wants --reduce-device-size or a detached header, and decrypting
      // LUKS1 needs device-mapper. Formatting anew is what works everywhere.
      return fmt::format(
          "back up what it holds, cryptsetup luksFormat --type luks2 --offset {} DEV (512-byte "
          "sectors: the payload at byte {}), and restore; cryptsetup reencrypt cannot move the "
          "payload in place while the header stays on the device",
          offset / 512, offset);
    }
    case LayerKind::kMdMember:
      return fmt::format(
          "mdadm --grow /dev/mdN --data-offset={} (a reshape that rewrites the array), or "
          "re-create the member with mdadm --create ... --data-offset={}",
          SizeArgument(AlignUp(kMiB, unit), "s"), SizeArgument(AlignUp(kMiB, unit), "s"));
    case LayerKind::kFilesystem:
      return "re-create the filesystem at an aligned offset (back up, mkfs, restore)";
  }
  return {};
}

}  // namespace

std::vector<StackAdvice> AdviseStack(const StackWalk& walk, const Topology& t, uint32_t partition,
                                     uint64_t start_bytes, std::optional<uint64_t> new_start,
                                     uint64_t grain_bytes) {
  std::vector<StackAdvice> out;
  const uint64_t unit = StackRequiredUnit(t);
  for (size_t i = 0; i < walk.layers.size(); ++i) {
    const StackLayer& l = walk.layers[i];
    if (!l.aligned && ParentAligned(walk.layers, i)) {
      StackAdvice a{partition, l.name};
      const uint64_t inside = l.data_offset_bytes - start_bytes;
      const StackCheck* below = l.Check("layer_below");
      const bool below_ok = below == nullptr || !below->applicable || below->ok;
      if (new_start && below_ok && StackOffsetAligned(t, *new_start + inside)) {
        a.fixed_by_plan = true;
        a.text = fmt::format(
            "the plan moves the partition to byte {}: the data will start at "
            "byte {} = {} + {}, aligned",
            *new_start, *new_start + inside, *new_start, inside);
      } else if (below_ok && partition != 0 && inside % unit == 0) {
        // The layer starts on a multiple of the unit inside the partition (a filesystem at +0):
        // the partition's start is all that misaligns it, and any aligned start fixes it.
        a.text = fmt::format(
            "an aligned partition start fixes it: its data starts {} bytes into the partition, a "
            "multiple of {}; the plan does not move the partition there (its line in the plan says "
            "why, and what would align it: room, or the next boot for a partition in use)",
            inside, unit);
      } else {
        const uint64_t rest = inside % unit;
        a.text = fmt::format(
            "no partition start fixes it: its data starts {} bytes into the {}, {} bytes past "
            "a multiple of {} (4 KiB, the physical sector and the I/O sizes)",
            inside, partition == 0 ? "disk" : "partition", rest, unit);
        if (!below_ok) a.text = "no partition start fixes it: " + below->detail;
        a.command = FixInside(l, Lcm(unit, grain_bytes));
      }
      out.push_back(std::move(a));
    }
    const StackCheck* stripes = l.Check("stripe_geometry");
    if (stripes && stripes->applicable && !stripes->ok) {
      StackAdvice a{partition, l.name};
      a.informational = true;
      a.text = stripes->detail;
      a.command = stripes->fix;
      out.push_back(std::move(a));
    }
  }
  return out;
}

std::vector<std::string> StackAdviceLines(const std::vector<StackAdvice>& advice) {
  std::vector<std::string> lines;
  for (const StackAdvice& a : advice) {
    const std::string where =
        a.partition == 0 ? std::string("whole disk") : fmt::format("partition {}", a.partition);
    std::string line = fmt::format("{}: {}{}: {}", where, a.layer,
                                   a.informational ? " (informational)" : "", a.text);
    if (!a.command.empty()) line += fmt::format("; fix: {}", a.command);
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace partalign
