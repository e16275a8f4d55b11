// SPDX-License-Identifier: GPL-3.0-or-later
// The journal format: every part round-trips, and every torn, corrupt, truncated or foreign
// part is rejected - so that resume never trusts a byte that was not written whole.
#include "partalign/move/journal_format.h"

#include <algorithm>
#include <span>
#include <vector>

#include <gtest/gtest.h>

#include "core/move/test_hasher.h"

namespace partalign {
namespace {

const test::FnvHasher kHasher;
const JournalUuid kUuid{0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

JournalHeader SampleHeader() {
  JournalHeader h;
  h.uuid = kUuid;
  h.created_by = "partalign test";
  h.device = {"/dev/loop7", true, 1ull << 30, 512, 7, 7, "", "", "/tmp/x/disk.img", 2049, 1234};
  h.move = {63 * 512, 2048 * 512, 512ull << 20, 4 << 20, 4, 4};
  h.table = {{0, 512, 0x1111, 0x2222}, {(1ull << 30) - 16896, 16896, 0x3333, 0x4444}};
  CompleteJournalHeader(h, kHasher);
  return h;
}

// A header whose move copies only some chunks (a used map), with the copy map region it needs.
JournalHeader UsedOnlyHeader() {
  JournalHeader h = SampleHeader();
  h.move.copy = *CopySet::FromRuns({{0, 1}, {10, 5}, {100, 28}}, RangeChunkCount(h.move));
  h.used = {"ext4: libext2fs block bitmap",
            130 << 20,
            {{"allocated", 120 << 20}, {"head", 65536}},
            {"a note"}};
  CompleteJournalHeader(h, kHasher);
  return h;
}

Result<JournalHeader> DecodeWhole(std::span<const uint8_t> bytes, const JournalHeader& written) {
  Result<JournalHeader> decoded = DecodeJournalHeader(bytes, kHasher);
  if (!decoded) return decoded;
  if (Status s = AttachCopyMap(*decoded, EncodeCopyMap(written.move.copy), kHasher); !s) {
    return s.error();
  }
  return decoded;
}

TEST(JournalFormatTest, HeaderRoundTrips) {
  const JournalHeader header = SampleHeader();
  Result<std::vector<uint8_t>> bytes = EncodeJournalHeader(header, kHasher);
  ASSERT_TRUE(bytes);
  EXPECT_EQ(bytes->size(), kJournalHeaderBytes);
  Result<JournalHeader> decoded = DecodeWhole(*bytes, header);
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(*decoded, header);
  const JournalHeader used = UsedOnlyHeader();
  Result<std::vector<uint8_t>> used_bytes = EncodeJournalHeader(used, kHasher);
  ASSERT_TRUE(used_bytes);
  Result<JournalHeader> used_decoded = DecodeWhole(*used_bytes, used);
  ASSERT_TRUE(used_decoded) << used_decoded.error().message;
  EXPECT_EQ(*used_decoded, used);
  EXPECT_EQ(ChunkCount(used_decoded->move), 34u);
  EXPECT_EQ(used.layout.copy_map_bytes, 4096u);
  EXPECT_EQ(used.layout.digest_table_offset, used.layout.copy_map_offset + 4096);
  // Self-describing: the JSON is readable with head -c and strings.
  const std::string text(bytes->begin(), bytes->end());
  EXPECT_NE(text.find("\"format\": \"partalign-move-journal\""), std::string::npos);
  EXPECT_NE(text.find("\"direction\": \"towards-end\""), std::string::npos);
}

TEST(JournalFormatTest, StepsThatMoveNoDataRoundTripWithoutDigestsOrRing) {
  JournalHeader h = SampleHeader();
  h.move = {1 << 20, 1 << 20, 0, 4 << 20, 4, 8};
  h.step = "shrink the ext4 of partition 5 of '/dev/loop7' by 4 MiB (resize2fs)";
  CompleteJournalHeader(h, kHasher);
  EXPECT_EQ(h.layout.digest_table_bytes, 0u);
  EXPECT_EQ(h.layout.slot_count, 0u);
  EXPECT_EQ(h.layout.file_bytes, h.layout.ring_offset);
  Result<std::vector<uint8_t>> bytes = EncodeJournalHeader(h, kHasher);
  ASSERT_TRUE(bytes);
  Result<JournalHeader> decoded = DecodeWhole(*bytes, h);
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(*decoded, h);
  // A move's header has no "step".
  const std::string text(bytes->begin(), bytes->end());
  EXPECT_NE(text.find("\"step\": \"shrink the ext4"), std::string::npos);
  Result<std::vector<uint8_t>> move = EncodeJournalHeader(SampleHeader(), kHasher);
  ASSERT_TRUE(move);
  EXPECT_EQ(std::string(move->begin(), move->end()).find("\"step\""), std::string::npos);
}

TEST(JournalFormatTest, Version2LayoutIsUnchanged) {
  JournalHeader h = SampleHeader();
  h.version = kJournalVersionV2;
  CompleteJournalHeader(h, kHasher);
  const JournalLayout& l = h.layout;
  EXPECT_EQ(l.table_data_offset, kJournalHeaderBytes);
  EXPECT_EQ(l.state_offset, l.digest_table_offset + 4096);
  EXPECT_EQ(l.ring_offset, l.state_offset + 8192);
  EXPECT_EQ(l.slot_bytes, 4096u + (4 << 20));
  EXPECT_EQ(l.header_copy_offset + l.mirror_bytes + l.repair_bytes, 0u);
  Result<std::vector<uint8_t>> bytes = EncodeJournalHeader(h, kHasher);
  ASSERT_TRUE(bytes);
  const std::string json(bytes->begin() + 64, bytes->end());
  EXPECT_EQ(json.find("mirror_bytes"), std::string::npos);
  Result<JournalHeader> decoded = DecodeWhole(*bytes, h);
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(*decoded, h);
}

TEST(JournalFormatTest, LayoutRegionsAreAlignedAndDisjoint) {
  const JournalHeader h = SampleHeader();
  const JournalLayout& l = h.layout;
  const uint64_t offsets[] = {l.table_data_offset, l.digest_table_offset, l.state_offset,
                              l.ring_offset,       l.slot_bytes,          l.file_bytes,
                              l.mirror_bytes,      l.repair_bytes};
  for (uint64_t o : offsets) EXPECT_EQ(o % kJournalBlockBytes, 0u);
  // Version 3: the header twice, then the table data, copy map, digest table and state blocks,
  // then all of them again (the mirror), then the ring.
  EXPECT_EQ(l.header_copy_offset, kJournalHeaderBytes);
  EXPECT_EQ(l.table_data_offset, 2 * kJournalHeaderBytes);
  EXPECT_EQ(l.table_data_bytes, 4096u + 4096u + 20480u + 20480u);
  EXPECT_EQ(l.digest_table_bytes, 4096u);  // 128 digests of 16 bytes, padded
  EXPECT_EQ(l.mirror_bytes, l.state_offset + 8192 - l.table_data_offset);
  EXPECT_EQ(l.ring_offset, l.table_data_offset + 2 * l.mirror_bytes);
  // The repair trailer: the header's copy, the parity block, 1024 block checksums (8 KiB).
  EXPECT_EQ(l.repair_bytes, 4096u + 4096u + 8192u);
  EXPECT_EQ(l.slot_count, 16u);
  EXPECT_EQ(l.file_bytes, l.ring_offset + 16 * (4096 + (4 << 20) + 16384));
  EXPECT_EQ(TableDataOffset(l, h.table, 1, true), l.table_data_offset + 8192 + 20480);
  // Step i uses slot i mod 16 (4 batches of 4).
  EXPECT_EQ(SlotOffset(l, h.move, 0), l.ring_offset);
  EXPECT_EQ(SlotOffset(l, h.move, 17), l.ring_offset + 1 * l.slot_bytes);
  EXPECT_EQ(SlotOffset(l, h.move, 6), l.ring_offset + 6 * l.slot_bytes);
}

TEST(JournalFormatTest, DamagedHeadersAreRejected) {
  Result<std::vector<uint8_t>> good = EncodeJournalHeader(SampleHeader(), kHasher);
  ASSERT_TRUE(good);
  struct Damage {
    const char* what;
    size_t at;
    const char* expected;
  };
  const Damage damages[] = {
      {"magic", 0, "bad magic"},    {"version", 8, "version"},     {"json length", 16, "truncated"},
      {"checksum", 24, "checksum"}, {"json byte", 80, "checksum"},
  };
  for (const Damage& d : damages) {
    std::vector<uint8_t> bytes = *good;
    bytes[d.at] ^= 0x40;
    if (d.at == 16) bytes[23] = 0x7f;  // a huge length
    Result<JournalHeader> decoded = DecodeJournalHeader(bytes, kHasher);
    ASSERT_FALSE(decoded) << d.what;
    EXPECT_NE(decoded.error().message.find(d.expected), std::string::npos)
        << d.what << ": " << decoded.error().message;
  }
  Result<JournalHeader> truncated =
      DecodeJournalHeader(std::span<const uint8_t>(good->data(), 100), kHasher);
  ASSERT_FALSE(truncated);
  EXPECT_NE(truncated.error().message.find("truncated"), std::string::npos);
  EXPECT_FALSE(DecodeJournalHeader(std::span<const uint8_t>(good->data(), 10), kHasher));
}

TEST(JournalFormatTest, HeaderWithWrongLayoutOrHashIsRejected) {
  JournalHeader header = SampleHeader();
  header.layout.ring_offset += 4096;
  Result<std::vector<uint8_t>> bytes = EncodeJournalHeader(header, kHasher);
  ASSERT_TRUE(bytes);
  Result<JournalHeader> decoded = DecodeWhole(*bytes, header);
  ASSERT_FALSE(decoded);
  EXPECT_NE(decoded.error().message.find("layout"), std::string::npos);

  class OtherHasher : public test::FnvHasher {
   public:
    std::string name() const override { return "other"; }
  };
  Result<std::vector<uint8_t>> good = EncodeJournalHeader(SampleHeader(), kHasher);
  ASSERT_TRUE(good);
  Result<JournalHeader> other = DecodeJournalHeader(*good, OtherHasher());
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message.find("hash 'fnv-test'"), std::string::npos);
}

TEST(JournalFormatTest, StateBlocksPickTheNewestValidOne) {
  JournalState s1{JournalPhase::kMoving, 1, 8, 0, 0, 0xabc};
  JournalState s2{JournalPhase::kMoving, 2, 12, 0, 0, 0xabc};
  const std::vector<uint8_t> a = EncodeStateBlock(s1, kUuid, kHasher);
  const std::vector<uint8_t> b = EncodeStateBlock(s2, kUuid, kHasher);
  EXPECT_EQ(DecodeStateBlock(a, kUuid, kHasher), s1);
  EXPECT_EQ(LatestState(a, b, kUuid, kHasher), s2);

  // A torn write of state 3 into block A leaves state 2 in block B.
  JournalState s3{JournalPhase::kRollingBack, 3, 12, 12, 4, 0xabc};
  std::vector<uint8_t> torn = EncodeStateBlock(s3, kUuid, kHasher);
  std::copy(a.begin() + 40, a.begin() + 64, torn.begin() + 40);
  EXPECT_EQ(DecodeStateBlock(torn, kUuid, kHasher), std::nullopt);
  EXPECT_EQ(LatestState(torn, b, kUuid, kHasher), s2);
  EXPECT_EQ(LatestState(EncodeStateBlock(s3, kUuid, kHasher), b, kUuid, kHasher), s3);

  // Zeroes (never written), another journal's state, and a block in the wrong slot: invalid.
  const std::vector<uint8_t> zero(kJournalBlockBytes, 0);
  EXPECT_EQ(LatestState(zero, zero, kUuid, kHasher), std::nullopt);
  JournalUuid other = kUuid;
  other[0] ^= 1;
  EXPECT_EQ(DecodeStateBlock(a, other, kHasher), std::nullopt);
  EXPECT_EQ(LatestState(b, zero, kUuid, kHasher), std::nullopt);
  // A truncated block.
  EXPECT_EQ(DecodeStateBlock(std::span<const uint8_t>(a.data(), 50), kUuid, kHasher), std::nullopt);
  // An unknown phase with a valid checksum.
  std::vector<uint8_t> bad_phase = a;
  bad_phase[12] = 99;
  EXPECT_EQ(DecodeStateBlock(bad_phase, kUuid, kHasher), std::nullopt);
}

TEST(JournalFormatTest, RecordsAreValidOnlyWhole) {
  std::vector<uint8_t> data(8192);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7);
  const Digest128 digest = kHasher.Hash128(data);
  std::vector<uint8_t> header(kJournalBlockBytes);
  EncodeRecordHeader({42, data.size(), digest, false}, kUuid, kHasher, header);
  EXPECT_TRUE(IsValidRecord(header, data, 42, digest, kUuid, kHasher));
  std::optional<RecordHeader> decoded = DecodeRecordHeader(header, kUuid, kHasher);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->chunk, 42u);
  EXPECT_EQ(decoded->length_bytes, 8192u);

