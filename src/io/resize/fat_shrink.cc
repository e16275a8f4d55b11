// SPDX-License-Identifier: GPL-3.0-or-later
// FAT12/16/32 through libparted's FAT resizer (libparted-fs-resize, the code behind GParted's
// FAT shrink and Debian's fatresize), run in this process on the scratch copy (docs/resize.md).
// fatresize itself is not used: it resizes a partition of a table, which here is apply's job.
// libparted writes a boot sector of its own: the volume's place in the hidden-sectors field
// counted from the scratch copy's start, the label "NO NAME", its own OEM name. The old boot
// sector is kept with the new layout's fields (FatBootSectorAfterResize), in the boot sector
// and its FAT32 backup, so that the tool changes only the filesystem's layout. A volume is
// never shrunk below the size that keeps its type and cluster size (FatTypeFloorBytes).
// parted.h first: filesys.h needs its types (and parted.h includes it).
#include <parted/parted.h>

#include <cstring>

#include <fmt/format.h>

#include "io/resize/shrink_tools.h"
#include "partalign/util/byte_order.h"

namespace partalign {
namespace {

// FAT boot sector (Microsoft's FAT specification): BPB_BytsPerSec at 0x0B, BPB_FATSz16 at
// 0x16 (0 on FAT32), FAT32's BPB_BkBootSec (the backup boot sector's sector, usually 6) at 0x32.
constexpr size_t kFatBytesPerSectorAt = 0x0B;
constexpr size_t kFatSize16At = 0x16;
constexpr size_t kFatBackupBootAt = 0x32;
/// libparted's devices count 512-byte sectors, whatever the FAT's own sector size.
constexpr uint64_t kPartedSectorBytes = 512;

struct FatResizeContext {
  std::vector<std::string> messages;
  bool fat32 = false;  ///< the answer to "use FAT32?": keep what the volume is
};
FatResizeContext* g_fat_context = nullptr;

// libparted asks and reports through one process-wide handler. It asks whether to use FAT32
// when both fit (YES_NO_CANCEL): the volume keeps its type. Anything else is recorded and left
// unhandled, which makes libparted cancel errors and go on after warnings. noexcept: called
// from C frames.
PedExceptionOption AnswerFatResize(PedException* ex) noexcept {
  if (g_fat_context == nullptr || ex == nullptr) return PED_EXCEPTION_UNHANDLED;
  if (ex->options == PED_EXCEPTION_YES_NO_CANCEL && ex->message != nullptr &&
      std::strstr(ex->message, "FAT32") != nullptr) {
    return g_fat_context->fat32 ? PED_EXCEPTION_YES : PED_EXCEPTION_NO;
  }
  try {
    if (ex->message != nullptr) g_fat_context->messages.push_back(ex->message);
  } catch (...) {
    // Out of memory while recording: the message is lost.
  }
  return PED_EXCEPTION_UNHANDLED;
}

class FatResizeScope {
 public:
  explicit FatResizeScope(FatResizeContext* context) : previous_(ped_exception_get_handler()) {
    g_fat_context = context;
    ped_exception_set_handler(AnswerFatResize);
  }
  ~FatResizeScope() {
    ped_device_free_all();
    ped_exception_set_handler(previous_);
    g_fat_context = nullptr;
  }
  FatResizeScope(const FatResizeScope&) = delete;
  FatResizeScope& operator=(const FatResizeScope&) = delete;

 private:
  PedExceptionHandler* previous_;
};

// A libparted device for the file at `path`, opened, with the geometry of its first `sectors`
// sectors; closed and freed by the destructor (and the scope's ped_device_free_all).
class PartedFile {
 public:
  PartedFile(const std::string& path, PedSector sectors) {
    device_ = ped_device_get(path.c_str());
    if (device_ == nullptr || !ped_device_open(device_)) {
      device_ = nullptr;
      return;
    }
    geometry_ = ped_geometry_new(device_, 0, sectors);
  }
  ~PartedFile() {
    if (geometry_ != nullptr) ped_geometry_destroy(geometry_);
    if (device_ != nullptr) ped_device_close(device_);
  }
  PartedFile(const PartedFile&) = delete;
  PartedFile& operator=(const PartedFile&) = delete;
  PedDevice* device() const { return device_; }
  PedGeometry* geometry() const { return geometry_; }

