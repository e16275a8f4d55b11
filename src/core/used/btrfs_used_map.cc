// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/used/btrfs_used_map.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "partalign/used/crc32c.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

constexpr uint64_t kBtrfsSuperOffset = 64 * kKiB;               // BTRFS_SUPER_INFO_OFFSET
constexpr uint64_t kSuperBytes = 4096;                          // BTRFS_SUPER_INFO_SIZE
constexpr uint64_t kMirrorOffsets[] = {64 * kMiB, 256 * kGiB};  // btrfs_sb_offset(1), (2)
constexpr uint64_t kReservedBytes = kMiB;  // the first 1 MiB is never allocated
constexpr char kMagic[8] = {'_', 'B', 'H', 'R', 'f', 'S', '_', 'M'};
constexpr size_t kCsumBytes = 32;       // BTRFS_CSUM_SIZE
constexpr size_t kHeaderBytes = 101;    // struct btrfs_header
constexpr size_t kItemBytes = 25;       // struct btrfs_item
constexpr size_t kKeyPtrBytes = 33;     // struct btrfs_key_ptr
constexpr size_t kChunkItemBytes = 48;  // struct btrfs_chunk without its stripes
constexpr size_t kStripeBytes = 32;     // struct btrfs_stripe
constexpr size_t kDiskKeyBytes = 17;
constexpr size_t kSysChunkArrayAt = 811;
constexpr size_t kSysChunkArrayMax = 2048;
constexpr uint32_t kMaxLevels = 8;  // BTRFS_MAX_LEVEL
constexpr uint8_t kRootItemKey = 132;
constexpr uint8_t kDevExtentKey = 204;
constexpr uint8_t kChunkItemKey = 228;
constexpr uint64_t kDevTreeObjectId = 4;
/// struct btrfs_root_item: bytenr at 176, level at 238.
constexpr size_t kRootItemBytenrAt = 176;
constexpr size_t kRootItemLevelAt = 238;
/// Block group profiles whose chunks stripe data across devices (BTRFS_BLOCK_GROUP_RAID0,
/// RAID10, RAID5, RAID6): a tree block there is not one contiguous range of this device.
constexpr uint64_t kStripedProfiles = 8 | 64 | 128 | 256;
/// Incompatible features (BTRFS_FEATURE_INCOMPAT_*) that leave the chunk, root and device trees
/// as this parser reads them: mixed backref, default subvol, mixed groups, lzo, zstd, big
/// metadata, extended iref, raid56, skinny metadata, no holes, metadata uuid, raid1c34. Zoned
/// devices and extent tree v2 (and anything newer) are copied whole.
constexpr uint64_t kBtrfsKnownIncompat = 0x0fff;

// A superblock or tree block: CRC-32C of everything after the 32-byte checksum field, stored
// little-endian in its first 4 bytes.
bool ChecksumMatches(std::span<const uint8_t> block) {
  return block.size() > kCsumBytes && Le32(block.data()) == Crc32c(block.subspan(kCsumBytes));
}

struct Chunk {
  uint64_t logical = 0;
  uint64_t length = 0;
  uint64_t type = 0;
  std::vector<std::pair<uint64_t, uint64_t>> stripes;  // devid, physical offset
};

// A chunk item at `p` with `available` bytes; nullopt when it does not fit or is absurd.
std::optional<Chunk> ParseChunk(uint64_t logical, const uint8_t* p, size_t available) {
  if (available < kChunkItemBytes) return std::nullopt;
  Chunk c;
  c.logical = logical;
  c.length = Le64(p);
  c.type = Le64(p + 24);
  const uint64_t stripes = Le16(p + 44);
  if (c.length == 0 || stripes == 0 || available < kChunkItemBytes + stripes * kStripeBytes) {
    return std::nullopt;
  }
  for (uint64_t i = 0; i < stripes; ++i) {
    const uint8_t* s = p + kChunkItemBytes + i * kStripeBytes;
    c.stripes.emplace_back(Le64(s), Le64(s + 8));
  }
  return c;
}

class Reader {
 public:
  Reader(const ByteSource& source, uint64_t devid, uint32_t nodesize, uint64_t device_bytes)
      : source_(source), devid_(devid), nodesize_(nodesize), device_bytes_(device_bytes) {}

  Status AddChunk(const Chunk& c) {
    if (c.logical > UINT64_MAX - c.length) return MakeError("a chunk wraps around");
    chunks_.push_back(c);
    return {};
  }

