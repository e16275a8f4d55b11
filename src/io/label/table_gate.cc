// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/label/table_gate.h"

#include <fmt/format.h>

#include "io/device/blkid_probe.h"
#include "io/device/target.h"
#include "partalign/util/checked_math.h"

namespace partalign {

Status FdDiskReader::ReadAt(uint64_t offset_bytes, std::span<uint8_t> out) const {
  std::optional<uint64_t> end = CheckedAdd(offset_bytes, out.size());
  if (!end || *end > size_bytes_) {
    return MakeError(fmt::format("'{}': {} bytes at byte {} lie beyond its end ({} bytes)", path_,
                                 out.size(), offset_bytes, size_bytes_));
  }
  Result<size_t> got = partalign::ReadAt(fd_, out.data(), out.size(), offset_bytes, path_);
  if (!got) return got.error();
  if (*got != out.size()) {
    return MakeError(
        fmt::format("'{}' ends at byte {}, before byte {}", path_, offset_bytes + *got, *end));
  }
  return {};
}

TableScan ScanTarget(int fd, const std::string& path, uint64_t size_bytes, uint64_t sector_size) {
  FdDiskReader reader(fd, path, size_bytes);
  TableScan scan = ScanTable(reader, sector_size);
  if (scan.label != LabelType::kNone || scan.severity() == TableSeverity::kUnreadable) {
    return scan;
  }
  // The scanner knows MBR and GPT only; libblkid knows every label libfdisk does and more.
  Result<std::string> type = ProbeBlkidTableType(fd, path, sector_size);
  if (!type) {
    scan.findings.push_back(
        {"label-unsupported", TableSeverity::kUnreadable, type.error().message});
  } else if (!type->empty() && *type != "dos" && *type != "gpt" && *type != "PMBR") {
    scan.label = LabelType::kOther;
    scan.findings.push_back(
        {"label-unsupported", TableSeverity::kUnreadable,
         fmt::format("it holds a partition table of type '{}' (libblkid); partalign reads GPT "
                     "and DOS tables only",
                     *type)});
  }
  return scan;
}

}  // namespace partalign
