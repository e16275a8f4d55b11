// SPDX-License-Identifier: GPL-3.0-or-later
// The used maps of real filesystems, made by their own mkfs, checked against independent
// readers: partclone's domain files (partclone.extfs, partclone.fat: "+" = used) and xfs_db's
// free-space listing. A provider may copy more than they call used (the first 64 KiB, what
// follows the filesystem), never less. Dirty filesystems, hibernation images and contents
// partalign does not read are copied whole or refused. Filesystems sit at an odd offset in a
// larger image, as a partition at sector 63 does.
#include "io/used/used_map_reader.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/util/unique_fd.h"
#include "partalign/used/fat_used_map.h"
#include "support/device_test.h"
#include "support/loop_device.h"
#include "support/mount_point.h"
#include "support/run_command.h"
#include "support/stack_tools.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::RunOrThrow;
using test::TempDir;

constexpr uint64_t kOffset = 63 * 512;  // the partition's place in the image

using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;  // [begin, end), sorted, merged

Ranges Merge(Ranges r) {
  std::sort(r.begin(), r.end());
  Ranges out;
  for (const auto& [b, e] : r) {
    if (b >= e) continue;
    if (!out.empty() && b <= out.back().second) {
      out.back().second = std::max(out.back().second, e);
    } else {
      out.emplace_back(b, e);
    }
  }
  return out;
}

Ranges Subtract(const Ranges& a, const Ranges& b) {
  Ranges out;
  for (auto [begin, end] : a) {
    for (const auto& [bb, be] : b) {
      if (be <= begin || bb >= end) continue;
      if (bb > begin) out.emplace_back(begin, bb);
      begin = std::max(begin, be);
    }
    if (begin < end) out.emplace_back(begin, end);
  }
  return Merge(out);
}

Ranges Of(const UsedMap& map) {
  Ranges r;
  for (const UsedRange& u : map.ranges())
    r.emplace_back(u.offset_bytes, u.offset_bytes + u.length_bytes);
  return r;
}

std::string Show(const Ranges& r) {
  std::string s;
  for (size_t i = 0; i < r.size() && i < 6; ++i) {
    s += fmt::format("[{:#x}, {:#x}) ", r[i].first, r[i].second);
  }
  return r.size() > 6 ? s + fmt::format("... ({} ranges)", r.size()) : s;
}

// partclone's domain file (GNU ddrescue format): "pos size status", "+" = used.
Ranges PartcloneUsed(const std::string& tool, const std::string& image, const TempDir& dir) {
  const std::string map = dir.File("partclone.map");
  RunOrThrow({tool, "-D", "-s", image, "-o", map, "-L", dir.File("partclone.log")});
  std::ifstream in(map);
  std::string line;
  Ranges used;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string pos;
    std::string size;
    std::string status;
    if (!(fields >> pos >> size >> status) || status != "+") continue;
    const uint64_t p = std::stoull(pos, nullptr, 16);
    used.emplace_back(p, p + std::stoull(size, nullptr, 16));
  }
  return Merge(used);
}

// The filesystem image `fs` placed at kOffset in a larger image; the map of that partition.
struct Placed {
  TempDir& dir;
  std::string image;
  uint64_t length = 0;
  Result<UsedMap> Map(const std::string& type) const {
    UniqueFd fd(::open(image.c_str(), O_RDONLY | O_CLOEXEC));
    return ReadUsedMap({image, fd.get(), kOffset, length, type});
  }
};

Placed Place(TempDir& dir, const std::string& fs, uint64_t length) {
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, kOffset + length + (1 << 20));
  RunOrThrow({"dd", "if=" + fs, "of=" + image, "bs=1M", "oflag=seek_bytes",
              "seek=" + std::to_string(kOffset), "conv=notrunc,sparse", "status=none"});
  return {dir, image, length};
}

