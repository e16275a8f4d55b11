// SPDX-License-Identifier: GPL-3.0-or-later
// Which bytes of a partition its contents use: the provider for its type (libblkid's TYPE),
// reading the partition in place on the disk or image. docs/used-map.md says what each provider
// reads and when it falls back to the whole partition.
#pragma once

#include <cstdint>
#include <string>

#include "partalign/used/used_map.h"
#include "partalign/util/result.h"

namespace partalign {

struct UsedMapRequest {
  std::string path;  ///< the disk or image (libext2fs opens it by name)
  int fd = -1;       ///< the same, open for reading
  uint64_t offset_bytes = 0;
  uint64_t length_bytes = 0;
  /// libblkid's TYPE of the partition's contents ("ext4", "vfat", "xfs", "swap",
  /// "crypto_LUKS", ...); "" when it found none.
  std::string fs_type;
};

/// The used map of the partition. ext2/3/4 through libext2fs, vfat, XFS and swap through the
/// core's parsers; LUKS, everything else and nothing recognised: the whole partition, with a
/// note. An error only when the partition must not be moved at all (a swap area holding a
/// hibernation image) or cannot be read.
Result<UsedMap> ReadUsedMap(const UsedMapRequest& request);

/// ReadUsedMap() for the partition at [offset, offset + length) of the open disk `fd`, with its
/// type probed by libblkid first.
Result<UsedMap> ProbeUsedMap(int fd, const std::string& path, uint64_t offset_bytes,
                             uint64_t length_bytes);

}  // namespace partalign