  // Another chunk's record in this slot (an older ring cycle), or another expected digest.
  EXPECT_FALSE(IsValidRecord(header, data, 43, digest, kUuid, kHasher));
  EXPECT_FALSE(IsValidRecord(header, data, 42, Digest128{1, 2}, kUuid, kHasher));
  // Torn data behind an intact header: the last sector did not make it.
  std::vector<uint8_t> torn = data;
  std::fill(torn.end() - 512, torn.end(), 0);
  EXPECT_FALSE(IsValidRecord(header, torn, 42, digest, kUuid, kHasher));
  // A torn header.
  std::vector<uint8_t> bad_header = header;
  bad_header[33] ^= 1;
  EXPECT_FALSE(IsValidRecord(bad_header, data, 42, digest, kUuid, kHasher));
  // A truncated record (data shorter than recorded).
  EXPECT_FALSE(IsValidRecord(header, std::span<const uint8_t>(data.data(), 4096), 42, digest, kUuid,
                             kHasher));
  // Another journal's record.
  JournalUuid other = kUuid;
  other[15] ^= 1;
  EXPECT_FALSE(IsValidRecord(header, data, 42, digest, other, kHasher));
}

// Version 3: one damaged 4 KiB block anywhere in a ring slot - the record header, any block of
// the data (the short last one included), any block of the trailer - still gives the saved copy
// back whole; two damaged data blocks, or no trailer, do not (and nothing wrong is accepted).
TEST(JournalFormatTest, ASavedCopyWithOneDamagedBlockIsRepaired) {
  const uint64_t length = 3 * 4096 + 512;  // a short last block, padded to 4 KiB
  const uint64_t padded = 4 * 4096;
  const uint64_t trailer_bytes = 2 * 4096 + 4096;
  std::vector<uint8_t> slot(4096 + padded + trailer_bytes, 0xee);
  for (uint64_t i = 0; i < length; ++i) slot[4096 + i] = static_cast<uint8_t>(i * 13 + i / 4096);
  const std::vector<uint8_t> data(slot.begin() + 4096, slot.begin() + 4096 + length);
  const Digest128 digest = kHasher.Hash128(data);
  std::span<uint8_t> all(slot);
  EncodeRecordHeader({42, length, digest, false}, kUuid, kHasher, all.first(4096));
  EncodeRecordRepair(all.first(4096), all.subspan(4096, padded), all.subspan(4096 + padded),
                     kHasher);
  const std::vector<uint8_t> good = slot;
  auto repaired_with = [&](std::vector<uint8_t>& s, std::optional<Digest128> expected,
                           uint64_t trailer) {
    std::span<uint8_t> v(s);
    return RepairedRecordDigest(v.first(4096), v.subspan(4096, padded), length,
                                v.subspan(4096 + padded, trailer), 42, expected, kUuid, kHasher);
  };
  auto repaired = [&](std::vector<uint8_t>& s, std::optional<Digest128> expected) {
    return repaired_with(s, expected, trailer_bytes);
  };
  for (uint64_t block = 0; block * 4096 < slot.size(); ++block) {
    for (const std::optional<Digest128>& expected :
         {std::optional<Digest128>(), std::optional(digest)}) {
      std::vector<uint8_t> damaged = good;
      for (uint64_t i = 0; i < 4096; ++i)
        damaged[block * 4096 + i] = static_cast<uint8_t>(i * 31 + 7);
      EXPECT_EQ(repaired(damaged, expected), digest) << "damaged block " << block;
      EXPECT_TRUE(std::equal(data.begin(), data.end(), damaged.begin() + 4096))
          << "damaged block " << block;
      EXPECT_TRUE(std::equal(damaged.begin(), damaged.begin() + 4096, good.begin()))
          << "the header is put back, damaged block " << block;
    }
  }
  // Two damaged data blocks are beyond the parity.
  std::vector<uint8_t> twice = good;
  twice[4096 + 10] ^= 1;
  twice[3 * 4096 + 10] ^= 1;
  EXPECT_EQ(repaired(twice, std::nullopt), std::nullopt);
  // Without a trailer (versions 1 and 2) a damaged copy is not valid.
  std::vector<uint8_t> once = good;
  once[2 * 4096 + 5] ^= 1;
  EXPECT_EQ(repaired_with(once, std::nullopt, 0), std::nullopt);
  EXPECT_EQ(repaired(once, std::nullopt), digest);
  // Another chunk's trailer (an older ring cycle) repairs nothing, and another expected digest
  // is never met.
  std::vector<uint8_t> stale = good;
  stale[4096 + 5] ^= 1;
  EXPECT_EQ(repaired(stale, Digest128{1, 2}), std::nullopt);
  std::span<uint8_t> v(stale);
  EXPECT_EQ(RepairedRecordDigest(v.first(4096), v.subspan(4096, padded), length,
                                 v.subspan(4096 + padded), 43, std::nullopt, kUuid, kHasher),
            std::nullopt);
}

