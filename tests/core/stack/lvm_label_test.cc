// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/stack/lvm_label.h"

#include <gtest/gtest.h>

#include <cstring>

#include "core/stack/lvm_fixture.h"

namespace partalign {
namespace {

using test::FromHex;

std::vector<uint8_t> RealHead() {
  return FromHex(test::kRealLabelSectorHex, kLvmLabelScanBytes, 512);
}

// Re-signs the label in sector 1 after a test edits it, so that only the edit is wrong.
void Resign(std::vector<uint8_t>* head) {
  uint8_t* s = head->data() + 512;
  const uint32_t crc = LvmCrc(kLvmInitialCrc, std::span<const uint8_t>(s + 20, 512 - 20));
  std::memcpy(s + 16, &crc, 4);
}

void PutLe64(std::vector<uint8_t>* b, size_t at, uint64_t v) { std::memcpy(b->data() + at, &v, 8); }

TEST(LvmLabelTest, ReadsTheLabelPvcreateWrote) {
  Result<LvmLabel> label = ParseLvmLabel(RealHead());
  ASSERT_TRUE(label) << label.error().message;
  EXPECT_EQ(label->label_sector, 1u);
  EXPECT_EQ(label->device_size_bytes, 64u << 20);
  ASSERT_EQ(label->data_areas.size(), 1u);
  EXPECT_EQ(label->pe_start_bytes(), 1048576u);
  ASSERT_EQ(label->metadata_areas.size(), 1u);
  EXPECT_EQ(label->metadata_areas[0], (LvmDiskArea{4096, 1044480}));
  EXPECT_EQ(label->pv_uuid.size(), 32u);
}

TEST(LvmLabelTest, FormatsUuidsAsLvm2PrintsThem) {
  EXPECT_EQ(FormatLvmUuid("iXlvulsnGaaz9XTxJHlUPhNom7f64aiY"),
            "iXlvul-snGa-az9X-TxJH-lUPh-Nom7-f64aiY");
}

TEST(LvmLabelTest, RefusesAWrongChecksum) {
  std::vector<uint8_t> head = RealHead();
  head[512 + 100] ^= 1;  // inside the pv_uuid, not re-signed
  Result<LvmLabel> label = ParseLvmLabel(head);
  ASSERT_FALSE(label);
  EXPECT_NE(label.error().message.find("checksum mismatch"), std::string::npos);
}

TEST(LvmLabelTest, RefusesALabelNamingAnotherSector) {
  std::vector<uint8_t> head = RealHead();
  PutLe64(&head, 512 + 8, 3);
  Resign(&head);
  Result<LvmLabel> label = ParseLvmLabel(head);
  ASSERT_FALSE(label);
  EXPECT_NE(label.error().message.find("names sector 3"), std::string::npos);
}

TEST(LvmLabelTest, RefusesAreasPastTheDevice) {
  std::vector<uint8_t> head = RealHead();
  // The data area's offset (first disk_locn after uuid and device size) beyond 64 MiB.
  PutLe64(&head, 512 + 32 + 32 + 8, 128u << 20);
  Resign(&head);
  Result<LvmLabel> label = ParseLvmLabel(head);
  ASSERT_FALSE(label);
  EXPECT_NE(label.error().message.find("past the device size"), std::string::npos);
}

TEST(LvmLabelTest, RefusesAnUnterminatedAreaList) {
  std::vector<uint8_t> head = RealHead();
  // Fill the rest of the sector after the pv_header with non-zero disk_locns.
  for (size_t at = 512 + 32 + 40; at + 16 <= 1024; at += 16) {
    PutLe64(&head, at, 4096);
    PutLe64(&head, at + 8, 512);
  }
  head[512 + 8] = 1;  // keep sector number 1
  Resign(&head);
  Result<LvmLabel> label = ParseLvmLabel(head);
  ASSERT_FALSE(label);
  EXPECT_NE(label.error().message.find("runs past the label sector"), std::string::npos);
}

TEST(LvmLabelTest, FindsNoLabelInZerosOrShortInput) {
  EXPECT_FALSE(ParseLvmLabel(std::vector<uint8_t>(2048, 0)));
  EXPECT_FALSE(ParseLvmLabel(std::vector<uint8_t>(100, 0)));
  std::vector<uint8_t> head = RealHead();
  head.resize(700);  // the label sector cut short
  EXPECT_FALSE(ParseLvmLabel(head));
}

TEST(LvmLabelTest, ReadsTheMetadataAreaHeaderAndFindsTheText) {
  std::vector<uint8_t> bytes = FromHex(test::kRealMdaHeaderHex, kLvmMdaHeaderBytes);
  Result<LvmMdaHeader> header = ParseLvmMdaHeader(bytes, {4096, 1044480});
  ASSERT_TRUE(header) << header.error().message;
  ASSERT_FALSE(header->locations.empty());
  EXPECT_EQ(header->locations[0].offset_bytes, test::kRealTextOffset);
  EXPECT_EQ(header->locations[0].size_bytes, test::kRealTextSize);
  Result<std::vector<LvmDiskArea>> runs = LvmMetadataTextRuns(*header);
  ASSERT_TRUE(runs);
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0], (LvmDiskArea{4096 + test::kRealTextOffset, test::kRealTextSize}));
  // The checksum lvm2 stored is the CRC of the text, NUL included.
  const auto* text = reinterpret_cast<const uint8_t*>(test::kRealVgText.data());
  EXPECT_EQ(LvmCrc(kLvmInitialCrc, std::span<const uint8_t>(text, test::kRealVgText.size())),
            test::kRealTextChecksum);
  EXPECT_EQ(header->locations[0].checksum, test::kRealTextChecksum);
}

TEST(LvmLabelTest, RefusesAMetadataHeaderOfAnotherArea) {
  std::vector<uint8_t> bytes = FromHex(test::kRealMdaHeaderHex, kLvmMdaHeaderBytes);
  EXPECT_FALSE(ParseLvmMdaHeader(bytes, {8192, 1044480}));
  bytes[40] ^= 1;  // the text offset, not re-signed
  Result<LvmMdaHeader> header = ParseLvmMdaHeader(bytes, {4096, 1044480});
  ASSERT_FALSE(header);
  EXPECT_NE(header.error().message.find("checksum mismatch"), std::string::npos);
}

// A header whose text wraps around the end of the circular buffer: two runs, the second right
// after the 512-byte header.
TEST(LvmLabelTest, SplitsWrappedTextIntoTwoRuns) {
  LvmMdaHeader header{4096, 8192, {{7000, 3000, 0, 0}}};
  Result<std::vector<LvmDiskArea>> runs = LvmMetadataTextRuns(header);
  ASSERT_TRUE(runs);
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0], (LvmDiskArea{4096 + 7000, 1192}));
  EXPECT_EQ((*runs)[1], (LvmDiskArea{4096 + 512, 1808}));
  // An ignored area, or none, holds no text.
  header.locations[0] = {7000, 100, 0, 1};
  EXPECT_TRUE(LvmMetadataTextRuns(header)->empty());
}

}  // namespace
}  // namespace partalign
