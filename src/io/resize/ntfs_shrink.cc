// SPDX-License-Identifier: GPL-3.0-or-later
// NTFS through ntfs-3g's ntfsresize (docs/resize.md). ntfsresize moves the clusters past the
// new end and rewrites the boot sector, but leaves the backup boot sector to whoever shrinks
// the partition: NTFS keeps it in the partition's last sector (after the volume, as Windows
// formats it), and ntfsfix calls the volume damaged without it there. partalign writes it, a
// copy of the new boot sector, in the scratch copy like the tool's own changes.
#include <fmt/format.h>

#include "io/resize/shrink_tools.h"
#include "partalign/util/byte_order.h"

namespace partalign {
namespace {

// NTFS boot sector (the BIOS parameter block): bytes per sector at 0x0B, total sectors (of the
// volume, the backup boot sector not counted) at 0x28, "NTFS    " at 3.
constexpr size_t kNtfsBytesPerSectorAt = 0x0B;
constexpr size_t kNtfsTotalSectorsAt = 0x28;

}  // namespace

Status ShrinkNtfs(ShrinkJob& job) {
  const std::string copy = job.copy.path();
  if (Status s = RunToolStep(job, {"ntfsresize", "--check", copy}, "clean"); !s) {
    return MakeError(s.error().message + "; run chkdsk on it in Windows first");
  }
  // The volume's new size leaves the partition's last sector for the backup boot sector.
  const uint64_t bytes = ShrunkContentsBytes(ShrinkTool::kNtfsresize, job.request.new_length_bytes,
                                             job.request.sector_bytes);
  // --force answers ntfsresize's own question ("Are you sure?"): partalign asked already.
  if (Status s = RunToolStep(
          job,
          {"ntfsresize", "--force", "--no-progress-bar", "--size", std::to_string(bytes), copy},
          fmt::format("shrunk to {} bytes", bytes));
      !s) {
    return s;
  }
  if (Status cut = job.copy.Truncate(job.request.new_length_bytes); !cut) return cut;
  Result<std::vector<uint8_t>> boot = job.copy.Read(0, 4096);
  if (!boot) return boot.error();
  const std::optional<uint16_t> sector = Le<uint16_t>(*boot, kNtfsBytesPerSectorAt);
  const std::optional<uint64_t> total = Le<uint64_t>(*boot, kNtfsTotalSectorsAt);
  if (!sector || !total || *sector < 256 || *sector > 4096 || !HasMagic(*boot, 3, "NTFS    ") ||
      *total > (job.request.new_length_bytes / *sector) - 1) {
    return MakeError(fmt::format(
        "{}: ntfsresize left a boot sector partalign cannot read, or a volume of {} sectors that "
        "does not fit the partition's new {} bytes; nothing was written to the disk",
        job.request.name, total.value_or(0), job.request.new_length_bytes));
  }
  // At the partition's last sector, where ntfsfix and chkdsk read it, and at the sector after
  // the volume (the same one unless ntfsresize rounded the volume down to whole clusters).
  const std::vector<uint8_t> sector_bytes(boot->begin(), boot->begin() + *sector);
  const uint64_t last = job.request.new_length_bytes / *sector - 1;
  for (uint64_t at : {*total, last}) {
    if (Status w = job.copy.Write(at * *sector, sector_bytes); !w) return w;
  }
  job.steps.push_back(fmt::format(
      "backup boot sector written at sectors {} and {} of the partition", *total, last));
  if (Status s = RunToolStep(job, {"ntfsresize", "--check", copy}, "clean"); !s) return s;
  return RunToolStep(job, {"ntfsfix", "--no-action", copy}, "clean");
}

}  // namespace partalign