TEST(JournalFormatTest, TheRepairTrailerHoldsTheHeaderTheXorOfTheBlocksAndTheirChecksums) {
  // docs/mover.md §3, byte for byte: a journal written by one build is repaired by another.
  const uint64_t blocks = 5;
  std::vector<uint8_t> header(4096), data(blocks * 4096), trailer(2 * 4096 + 4096, 0xee);
  for (uint64_t i = 0; i < header.size(); ++i) header[i] = static_cast<uint8_t>(i * 7 + 1);
  for (uint64_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 13 + i / 4093);
  EncodeRecordRepair(header, data, trailer, kHasher);

  EXPECT_TRUE(std::equal(header.begin(), header.end(), trailer.begin()));
  for (uint64_t i = 0; i < 4096; ++i) {
    uint8_t parity = 0;
    for (uint64_t b = 0; b < blocks; ++b) parity ^= data[b * 4096 + i];
    ASSERT_EQ(trailer[4096 + i], parity) << "parity byte " << i;
  }
  for (uint64_t b = 0; b < blocks; ++b) {
    const uint64_t sum = kHasher.Hash64(std::span(data).subspan(b * 4096, 4096));
    for (uint64_t k = 0; k < 8; ++k) {
      EXPECT_EQ(trailer[2 * 4096 + 8 * b + k], static_cast<uint8_t>(sum >> (8 * k)))
          << "checksum of block " << b << ", byte " << k;
    }
  }
  EXPECT_TRUE(std::all_of(trailer.begin() + 2 * 4096 + 8 * blocks, trailer.end(),
                          [](uint8_t byte) { return byte == 0; }));
}

