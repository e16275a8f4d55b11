// SPDX-License-Identifier: GPL-3.0-or-later
// ext2/3/4 through e2fsprogs (docs/resize.md): the checker first, without changing anything;
// then once more in its automatic mode, which records the check that resize2fs asks for
// ("Please run 'e2fsck -f' first") and changes nothing else on a clean filesystem; resize2fs;
// the checker again. resize2fs cuts an image file to the filesystem's new size: here that is
// the scratch copy, and the partition's bytes past that size stay as they are on the disk.
#include <fmt/format.h>

#include "io/resize/shrink_tools.h"

namespace partalign {

Status ShrinkExt(ShrinkJob& job) {
  const std::string copy = job.copy.path();
  if (Status clean = RunToolStep(job, {"e2fsck", "-f", "-n", copy}, "clean"); !clean) {
    return MakeError(clean.error().message + "; repair it with e2fsck -f first");
  }
  // -p repairs only what is safe without asking; on a filesystem -n found clean it only
  // records the check (exit 0). Anything else (1: it corrected something) is refused.
  if (Status s = RunToolStep(job, {"e2fsck", "-f", "-p", copy}, "check recorded"); !s) return s;
  // resize2fs reads a size with a unit: K is 1024 bytes. The partition's new size is a whole
  // number of sectors; resize2fs rounds down to whole filesystem blocks.
  const uint64_t kib = job.request.new_length_bytes / 1024;
  if (Status s = RunToolStep(job, {"resize2fs", copy, fmt::format("{}K", kib)},
                             fmt::format("shrunk to {} KiB", kib));
      !s) {
    return s;
  }
  if (Status cut = job.copy.Truncate(job.request.new_length_bytes); !cut) return cut;
  return RunToolStep(job, {"e2fsck", "-f", "-n", copy}, "clean");
}

}  // namespace partalign
