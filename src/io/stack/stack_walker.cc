// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/stack/stack_walker.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "io/device/blkid_probe.h"
#include "io/device/target.h"
#include "io/stack/luks_header.h"
#include "io/stack/lvm_reader.h"
#include "io/stack/md_reader.h"
#include "partalign/stack/fs_geometry.h"
#include "partalign/util/checked_math.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

struct Region {
  uint64_t offset = 0;  ///< from the disk's start
  uint64_t size = 0;
};

class Walker {
 public:
  Walker(int fd, const std::string& path, StackWalk* out) : fd_(fd), path_(path), out_(out) {}

  void Walk(Region r, int depth, std::optional<std::string> type, uint64_t parent_data) {
    if (depth > kMaxStackDepth) {
      Error(fmt::format("layers nest deeper than {} at byte {}", kMaxStackDepth, r.offset));
      return;
    }
    if (!type) {
      Result<PartitionContents> contents = ProbePartitionContents(fd_, path_, r.offset, r.size);
      if (!contents) {
        Error(contents.error().message);
        return;
      }
      type = contents->fs_type;
    }
    if (*type == "crypto_LUKS") {
      Luks(r, depth, parent_data);
    } else if (*type == "LVM2_member") {
      Pv(r, depth, parent_data);
    } else if (*type == "linux_raid_member") {
      Md(r, depth, parent_data);
    } else if (!type->empty() && *type != "swap" && *type != "ambivalent") {
      Filesystem(r, depth, *type, parent_data);
    }
  }

 private:
  void Error(std::string message) { out_->errors.push_back(std::move(message)); }

  // Appends a layer at `data` bytes from the disk's start, `data - parent_data` into its
  // parent; returns its index (references into the vector do not survive later appends).
  size_t Add(LayerKind kind, std::string name, int depth, uint64_t data, uint64_t parent_data) {
    out_->layers.push_back(MakeLayer(kind, std::move(name), depth, data, data - parent_data));
    return out_->layers.size() - 1;
  }
  StackLayer& At(size_t i) { return out_->layers[i]; }

  // `offset` bytes into `r`, or an error when that leaves it.
  std::optional<uint64_t> Inside(Region r, uint64_t offset, std::string_view what) {
    std::optional<uint64_t> at = CheckedAdd(r.offset, offset);
    if (!at || offset >= r.size) {
      Error(fmt::format("{} at {} bytes lies past the end of its {} bytes", what, offset, r.size));
      return std::nullopt;
    }
    return at;
  }

  void Luks(Region r, int depth, uint64_t parent_data) {
    Result<LuksHeaderInfo> info = ReadLuksHeader(fd_, path_, r.offset, r.size);
    if (!info) {
      Error(info.error().message);
      return;
    }
    std::optional<uint64_t> data = Inside(r, info->data_offset_bytes, "the LUKS payload");
    if (!data) return;
    size_t i =
        Add(LayerKind::kLuks, fmt::format("LUKS{}", info->version), depth, *data, parent_data);
    StackLayer& l = At(i);
    l.geometry.block_size_bytes = info->encryption_sector_bytes;
    l.properties = {{"version", info->version},
                    {"payload_offset_bytes", info->data_offset_bytes},
                    {"encryption_sector_bytes", info->encryption_sector_bytes}};
    if (info->version == 2) {
      l.properties["metadata_bytes"] = info->metadata_bytes;
      l.properties["keyslots_bytes"] = info->keyslots_bytes;
    }
    l.notes.push_back(
        "encrypted: what lies above cannot be read without the key; it starts at "
        "this payload offset and inherits its alignment");
  }

  void Pv(Region r, int depth, uint64_t parent_data) {
    Result<LvmPvRead> pv = ReadLvmPv(fd_, path_, r.offset, r.size);
    if (!pv) {
      Error(pv.error().message);
      return;
    }
    const uint64_t pe_start = pv->label.pe_start_bytes();
    std::optional<uint64_t> data = Inside(r, pe_start, "the LVM2 PV data area");
    if (!data) return;
    std::string name = pv->vg ? fmt::format("LVM2 PV (VG {})", pv->vg->name) : "LVM2 PV (no VG)";
    size_t i = Add(LayerKind::kLvmPv, std::move(name), depth, *data, parent_data);
    At(i).properties = {{"pv_uuid", FormatLvmUuid(pv->label.pv_uuid)},
                        {"pe_start_bytes", pe_start}};
    At(i).notes = pv->warnings;
    if (!pv->vg) return;
    const LvmVolumeGroup& vg = *pv->vg;
    const LvmPhysicalVolume* me = vg.FindPvByUuid(FormatLvmUuid(pv->label.pv_uuid));
    At(i).geometry.extent_size_bytes = vg.extent_size_bytes;
    At(i).properties["vg"] = vg.name;
    At(i).properties["pv_name"] = pv->pv_name;
    At(i).properties["extent_size_bytes"] = vg.extent_size_bytes;
    At(i).properties["pe_count"] = me->pe_count;
    if (me->pe_start_bytes != pe_start) {
      At(i).notes.push_back(
          fmt::format("the VG metadata says pe_start {}, the label {}; the "
                      "label is used",
                      me->pe_start_bytes, pe_start));
    }
    const uint64_t data_size = r.size - pe_start;
    for (const LvmLogicalVolume& lv : vg.logical_volumes) {
      for (size_t s = 0; s < lv.segments.size(); ++s) {
        const LvmSegment& seg = lv.segments[s];
        for (size_t k = 0; k < seg.stripes.size(); ++k) {
          if (seg.stripes[k].pv_name != pv->pv_name) continue;
          Segment(vg, lv, seg, s + 1, k, {*data, data_size}, depth + 1);
        }
      }
    }
  }

