// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/used/used_map_reader.h"

#include <fmt/format.h>

#include "io/device/blkid_probe.h"
#include "io/device/target.h"
#include "io/used/ext_used_map.h"
#include "io/used/lvm_used_map.h"
#include "partalign/used/btrfs_used_map.h"
#include "partalign/used/byte_source.h"
#include "partalign/used/fat_used_map.h"
#include "partalign/used/swap_used_map.h"
#include "partalign/used/xfs_used_map.h"

namespace partalign {
namespace {

// The partition as the core's parsers read it: pread on the disk, relative to its start.
class FdByteSource : public ByteSource {
 public:
  explicit FdByteSource(const UsedMapRequest& r) : r_(r) {}
  uint64_t size_bytes() const override { return r_.length_bytes; }
  Result<std::vector<uint8_t>> Read(uint64_t offset, uint64_t length) const override {
    if (offset > r_.length_bytes || length > r_.length_bytes - offset) {
      return MakeError(fmt::format("read of {} bytes at byte {} leaves the {}-byte partition",
                                   length, offset, r_.length_bytes));
    }
    std::vector<uint8_t> bytes(length);
    Result<size_t> got = ReadAt(r_.fd, bytes.data(), length, r_.offset_bytes + offset, r_.path);
    if (!got) return got.error();
    if (*got != length) {
      return MakeError(
          fmt::format("'{}' ends before byte {}", r_.path, r_.offset_bytes + offset + length));
    }
    return bytes;
  }

 private:
  const UsedMapRequest& r_;
};

}  // namespace

Result<UsedMap> ReadUsedMap(const UsedMapRequest& r) {
  const std::string& type = r.fs_type;
  const FdByteSource source(r);
  if (type == "ext2" || type == "ext3" || type == "ext4") {
    return ReadExtUsedMap(r.path, r.offset_bytes, r.length_bytes);
  }
  if (type == "vfat") return FatUsedMap(source);
  if (type == "xfs") return XfsUsedMap(source);
  // swsuspend: libblkid's name for a swap area holding a hibernation image, which SwapUsedMap
  // refuses.
  if (type == "swap" || type == "swsuspend") return SwapUsedMap(source);
  if (type == "btrfs") return BtrfsUsedMap(source);
  if (type == "LVM2_member") return ReadLvmUsedMap(r.fd, r.path, r.offset_bytes, r.length_bytes);
  if (type == "crypto_LUKS") {
    return UsedMap::WholeBecause(r.length_bytes, type, "the encrypted contents are opaque");
  }
  if (type.empty()) {
    return UsedMap::WholeBecause(r.length_bytes, type, "no filesystem signature was found");
  }
  return UsedMap::WholeBecause(r.length_bytes, type, "partalign reads no used-block map for it");
}

Result<UsedMap> ProbeUsedMap(int fd, const std::string& path, uint64_t offset_bytes,
                             uint64_t length_bytes) {
  Result<PartitionContents> contents = ProbePartitionContents(fd, path, offset_bytes, length_bytes);
  if (!contents) return contents.error();
  return ReadUsedMap({path, fd, offset_bytes, length_bytes, contents->fs_type});
}

}  // namespace partalign