// Files of assorted sizes under `root` (one level of directories).
void MakeFiles(const std::string& root, int count, uint64_t seed) {
  RunOrThrow({"mkdir", "-p", root + "/d"});
  for (int i = 0; i < count; ++i) {
    const uint64_t kib = 1 + (seed * 7919 + static_cast<uint64_t>(i) * 104729) % 3000;
    RunOrThrow({"dd", "if=/dev/urandom", "of=" + root + (i % 3 ? "/d/f" : "/f") + std::to_string(i),
                "bs=1K", "count=" + std::to_string(kib), "status=none"});
  }
}

void ExpectCovers(const UsedMap& map, const Ranges& oracle, uint64_t fs_bytes) {
  const Ranges mine = Merge(Of(map));
  EXPECT_EQ(Subtract(oracle, mine), Ranges{}) << "used by the oracle, missing from the map";
  // What the map adds: only the first 64 KiB and what follows the filesystem.
  const Ranges extra = Subtract(mine, oracle);
  const Ranges allowed = {{0, kUsedHeadBytes}, {fs_bytes, map.length_bytes()}};
  EXPECT_EQ(Subtract(extra, allowed), Ranges{}) << "copied although free: " << Show(extra);
}

TEST(UsedMapReaderTest, ExtMapIsPartclonesWithTheHeadAndTheTail) {
  for (const char* block : {"1024", "4096"}) {
    TempDir dir;
    MakeFiles(dir.File("src"), 40, block[0]);
    const std::string fs = dir.File("fs.img");
    const uint64_t fs_bytes = 192 << 20;
    test::CreateSparseFile(fs, fs_bytes);
    RunOrThrow({"mkfs.ext4", "-q", "-F", "-b", block, "-d", dir.File("src"), fs});
    const Ranges oracle = PartcloneUsed("partclone.extfs", fs, dir);
    // The partition is 3 MiB longer than the filesystem.
    const Placed placed = Place(dir, fs, fs_bytes + (3 << 20));
    Result<UsedMap> map = placed.Map("ext4");
    ASSERT_TRUE(map) << map.error().message;
    EXPECT_EQ(map->source, "ext: libext2fs block bitmaps");
    EXPECT_TRUE(map->notes().empty());
    ExpectCovers(*map, oracle, fs_bytes);
    const auto reasons = map->BytesByReason();
    EXPECT_GT(reasons[static_cast<size_t>(UsedReason::kJournal)], 0u) << block;
    EXPECT_GT(reasons[static_cast<size_t>(UsedReason::kSuperblock)], 4u * 1024) << "backups";
    EXPECT_EQ(reasons[static_cast<size_t>(UsedReason::kBeyondFilesystem)], 3u << 20);
    EXPECT_LT(map->used_bytes(), fs_bytes / 2) << "mostly free";
  }
}

// A 2 GiB filesystem with few files: most groups are BLOCK_UNINIT, and their metadata (backup
// superblocks, bitmaps, inode tables) is still in the map.
TEST(UsedMapReaderTest, ExtUninitialisedGroupsKeepTheirMetadata) {
  TempDir dir;
  MakeFiles(dir.File("src"), 5, 3);
  const std::string fs = dir.File("fs.img");
  const uint64_t fs_bytes = 2ull << 30;
  test::CreateSparseFile(fs, fs_bytes);
  RunOrThrow({"mkfs.ext4", "-q", "-F", "-d", dir.File("src"), fs});
  const Ranges oracle = PartcloneUsed("partclone.extfs", fs, dir);
  const Placed placed = Place(dir, fs, fs_bytes);
  Result<UsedMap> map = placed.Map("ext4");
  ASSERT_TRUE(map);
  ExpectCovers(*map, oracle, fs_bytes);
  EXPECT_GT(map->BytesByReason()[static_cast<size_t>(UsedReason::kUninitGroup)], 0u);
}