 private:
  PedDevice* device_ = nullptr;
  PedGeometry* geometry_ = nullptr;
};

Status ResizeWithLibparted(ShrinkJob& job, bool fat32) {
  FatResizeContext context;
  context.fat32 = fat32;
  FatResizeScope scope(&context);
  auto failed = [&](const char* what) {
    return MakeError(fmt::format(
        "{}: libparted's FAT resizer: {}{}; nothing was written to the disk", job.request.name,
        what, context.messages.empty() ? "" : ": " + context.messages.back()));
  };
  PartedFile file(job.copy.path(),
                  static_cast<PedSector>(job.request.length_bytes / kPartedSectorBytes));
  if (file.geometry() == nullptr) return failed("cannot open the scratch copy");
  PedGeometry* new_geometry = ped_geometry_new(
      file.device(), 0, static_cast<PedSector>(job.request.new_length_bytes / kPartedSectorBytes));
  Status result;
  if (new_geometry == nullptr) {
    result = failed("cannot describe the partition");
  } else if (PedFileSystem* fs = ped_file_system_open(file.geometry()); fs == nullptr) {
    result = failed("cannot open the filesystem");
  } else {
    if (!ped_file_system_resize(fs, new_geometry, nullptr)) result = failed("the resize failed");
    ped_file_system_close(fs);
  }
  if (new_geometry != nullptr) ped_geometry_destroy(new_geometry);
  return result;
}

}  // namespace

Result<uint64_t> FatResizerMinimumBytes(const std::string& path, uint64_t length_bytes,
                                        const std::string& name) {
  FatResizeContext context;
  FatResizeScope scope(&context);
  PartedFile file(path, static_cast<PedSector>(length_bytes / kPartedSectorBytes));
  PedFileSystem* fs = file.geometry() == nullptr ? nullptr : ped_file_system_open(file.geometry());
  if (fs == nullptr) {
    return MakeError(fmt::format("{}: libparted cannot open the FAT volume{}", name,
                                 context.messages.empty() ? "" : ": " + context.messages.back()));
  }
  PedConstraint* constraint = ped_file_system_get_resize_constraint(fs);
  ped_file_system_close(fs);
  if (constraint == nullptr) {
    return MakeError(
        fmt::format("{}: libparted gives no resize constraint for the FAT volume", name));
  }
  const uint64_t min_bytes = static_cast<uint64_t>(constraint->min_size) * kPartedSectorBytes;
  ped_constraint_destroy(constraint);
  return min_bytes;
}

Status ShrinkFat(ShrinkJob& job) {
  const std::string copy = job.copy.path();
  if (Status s = RunToolStep(job, {"fsck.fat", "-n", copy}, "clean"); !s) {
    return MakeError(s.error().message + "; run fsck.fat (or chkdsk) on it first");
  }
  Result<std::vector<uint8_t>> boot = job.copy.Read(0, 512);
  if (!boot) return boot.error();
  const std::optional<uint16_t> sector = Le<uint16_t>(*boot, kFatBytesPerSectorAt);
  const std::optional<uint16_t> fat16_size = Le<uint16_t>(*boot, kFatSize16At);
  if (!sector || !fat16_size || *sector < 512 || *sector > 4096) {
    return MakeError(fmt::format("{}: the FAT boot sector cannot be read; nothing was written",
                                 job.request.name));
  }
  const bool fat32 = *fat16_size == 0;
  const std::optional<uint64_t> type_floor = FatTypeFloorBytes(*boot);
  if (!type_floor || *type_floor > job.request.new_length_bytes) {
    return MakeError(fmt::format(
        "{}: a FAT{} volume of this cluster size needs {} bytes at the least to stay one; the "
        "partition's new size is {} bytes; nothing was written to the disk",
        job.request.name, fat32 ? "32" : "16", type_floor.value_or(0),
        job.request.new_length_bytes));
  }
  Result<uint64_t> minimum =
      FatResizerMinimumBytes(copy, job.request.length_bytes, job.request.name);
  if (!minimum) return minimum.error();
  if (*minimum > job.request.new_length_bytes) {
    return MakeError(fmt::format(
        "{}: libparted's FAT resizer shrinks this FAT volume to {} bytes at the least, more than "
        "the partition's new {} bytes; nothing was written to the disk",
        job.request.name, *minimum, job.request.new_length_bytes));
  }
  if (Status s = ResizeWithLibparted(job, fat32); !s) return s;
  job.steps.push_back(
      fmt::format("libparted's FAT resizer: shrunk to {} bytes", job.request.new_length_bytes));
  if (Status cut = job.copy.Truncate(job.request.new_length_bytes); !cut) return cut;
  // The old boot sector with the new layout (the label, the OEM name and the hidden sectors
  // kept), in the boot sector and FAT32's backup.
  Result<std::vector<uint8_t>> resized = job.copy.Read(0, 512);
  if (!resized) return resized.error();
  const std::vector<uint8_t> merged = FatBootSectorAfterResize(*boot, *resized);
  std::vector<uint64_t> boot_sectors = {0};
  const uint16_t new_backup = Le<uint16_t>(merged, kFatBackupBootAt).value_or(0);
  if (fat32 && new_backup != 0) boot_sectors.push_back(uint64_t{new_backup} * *sector);
  for (uint64_t at : boot_sectors) {
    if (Status w = job.copy.Write(at, merged); !w) return w;
  }
  return RunToolStep(job, {"fsck.fat", "-n", copy}, "clean");
}

}  // namespace partalign
