// SPDX-License-Identifier: GPL-3.0-or-later
// The storage stack above a partition (or a whole disk without a partition table) as plain
// values: each layer found inside it - LUKS, an LVM2 PV and the segments of its logical
// volumes, an MD member, a filesystem - with the absolute byte offset on the disk where the
// layer's data starts, its own geometry, and (after CheckStack) the alignment checks and the
// reasons. The I/O edge (src/io/stack/stack_walker.cc) reads the layers; the core checks and
// renders them (docs/stack.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace partalign {

enum class LayerKind {
  kLuks,        ///< LUKS1 or LUKS2: data starts at the payload offset; above it is ciphertext
  kLvmPv,       ///< an LVM2 physical volume: data starts at pe_start
  kLvmSegment,  ///< the part of an LV segment (one stripe) that lies on this PV
  kMdMember,    ///< an MD (software RAID) member: the array's data starts at data_offset
  kFilesystem,  ///< ext2/3/4 or XFS with its block size and stripe geometry
};

/// "luks", "lvm2_pv", "lvm2_lv_segment", "md_member", "filesystem": the JSON `layer` values.
std::string_view ToString(LayerKind kind);

/// The numbers a layer's checks use. Unset when the layer has no such notion.
struct LayerGeometry {
  /// Filesystem block; LUKS encryption sector.
  std::optional<uint64_t> block_size_bytes;
  /// LVM2 extent size.
  std::optional<uint64_t> extent_size_bytes;
  /// The unit of a stripe on one device: LV stripe size, MD chunk, filesystem stripe unit.
  std::optional<uint64_t> stripe_unit_bytes;
  /// Devices a full stripe spans with data: LV stripe count, MD data disks.
  std::optional<uint64_t> stripe_count;
  /// A full stripe: filesystem stripe width, or unit x count.
  std::optional<uint64_t> stripe_width_bytes;
  bool operator==(const LayerGeometry&) const = default;
};

/// One check of a layer's data offset or geometry (CheckStack fills them).
struct StackCheck {
  std::string key;  ///< "four_kib", "grain", "physical_sector", ... (docs/output.md)
  bool applicable = true;
  bool ok = true;
  /// Decides the layer's `aligned`; the others are informational.
  bool required = true;
  /// The arithmetic ("data at 34602496 bytes, 34602496 % 4096 = 3584") or, when not
  /// applicable, why.
  std::string detail;
  /// A command that would make a failing check pass, when partalign knows one
  /// ("tune2fs -E stride=16,stripe_width=32").
  std::string fix;
};

struct StackLayer {
  LayerKind kind = LayerKind::kFilesystem;
  /// What it is, for people: "LUKS2", "LVM2 PV (VG vg0)", "LV vg0/data segment 1, stripe 1 of
  /// 2 (striped)", "MD raid5 member 2 of 4 (1.2, host:0)", "ext4".
  std::string name;
  /// 0 for a layer directly in the partition (or on the whole disk), 1 for one inside that...
  int depth = 0;
  /// Where this layer's data starts on the disk, in bytes from the disk's first byte.
  uint64_t data_offset_bytes = 0;
  /// The same, from the start of the layer below's data (or of the partition): pe_start, the
  /// LUKS payload offset, the MD data offset, ...
  uint64_t offset_in_parent_bytes = 0;
  LayerGeometry geometry;
  /// Other facts worth showing: {"vg": "vg0", "pe_start_bytes": 1048576, ...} (numbers as
  /// numbers, units in the keys).
  nlohmann::json properties = nlohmann::json::object();
  /// What the walk could not do here ("encrypted: the layers above cannot be read without the
  /// key", "stripe 2 lies on another PV", ...).
  std::vector<std::string> notes;

  std::vector<StackCheck> checks;
  /// Each failing check's sentence, required ones first, then informational notes from the
  /// checks (small stripes, a stripe geometry that does not match the layer below).
  std::vector<std::string> reasons;
  bool aligned = true;  ///< every applicable required check is ok

  const StackCheck* Check(std::string_view key) const;
};

/// A layer with its identity and offsets; geometry, properties and notes are filled after.
StackLayer MakeLayer(LayerKind kind, std::string name, int depth, uint64_t data_offset_bytes,
                     uint64_t offset_in_parent_bytes);

/// Everything found inside one partition (or the whole disk), in walk order: a layer's children
/// follow it, with depth + 1.
struct StackWalk {
  std::vector<StackLayer> layers;
  /// Why the walk stopped early, when it did ("LVM2 PV label: checksum mismatch"): the layers
  /// before it are still reported. Not an alignment verdict.
  std::vector<std::string> errors;

  bool aligned() const;  ///< every layer is aligned (true for an empty stack)
  bool empty() const { return layers.empty() && errors.empty(); }
};

}  // namespace partalign