TEST(UsedMapReaderTest, ExtThatNeedsRecoveryOrIsTooLargeIsCopiedWhole) {
  TempDir dir;
  const std::string fs = dir.File("fs.img");
  test::CreateSparseFile(fs, 64 << 20);
  RunOrThrow({"mkfs.ext4", "-q", "-F", fs});
  {
    const Placed small = Place(dir, fs, 32 << 20);  // the partition is half the filesystem
    Result<UsedMap> map = small.Map("ext4");
    ASSERT_TRUE(map);
    EXPECT_TRUE(map->IsWhole());
    ASSERT_EQ(map->notes().size(), 1u);
    EXPECT_NE(map->notes()[0].find("more than the partition"), std::string::npos)
        << map->notes()[0];
  }
  RunOrThrow({"debugfs", "-w", "-R", "feature needs_recovery", fs});
  const Placed placed = Place(dir, fs, 64 << 20);
  Result<UsedMap> map = placed.Map("ext4");
  ASSERT_TRUE(map);
  EXPECT_TRUE(map->IsWhole());
  ASSERT_EQ(map->notes().size(), 1u);
  EXPECT_NE(map->notes()[0].find("needs recovery"), std::string::npos) << map->notes()[0];
}

// A group descriptor naming an inode table outside the filesystem: libext2fs opens it, makes
// the uninitialised group's bitmap up from the wrong place and prints a warning; e2fsck finds
// the table again from the backup descriptors. Nothing of it may be left behind.
TEST(UsedMapReaderTest, ExtWithACorruptGroupDescriptorIsCopiedWhole) {
  TempDir dir;
  const std::string fs = dir.File("fs.img");
  test::CreateSparseFile(fs, 64 << 20);
  // 1 KiB blocks, 2048 a group: group 2 holds no backup superblock and is BLOCK_UNINIT.
  RunOrThrow({"mkfs.ext4", "-q", "-F", "-b", "1024", "-g", "2048", "-G", "1", fs});
  {
    Result<UsedMap> clean = Place(dir, fs, 64 << 20).Map("ext4");
    ASSERT_TRUE(clean);
    EXPECT_FALSE(clean->IsWhole());
    EXPECT_TRUE(clean->notes().empty());
  }
  // One debugfs session: a second one would refuse the bitmaps whose checksums no longer match.
  test::WriteFile(dir.File("commands"), "set_bg 2 inode_table 9999999\nset_bg 2 checksum calc\n");
  RunOrThrow({"debugfs", "-w", "-f", dir.File("commands"), fs});
  const Placed placed = Place(dir, fs, 64 << 20);
  const std::string before = test::ReadFile(placed.image);
  Result<UsedMap> map = placed.Map("ext4");
  ASSERT_TRUE(map);
  EXPECT_TRUE(map->IsWhole());
  ASSERT_EQ(map->notes().size(), 1u);
  EXPECT_NE(map->notes()[0].find("group descriptors are corrupt"), std::string::npos)
      << map->notes()[0];
  EXPECT_TRUE(test::ReadFile(placed.image) == before) << "the map is read without writing";
}