TEST(JournalFormatTest, DigestTableRoundTripsAndDetectsDamage) {
  std::vector<Digest128> digests;
  for (uint64_t i = 0; i < 300; ++i) digests.push_back({i * 3, ~i});
  const uint64_t checksum = DigestTableChecksum(digests, kHasher);
  std::vector<uint8_t> bytes = EncodeDigestTable(digests);
  EXPECT_EQ(bytes.size() % kJournalBlockBytes, 0u);
  Result<std::vector<Digest128>> decoded =
      DecodeDigestTable(bytes, digests.size(), checksum, kHasher);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(*decoded, digests);
  bytes[100] ^= 1;
  EXPECT_FALSE(DecodeDigestTable(bytes, digests.size(), checksum, kHasher));
  EXPECT_FALSE(DecodeDigestTable(std::span<const uint8_t>(bytes.data(), 16), digests.size(),
                                 checksum, kHasher));
  // The range digest depends on every chunk digest.
  const Digest128 whole = RangeDigest(digests, kHasher);
  digests[299].low ^= 1;
  EXPECT_NE(RangeDigest(digests, kHasher), whole);
}

// Version 2: the copy map is checked before anything trusts it.
TEST(JournalFormatTest, DamagedCopyMapsAreRejected) {
  const JournalHeader used = UsedOnlyHeader();
  Result<std::vector<uint8_t>> bytes = EncodeJournalHeader(used, kHasher);
  ASSERT_TRUE(bytes);
  const std::vector<uint8_t> region = EncodeCopyMap(used.move.copy);
  struct Damage {
    size_t at;
    const char* expected;
  };
  for (const Damage& d : {Damage{3, "checksum"}, Damage{20, "checksum"}}) {
    Result<JournalHeader> decoded = DecodeJournalHeader(*bytes, kHasher);
    ASSERT_TRUE(decoded);
    std::vector<uint8_t> damaged = region;
    damaged[d.at] ^= 0x10;
    Status attached = AttachCopyMap(*decoded, damaged, kHasher);
    ASSERT_FALSE(attached);
    EXPECT_NE(attached.error().message.find(d.expected), std::string::npos)
        << attached.error().message;
  }
  // A map that is well formed and checksummed but says another count than the header.
  JournalHeader lying = used;
  lying.copied_chunks += 1;
  Result<std::vector<uint8_t>> lying_bytes = EncodeJournalHeader(lying, kHasher);
  Result<JournalHeader> decoded = DecodeJournalHeader(*lying_bytes, kHasher);
  ASSERT_TRUE(decoded);
  Status attached = AttachCopyMap(*decoded, region, kHasher);
  ASSERT_FALSE(attached);
  EXPECT_NE(attached.error().message.find("header says"), std::string::npos);
  // Runs out of order, with a checksum that matches them (a buggy or hostile writer).
  std::vector<uint8_t> reversed = region;
  std::swap_ranges(reversed.begin(), reversed.begin() + 16, reversed.begin() + 16);
  JournalHeader swapped = used;
  swapped.copy_map_checksum = kHasher.Hash64(std::span<const uint8_t>(reversed.data(), 48));
  Result<std::vector<uint8_t>> swapped_bytes = EncodeJournalHeader(swapped, kHasher);
  Result<JournalHeader> swapped_decoded = DecodeJournalHeader(*swapped_bytes, kHasher);
  ASSERT_TRUE(swapped_decoded);
  Status order = AttachCopyMap(*swapped_decoded, reversed, kHasher);
  ASSERT_FALSE(order);
  EXPECT_NE(order.error().message.find("not sorted"), std::string::npos) << order.error().message;
}