  void Segment(const LvmVolumeGroup& vg, const LvmLogicalVolume& lv, const LvmSegment& seg,
               size_t number, size_t stripe, Region pv_data, int depth) {
    const uint64_t count = std::max<uint64_t>(1, seg.stripe_count);
    const uint64_t extents = seg.extent_count / count;
    std::optional<uint64_t> offset =
        CheckedMul(seg.stripes[stripe].start_extent, vg.extent_size_bytes);
    std::optional<uint64_t> length = CheckedMul(extents, vg.extent_size_bytes);
    std::optional<uint64_t> end = offset && length ? CheckedAdd(*offset, *length) : std::nullopt;
    if (!end || *end > pv_data.size) {
      Error(
          fmt::format("LV {}/{} segment {} lies past the end of the PV", vg.name, lv.name, number));
      return;
    }
    const bool striped = count > 1;
    const std::string kind = seg.type == "striped" && !striped ? "linear" : seg.type;
    std::string name =
        striped
            ? fmt::format("LV {}/{} segment {} ({}, {} x {}), stripe {} of {}", vg.name, lv.name,
                          number, kind, count, FormatSize(seg.stripe_size_bytes), stripe + 1, count)
            : fmt::format("LV {}/{} segment {} ({})", vg.name, lv.name, number, kind);
    const uint64_t data = pv_data.offset + *offset;
    size_t i = Add(LayerKind::kLvmSegment, std::move(name), depth, data, pv_data.offset);
    StackLayer& l = At(i);
    l.properties = {{"lv", lv.name},
                    {"segment", number},
                    {"type", seg.type},
                    {"lv_start_extent", seg.start_extent},
                    {"pv_start_extent", seg.stripes[stripe].start_extent},
                    {"extent_count", extents}};
    if (striped) {
      l.geometry.stripe_unit_bytes = seg.stripe_size_bytes;
      l.geometry.stripe_count = count;
      l.geometry.stripe_width_bytes = seg.stripe_size_bytes * count;
      std::vector<std::string> others;
      for (const LvmStripe& s : seg.stripes) {
        if (s.pv_name == seg.stripes[stripe].pv_name) continue;
        std::string where = s.pv_name;
        for (const LvmPhysicalVolume& pv : vg.physical_volumes) {
          if (pv.name == s.pv_name && !pv.device.empty()) {
            where += fmt::format(" (last seen as {})", pv.device);
          }
        }
        others.push_back(std::move(where));
      }
      if (!others.empty()) {
        l.notes.push_back(
            fmt::format("the other stripes lie on {}: each PV is checked where it "
                        "lies, when that disk or partition is audited",
                        fmt::join(others, ", ")));
      }
    }
    // The LV's contents start in its first segment's first stripe.
    if (seg.start_extent != 0 || stripe != 0) return;
    if (!striped) {
      Walk({data, *length}, depth + 1, std::nullopt, data);
    } else {
      FsAtStripeStart(data, depth + 1, data);
    }
  }

  // A filesystem at the start of a striped volume: only its first stripe unit is on this disk,
  // so the superblock is read directly instead of through libblkid.
  void FsAtStripeStart(uint64_t at, int depth, uint64_t parent_data) {
    std::vector<uint8_t> head(kFsGeometryProbeBytes);
    Result<size_t> got = ReadAt(fd_, head.data(), head.size(), at, path_);
    if (!got) {
      Error(got.error().message);
      return;
    }
    head.resize(*got);
    if (std::optional<FsGeometry> g = DetectFsGeometry(head))
      AddFilesystem(*g, depth, at, parent_data);
  }

