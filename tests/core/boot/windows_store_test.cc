// SPDX-License-Identifier: GPL-3.0-or-later
// BCD device elements, MountedDevices values and hive base blocks; what a move does to a
// store found in an NTFS partition (WindowsStoreFindings), on a disk held in memory.
// tests/io/boot/windows_stores_test.cc does the same with a hive made by libhivex in an NTFS
// partition made by mkntfs, read back with hivexget.
#include "partalign/boot/windows_store.h"

#include <gtest/gtest.h>

#include "support/boot_sectors.h"

namespace partalign {
namespace {

using test::Bytes;

constexpr uint32_t kSignature = 0xb3eba8f1;
constexpr uint64_t kMiB = 1 << 20;

TEST(WindowsStoreTest, BcdPartitionDeviceAsMistyprojectsShowsIt) {
  // The bytes of mistyprojects' example (Windows 8.1 on an MBR disk, partition=C:).
  const Bytes element = {0, 0, 0,    0,    0,    0,    0,    0, 0, 0, 0, 0, 0, 0, 0, 0, 6,    0,
                         0, 0, 0,    0,    0,    0,    0x48, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0x15,
                         0, 0, 0,    0,    0,    0,    0,    0, 0, 0, 0, 0, 0, 0, 0, 0, 1,    0,
                         0, 0, 0xf1, 0xa8, 0xeb, 0xb3, 0,    0, 0, 0, 0, 0, 0, 0, 0, 0, 0,    0,
                         0, 0, 0,    0,    0,    0,    0,    0, 0, 0, 0, 0, 0, 0, 0, 0};
  std::vector<BcdPartitionRef> refs = FindBcdPartitionRefs(element);
  ASSERT_EQ(refs.size(), 1u);
  EXPECT_EQ(refs[0], (BcdPartitionRef{0x20, 0x15f00000, kSignature}));
  EXPECT_EQ(refs[0].partition_offset_bytes, 718848u * 512);
}

TEST(WindowsStoreTest, NestedPartitionBlocksAreFoundGptOnesAreNot) {
  // A ramdisk-style element: a header, then the partition block further in.
  Bytes element(0x30, 0);
  const Bytes inner = test::BcdPartitionDeviceBytes(1 * kMiB, kSignature);
  element.insert(element.end(), inner.begin(), inner.end());
  std::vector<BcdPartitionRef> refs = FindBcdPartitionRefs(element);
  ASSERT_EQ(refs.size(), 1u);
  EXPECT_EQ(refs[0].offset_field, 0x30u + 0x20);
  Bytes gpt = test::BcdPartitionDeviceBytes(1 * kMiB, kSignature);
  test::PutLe(gpt, 0x34, 0, 4);  // style GPT: the offset field is a GUID
  EXPECT_TRUE(FindBcdPartitionRefs(gpt).empty());
  EXPECT_TRUE(IsBcdDeviceElement(0x11000001));
  EXPECT_TRUE(IsBcdDeviceElement(0x21000001));
  EXPECT_FALSE(IsBcdDeviceElement(0x12000004));  // a string (description)
}

TEST(WindowsStoreTest, MountedDevicesValues) {
  EXPECT_EQ(ParseMountedDevice(test::MountedDeviceBytes(kSignature, 32256)),
            (MountedDeviceRef{kSignature, 32256}));
  Bytes gpt(24, 0);
  test::PutText(gpt, 0, "DMIO:ID:");
  EXPECT_FALSE(ParseMountedDevice(gpt));
}

Bytes BaseBlock(uint32_t seq1, uint32_t seq2) {
  Bytes b(4096, 0);
  test::PutText(b, 0, "regf");
  test::PutLe(b, 4, seq1, 4);
  test::PutLe(b, 8, seq2, 4);
  test::PutLe(b, 0x14, 1, 4);
  uint32_t sum = 0;
  for (size_t at = 0; at < 0x1FC; at += 4) {
    sum ^= static_cast<uint32_t>(b[at] | b[at + 1] << 8 | b[at + 2] << 16 | b[at + 3] << 24);
  }
  test::PutLe(b, 0x1FC, sum, 4);
  return b;
}

TEST(WindowsStoreTest, HiveBaseBlock) {
  std::optional<HiveBaseBlock> base = ParseHiveBaseBlock(BaseBlock(7, 7));
  ASSERT_TRUE(base);
  EXPECT_EQ(*base, (HiveBaseBlock{7, 7, true}));
  Bytes broken = BaseBlock(7, 6);
  broken[0x30] ^= 1;
  base = ParseHiveBaseBlock(broken);
  ASSERT_TRUE(base);
  EXPECT_FALSE(base->checksum_ok);
  EXPECT_FALSE(ParseHiveBaseBlock(Bytes(4096, 0)));
}

// Partition 1 (NTFS, 63..) holds \Boot\BCD: the file's first 64 KiB at partition byte 1 MiB.
// Its device element names partition 2 (at 204863) by the disk's signature and byte offset.
struct StoreDisk {
  SparseDisk disk{256 * kMiB};
  BootDisk table;
  WindowsStore store;
  static constexpr uint64_t kDataFileOffset = 0x2004;
  static constexpr uint64_t kFileAt = 1 * kMiB;  // in partition 1