// Version 1 journals (written before the copy map) are still read: their header, state blocks
// and records are exactly the bytes version 1 wrote. The hashes below were taken from the
// version 1 encoder (commit d552712) for the same inputs.
TEST(JournalFormatTest, Version1EncodingsAreUnchanged) {
  JournalHeader h;
  h.version = kJournalVersionV1;
  h.uuid = kUuid;
  h.created_by = "partalign 0.1.0";
  h.device = {"/dev/loop7", true, 1ull << 30, 512, 7, 7, "SER", "", "/tmp/x/disk.img", 2049, 1234};
  h.move = {63 * 512, 2048 * 512, 512ull << 20, 4 << 20, 4, 8};
  h.table = {{0, 512, 0x1111, 0x2222}, {(1ull << 30) - 16896, 16896, 0x3333, 0x4444}};
  CompleteJournalHeader(h, kHasher);
  EXPECT_EQ(h.layout.digest_table_offset, 114688u);
  EXPECT_EQ(h.layout.state_offset, 118784u);
  EXPECT_EQ(h.layout.ring_offset, 126976u);
  EXPECT_EQ(h.layout.file_bytes, 134475776u);
  Result<std::vector<uint8_t>> bytes = EncodeJournalHeader(h, kHasher);
  ASSERT_TRUE(bytes);
  EXPECT_EQ(kHasher.Hash64(*bytes), 0xa5456b4fcfb69e2eULL);
  Result<JournalHeader> decoded = DecodeWhole(*bytes, h);
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(*decoded, h);

  const JournalState state{JournalPhase::kRollingBack, 7, 90, 90, 12, 0xabcdef0123456789ULL};
  const std::vector<uint8_t> block = EncodeStateBlock(state, kUuid, kHasher, kJournalVersionV1);
  EXPECT_EQ(kHasher.Hash64(block), 0x1f21935bdb226797ULL);
  EXPECT_EQ(DecodeStateBlock(block, kUuid, kHasher, kJournalVersionV1), state);
  EXPECT_EQ(DecodeStateBlock(block, kUuid, kHasher), std::nullopt) << "not a version 2 block";

  std::vector<uint8_t> record(kJournalBlockBytes);
  EncodeRecordHeader({42, 4 << 20, {0x1234, 0x5678}, true}, kUuid, kHasher, record,
                     kJournalVersionV1);
  EXPECT_EQ(kHasher.Hash64(record), 0x471139aed0f6a412ULL);
  EXPECT_TRUE(DecodeRecordHeader(record, kUuid, kHasher, kJournalVersionV1));
  EXPECT_FALSE(DecodeRecordHeader(record, kUuid, kHasher));

  const std::vector<Digest128> digests = {{1, 2}, {3, 4}, {5, 6}};
  EXPECT_EQ(DigestTableChecksum(digests, kHasher), 0xa3e956c439195de2ULL);
}

