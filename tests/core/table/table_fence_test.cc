// SPDX-License-Identifier: GPL-3.0-or-later
// FenceTransition on hand-made tables: a GPT's entry zeroed in both arrays with both headers'
// CRCs right again, a DOS primary's entry zeroed, a logical one pointed at a placeholder, every
// other byte kept, and the partitions that cannot be fenced refused with the reason.
// (tests/cli/apply/fence_steps_test.cc checks the bytes against `sfdisk --delete`.)
#include "partalign/table/table_fence.h"

#include <gtest/gtest.h>

#include <cstring>
#include <span>

#include "partalign/util/crc32.h"

namespace partalign {
namespace {

constexpr uint64_t kSector = 512;
constexpr uint64_t kDiskSectors = 2048;

void Put32(std::vector<uint8_t>& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}
void Put64(std::vector<uint8_t>& b, size_t at, uint64_t v) {
  Put32(b, at, static_cast<uint32_t>(v));
  Put32(b, at + 4, static_cast<uint32_t>(v >> 32));
}
uint32_t Get32(const std::vector<uint8_t>& b, size_t at) {
  return b[at] | b[at + 1] << 8 | b[at + 2] << 16 | static_cast<uint32_t>(b[at + 3]) << 24;
}

TableRange Range(TableAreaRole role, uint64_t lba, std::vector<uint8_t> bytes) {
  TableRange r;
  r.role = role;
  r.offset_bytes = lba * kSector;
  r.length_bytes = bytes.size();
  r.old_index = 0;
  r.new_index = 0;
  r.old_bytes = bytes;
  r.new_bytes = std::move(bytes);
  return r;
}

// A GPT of 4 entries (one sector) with partitions 1..3 (entry 4 empty).
std::vector<uint8_t> Entries() {
  std::vector<uint8_t> e(kSector, 0);
  for (size_t i = 0; i < 3; ++i) {
    for (size_t k = 0; k < 16; ++k) e[i * 128 + k] = static_cast<uint8_t>(0x10 + i + k);
    Put64(e, i * 128 + 32, 100 + 200 * i);
    Put64(e, i * 128 + 40, 299 + 200 * i);
  }
  return e;
}

std::vector<uint8_t> Header(uint64_t self, uint64_t entries_lba, const std::vector<uint8_t>& e) {
  std::vector<uint8_t> h(kSector, 0);
  std::memcpy(h.data(), "EFI PART", 8);
  Put32(h, 8, 0x00010000);
  Put32(h, 12, 92);
  Put64(h, 24, self);
  Put64(h, 72, entries_lba);
  Put32(h, 80, 4);
  Put32(h, 84, 128);
  Put32(h, 88, Crc32(e));
  Put32(h, 16, Crc32(std::span<const uint8_t>(h.data(), 92)));
  return h;
}

TableTransition Gpt() {
  TableTransition t;
  t.label = LabelType::kGpt;
  t.sector_size = kSector;
  t.disk_size_bytes = kDiskSectors * kSector;
  std::vector<uint8_t> mbr(kSector, 0);
  mbr[510] = 0x55;
  mbr[511] = 0xAA;
  t.ranges = {Range(TableAreaRole::kMbr, 0, mbr),
              Range(TableAreaRole::kGptHeader, 1, Header(1, 2, Entries())),
              Range(TableAreaRole::kGptEntries, 2, Entries()),
              Range(TableAreaRole::kGptBackupEntries, kDiskSectors - 2, Entries()),
              Range(TableAreaRole::kGptBackupHeader, kDiskSectors - 1,
                    Header(kDiskSectors - 1, kDiskSectors - 2, Entries()))};
  return t;
}

const TableRange& Role(const TableTransition& t, TableAreaRole role) {
  for (const TableRange& r : t.ranges) {
    if (r.role == role) return r;
  }
  throw std::runtime_error("no such range");
}

TEST(TableFenceTest, GptEntryZeroedInBothArraysWithBothHeadersValid) {
  Result<TableTransition> fence = FenceTransition(Gpt(), 2);
  ASSERT_TRUE(fence) << fence.error().message;
  std::vector<uint8_t> expected = Entries();
  std::fill_n(expected.begin() + 128, 128, uint8_t{0});
  for (auto [entries, header] :
       {std::pair{TableAreaRole::kGptEntries, TableAreaRole::kGptHeader},
        std::pair{TableAreaRole::kGptBackupEntries, TableAreaRole::kGptBackupHeader}}) {
    const TableRange& e = Role(*fence, entries);
    EXPECT_EQ(e.old_bytes, Entries());
    EXPECT_EQ(e.new_bytes, expected);
    const std::vector<uint8_t>& h = Role(*fence, header).new_bytes;
    EXPECT_EQ(Get32(h, 88), Crc32(expected));
    std::vector<uint8_t> zeroed = h;
    Put32(zeroed, 16, 0);
    EXPECT_EQ(Get32(h, 16), Crc32(std::span<const uint8_t>(zeroed.data(), 92)));
    // Nothing but the two CRCs changes in the header.
    std::vector<uint8_t> old = Role(*fence, header).old_bytes;
    for (size_t i = 0; i < h.size(); ++i) {
      if ((i >= 16 && i < 20) || (i >= 88 && i < 92)) continue;
      EXPECT_EQ(h[i], old[i]) << "byte " << i;
    }
  }
  EXPECT_FALSE(Role(*fence, TableAreaRole::kMbr).changed());
  // The crash-safe order: the backup first, the primary header last of the GPT.
  EXPECT_EQ(fence->ranges[0].role, TableAreaRole::kGptBackupEntries);
  EXPECT_EQ(fence->ranges[3].role, TableAreaRole::kGptHeader);
}

TEST(TableFenceTest, GptRefusals) {
  Result<TableTransition> empty = FenceTransition(Gpt(), 4);
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message.find("has no partition 4"), std::string::npos);
  Result<TableTransition> beyond = FenceTransition(Gpt(), 5);
  ASSERT_FALSE(beyond);
  EXPECT_NE(beyond.error().message.find("4 entries"), std::string::npos);
  // A header naming entries elsewhere than its range.
  TableTransition moved = Gpt();
  for (TableRange& r : moved.ranges) {
    if (r.role == TableAreaRole::kGptHeader) r.old_bytes = Header(1, 3, Entries());
  }
  Result<TableTransition> elsewhere = FenceTransition(moved, 1);
  ASSERT_FALSE(elsewhere);
  EXPECT_NE(elsewhere.error().message.find("does not name the places"), std::string::npos)
      << elsewhere.error().message;
}

TableTransition Dos() {
  TableTransition t;
  t.label = LabelType::kDos;
  t.sector_size = kSector;
  t.disk_size_bytes = kDiskSectors * kSector;
  std::vector<uint8_t> mbr(kSector, 0);
  for (size_t i = 0; i < 440; ++i) mbr[i] = static_cast<uint8_t>(i * 7);  // boot code
  mbr[446 + 4] = 0x83;
  Put32(mbr, 446 + 8, 63);
  Put32(mbr, 446 + 12, 100);
  mbr[462 + 4] = 0x05;
  Put32(mbr, 462 + 8, 200);
  Put32(mbr, 462 + 12, 800);
  mbr[510] = 0x55;
  mbr[511] = 0xAA;
  t.ranges = {Range(TableAreaRole::kMbr, 0, mbr)};
  return t;
}

TEST(TableFenceTest, DosPrimaryEntryZeroedAndBootCodeKept) {
  Result<TableTransition> fence = FenceTransition(Dos(), 1);
  ASSERT_TRUE(fence) << fence.error().message;
  ASSERT_EQ(fence->ranges.size(), 1u);
  std::vector<uint8_t> expected = Dos().ranges[0].old_bytes;
  std::fill_n(expected.begin() + 446, 16, uint8_t{0});
  EXPECT_EQ(fence->ranges[0].new_bytes, expected);
}

// An EBR at LBA 200 whose first entry is a logical partition `start` sectors after it.
TableRange Ebr(uint32_t start) {
  std::vector<uint8_t> ebr(kSector, 0);
  ebr[446 + 4] = 0x83;
  Put32(ebr, 446 + 8, start);
  Put32(ebr, 446 + 12, 100);
  ebr[462 + 4] = 0x05;  // the link to the next EBR
  Put32(ebr, 462 + 8, 400);
  Put32(ebr, 462 + 12, 300);
  ebr[510] = 0x55;
  ebr[511] = 0xAA;
  return Range(TableAreaRole::kEbr, 200, ebr);
}

// A logical partition keeps its entry (and so its number, and those of the partitions after
// it), pointed at a one-sector placeholder right after its EBR; the link stays.
TEST(TableFenceTest, LogicalEntryPointsAtAPlaceholderAfterItsEbr) {
  TableTransition t = Dos();
  t.ranges.push_back(Ebr(63));
  Result<TableTransition> fence = FenceTransition(t, 5);
  ASSERT_TRUE(fence) << fence.error().message;
  const TableRange& ebr = Role(*fence, TableAreaRole::kEbr);
  std::vector<uint8_t> expected = Ebr(63).old_bytes;
  Put32(expected, 446 + 8, 1);
  Put32(expected, 446 + 12, 1);
  EXPECT_EQ(ebr.new_bytes, expected);
  EXPECT_FALSE(Role(*fence, TableAreaRole::kMbr).changed());
  // Elsewhere after the EBR, when the caller found the sector there.
  Result<TableTransition> later = FenceTransition(t, 5, 200);
  ASSERT_TRUE(later) << later.error().message;
  Put32(expected, 446 + 8, 200);
  EXPECT_EQ(Role(*later, TableAreaRole::kEbr).new_bytes, expected);
  // Never inside the partition itself: right after its EBR, it starts there.
  TableTransition tight = Dos();
  tight.ranges.push_back(Ebr(1));
  Result<TableTransition> refused = FenceTransition(tight, 5);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("is not outside the partition"), std::string::npos)
      << refused.error().message;
}

TEST(TableFenceTest, DosRefusals) {
  for (auto [number, why] :
       {std::pair{2u, "is the extended partition"}, std::pair{3u, "has no partition 3"},
        std::pair{5u, "hold no EBR of partition 5"}}) {
    Result<TableTransition> fence = FenceTransition(Dos(), number);
    ASSERT_FALSE(fence) << number;
    EXPECT_NE(fence.error().message.find(why), std::string::npos) << fence.error().message;
  }
}

}  // namespace
}  // namespace partalign