TEST(UsedMapReaderTest, XfsMapIsTheComplementOfXfsDbsFreeSpace) {
  TempDir dir;
  MakeFiles(dir.File("src"), 30, 5);
  std::string proto = "boot\n0 0\nd--755 0 0\n";
  for (int i = 0; i < 30; i += 3) {
    proto += fmt::format("f{} ---644 0 0 {}/f{}\n", i, dir.File("src"), i);
  }
  proto += "$\n";
  test::WriteFile(dir.File("proto"), proto);
  const std::string fs = dir.File("fs.img");
  const uint64_t fs_bytes = 400 << 20;
  test::CreateSparseFile(fs, fs_bytes);
  RunOrThrow({"mkfs.xfs", "-q", "-p", dir.File("proto"), fs});
  // xfs_db's free extents, "agno agbno len", and the geometry to place them.
  const test::CommandResult geometry =
      test::RunCommand({"xfs_db", "-r", "-c", "sb 0", "-c", "p blocksize agblocks", fs});
  uint64_t block = 0;
  uint64_t ag_blocks = 0;
  ASSERT_EQ(std::sscanf(geometry.out.c_str(), "blocksize = %lu agblocks = %lu", &block, &ag_blocks),
            2)
      << geometry.out;
  const test::CommandResult freesp = test::RunCommand({"xfs_db", "-r", "-c", "freesp -d", fs});
  ASSERT_EQ(freesp.exit_code, 0) << freesp.err;
  Ranges free;
  std::istringstream lines(freesp.out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.find("from") != std::string::npos) break;  // the histogram follows
    uint64_t ag = 0;
    uint64_t agbno = 0;
    uint64_t len = 0;
    if (std::sscanf(line.c_str(), " %lu %lu %lu", &ag, &agbno, &len) != 3) continue;
    const uint64_t at = (ag * ag_blocks + agbno) * block;
    free.emplace_back(at, at + len * block);
  }
  ASSERT_FALSE(free.empty());
  // xfs_db counts the AG free lists (AGFL) as free; partalign copies them (a few blocks next to
  // the AG headers): they are used as far as this comparison goes.
  const test::CommandResult sb =
      test::RunCommand({"xfs_db", "-r", "-c", "sb 0", "-c", "p agcount", fs});
  const int ag_count = std::atoi(sb.out.substr(sb.out.find('=') + 1).c_str());
  ASSERT_GT(ag_count, 0) << sb.out;
  Ranges agfl;
  for (int ag = 0; ag < ag_count; ++ag) {
    const test::CommandResult list =
        test::RunCommand({"xfs_db", "-r", "-c", fmt::format("agfl {}", ag), "-c", "p bno", fs});
    std::istringstream entries(list.out.substr(list.out.find('=') + 1));
    std::string entry;
    while (entries >> entry) {
      const std::string value = entry.substr(entry.find(':') + 1);
      if (value == "null") continue;
      const uint64_t at = (ag * ag_blocks + std::stoull(value)) * block;
      agfl.emplace_back(at, at + block);
    }
  }
  ASSERT_FALSE(agfl.empty());
  const Ranges oracle = Merge([&] {
    Ranges r = Subtract({{0, fs_bytes}}, Merge(free));
    r.insert(r.end(), agfl.begin(), agfl.end());
    return r;
  }());
  const Placed placed = Place(dir, fs, fs_bytes + (1 << 20));
  Result<UsedMap> map = placed.Map("xfs");
  ASSERT_TRUE(map) << map.error().message;
  EXPECT_TRUE(map->notes().empty()) << map->notes().front();
  ExpectCovers(*map, oracle, fs_bytes);
  EXPECT_LT(map->used_bytes(), fs_bytes / 3);
}