TEST(JournalFormatTest, Version2StatesCarryTheKnownDigests) {
  JournalState s{JournalPhase::kMoving, 5, 8, 0, 0, 0x1234};
  s.digests_known = 12;
  const std::vector<uint8_t> block = EncodeStateBlock(s, kUuid, kHasher);
  EXPECT_EQ(DecodeStateBlock(block, kUuid, kHasher), s);
  EXPECT_EQ(DecodeStateBlock(block, kUuid, kHasher, kJournalVersionV1), std::nullopt);
  std::vector<uint8_t> torn = block;
  torn[72] ^= 1;  // digests_known is covered by the checksum
  EXPECT_EQ(DecodeStateBlock(torn, kUuid, kHasher), std::nullopt);
}

// Version 2 records are checked against their own digest when none is known yet, and against
// the known one otherwise.
TEST(JournalFormatTest, RecordsWithoutAKnownDigestAreCheckedAgainstTheirOwn) {
  std::vector<uint8_t> data(4096, 0x5a);
  const Digest128 digest = kHasher.Hash128(data);
  std::vector<uint8_t> header(kJournalBlockBytes);
  EncodeRecordHeader({3, data.size(), digest, false}, kUuid, kHasher, header);
  EXPECT_EQ(ValidRecordDigest(header, data, 3, std::nullopt, kUuid, kHasher), digest);
  EXPECT_EQ(ValidRecordDigest(header, data, 3, Digest128{9, 9}, kUuid, kHasher), std::nullopt);
  std::vector<uint8_t> torn = data;
  torn[4000] = 0;
  EXPECT_EQ(ValidRecordDigest(header, torn, 3, std::nullopt, kUuid, kHasher), std::nullopt);
  // A header that records a digest its data does not have (written over by another record's
  // data): invalid even with nothing to compare with.
  std::vector<uint8_t> lying(kJournalBlockBytes);
  EncodeRecordHeader({3, data.size(), Digest128{1, 1}, false}, kUuid, kHasher, lying);
  EXPECT_EQ(ValidRecordDigest(lying, data, 3, std::nullopt, kUuid, kHasher), std::nullopt);
}