  /// Every item of the tree at `root` (level `level`), leaves left to right.
  using Visit = std::function<Status(const uint8_t* key, std::span<const uint8_t> item)>;
  Status Walk(uint64_t root, uint32_t level, const Visit& visit) {
    if (level >= kMaxLevels) return MakeError(fmt::format("a tree of {} levels", level + 1));
    Result<std::vector<uint8_t>> node = ReadNode(root, level);
    if (!node) return node.error();
    const uint8_t* n = node->data();
    const uint64_t items = Le32(n + 96);
    if (level == 0) {
      if (items > (nodesize_ - kHeaderBytes) / kItemBytes) {
        return MakeError(fmt::format("leaf {} holds {} items", root, items));
      }
      for (uint64_t i = 0; i < items; ++i) {
        const uint8_t* item = n + kHeaderBytes + i * kItemBytes;
        const uint64_t offset = Le32(item + 17);
        const uint64_t size = Le32(item + 21);
        if (offset > nodesize_ - kHeaderBytes || size > nodesize_ - kHeaderBytes - offset) {
          return MakeError(fmt::format("an item of leaf {} leaves the leaf", root));
        }
        if (Status s = visit(item, {n + kHeaderBytes + offset, size}); !s) return s;
      }
      return {};
    }
    if (items == 0 || items > (nodesize_ - kHeaderBytes) / kKeyPtrBytes) {
      return MakeError(fmt::format("node {} holds {} pointers", root, items));
    }
    for (uint64_t i = 0; i < items; ++i) {
      const uint8_t* ptr = n + kHeaderBytes + i * kKeyPtrBytes;
      if (Status s = Walk(Le64(ptr + 17), level - 1, visit); !s) return s;
    }
    return {};
  }

 private:
  // The tree block at logical address `logical`, checked.
  Result<std::vector<uint8_t>> ReadNode(uint64_t logical, uint32_t level) {
    if (!seen_.insert(logical).second || seen_.size() > device_bytes_ / nodesize_) {
      return MakeError(fmt::format("tree block {} is reached twice", logical));
    }
    const Chunk* chunk = nullptr;
    for (const Chunk& c : chunks_) {
      if (logical >= c.logical && logical - c.logical < c.length) chunk = &c;
    }
    if (chunk == nullptr) return MakeError(fmt::format("no chunk maps tree block {}", logical));
    if ((chunk->type & kStripedProfiles) != 0) {
      return MakeError(fmt::format("tree block {} is in a striped chunk", logical));
    }
    if (chunk->length < nodesize_ || logical - chunk->logical > chunk->length - nodesize_) {
      return MakeError(fmt::format("tree block {} crosses its chunk's end", logical));
    }
    // Each copy on this device (DUP holds two, RAID1 one per device): the first that passes
    // every check.
    std::string why = fmt::format("tree block {} is on another device", logical);
    for (const auto& [devid, offset] : chunk->stripes) {
      if (devid != devid_) continue;
      const uint64_t delta = logical - chunk->logical;
      const uint64_t physical = offset + delta;
      if (offset > device_bytes_ || delta > device_bytes_ - offset ||
          nodesize_ > device_bytes_ - physical) {
        why = fmt::format("tree block {} lies beyond the device", logical);
        continue;
      }
      Result<std::vector<uint8_t>> node = source_.Read(physical, nodesize_);
      if (!node) return node;
      if (ChecksumMatches(*node) && Le64(node->data() + 48) == logical && (*node)[100] == level) {
        return node;
      }
      why = fmt::format("tree block {} fails its checksum, address or level", logical);
    }
    return MakeError(why);
  }

  const ByteSource& source_;
  const uint64_t devid_;
  const uint32_t nodesize_;
  const uint64_t device_bytes_;
  std::vector<Chunk> chunks_;
  std::set<uint64_t> seen_;
};

}  // namespace

