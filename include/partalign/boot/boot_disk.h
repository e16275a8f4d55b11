// SPDX-License-Identifier: GPL-3.0-or-later
// The boot domain's view of a disk's table and of the moves a plan makes (plain values): the
// table type, the logical sector size, the identity other records name (MBR disk signature,
// GPT disk GUID) and each partition's number, type, start and size - where its bytes are now.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "partalign/layout/partition_table.h"
#include "partalign/layout/plan.h"
#include "partalign/topology/device.h"

namespace partalign {

struct BootPartition {
  uint32_t number = 0;
  /// Where the partition's bytes are now, in logical sectors.
  uint64_t start_sector = 0;
  uint64_t size_sectors = 0;
  /// GPT: the type GUID in upper case; DOS: the type byte as "0x83" (compared without case).
  std::string type_code;
  std::string uuid;  ///< GPT unique partition GUID (upper case); empty on DOS
  /// DOS boot flag, or GPT's LegacyBIOSBootable attribute: firmware may boot its VBR.
  bool bootable = false;
  /// A DOS extended partition (a container of EBRs, not a volume).
  bool extended = false;
  bool operator==(const BootPartition&) const = default;
};

struct BootDisk {
  LabelType label = LabelType::kNone;  ///< kDos or kGpt
  uint64_t sector_size = 512;
  /// DOS: the disk signature at byte 440 ("0x1234abcd"); GPT: the disk GUID. Empty if none.
  std::string disk_id;
  std::vector<BootPartition> partitions;

  const BootPartition* Find(uint32_t number) const;
  bool operator==(const BootDisk&) const = default;
};

/// The boot domain's view of a table partalign read (`PartitionTable`).
BootDisk BootDiskFromTable(const PartitionTable& table);

/// A partition that changes place: its bytes move from `old_start_sector` to
/// `new_start_sector` (logical sectors); its size may change with it.
struct PartitionMove {
  uint32_t number = 0;
  uint64_t old_start_sector = 0;
  uint64_t new_start_sector = 0;
  uint64_t old_size_sectors = 0;
  uint64_t new_size_sectors = 0;
  bool operator==(const PartitionMove&) const = default;
};

/// The moves of a plan: every action whose start changes (table-only and data moves alike:
/// the records name the start either way).
std::vector<PartitionMove> MovesFromPlan(const Plan& plan);

/// A type code or GUID in upper case, as partalign compares them ("0xa5" -> "0XA5").
std::string UpperTypeCode(std::string_view type_code);

/// Where `after` loses an identity that other records name: the DOS disk signature, the GPT
/// disk GUID, a partition's unique GUID (by number). One line each; empty when all are kept.
std::vector<std::string> IdentityChanges(const BootDisk& before, const BootDisk& after);

}  // namespace partalign
