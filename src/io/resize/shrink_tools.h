// SPDX-License-Identifier: GPL-3.0-or-later
// The tools ShrinkOnScratch runs, one module per tool (docs/resize.md): each checks the scratch
// copy, shrinks it to the new size and checks it again, recording what it ran.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "io/resize/filesystem_shrink.h"
#include "io/resize/scratch_copy.h"
#include "partalign/util/result.h"

namespace partalign {

struct ShrinkJob {
  const ShrinkRequest& request;
  ScratchCopy& copy;
  std::vector<std::string>& steps;
};

/// Runs `argv` on the scratch copy; records "WHAT: VERDICT" in job.steps. An error naming the
/// partition, the command and the last lines it printed when it exits with another status than
/// those in `ok_exit_codes`.
Status RunToolStep(ShrinkJob& job, const std::vector<std::string>& argv, std::string_view verdict,
                   const std::vector<int>& ok_exit_codes = {0});

/// ext2/3/4: e2fsck -f -n (clean, or refused), e2fsck -f -p (records the check resize2fs asks
/// for), resize2fs to the new size, e2fsck -f -n.
Status ShrinkExt(ShrinkJob& job);
/// NTFS: ntfsresize --check, ntfsresize --force -s, the backup boot sector at the new end (what
/// Windows' format and ntfsfix put there), ntfsresize --check and ntfsfix -n.
Status ShrinkNtfs(ShrinkJob& job);
/// FAT: fsck.fat -n, libparted's FAT resizer (the boot sector's hidden-sectors field kept: it
/// names the partition's place), fsck.fat -n.
Status ShrinkFat(ShrinkJob& job);
/// The smallest size libparted's FAT resizer shrinks the FAT volume in the file at `path` (its
/// first `length_bytes`) to: the minimum of its resize constraint. Reads only. libparted keeps
/// a FAT32 volume's cluster size and refuses one whose clusters are too small to stay above
/// FAT32's minimum count once shrunk (measured: every FAT32 mkfs.fat makes below 260 MiB, with
/// 512-byte clusters, has a minimum above its own size).
Result<uint64_t> FatResizerMinimumBytes(const std::string& path, uint64_t length_bytes,
                                        const std::string& name);
/// swap: mkswap again, smaller, with the same UUID, label and page size; refused for a
/// hibernation image.
Status RecreateSwap(ShrinkJob& job);

}  // namespace partalign