  explicit StoreDisk(BootRecordKind kind = BootRecordKind::kWindowsBcd) {
    table.label = LabelType::kDos;
    table.disk_id = "0xb3eba8f1";
    table.partitions = {{1, 63, 204800, "0x07", "", true, false},
                        {2, 204863, 300000, "0x07", "", false, false}};
    store.partition = 1;
    store.kind = kind;
    store.file_path =
        kind == BootRecordKind::kWindowsBcd ? "\\Boot\\BCD" : "\\Windows\\System32\\config\\SYSTEM";
    store.base = {3, 3, true};
    store.file_size = 0x10000;
    store.extents = {{0, 0x10000, kFileAt}};
    HiveValue v;
    if (kind == BootRecordKind::kWindowsBcd) {
      v.path = "Objects\\{fde483f1-1482-11e2-90a1-00505698002c}\\Elements\\21000001\\Element";
      v.element_type = 0x21000001;
      v.data = test::BcdPartitionDeviceBytes(204863 * 512, kSignature);
    } else {
      v.path = "MountedDevices\\\\DosDevices\\D:";
      v.data = test::MountedDeviceBytes(kSignature, 204863 * 512);
    }
    v.data_file_offset = kDataFileOffset;
    store.values = {v};
    disk.Write(63 * 512 + kFileAt + kDataFileOffset, v.data);
  }
};

TEST(WindowsStoreTest, BcdElementNamingAMovedPartitionIsRewrittenInPlace) {
  StoreDisk d;
  const std::vector<PartitionMove> moves = {{2, 204863, 206848, 300000, 300000}};
  std::vector<BootFinding> f = WindowsStoreFindings(d.disk, d.table, moves, {&d.store, 1});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].verdict, BootVerdict::kUpdate) << f[0].reason;
  EXPECT_EQ(f[0].partition, 1u);
  EXPECT_EQ(f[0].description,
            "BCD store \\Boot\\BCD: 1 value names a moved partition: byte "
            "offset 104889856 -> 105906176");
  ASSERT_EQ(f[0].edits.size(), 1u);
  const ByteEdit& e = f[0].edits[0];
  EXPECT_EQ(e.partition, 1u);
  EXPECT_EQ(e.offset_bytes, StoreDisk::kFileAt + StoreDisk::kDataFileOffset + 0x20);
  Bytes expected_old(8), expected_new(8);
  test::PutLe(expected_old, 0, 204863ull * 512, 8);
  test::PutLe(expected_new, 0, 206848ull * 512, 8);
  EXPECT_EQ(e.old_bytes, expected_old);
  EXPECT_EQ(e.new_bytes, expected_new);
}

TEST(WindowsStoreTest, MountedDevicesValueIsRewrittenToo) {
  StoreDisk d(BootRecordKind::kMountedDevices);
  const std::vector<PartitionMove> moves = {{2, 204863, 206848, 300000, 300000}};
  std::vector<BootFinding> f = WindowsStoreFindings(d.disk, d.table, moves, {&d.store, 1});
  ASSERT_EQ(f.size(), 1u);
  ASSERT_EQ(f[0].verdict, BootVerdict::kUpdate) << f[0].reason;
  EXPECT_EQ(f[0].edits[0].offset_bytes, StoreDisk::kFileAt + StoreDisk::kDataFileOffset + 4);
}

