// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/boot/boot_disk.h"

#include <cctype>

#include <fmt/format.h>

namespace partalign {
std::string UpperTypeCode(std::string_view type_code) {
  std::string out(type_code);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

const BootPartition* BootDisk::Find(uint32_t number) const {
  for (const BootPartition& p : partitions) {
    if (p.number == number) return &p;
  }
  return nullptr;
}

BootDisk BootDiskFromTable(const PartitionTable& table) {
  BootDisk disk;
  disk.label = table.label;
  disk.sector_size = table.sector_size;
  disk.disk_id = table.disk_id;
  for (const Partition& p : table.partitions) {
    BootPartition b;
    b.number = p.number;
    b.start_sector = p.start_sector;
    b.size_sectors = p.size_sectors;
    // GPT GUIDs in upper case (libfdisk prints them so already); DOS types as read ("0x07").
    b.type_code = table.label == LabelType::kGpt ? UpperTypeCode(p.type_code) : p.type_code;
    b.uuid = UpperTypeCode(p.uuid);
    // sfdisk names GPT attribute bit 2 "LegacyBIOSBootable".
    b.bootable = p.bootable || p.attributes.find("LegacyBIOSBootable") != std::string::npos;
    b.extended = p.kind == PartitionKind::kExtended;
    disk.partitions.push_back(std::move(b));
  }
  return disk;
}

std::vector<PartitionMove> MovesFromPlan(const Plan& plan) {
  std::vector<PartitionMove> moves;
  for (const PlanAction& a : plan.actions) {
    if (a.kind == ActionKind::kNone || a.kind == ActionKind::kImpossible) continue;
    if (a.old_start_sector == a.new_start_sector) continue;
    moves.push_back({a.partition, a.old_start_sector, a.new_start_sector,
                     a.old_end_sector - a.old_start_sector + 1,
                     a.new_end_sector - a.new_start_sector + 1});
  }
  return moves;
}

std::vector<std::string> IdentityChanges(const BootDisk& before, const BootDisk& after) {
  std::vector<std::string> out;
  if (UpperTypeCode(before.disk_id) != UpperTypeCode(after.disk_id)) {
    out.push_back(fmt::format("{} {} -> {} (Windows and boot loaders name the disk by it)",
                              before.label == LabelType::kGpt ? "disk GUID" : "MBR disk signature",
                              before.disk_id.empty() ? "none" : before.disk_id,
                              after.disk_id.empty() ? "none" : after.disk_id));
  }
  for (const BootPartition& b : before.partitions) {
    if (b.uuid.empty()) continue;
    const BootPartition* a = after.Find(b.number);
    if (a == nullptr) continue;  // a partition the change removes is not an identity change
    if (UpperTypeCode(a->uuid) != b.uuid) {
      out.push_back(fmt::format("partition {}: unique GUID {} -> {}", b.number, b.uuid,
                                a->uuid.empty() ? "none" : a->uuid));
    }
  }
  return out;
}

}  // namespace partalign
