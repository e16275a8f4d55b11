// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/table/table_sector_size.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace partalign {
namespace {

constexpr uint64_t kDisk = 8ull << 30;

void PutLe(std::vector<uint8_t>& b, size_t offset, uint64_t value, size_t width) {
  for (size_t i = 0; i < width; ++i) b[offset + i] = static_cast<uint8_t>(value >> (8 * i));
}

std::vector<uint8_t> Mbr(std::initializer_list<std::tuple<uint8_t, uint32_t, uint32_t>> parts) {
  std::vector<uint8_t> head(kTableHeadBytes, 0);
  size_t i = 0;
  for (auto [type, start, count] : parts) {
    size_t e = 446 + 16 * i++;
    head[e + 4] = type;
    PutLe(head, e + 8, start, 4);
    PutLe(head, e + 12, count, 4);
  }
  head[510] = 0x55;
  head[511] = 0xAA;
  return head;
}

void AddGptHeader(std::vector<uint8_t>& head, size_t offset) {
  std::memcpy(head.data() + offset, "EFI PART", 8);
  PutLe(head, offset + 24, 1, 8);
}

TEST(TableSectorSizeTest, GptAtLba1OfTheDeviceSectorSize) {
  std::vector<uint8_t> head = Mbr({{0xEE, 1, 0xFFFFFFFF}});
  AddGptHeader(head, 512);
  TableSectorSizeGuess g = GuessTableSectorSize(head, 512, kDisk);
  EXPECT_EQ(g.label, LabelType::kGpt);
  EXPECT_EQ(g.sector_size, 512u);
}

TEST(TableSectorSizeTest, GptWrittenThroughA4kBridgeReadOnSata) {
  std::vector<uint8_t> head = Mbr({{0xEE, 1, 0xFFFFFFFF}});
  AddGptHeader(head, 4096);
  TableSectorSizeGuess g = GuessTableSectorSize(head, 512, kDisk);
  EXPECT_EQ(g.label, LabelType::kGpt);
  EXPECT_EQ(g.sector_size, 4096u);
  EXPECT_NE(g.reason.find("byte 4096"), std::string::npos) << g.reason;
}

TEST(TableSectorSizeTest, SignatureWithoutMyLbaOneIsNotAHeader) {
  std::vector<uint8_t> head = Mbr({{0xEE, 1, 0xFFFFFFFF}});
  std::memcpy(head.data() + 512, "EFI PART", 8);  // MyLBA left 0: a backup or garbage
  TableSectorSizeGuess g = GuessTableSectorSize(head, 512, kDisk);
  EXPECT_EQ(g.label, LabelType::kGpt);
  EXPECT_FALSE(g.sector_size);
  EXPECT_NE(g.reason.find("no GPT header"), std::string::npos);
}

TEST(TableSectorSizeTest, MbrThatFitsIsTakenAtTheDeviceSectorSize) {
  TableSectorSizeGuess g = GuessTableSectorSize(Mbr({{0x83, 2048, 1 << 20}}), 512, kDisk);
  EXPECT_EQ(g.label, LabelType::kDos);
  EXPECT_EQ(g.sector_size, 512u);
}

TEST(TableSectorSizeTest, MbrWrittenWith512ByteSectorsOverflowsA4kView) {
  // 8 GiB disk: 16777216 sectors of 512 bytes; read at 4096 the table runs 8x past the end.
  TableSectorSizeGuess g = GuessTableSectorSize(Mbr({{0x83, 2048, 16775168}}), 4096, kDisk);
  EXPECT_EQ(g.label, LabelType::kDos);
  EXPECT_EQ(g.sector_size, 512u);
  EXPECT_NE(g.reason.find("beyond the disk with 4096-byte sectors"), std::string::npos);
}

TEST(TableSectorSizeTest, NoSignatureMeansNoTable) {
  std::vector<uint8_t> zeros(kTableHeadBytes, 0);
  EXPECT_EQ(GuessTableSectorSize(zeros, 512, kDisk).label, LabelType::kNone);
  EXPECT_EQ(GuessTableSectorSize(Mbr({}), 512, kDisk).label, LabelType::kNone);
}

TEST(TableSectorSizeTest, ShortHeadIsSafe) {
  std::vector<uint8_t> tiny(100, 0xFF);
  EXPECT_EQ(GuessTableSectorSize(tiny, 512, 100).label, LabelType::kNone);
}

TEST(SectorSizeFromContentsTest, PicksTheSizeWhereFilesystemsStart) {
  // A 4096-byte DOS table read with 512-byte sectors: both fit, only 4096 finds filesystems.
  std::vector<SectorSizeEvidence> e{{512, 3, 0}, {1024, 3, 0}, {4096, 3, 2}};
  EXPECT_EQ(SectorSizeFromContents(e, 512), 4096u);
  // The current size as good as any: it stays.
  e = {{512, 3, 2}, {4096, 3, 2}};
  EXPECT_EQ(SectorSizeFromContents(e, 512), std::nullopt);
  // Nothing found anywhere: no evidence.
  e = {{512, 3, 0}, {4096, 3, 0}};
  EXPECT_EQ(SectorSizeFromContents(e, 512), std::nullopt);
}

}  // namespace
}  // namespace partalign