TEST(JournalFormatTest, DigestChainsDependOnEveryDigestAndTheOrder) {
  const Digest128 a{1, 2};
  const Digest128 b{3, 4};
  const uint64_t ab = ChainDigest(ChainDigest(0, a, kHasher), b, kHasher);
  const uint64_t ba = ChainDigest(ChainDigest(0, b, kHasher), a, kHasher);
  EXPECT_NE(ab, ba);
  EXPECT_NE(ab, ChainDigest(ChainDigest(0, a, kHasher), Digest128{3, 5}, kHasher));
  Result<std::vector<Digest128>> entries = ReadDigestEntries(EncodeDigestTable({{a, b}}), 2);
  ASSERT_TRUE(entries);
  EXPECT_EQ((*entries)[1], b);
  EXPECT_FALSE(ReadDigestEntries(std::vector<uint8_t>(16), 2));
}

TEST(JournalFormatTest, RegistryEntryRoundTrips) {
  const RegistryEntry entry{"/var/tmp/move.journal", kUuid, SampleHeader().device};
  Result<RegistryEntry> decoded = DecodeRegistryEntry(EncodeRegistryEntry(entry));
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(*decoded, entry);
  EXPECT_FALSE(DecodeRegistryEntry("{\"format\": \"other\"}"));
  EXPECT_FALSE(DecodeRegistryEntry("not json"));
  EXPECT_FALSE(DecodeRegistryEntry("{\"format\": \"partalign-journal-registration\"}"));
}