UsedMap BtrfsUsedMap(const ByteSource& source) {
  const uint64_t length = source.size_bytes();
  if (length < kBtrfsSuperOffset + kSuperBytes) {
    return UsedMap::WholeBecause(length, "btrfs", "the partition is too small for a superblock");
  }
  Result<std::vector<uint8_t>> super = source.Read(kBtrfsSuperOffset, kSuperBytes);
  if (!super) return UsedMap::WholeBecause(length, "btrfs", super.error().message);
  const uint8_t* sb = super->data();
  if (std::memcmp(sb + 64, kMagic, sizeof(kMagic)) != 0) {
    return UsedMap::WholeBecause(length, "btrfs", "no superblock magic");
  }
  if (Le16(sb + 196) != 0) {
    return UsedMap::WholeBecause(length, "btrfs", "its checksums are not crc32c");
  }
  if (!ChecksumMatches(*super)) {
    return UsedMap::WholeBecause(length, "btrfs", "the superblock checksum does not match");
  }
  const uint64_t incompat = Le64(sb + 188);
  if ((incompat & ~kBtrfsKnownIncompat) != 0) {
    return UsedMap::WholeBecause(
        length, "btrfs",
        fmt::format("unknown incompatible features {:#x}", incompat & ~kBtrfsKnownIncompat));
  }
  const uint32_t nodesize = Le32(sb + 148);
  const uint32_t array_bytes = Le32(sb + 160);
  const uint8_t* dev_item = sb + 201;
  const uint64_t devid = Le64(dev_item);
  const uint64_t device_bytes = Le64(dev_item + 8);
  if (!IsPowerOfTwo(nodesize) || nodesize < 4096 || nodesize > 65536 ||
      array_bytes > kSysChunkArrayMax || device_bytes > length || device_bytes < kReservedBytes) {
    return UsedMap::WholeBecause(
        length, "btrfs",
        fmt::format("its sizes are impossible (node {}, system chunks {} bytes, device {} of {} "
                    "bytes)",
                    nodesize, array_bytes, device_bytes, length));
  }
  Reader reader(source, devid, nodesize, device_bytes);
  // The system chunks, which map the chunk tree: key, chunk item, key, chunk item...
  const uint8_t* array = sb + kSysChunkArrayAt;
  for (size_t at = 0; at < array_bytes;) {
    if (array_bytes - at < kDiskKeyBytes || array[at + 8] != kChunkItemKey) {
      return UsedMap::WholeBecause(length, "btrfs", "the system chunk array is not valid");
    }
    std::optional<Chunk> c = ParseChunk(Le64(array + at + 9), array + at + kDiskKeyBytes,
                                        array_bytes - at - kDiskKeyBytes);
    if (!c) return UsedMap::WholeBecause(length, "btrfs", "a system chunk is not valid");
    if (Status s = reader.AddChunk(*c); !s) {
      return UsedMap::WholeBecause(length, "btrfs", s.error().message);
    }
    at += kDiskKeyBytes + kChunkItemBytes + c->stripes.size() * kStripeBytes;
  }
  // Every chunk, from the chunk tree.
  Status chunks = reader.Walk(Le64(sb + 88), sb[199], [&](const uint8_t* key, auto item) {
    if (key[8] != kChunkItemKey) return Status{};
    std::optional<Chunk> c = ParseChunk(Le64(key + 9), item.data(), item.size());
    if (!c) return Status(MakeError("a chunk item is not valid"));
    return reader.AddChunk(*c);
  });
  if (!chunks)
    return UsedMap::WholeBecause(length, "btrfs", "chunk tree: " + chunks.error().message);
  // The device tree's root, from the root tree.
  std::optional<std::pair<uint64_t, uint32_t>> dev_root;
  Status roots = reader.Walk(Le64(sb + 80), sb[198], [&](const uint8_t* key, auto item) {
    if (Le64(key) == kDevTreeObjectId && key[8] == kRootItemKey) {
      if (item.size() <= kRootItemLevelAt) return Status(MakeError("a root item is too short"));
      dev_root.emplace(Le64(item.data() + kRootItemBytenrAt), item[kRootItemLevelAt]);
    }
    return Status{};
  });
  if (!roots) return UsedMap::WholeBecause(length, "btrfs", "root tree: " + roots.error().message);
  if (!dev_root) return UsedMap::WholeBecause(length, "btrfs", "the root tree has no device tree");

  UsedMap map(length);
  map.source = "btrfs: device extents";
  map.Add(0, kReservedBytes, UsedReason::kHead);
  map.Add(0, kUsedHeadBytes, UsedReason::kHead);
  map.Add(kBtrfsSuperOffset, kSuperBytes, UsedReason::kSuperblock);
  for (uint64_t mirror : kMirrorOffsets) {
    if (mirror + kSuperBytes <= device_bytes) map.Add(mirror, kSuperBytes, UsedReason::kSuperblock);
  }
  map.Add(device_bytes, length - device_bytes, UsedReason::kBeyondFilesystem);
  Status extents =
      reader.Walk(dev_root->first, dev_root->second, [&](const uint8_t* key, auto item) {
        if (key[8] != kDevExtentKey || Le64(key) != devid) return Status{};
        if (item.size() < 32) return Status(MakeError("a device extent is too short"));
        const uint64_t start = Le64(key + 9);
        const uint64_t bytes = Le64(item.data() + 24);
        if (start > device_bytes || bytes > device_bytes - start) {
          return Status(
              MakeError(fmt::format("device extent {}+{} leaves the device", start, bytes)));
        }
        map.Add(start, bytes, UsedReason::kBtrfsDevExtents);
        return Status{};
      });
  if (!extents)
    return UsedMap::WholeBecause(length, "btrfs", "device tree: " + extents.error().message);
  return map;
}

}  // namespace partalign
