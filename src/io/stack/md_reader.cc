// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/stack/md_reader.h"

#include <vector>

#include <fmt/format.h>

#include "io/device/target.h"
#include "partalign/util/byte_order.h"

namespace partalign {

Result<MdSuperblock> ReadMdSuperblock(int fd, const std::string& path, uint64_t offset,
                                      uint64_t size) {
  constexpr uint32_t kMagic = 0xa92b4efc;
  for (MdSuperblockVersion version :
       {MdSuperblockVersion::k1_2, MdSuperblockVersion::k1_1, MdSuperblockVersion::k1_0}) {
    std::optional<uint64_t> at = MdSuperblockOffset(version, size);
    if (!at) continue;
    std::vector<uint8_t> bytes(
        static_cast<size_t>(std::min<uint64_t>(kMdSuperblockReadBytes, size - *at)));
    Result<size_t> got = ReadAt(fd, bytes.data(), bytes.size(), offset + *at, path);
    if (!got) return got.error();
    bytes.resize(*got);
    if (Le<uint32_t>(bytes, 0) != kMagic) continue;
    return ParseMdSuperblock(bytes, version, *at, size);
  }
  return MakeError(
      fmt::format("'{}' at byte {}: no MD version-1 superblock (0.90 is not read)", path, offset));
}

}  // namespace partalign
