// SPDX-License-Identifier: GPL-3.0-or-later
// `plan --layout SPEC`: an sfdisk-like description of a fresh partition table, turned into an
// aligned layout for an empty disk.
//
//   SPEC  := ITEM [(";" | newline) ITEM]...
//   ITEM  := "label=gpt" | "label=dos" | "label: gpt" | FIELD ["," FIELD]...
//   FIELD := "size=" SIZE | "type=" TYPE | "name=" NAME | "attrs=" ATTRS | "bootable"
//
// SIZE as sfdisk reads it ("512M" and "512MiB" are MiB, "1G" GiB, a plain number is bytes);
// a partition without a size (or "size=+") takes the rest and must be the last one. TYPE is an
// sfdisk shortcut (L/linux, S/swap, H/home, U/uefi/esp, R/raid, V/lvm), "bios" or "xbootldr"
// (GPT), a GPT type GUID or a DOS type byte ("83", "0x83"). NAME may be quoted ("my root").
// '#' starts a comment line; empty items are ignored. The label defaults to GPT.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "partalign/layout/partition_table.h"
#include "partalign/layout/plan.h"
#include "partalign/topology/alignment.h"
#include "partalign/topology/device.h"
#include "partalign/util/result.h"

namespace partalign {

struct LayoutItem {
  /// nullopt: the rest of the disk.
  std::optional<uint64_t> size_bytes;
  std::string type;  ///< resolved: a GPT type GUID or a DOS "0x83"
  std::string name;
  std::string attributes;
  bool bootable = false;
  bool operator==(const LayoutItem&) const = default;
};

struct LayoutSpec {
  LabelType label = LabelType::kGpt;
  std::vector<LayoutItem> items;
  bool operator==(const LayoutSpec&) const = default;
};

/// Parses SPEC. Errors name the item and the field ("item 2: size: '12X' has an unknown
/// unit 'X' ...").
Result<LayoutSpec> ParseLayoutSpec(std::string_view text);

/// ParseLayoutSpec on the text of an optional --layout option; nullopt when it was not given.
Result<std::optional<LayoutSpec>> ParseOptionalLayoutSpec(const std::optional<std::string>& text);

/// The type code for an sfdisk shortcut, a GUID or a DOS byte on `label`.
Result<std::string> ResolvePartitionType(LabelType label, std::string_view type);

/// The short name of a type code ("linux", "swap", "uefi", ...), or the code itself.
std::string PartitionTypeName(LabelType label, std::string_view code);

/// Places the partitions one after the other from the first aligned start of a fresh table
/// on a disk of `disk_sectors` sectors: every start on the alignment, every size rounded up to
/// whole grains so that the next start follows, the last "rest" partition ending on the last
/// boundary of the usable area (GPT: the UEFI minimum header and entry areas at both ends;
/// DOS: sector 0 and at most 2^32 - 1). Fails when the partitions do not fit, saying by how
/// much.
Result<PlanLayout> MakeLayout(const LayoutSpec& spec, uint64_t disk_sectors, uint64_t sector_size,
                              const Alignment& alignment);

/// The plan for an empty disk: `current` (what is on it now) must hold no partitions.
Result<Plan> MakeLayoutPlan(const LayoutSpec& spec, const PartitionTable& current,
                            const DeviceInfo& device, const Alignment& alignment);

}  // namespace partalign