  void Md(Region r, int depth, uint64_t parent_data) {
    Result<MdSuperblock> sb = ReadMdSuperblock(fd_, path_, r.offset, r.size);
    if (!sb) {
      Error(sb.error().message);
      return;
    }
    std::optional<uint64_t> data = Inside(r, sb->data_offset_bytes, "the MD data area");
    if (!data) return;
    std::string role = sb->role ? fmt::format("role {} of {}", *sb->role, sb->raid_disks)
                                : std::string("spare or faulty");
    std::string name =
        fmt::format("MD {} member ({}, metadata {}{})", sb->level_name(), role,
                    ToString(sb->version), sb->array_name.empty() ? "" : ", " + sb->array_name);
    size_t i = Add(LayerKind::kMdMember, std::move(name), depth, *data, parent_data);
    StackLayer& l = At(i);
    l.properties = {{"level", sb->level_name()},
                    {"metadata_version", std::string(ToString(sb->version))},
                    {"raid_disks", sb->raid_disks},
                    {"role", sb->role ? nlohmann::json(*sb->role) : nlohmann::json(nullptr)},
                    {"chunk_bytes", sb->chunk_bytes},
                    {"data_offset_bytes", sb->data_offset_bytes}};
    if (sb->striped()) {
      l.geometry.stripe_unit_bytes = sb->chunk_bytes;
      l.geometry.stripe_count = sb->data_disks();
      l.geometry.stripe_width_bytes = sb->chunk_bytes * sb->data_disks();
    }
    const Region array{*data, sb->data_size_bytes};
    if (sb->level == 1 || (sb->level == -1 && sb->role == 0u)) {
      Walk(array, depth + 1, std::nullopt, *data);  // a mirror (or a linear array's start)
    } else if (sb->striped() && sb->role == 0u) {
      StripedArrayStart(i, array, depth + 1);
    } else {
      l.notes.push_back(
          "the array's first chunk lies on another member: what is above it is "
          "checked on that member");
    }
  }

  // The start of a striped array, on the member holding its first chunk: a PV label (only the
  // label: the metadata spreads over several members) or a filesystem superblock.
  void StripedArrayStart(size_t md, Region array, int depth) {
    const uint64_t chunk = *At(md).geometry.stripe_unit_bytes;
    const uint64_t width = *At(md).geometry.stripe_width_bytes;
    // Read directly, not through libblkid: only this chunk is the array's (the rest of the row
    // belongs to other stripes), and libblkid finds no PV in a one-chunk region (64 KiB holding
    // a real PV label, tests/io/stack/stack_walker_test.cc).
    std::vector<uint8_t> head(kLvmLabelScanBytes);
    Result<size_t> got = ReadAt(fd_, head.data(), head.size(), array.offset, path_);
    if (!got) return Error(got.error().message);
    head.resize(*got);
    Result<LvmLabel> label = ParseLvmLabel(head);
    if (label) {
      // Where array offset pe_start lands in this member's row of chunks.
      const uint64_t pe = label->pe_start_bytes();
      const uint64_t row = (pe / width) * chunk + pe % chunk;
      size_t i =
          Add(LayerKind::kLvmPv, "LVM2 PV on the array", depth, array.offset + row, array.offset);
      At(i).offset_in_parent_bytes = pe;
      At(i).properties = {{"pv_uuid", FormatLvmUuid(label->pv_uuid)}, {"pe_start_bytes", pe}};
      At(i).notes.push_back(fmt::format(
          "only the label is read: the VG metadata spreads over the members; data_offset_bytes "
          "is where array byte {} lies in this member's row of chunks",
          pe));
    } else {
      FsAtStripeStart(array.offset, depth, array.offset);
    }
  }

  void Filesystem(Region r, int depth, const std::string& type, uint64_t parent_data) {
    std::vector<uint8_t> head(static_cast<size_t>(std::min(kFsGeometryProbeBytes, r.size)));
    Result<size_t> got = ReadAt(fd_, head.data(), head.size(), r.offset, path_);
    if (!got) return Error(got.error().message);
    head.resize(*got);
    std::optional<FsGeometry> g = ReadFsGeometry(type, head);
    if (!g) {
      // Types without a stripe geometry partalign reads: the block size libblkid knows.
      Result<PartitionContents> contents = ProbePartitionContents(fd_, path_, r.offset, r.size);
      if (!contents || !contents->fs_block_size) return;
      g = FsGeometry{type, *contents->fs_block_size, 0, 0, std::nullopt};
    }
    AddFilesystem(*g, depth, r.offset, parent_data);
  }

  void AddFilesystem(const FsGeometry& g, int depth, uint64_t at, uint64_t parent_data) {
    size_t i = Add(LayerKind::kFilesystem, g.type, depth, at, parent_data);
    StackLayer& l = At(i);
    l.geometry.block_size_bytes = g.block_size_bytes;
    l.properties = {{"block_size_bytes", g.block_size_bytes}};
    if (g.stripe_unit_bytes != 0) {
      l.geometry.stripe_unit_bytes = g.stripe_unit_bytes;
      l.geometry.stripe_width_bytes = g.stripe_width_bytes;
      l.geometry.stripe_count = g.stripe_width_bytes / g.stripe_unit_bytes;
      l.properties["stripe_unit_bytes"] = g.stripe_unit_bytes;
      l.properties["stripe_width_bytes"] = g.stripe_width_bytes;
    }
    if (g.sector_size_bytes) {
      l.properties["sector_size_bytes"] = *g.sector_size_bytes;
    }
  }

  int fd_;
  const std::string& path_;
  StackWalk* out_;
};

}  // namespace

StackWalk WalkStack(int fd, const std::string& path, uint64_t offset, uint64_t size,
                    std::optional<std::string_view> known_type) {
  StackWalk walk;
  std::optional<std::string> type;
  if (known_type) {
    if (known_type->empty()) return walk;
    type = std::string(*known_type);
  }
  Walker(fd, path, &walk).Walk({offset, size}, 0, type, offset);
  return walk;
}

}  // namespace partalign
