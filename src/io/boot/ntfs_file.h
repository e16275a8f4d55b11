// SPDX-License-Identifier: GPL-3.0-or-later
// Files of an NTFS volume read through libntfs-3g straight from a partition's bytes on an open
// disk (no mount, no partition device: a device of libntfs-3g's own whose reads are preads at
// the partition's offset), with where each byte of the file sits in the partition - what an
// in-place edit of a registry value needs (docs/boot-records.md); and whether Windows sleeps on
// the volume (hiberfil.sys, the dirty bit).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "partalign/boot/windows_store.h"
#include "partalign/util/result.h"

namespace partalign {

/// The largest file read (a SYSTEM hive is tens of MiB).
inline constexpr uint64_t kMaxNtfsFileBytes = 512ull << 20;

struct NtfsFile {
  std::vector<uint8_t> data;  ///< the unnamed data stream, up to its initialised size
  /// Where `data` sits in the partition, run by run (clusters of the runlist).
  std::vector<FileExtent> extents;
  /// Why the bytes cannot be located on the disk ("compressed", "resident in the MFT",
  /// "sparse", "encrypted"); empty when `extents` say where every byte is.
  std::string unlocatable;
};

/// Reads each of `paths` ("/Boot/BCD"; NTFS looks names up without case) from the NTFS volume
/// in bytes [`offset_bytes`, `offset_bytes` + `size_bytes`) of `fd`, read-only. A path that does
/// not exist gives nullopt; an error when the volume cannot be opened (`what` names it).
Result<std::vector<std::optional<NtfsFile>>> ReadNtfsFiles(int fd, uint64_t offset_bytes,
                                                           uint64_t size_bytes,
                                                           const std::vector<std::string>& paths,
                                                           const std::string& what);

/// The bytes the NTFS volume at [`offset_bytes`, `offset_bytes` + `size_bytes`) of `fd` uses:
/// its clusters less the free ones its $Bitmap counts (what a shrink by ntfsresize needs at
/// least, docs/resize.md). Read-only.
Result<uint64_t> NtfsUsedBytes(int fd, uint64_t offset_bytes, uint64_t size_bytes,
                               const std::string& what);

/// What an NTFS volume says about Windows sleeping on it (docs/used-map.md, "Hibernation is a
/// refusal").
struct NtfsWakeState {
  /// The first bytes (up to `head_bytes`) of /hiberfil.sys; nullopt when the volume has none.
  std::optional<std::vector<uint8_t>> hiberfil_head;
  /// $Volume's dirty bit: Windows did not finish with the volume, or chkdsk is due.
  bool dirty = false;
};

/// Reads the NTFS volume at [`offset_bytes`, `offset_bytes` + `size_bytes`) of `fd`, read-only
/// (libntfs-3g opens a hibernated volume read-only). An error when it cannot be opened.
Result<NtfsWakeState> ReadNtfsWakeState(int fd, uint64_t offset_bytes, uint64_t size_bytes,
                                        uint64_t head_bytes, const std::string& what);

}  // namespace partalign
