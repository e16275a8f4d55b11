// SPDX-License-Identifier: GPL-3.0-or-later
// ProbePartitionContents against filesystems made by the real mkfs tools: type, block size
// and the size read from the superblock (libblkid 2.38 has no FSSIZE), for the whole
// partition and for a filesystem smaller than its partition. Image files, no root; and
// ProbePartitionsContents over many partitions of a loop device with direct I/O (as root).
#include "io/device/blkid_probe.h"

#include <fcntl.h>
#include <unistd.h>

#include <vector>

#include <gtest/gtest.h>

#include "io/util/unique_fd.h"
#include "partalign/util/units.h"
#include "support/device_test.h"
#include "support/loop_device.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::RunCommand;

constexpr uint64_t kPartitionBytes = 320 * kMiB;  // xfs needs 300 MiB

// The first number after `key` in `text` ("Block count:   65536", "dblocks = 81920").
uint64_t NumberAfter(const std::string& text, const std::string& key) {
  size_t at = text.find(key);
  if (at == std::string::npos) return 0;
  at = text.find_first_of("0123456789", at + key.size());
  return at == std::string::npos ? 0 : std::stoull(text.substr(at));
}

// The number that ends right before `key` ("327663 sectors total").
uint64_t NumberBefore(const std::string& text, const std::string& key) {
  size_t end = text.find(key);
  if (end == std::string::npos) return 0;
  size_t begin = text.find_last_not_of("0123456789", end - 1) + 1;
  return begin < end ? std::stoull(text.substr(begin, end - begin)) : 0;
}

// What each filesystem's own tool says its size is: the oracle for the superblock reader.
uint64_t OracleSize(const std::string& type, const std::string& image) {
  if (type == "ext4" || type == "ext2") {
    std::string out = RunCommand({"dumpe2fs", "-h", image}).out;
    return NumberAfter(out, "Block count:") * NumberAfter(out, "Block size:");
  }
  if (type == "vfat") {
    // "       512 bytes per logical sector" ... "    327663 sectors total"
    std::string out = RunCommand({"fsck.fat", "-v", "-n", image}).out;
    return NumberBefore(out, " bytes per logical sector") * NumberBefore(out, " sectors total");
  }
  if (type == "xfs") {
    std::string out =
        RunCommand({"xfs_db", "-r", "-c", "sb 0", "-c", "p dblocks blocksize", image}).out;
    return NumberAfter(out, "dblocks =") * NumberAfter(out, "blocksize =");
  }
  return 0;
}

// A partition of kPartitionBytes formatted with `mkfs` ("{}" stands for it; a size argument
// makes the filesystem smaller than the partition), then probed.
struct Made {
  std::string type;
  std::vector<std::string> mkfs;
  uint64_t requested = 0;  // the size asked of mkfs when no tool reports it (swap, btrfs)
};

PartitionContents MakeAndProbe(const test::TempDir& dir, const Made& made, uint64_t* oracle) {
  const std::string image = dir.File(made.type + ".img");
  test::CreateSparseFile(image, kPartitionBytes);
  std::vector<std::string> argv = made.mkfs;
  for (std::string& a : argv) {
    if (a == "{}") a = image;
  }
  CommandResult r = RunCommand(argv);
  EXPECT_EQ(r.exit_code, 0) << test::Describe(argv, r);
  *oracle = made.requested ? made.requested : OracleSize(made.type, image);
  UniqueFd fd(::open(image.c_str(), O_RDONLY | O_CLOEXEC));
  Result<PartitionContents> c = ProbePartitionContents(fd.get(), image, 0, kPartitionBytes);
  EXPECT_TRUE(c) << c.error().message;
  return c ? *c : PartitionContents{};
}