// btrfs: exactly the device extents btrfs's own dump-tree lists, plus the first MiB, the
// superblock mirror and what follows the device.
TEST(UsedMapReaderTest, BtrfsMapIsItsDeviceExtents) {
  TempDir dir;
  MakeFiles(dir.File("src"), 30, 7);
  const std::string fs = dir.File("fs.img");
  const uint64_t fs_bytes = 400 << 20;
  test::CreateSparseFile(fs, fs_bytes);
  RunOrThrow({"mkfs.btrfs", "-q", "-r", dir.File("src"), fs});
  const test::CommandResult tree =
      test::RunCommand({"btrfs", "inspect-internal", "dump-tree", "-t", "dev", fs});
  ASSERT_EQ(tree.exit_code, 0) << tree.err;
  Ranges extents;
  const std::regex key(R"(key \(1 DEV_EXTENT (\d+)\)[^\n]*\n[^\n]*\n[^\n]*length (\d+))");
  for (std::sregex_iterator it(tree.out.begin(), tree.out.end(), key), end; it != end; ++it) {
    const uint64_t at = std::stoull((*it)[1]);
    extents.emplace_back(at, at + std::stoull((*it)[2]));
  }
  ASSERT_GE(extents.size(), 3u) << tree.out;
  const Placed placed = Place(dir, fs, fs_bytes + (2 << 20));
  Result<UsedMap> map = placed.Map("btrfs");
  ASSERT_TRUE(map) << map.error().message;
  EXPECT_TRUE(map->notes().empty()) << map->notes().front();
  EXPECT_EQ(map->source, "btrfs: device extents");
  const Ranges mine = Merge(Of(*map));
  EXPECT_EQ(Subtract(Merge(extents), mine), Ranges{}) << "a device extent is missing";
  const Ranges allowed = {
      {0, 1 << 20}, {64 << 20, (64 << 20) + 4096}, {fs_bytes, fs_bytes + (2 << 20)}};
  EXPECT_EQ(Subtract(Subtract(mine, Merge(extents)), allowed), Ranges{});
  // Damage a byte of the superblock: its checksum fails and the partition is copied whole.
  std::fstream image(placed.image, std::ios::in | std::ios::out | std::ios::binary);
  image.seekp(static_cast<std::streamoff>(kOffset + (64 << 10) + 300));
  image.write("X", 1);
  image.close();
  Result<UsedMap> damaged = placed.Map("btrfs");
  ASSERT_TRUE(damaged);
  EXPECT_TRUE(damaged->IsWhole());
  ASSERT_EQ(damaged->notes().size(), 1u);
  EXPECT_NE(damaged->notes()[0].find("checksum"), std::string::npos) << damaged->notes()[0];
}

// LVM2: the label and metadata, and exactly the extents pvs --segments lists as allocated; a
// removed LV leaves a hole that is not copied.
TEST(UsedMapReaderTest, LvmMapIsTheAllocatedExtentsPvsReports) {
  PARTALIGN_REQUIRE_DEVICES();
  TempDir dir;
  const uint64_t pv_bytes = 96 << 20;
  test::CreateSparseFile(dir.File("pv.img"), pv_bytes);
  Ranges oracle;
  uint64_t pe_start = 0;
  {
    test::LoopDevice loop(dir.File("pv.img"), 512);
    const std::vector<std::string> devices{loop.path()};
    const std::string vg = test::UniqueVgName("u");
    test::RunLvmOrThrow("pvcreate", {"-q", "--metadatacopies", "2", loop.path()}, devices);
    test::RunLvmOrThrow("vgcreate", {"-q", "-s", "4m", vg, loop.path()}, devices);
    for (const char* lv : {"a", "b", "c"}) {
      test::RunLvmOrThrow("lvcreate", {"-q", "-an", "-Zn", "-L", "8m", "-n", lv, vg}, devices);
    }
    test::RunLvmOrThrow("lvremove", {"-q", "-f", vg + "/b"}, devices);
    const nlohmann::json pv = test::LvmReport("pvs", "pe_start,vg_extent_size", devices);
    ASSERT_EQ(pv.size(), 1u) << pv;
    pe_start = test::LvmBytes(pv[0]["pe_start"]);
    const uint64_t extent = test::LvmBytes(pv[0]["vg_extent_size"]);
    const test::CommandResult listed = test::RunLvm(
        "pvs", {"--segments", "-o", "pvseg_start,pvseg_size,lv_name", "--reportformat", "json"},
        devices);
    ASSERT_EQ(listed.exit_code, 0) << listed.err;
    const nlohmann::json segments = nlohmann::json::parse(listed.out)["report"][0]["pvseg"];
    for (const nlohmann::json& seg : segments) {
      if (seg["lv_name"].get<std::string>().empty()) continue;
      const uint64_t at = pe_start + std::stoull(seg["pvseg_start"].get<std::string>()) * extent;
      oracle.emplace_back(at, at + std::stoull(seg["pvseg_size"].get<std::string>()) * extent);
    }
    ASSERT_EQ(oracle.size(), 2u) << segments;
  }
  const Placed placed = Place(dir, dir.File("pv.img"), pv_bytes);
  Result<UsedMap> map = placed.Map("LVM2_member");
  ASSERT_TRUE(map) << map.error().message;
  EXPECT_TRUE(map->notes().empty()) << map->notes().front();
  const Ranges mine = Merge(Of(*map));
  EXPECT_EQ(Subtract(Merge(oracle), mine), Ranges{});
  // Besides the extents: the label and first metadata area, and the second area at the end.
  const Ranges extra = Subtract(Subtract(mine, Merge(oracle)), {{0, pe_start}});
  ASSERT_EQ(extra.size(), 1u) << Show(extra);
  EXPECT_EQ(extra[0].second, pv_bytes) << "the second metadata area ends the PV";
  EXPECT_LT(extra[0].second - extra[0].first, 2u << 20);
}

