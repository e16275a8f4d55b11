// SPDX-License-Identifier: GPL-3.0-or-later
// `plan --layout SPEC`: an sfdisk-like description of a fresh partition table, turned into an
// aligned layout for an empty disk.
//
//   SPEC  := ITEM [(";" | newline) ITEM]...
//   ITEM  := "label=gpt" | "label=dos" | "label: gpt" | FIELD ["," FIELD]...
//   FIELD := "size=" SIZE | "type=" TYPE | "name=" NAME | "attrs=" ATTRS | "bootable"
//
// SIZE as sfdisk reads it (partalign/util/sfdisk_size.h): a bare number counts sectors, as in
// sfdisk ("size=100000" is 48.83 MiB with 512-byte sectors); "512M" and "512MiB" are MiB, "1G"
// GiB, "1.5G" 1.5 GiB, "1GB" 10^9 bytes; a partition without a size (or "size=+") takes the
// rest and must be the last one. TYPE is an
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
  /// The size given with a unit, in bytes; nullopt when it was given in sectors or not at all.
  std::optional<uint64_t> size_bytes;
  /// The size given as a bare number: sectors of the disk, as sfdisk reads it.
  std::optional<uint64_t> size_sectors;
  std::string type;  ///< resolved: a GPT type GUID or a DOS "0x83"
  std::string name;
  std::string attributes;
  bool bootable = false;
  bool operator==(const LayoutItem&) const = default;

  /// Takes the rest of the disk (no size).
  bool rest() const { return !size_bytes && !size_sectors; }
  /// The size in bytes on a disk of `sector_size`-byte sectors; nullopt for the rest, or when
  /// a number of sectors overflows 64 bits of bytes (the layout then does not fit).
  std::optional<uint64_t> SizeBytes(uint64_t sector_size) const;
};

struct LayoutSpec {
  LabelType label = LabelType::kGpt;
  std::vector<LayoutItem> items;
  /// The text it was parsed from (what `partalign plan --layout` is given to make it again).
  std::string text;
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