TEST(BlkidProbeTest, FilesystemSizesComeFromTheSuperblock) {
  test::TempDir dir;
  const uint64_t half = kPartitionBytes / 2;
  const std::string half_k = std::to_string(half / kKiB);
  for (const Made& m : std::initializer_list<Made>{
           {"ext4", {"mkfs.ext4", "-q", "-F", "-b", "4096", "{}"}},
           {"ext2", {"mkfs.ext2", "-q", "-F", "-b", "1024", "{}", half_k}},
           {"vfat", {"mkfs.vfat", "{}", half_k}},
           {"swap", {"mkswap", "{}", half_k}, half},
           {"xfs", {"mkfs.xfs", "-q", "-f", "-K", "{}"}},
           {"btrfs", {"mkfs.btrfs", "-q", "-f", "-K", "-b", std::to_string(half), "{}"}, half},
       }) {
    uint64_t oracle = 0;
    PartitionContents c = MakeAndProbe(dir, m, &oracle);
    EXPECT_EQ(c.fs_type, m.type);
    EXPECT_EQ(c.proof, ContentProof::kSignature) << m.type;
    ASSERT_TRUE(c.fs_size_bytes) << m.type;
    EXPECT_GT(oracle, 0u) << m.type;
    EXPECT_EQ(*c.fs_size_bytes, oracle) << m.type;
  }
}

TEST(BlkidProbeTest, ExtInsideAnImageAtAnOffset) {
  // A 2048-byte-block ext4 of 64 MiB copied 1 MiB into an image: found where the partition
  // starts, with its block size and size.
  test::TempDir dir;
  const std::string fs = dir.File("ext4.fs");
  test::CreateSparseFile(fs, 64 * kMiB);
  ASSERT_EQ(RunCommand({"mkfs.ext4", "-q", "-F", "-b", "2048", fs}).exit_code, 0);
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, 80 * kMiB);
  CommandResult r = RunCommand(
      {"dd", "if=" + fs, "of=" + image, "bs=1M", "seek=1", "conv=notrunc,sparse", "status=none"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  UniqueFd fd(::open(image.c_str(), O_RDONLY | O_CLOEXEC));
  Result<PartitionContents> c = ProbePartitionContents(fd.get(), image, kMiB, 72 * kMiB);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->fs_type, "ext4");
  EXPECT_EQ(c->fs_block_size, 2048u);
  EXPECT_EQ(c->fs_size_bytes, 64 * kMiB);
}

TEST(BlkidProbeTest, OnlyHolesOrAWholeZeroRangeProveEmptiness) {
  test::TempDir dir;
  const std::string image = dir.File("sparse.img");
  test::CreateSparseFile(image, 64 * kMiB);
  UniqueFd fd(::open(image.c_str(), O_RDWR | O_CLOEXEC));
  ASSERT_TRUE(fd.valid());
  auto probe = [&](uint64_t offset, uint64_t size = 8 * kMiB) {
    Result<PartitionContents> c = ProbePartitionContents(fd.get(), image, offset, size);
    EXPECT_TRUE(c) << c.error().message;
    return c ? *c : PartitionContents{};
  };
  EXPECT_EQ(probe(0).proof, ContentProof::kHoles);
  EXPECT_FALSE(probe(0).MayHoldData());
  // One byte 900 KiB into the range: inside the first MiB, found where it is.
  ASSERT_EQ(::pwrite(fd.get(), "x", 1, 900 * kKiB), 1);
  EXPECT_EQ(probe(0).proof, ContentProof::kData);
  EXPECT_EQ(probe(0).data_offset_bytes, 900 * kKiB);
  // A range whose first MiB is a hole although data follows later: nothing is proven (the
  // head alone is read), so it may hold data.
  ASSERT_EQ(::pwrite(fd.get(), "y", 1, 16 * kMiB + 2 * kMiB), 1);
  EXPECT_EQ(probe(16 * kMiB).proof, ContentProof::kUnscanned);
  EXPECT_TRUE(probe(16 * kMiB).MayHoldData());
  // Zeros that are written (no hole): the head proves nothing for a larger range, and
  // everything for a range no larger than the head.
  const std::vector<char> zeros(2 * kMiB, 0);
  ASSERT_EQ(::pwrite(fd.get(), zeros.data(), zeros.size(), 32 * kMiB),
            static_cast<ssize_t>(zeros.size()));
  EXPECT_EQ(probe(32 * kMiB, 2 * kMiB).proof, ContentProof::kUnscanned);
  EXPECT_EQ(probe(32 * kMiB, kMiB).proof, ContentProof::kZeros);
}