// A registration written before its journal file exists says so ("state": "starting"); one
// without the key (every earlier version) is a registration of a journal with a valid header.
TEST(JournalFormatTest, AStartingRegistrationRoundTrips) {
  RegistryEntry entry{"/var/tmp/move.journal", kUuid, SampleHeader().device};
  entry.starting = true;
  const std::string text = EncodeRegistryEntry(entry);
  EXPECT_NE(text.find("\"state\": \"starting\""), std::string::npos) << text;
  Result<RegistryEntry> decoded = DecodeRegistryEntry(text);
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_TRUE(decoded->starting);
  entry.starting = false;
  EXPECT_EQ(EncodeRegistryEntry(entry).find("state"), std::string::npos);
  std::string unknown = text;
  unknown.replace(unknown.find("starting"), 8, "finished");
  EXPECT_FALSE(DecodeRegistryEntry(unknown));
}

TEST(JournalFormatTest, DeviceMismatchRecognisesTheSameDisk) {
  JournalDevice loop{"/dev/loop0", true, 1 << 30, 512, 7, 0, "", "", "/tmp/d.img", 10, 20};
  JournalDevice reattached = loop;
  reattached.path = "/dev/loop5";
  reattached.minor = 5;
  EXPECT_EQ(DeviceMismatch(loop, reattached), std::nullopt) << "same backing file";
  JournalDevice other_file = loop;
  other_file.file_ino = 21;
  EXPECT_NE(DeviceMismatch(loop, other_file), std::nullopt);
  JournalDevice resized = loop;
  resized.size_bytes += 512;
  EXPECT_NE(DeviceMismatch(loop, resized), std::nullopt);
  JournalDevice sectors = loop;
  sectors.logical_sector_size = 4096;
  EXPECT_NE(DeviceMismatch(loop, sectors), std::nullopt);

  JournalDevice disk{"/dev/sdb", true, 1ull << 40, 512, 8, 16, "WD-123", "", "", 0, 0};
  JournalDevice renamed = disk;
  renamed.path = "/dev/sdc";
  EXPECT_EQ(DeviceMismatch(disk, renamed), std::nullopt) << "same serial";
  JournalDevice swapped = renamed;
  swapped.serial = "WD-999";
  EXPECT_NE(DeviceMismatch(disk, swapped), std::nullopt);
  JournalDevice anonymous{"/dev/vdb", true, 1ull << 30, 512, 254, 16, "", "", "", 0, 0};
  JournalDevice anonymous_renamed = anonymous;
  anonymous_renamed.path = "/dev/vdc";
  EXPECT_NE(DeviceMismatch(anonymous, anonymous_renamed), std::nullopt) << "no serial: by path";

  JournalDevice image{"/srv/disk.img", false, 1 << 30, 512, 0, 0, "", "", "", 3, 4};
  EXPECT_NE(DeviceMismatch(image, loop), std::nullopt);
  JournalDevice copied = image;
  copied.file_ino = 5;
  EXPECT_NE(DeviceMismatch(image, copied), std::nullopt);
}

}  // namespace
}  // namespace partalign
