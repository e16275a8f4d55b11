// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/boot/boot_record.h"

#include <fmt/format.h>

#include "partalign/util/checked_math.h"

namespace partalign {

std::string_view ToString(BootRecordKind kind) {
  switch (kind) {
    case BootRecordKind::kNtfsBootSector:
      return "ntfs-boot-sector";
    case BootRecordKind::kFatBootSector:
      return "fat-boot-sector";
    case BootRecordKind::kExfatBootRegion:
      return "exfat-boot-region";
    case BootRecordKind::kSyslinuxVbr:
      return "syslinux-vbr";
    case BootRecordKind::kGrubBootImage:
      return "grub-boot-image";
    case BootRecordKind::kGrubCoreImage:
      return "grub-core-image";
    case BootRecordKind::kBiosBootPartition:
      return "bios-boot-partition";
    case BootRecordKind::kWindowsBcd:
      return "windows-bcd";
    case BootRecordKind::kMountedDevices:
      return "mounted-devices";
    case BootRecordKind::kLdm:
      return "ldm";
    case BootRecordKind::kBsdDisklabel:
      return "bsd-disklabel";
    case BootRecordKind::kDiskIdentity:
      return "disk-identity";
  }
  return "unknown";
}

std::string_view ToString(BootVerdict verdict) {
  switch (verdict) {
    case BootVerdict::kNothingToDo:
      return "nothing-to-do";
    case BootVerdict::kUpdate:
      return "update";
    case BootVerdict::kRefuse:
      return "refuse";
  }
  return "unknown";
}

bool BootReport::refused() const {
  for (const BootFinding& f : findings) {
    if (f.verdict == BootVerdict::kRefuse) return true;
  }
  return false;
}

std::vector<std::string> BootReport::RefusalReasons() const {
  std::vector<std::string> out;
  for (const BootFinding& f : findings) {
    if (f.verdict == BootVerdict::kRefuse) out.push_back(f.reason);
  }
  return out;
}

std::vector<ByteEdit> BootReport::Edits() const {
  std::vector<ByteEdit> out;
  for (const BootFinding& f : findings) {
    if (f.verdict == BootVerdict::kUpdate) out.insert(out.end(), f.edits.begin(), f.edits.end());
  }
  return out;
}

std::vector<ByteEdit> BootReport::EditsFor(uint32_t partition) const {
  std::vector<ByteEdit> out;
  for (const ByteEdit& e : Edits()) {
    if (e.partition == partition) out.push_back(e);
  }
  return out;
}

std::vector<std::string> BootReportLines(const BootReport& report) {
  std::vector<std::string> out;
  for (const BootFinding& f : report.findings) {
    if (f.verdict == BootVerdict::kNothingToDo && f.reason.empty() && f.follow_up.empty()) {
      continue;
    }
    std::string line = f.partition == 0 ? "disk: " : fmt::format("partition {}: ", f.partition);
    line += f.description;
    if (f.verdict == BootVerdict::kRefuse) {
      line += "; apply refuses: " + f.reason;
    } else if (!f.reason.empty()) {
      line += " (" + f.reason + ")";
    }
    if (!f.follow_up.empty()) line += "; afterwards run: " + f.follow_up;
    out.push_back(std::move(line));
  }
  return out;
}

std::optional<uint64_t> AbsoluteOffset(const ByteEdit& edit, uint64_t partition_start_bytes) {
  if (edit.partition == 0) return edit.offset_bytes;
  return CheckedAdd(partition_start_bytes, edit.offset_bytes);
}

}  // namespace partalign