// Twenty partitions of 2 MiB (the heads of more than one batch of direct reads) and one of 1 MiB
// on a loop device, which has no holes to show: an ext2 filesystem, bytes at odd places of some
// heads, written zeros, a byte past a head, and one partition of a head's size. Probed together
// and one by one: the same contents, each what its bytes are.
TEST(BlkidProbeTest, ManyPartitionsOfALoopDeviceAreProbedTogetherAsOneByOne) {
  PARTALIGN_REQUIRE_DEVICES();
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  constexpr uint64_t kSlot = 2 * kMiB;
  constexpr size_t kCount = 21;
  test::CreateSparseFile(image, 48 * kMiB);
  const std::vector<std::string> mkfs = {
      "mkfs.ext2", "-q",  "-F", "-b", "1024", "-E", "offset=" + std::to_string(3 * kSlot),
      image,       "2048"};
  CommandResult made = RunCommand(mkfs);
  ASSERT_EQ(made.exit_code, 0) << test::Describe(mkfs, made);
  {
    UniqueFd fd(::open(image.c_str(), O_RDWR | O_CLOEXEC));
    ASSERT_TRUE(fd.valid());
    for (uint64_t at : {5 * kSlot + 4097, 9 * kSlot + kMiB - 1, 17 * kSlot + 3, 7 * kSlot + kMiB}) {
      ASSERT_EQ(::pwrite(fd.get(), "x", 1, static_cast<off_t>(at)), 1);
    }
  }
  test::LoopDevice loop(image, 512, /*direct_io=*/true);
  std::vector<ByteRange> ranges;
  for (uint64_t i = 0; i + 1 < kCount; ++i) ranges.push_back({i * kSlot, kSlot});
  ranges.push_back({44 * kMiB, kMiB});
  UniqueFd fd(::open(loop.path().c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(fd.valid());
  Result<std::vector<PartitionContents>> together =
      ProbePartitionsContents(fd.get(), loop.path(), ranges);
  ASSERT_TRUE(together) << together.error().message;
  ASSERT_EQ(together->size(), kCount);
  for (size_t i = 0; i < kCount; ++i) {
    Result<PartitionContents> one =
        ProbePartitionContents(fd.get(), loop.path(), ranges[i].offset, ranges[i].length);
    ASSERT_TRUE(one) << one.error().message;
    const PartitionContents& t = (*together)[i];
    EXPECT_EQ(t.fs_type, one->fs_type) << i;
    EXPECT_EQ(t.proof, one->proof) << i;
    EXPECT_EQ(t.data_offset_bytes, one->data_offset_bytes) << i;
    EXPECT_EQ(t.fs_size_bytes, one->fs_size_bytes) << i;
  }
  const std::vector<PartitionContents>& c = *together;
  EXPECT_EQ(c[3].fs_type, "ext2");
  EXPECT_EQ(c[3].proof, ContentProof::kSignature);
  EXPECT_EQ(c[3].fs_size_bytes, 2 * kMiB);
  EXPECT_EQ(c[5].proof, ContentProof::kData);
  EXPECT_EQ(c[5].data_offset_bytes, std::optional<uint64_t>(4097));
  EXPECT_EQ(c[9].proof, ContentProof::kData);
  EXPECT_EQ(c[9].data_offset_bytes, std::optional<uint64_t>(kMiB - 1));
  EXPECT_EQ(c[17].proof, ContentProof::kData);
  EXPECT_EQ(c[17].data_offset_bytes, std::optional<uint64_t>(3));
  // A byte just past the head, and heads of zeros: nothing proven about the rest.
  EXPECT_EQ(c[7].proof, ContentProof::kUnscanned);
  EXPECT_EQ(c[0].proof, ContentProof::kUnscanned);
  // A partition no longer than the head, all zeros: empty.
  EXPECT_EQ(c[kCount - 1].proof, ContentProof::kZeros);
}

}  // namespace
}  // namespace partalign