TEST(WindowsStoreTest, UnlocatableOrDirtyOrDisagreeingStoresAreRefusedWithTheRepair) {
  const std::vector<PartitionMove> moves = {{2, 204863, 206848, 300000, 300000}};
  struct Case {
    const char* what;
    void (*spoil)(StoreDisk&);
    const char* says;
  };
  const Case cases[] = {
      {"compressed", [](StoreDisk& d) { d.store.unlocatable = "compressed"; }, "compressed"},
      {"dirty",
       [](StoreDisk& d) {
         d.store.base = {4, 3, true};
       },
       "sequence numbers 4 and 3"},
      {"checksum", [](StoreDisk& d) { d.store.base.checksum_ok = false; }, "checksum"},
      {"hole", [](StoreDisk& d) { d.store.extents[0].partition_offset.reset(); }, "extents"},
      {"split",
       [](StoreDisk& d) {
         d.store.extents = {{0, StoreDisk::kDataFileOffset + 0x22, StoreDisk::kFileAt},
                            {StoreDisk::kDataFileOffset + 0x22, 0x8000, 8 * kMiB}};
       },
       "one run"},
      {"disagree",
       [](StoreDisk& d) {
         d.disk.Write(63 * 512 + StoreDisk::kFileAt + StoreDisk::kDataFileOffset + 0x20,
                      Bytes(8, 0xAB));
       },
       "disagree"},
      {"inline", [](StoreDisk& d) { d.store.values[0].data_file_offset.reset(); }, "data cell"},
  };
  for (const Case& c : cases) {
    StoreDisk d;
    c.spoil(d);
    std::vector<BootFinding> f = WindowsStoreFindings(d.disk, d.table, moves, {&d.store, 1});
    ASSERT_EQ(f.size(), 1u) << c.what;
    EXPECT_EQ(f[0].verdict, BootVerdict::kRefuse) << c.what;
    EXPECT_NE(f[0].reason.find(c.says), std::string::npos) << c.what << ": " << f[0].reason;
    EXPECT_NE(f[0].reason.find("bcdboot"), std::string::npos) << f[0].reason;
    EXPECT_TRUE(f[0].edits.empty());
  }
}

TEST(WindowsStoreTest, NothingToDoForOtherDisksUnmovedPartitionsAndGpt) {
  StoreDisk other;
  other.table.disk_id = "0x12345678";
  const std::vector<PartitionMove> moves = {{2, 204863, 206848, 300000, 300000}};
  std::vector<BootFinding> f =
      WindowsStoreFindings(other.disk, other.table, moves, {&other.store, 1});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].verdict, BootVerdict::kNothingToDo);
  EXPECT_NE(f[0].description.find("names no partition of this disk"), std::string::npos);

  StoreDisk unmoved;
  const std::vector<PartitionMove> only_one = {{1, 63, 2048, 204800, 202752}};
  f = WindowsStoreFindings(unmoved.disk, unmoved.table, only_one, {&unmoved.store, 1});
  EXPECT_EQ(f[0].verdict, BootVerdict::kNothingToDo);
  EXPECT_NE(f[0].description.find("none of them moves"), std::string::npos) << f[0].description;

  StoreDisk gpt;
  gpt.table.label = LabelType::kGpt;
  f = WindowsStoreFindings(gpt.disk, gpt.table, moves, {&gpt.store, 1});
  EXPECT_EQ(f[0].verdict, BootVerdict::kNothingToDo);
  EXPECT_NE(f[0].description.find("by GUID"), std::string::npos);
}

TEST(WindowsStoreTest, AuditReportsAStaleReference) {
  StoreDisk d;
  d.table.partitions[1].start_sector = 206848;  // cloned by a tool that did not update the BCD
  std::vector<BootFinding> f = WindowsStoreFindings(d.disk, d.table, {}, {&d.store, 1});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].verdict, BootVerdict::kNothingToDo);
  EXPECT_NE(f[0].reason.find("stale"), std::string::npos);
  EXPECT_NE(f[0].reason.find("104889856"), std::string::npos);
}

}  // namespace
}  // namespace partalign