TEST(UsedMapReaderTest, SwapIsItsHeaderAndAHibernationImageIsRefused) {
  TempDir dir;
  const std::string fs = dir.File("swap.img");
  test::CreateSparseFile(fs, 32 << 20);
  RunOrThrow({"mkswap", "-q", fs});
  const Placed placed = Place(dir, fs, 32 << 20);
  Result<UsedMap> map = placed.Map("swap");
  ASSERT_TRUE(map) << map.error().message;
  EXPECT_EQ(map->used_bytes(), kUsedHeadBytes);
  // A hibernation image replaces the signature at the end of the first page.
  std::fstream image(placed.image, std::ios::in | std::ios::out | std::ios::binary);
  image.seekp(static_cast<std::streamoff>(kOffset + 4096 - 10));
  image.write("S1SUSPEND\0", 10);
  image.close();
  Result<UsedMap> refused = placed.Map("swap");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("hibernation image"), std::string::npos);
}

// Bytes past a filesystem are data (issue 37): a swap area smaller than its partition (mkswap
// with a size) leaves the rest of the partition to whoever wrote there, and it is copied.
TEST(UsedMapReaderTest, WhatFollowsASwapAreaSmallerThanItsPartitionIsCopied) {
  TempDir dir;
  const std::string fs = dir.File("swap.img");
  test::CreateSparseFile(fs, 32 << 20);
  RunOrThrow({"mkswap", "-q", fs, "16384"});  // a 16 MiB area (1 KiB blocks) in 32 MiB
  const Placed placed = Place(dir, fs, 32 << 20);
  Result<UsedMap> map = placed.Map("swap");
  ASSERT_TRUE(map) << map.error().message;
  EXPECT_EQ(map->used_bytes(), kUsedHeadBytes + (16 << 20));
  ASSERT_FALSE(map->ranges().empty());
  EXPECT_EQ(map->ranges().back().offset_bytes, 16u << 20);
  EXPECT_EQ(map->ranges().back().length_bytes, 16u << 20);
}

TEST(UsedMapReaderTest, LuksAndUnknownContentsAreCopiedWhole) {
  TempDir dir;
  const std::string fs = dir.File("blank.img");
  test::CreateSparseFile(fs, 8 << 20);
  const Placed placed = Place(dir, fs, 8 << 20);
  for (const char* type : {"crypto_LUKS", "", "zfs_member"}) {
    Result<UsedMap> map = placed.Map(type);
    ASSERT_TRUE(map);
    EXPECT_TRUE(map->IsWhole()) << type;
    EXPECT_EQ(map->notes().size(), 1u) << type;
  }
}

