// SPDX-License-Identifier: GPL-3.0-or-later
// libblkid: topology and partition-table type. The only file that includes <blkid.h> for
// topology; see alignment-heuristics.md §1.2 for what libblkid returns and when it is NULL.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "io/block/direct_reads.h"
#include "partalign/layout/partition_table.h"
#include "partalign/util/result.h"

namespace partalign {

/// What blkid_probe_get_topology() returned, unmodified.
struct BlkidTopology {
  uint64_t logical_sector_size = 0;
  uint64_t physical_sector_size = 0;
  uint64_t minimum_io_size = 0;
  uint64_t optimal_io_size = 0;
  uint64_t alignment_offset = 0;
};

/// The topology libblkid reports for the open device `fd`, or nullopt when libblkid returns
/// NULL (regular files; devices no prober completes for).
Result<std::optional<BlkidTopology>> ProbeBlkidTopology(int fd, const std::string& path);

/// libblkid's partition-table type ("gpt", "dos", "PMBR", ...) for `fd` read with
/// `sector_size`-byte sectors, or "" when there is none.
Result<std::string> ProbeBlkidTableType(int fd, const std::string& path, uint64_t sector_size);

/// A signature libblkid recognises: a filesystem, RAID or crypto superblock, swap, or a
/// partition table.
struct BlkidSignature {
  std::string type;   ///< "ext4", "swap", "gpt", "dos", ...
  std::string usage;  ///< "filesystem", "raid", "crypto", "other", or "partition table"
  std::optional<uint64_t> offset_bytes;  ///< where its magic is, when libblkid says
};

/// Every superblock and partition-table signature on `fd` (what `wipefs --no-act` lists), read
/// with `sector_size`-byte sectors. Empty when there is none.
Result<std::vector<BlkidSignature>> ProbeBlkidSignatures(int fd, const std::string& path,
                                                         uint64_t sector_size);

/// How many bytes at the start of a partition without a signature are read to look for data.
inline constexpr uint64_t kDataProbeBytes = 1024 * 1024;

/// What libblkid finds in the byte range [offset, offset + size) of `fd` (a partition of a
/// disk or image): filesystem type, label, UUID, block size, and what is proven about its
/// bytes (ContentProof): a signature; without one, a non-zero byte in its first
/// kDataProbeBytes, an image's holes, zeros when the range is no longer than that; otherwise
/// kUnscanned (may hold data). The filesystem size is read from the superblock
/// (partalign/layout/fs_size.h), since libblkid 2.38 does not report it.
Result<PartitionContents> ProbePartitionContents(int fd, const std::string& path, uint64_t offset,
                                                 uint64_t size);

/// ProbePartitionContents of each range (offset and length in bytes), one result per range in
/// order, faster than one by one: what libblkid will read of every range is asked of the kernel
/// first, and the heads of those without a signature are read together with O_DIRECT
/// (FindFirstNonZeroInEach). The same results.
Result<std::vector<PartitionContents>> ProbePartitionsContents(int fd, const std::string& path,
                                                               std::span<const ByteRange> ranges);

}  // namespace partalign
