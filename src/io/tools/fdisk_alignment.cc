// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/tools/fdisk_alignment.h"

#include <libfdisk.h>

#include <cerrno>

#include <fmt/format.h>

#include "io/device/target.h"
#include "io/label/table_gate.h"
#include "io/table/fdisk_messages.h"
#include "io/util/c_handle.h"
#include "partalign/label/table_scan.h"

namespace partalign {
namespace {

using FdiskPartition = CHandle<fdisk_unref_partition, fdisk_partition*>;
using FdiskLabelItem = CHandle<fdisk_unref_labelitem, fdisk_labelitem*>;

// The validation gate (io/label/table_gate.h) on `path` as libfdisk reads it (the device's own
// sector size): an error naming the problem when libfdisk must not be given the table.
Result<TableScan> GateTarget(const std::string& path) {
  Result<Target> target = OpenTarget(path);
  if (!target) return target.error();
  TableScan scan =
      ScanTarget(target->fd.get(), path, target->size_bytes, target->logical_sector_size);
  if (scan.severity() == TableSeverity::kUnreadable) {
    return MakeError(fmt::format("libfdisk not asked: '{}': {}", path,
                                 DescribeFindings(scan.findings, TableSeverity::kUnreadable)));
  }
  return scan;
}

Result<FdiskContext> OpenReadOnly(const std::string& path, std::vector<std::string>* messages) {
  if (Result<TableScan> scan = GateTarget(path); !scan) return scan.error();
  FdiskContext cxt(fdisk_new_context());
  if (!cxt) return ErrnoError(ENOMEM, "fdisk_new_context");
  fdisk_set_ask(cxt.get(), RecordFdiskMessages, messages);
  if (int rc = fdisk_assign_device(cxt.get(), path.c_str(), /*readonly=*/1); rc < 0) {
    return ErrnoError(rc, fmt::format("libfdisk cannot open '{}'", path));
  }
  return cxt;
}

// Adds partition 1 with a default start and end to the in-memory label, as an empty sfdisk
// start field does, and returns its start.
Result<uint64_t> DefaultFirstStart(fdisk_context* cxt) {
  FdiskPartition pa(fdisk_new_partition());
  if (!pa) return ErrnoError(ENOMEM, "fdisk_new_partition");
  fdisk_partition_set_partno(pa.get(), 0);
  fdisk_partition_start_follow_default(pa.get(), 1);
  fdisk_partition_end_follow_default(pa.get(), 1);
  size_t partno = 0;
  if (int rc = fdisk_add_partition(cxt, pa.get(), &partno); rc < 0) {
    return ErrnoError(rc, "libfdisk cannot add a partition with a default start");
  }
  fdisk_partition* raw = nullptr;
  if (int rc = fdisk_get_partition(cxt, partno, &raw); rc < 0) {
    return ErrnoError(rc, "libfdisk cannot read back the partition");
  }
  FdiskPartition added(raw);
  return static_cast<uint64_t>(fdisk_partition_get_start(added.get()));
}

}  // namespace

void QueryFdiskAlignment(const std::string& path, LiveAlignment* live) {
  if (const char* v = nullptr; fdisk_get_library_version(&v) >= 0 && v != nullptr) {
    if (Result<ToolVersion> parsed = ParseToolVersion(v)) live->libfdisk_version = *parsed;
  }
  std::vector<std::string> messages;
  Result<FdiskContext> cxt = OpenReadOnly(path, &messages);
  if (!cxt) {
    live->fdisk_error = cxt.error().message;
    return;
  }
  fdisk_context* c = cxt->get();
  live->fdisk_sector_size = fdisk_get_sector_size(c);
  live->fdisk_physical_sector_size = fdisk_get_physector_size(c);
  live->fdisk_minimum_io_size = fdisk_get_minimal_iosize(c);
  live->fdisk_optimal_io_size = fdisk_get_optimal_iosize(c);
  live->fdisk_alignment_offset = fdisk_get_alignment_offset(c);
  live->fdisk_grain_bytes = fdisk_get_grain_size(c);

  // A DOS label (not DOS-compatible) keeps the topology's first LBA.
  if (int rc = fdisk_create_disklabel(c, "dos"); rc < 0) {
    live->fdisk_error = ErrnoError(rc, "libfdisk cannot create an in-memory DOS label").message;
    return;
  }
  live->fdisk_first_lba = fdisk_get_first_lba(c);
  if (Result<uint64_t> start = DefaultFirstStart(c)) {
    live->fdisk_first_start_dos = *start;
  } else {
    live->fdisk_error = start.error().message;
  }

  if (int rc = fdisk_create_disklabel(c, "gpt"); rc < 0) {
    live->fdisk_error = ErrnoError(rc, "libfdisk cannot create an in-memory GPT").message;
    return;
  }
  FdiskLabelItem item(fdisk_new_labelitem());
  uint64_t first_usable = 0;
  if (item && fdisk_get_disklabel_item(c, GPT_LABELITEM_FIRSTLBA, item.get()) == 0 &&
      fdisk_labelitem_get_data_u64(item.get(), &first_usable) == 0) {
    live->fdisk_gpt_first_usable_lba = first_usable;
  }
  if (Result<uint64_t> start = DefaultFirstStart(c)) {
    live->fdisk_first_start_gpt = *start;
  } else {
    live->fdisk_error = start.error().message;
  }
}

Result<std::vector<uint64_t>> ReadGptPartitionStarts(const std::string& path) {
  // The scan reads them as libfdisk would (tests/io/table/table_gate_test.cc compares the two).
  Result<TableScan> scan = GateTarget(path);
  if (!scan) return scan.error();
  std::vector<uint64_t> starts;
  if (scan->label != LabelType::kGpt) return starts;
  for (const ScannedPartition& p : scan->partitions) starts.push_back(p.start_sector);
  return starts;
}

}  // namespace partalign