// Files go in with mtools (this kernel has no vfat driver); partclone.fat is the oracle. A
// volume whose FAT says it was not cleanly unmounted is copied whole.
TEST(UsedMapReaderTest, VfatMapIsPartclonesAndADirtyVolumeIsCopiedWhole) {
  for (const char* bits : {"16", "32"}) {
    TempDir dir;
    MakeFiles(dir.File("src"), 30, bits[0]);
    const std::string fs = dir.File("fs.img");
    const uint64_t fs_bytes = 300 << 20;
    test::CreateSparseFile(fs, fs_bytes);
    RunOrThrow({"mkfs.vfat", "-F", bits, fs});
    RunOrThrow({"mcopy", "-s", "-i", fs, dir.File("src/d"), dir.File("src/f0"), "::/"});
    const Ranges oracle = PartcloneUsed("partclone.fat", fs, dir);
    const Placed placed = Place(dir, fs, fs_bytes);
    Result<UsedMap> map = placed.Map("vfat");
    ASSERT_TRUE(map) << map.error().message;
    EXPECT_TRUE(map->notes().empty()) << map->notes().front();
    EXPECT_EQ(map->source, fmt::format("vfat: FAT{} allocation tables", bits));
    // mkfs.vfat leaves the image's last sectors out of the filesystem: they follow it.
    const std::string boot = test::ReadFile(fs).substr(0, 512);
    Result<FatGeometry> geometry = ParseFatBootSector(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(boot.data()), 512), fs_bytes);
    ASSERT_TRUE(geometry) << geometry.error().message;
    ExpectCovers(*map, oracle, geometry->total_sectors * geometry->bytes_per_sector);
    EXPECT_GT(map->BytesByReason()[static_cast<size_t>(UsedReason::kAllocated)], 10u << 20);
    EXPECT_LT(map->used_bytes(), fs_bytes / 2);

    // Clear the clean-shutdown bit of FAT entry 1 (FAT16: bit 15, FAT32: bit 27).
    std::fstream image(placed.image, std::ios::in | std::ios::out | std::ios::binary);
    uint8_t reserved[2];
    image.seekg(static_cast<std::streamoff>(kOffset + 14));
    image.read(reinterpret_cast<char*>(reserved), 2);
    const uint64_t fat = kOffset + (reserved[0] | reserved[1] << 8) * 512ull;
    const uint64_t at = fat + (bits[0] == '1' ? 3 : 7);
    image.seekg(static_cast<std::streamoff>(at));
    char byte = 0;
    image.read(&byte, 1);
    byte = static_cast<char>(byte & (bits[0] == '1' ? 0x7f : 0xf7));
    image.seekp(static_cast<std::streamoff>(at));
    image.write(&byte, 1);
    image.close();
    Result<UsedMap> dirty = placed.Map("vfat");
    ASSERT_TRUE(dirty);
    EXPECT_TRUE(dirty->IsWhole());
    ASSERT_EQ(dirty->notes().size(), 1u);
    EXPECT_NE(dirty->notes()[0].find("dirty"), std::string::npos) << dirty->notes()[0];
  }
}

// XFS refuses to be read from a log that was not cleanly unmounted: shut down with files in
// flight, the log needs recovery, and the whole partition is copied.
TEST(UsedMapReaderTest, XfsWithADirtyLogIsCopiedWhole) {
  PARTALIGN_REQUIRE_DEVICES();
  TempDir dir;
  const std::string fs = dir.File("fs.img");
  test::CreateSparseFile(fs, 300 << 20);
  RunOrThrow({"mkfs.xfs", "-q", fs});
  {
    RunOrThrow({"mkdir", dir.File("mnt")});
    test::LoopDevice loop(fs, 512);
    test::MountPoint mount(loop.path(), dir.File("mnt"));
    MakeFiles(dir.File("mnt"), 10, 9);
    RunOrThrow({"sync"});
    MakeFiles(dir.File("mnt") + "/late", 5, 10);
    RunOrThrow({"xfs_io", "-x", "-c", "shutdown", dir.File("mnt")});
  }
  const Placed placed = Place(dir, fs, 300 << 20);
  Result<UsedMap> map = placed.Map("xfs");
  ASSERT_TRUE(map);
  EXPECT_TRUE(map->IsWhole());
  ASSERT_EQ(map->notes().size(), 1u);
  EXPECT_NE(map->notes()[0].find("not cleanly unmounted"), std::string::npos) << map->notes()[0];
}

}  // namespace
}  // namespace partalign
