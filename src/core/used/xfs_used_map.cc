// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/used/xfs_used_map.h"

#include <algorithm>
#include <array>
#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>

#include "partalign/used/crc32c.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

constexpr uint32_t kSuperMagic = 0x58465342;  // "XFSB"
constexpr uint32_t kAgfMagic = 0x58414746;    // "XAGF"
constexpr uint32_t kBnoMagicV4 = 0x41425442;  // "ABTB"
constexpr uint32_t kBnoMagicV5 = 0x41423342;  // "AB3B"
constexpr uint32_t kLogMagic = 0xFEEDBABE;    // XLOG_HEADER_MAGIC_NUM
constexpr uint64_t kBasicBlock = 512;         // BBSIZE: log and daddr unit
constexpr size_t kSuperCrcAt = 224;           // sb_crc
constexpr size_t kAgfCrcAt = 216;             // agf_crc
constexpr size_t kShortBlockCrcAt = 52;       // bb_crc of a short-form btree block (v5)
constexpr size_t kShortHeaderV4 = 16;         // magic, level, numrecs, leftsib, rightsib
constexpr size_t kShortHeaderV5 = 56;         // + blkno, lsn, uuid, owner, crc
constexpr uint32_t kMaxBtreeLevels = 9;       // XFS_BTREE_MAXLEVELS
/// Version 5 incompatible features this parser understands (xfs_format.h): ftype, sparse
/// inodes, meta_uuid, bigtime, nrext64. NEEDSREPAIR (0x10) means xfs_repair must run first.
constexpr uint32_t kXfsKnownIncompat = 0x01 | 0x02 | 0x04 | 0x08 | 0x20;
/// xlog_rec_header: h_num_logops at 40, h_size at 320; XLOG_HEADER_CYCLE_SIZE.
constexpr size_t kLogOpsAt = 40;
constexpr size_t kLogSizeAt = 320;
constexpr uint32_t kLogCycleSize = 32 * 1024;
/// The largest log record (XLOG_MAX_RECORD_BSIZE, 256 KiB) in basic blocks, plus its headers:
/// how far back from the head the last record header can be.
constexpr uint64_t kMaxRecordBlocks = 256 * 1024 / kBasicBlock + 8;
/// xlog_op_header.oh_flags: XLOG_UNMOUNT_TRANS.
constexpr uint8_t kUnmountTransFlag = 0x20;
constexpr uint64_t kLogPieceBytes = 1 << 20;

uint32_t Log2(uint64_t v) {
  uint32_t bits = 0;
  while ((uint64_t{1} << bits) < v) ++bits;
  return bits;
}

class Parser {
 public:
  Parser(const ByteSource& source, const XfsGeometry& g) : source_(source), g_(g) {}

  uint64_t AgStart(uint32_t ag) const { return uint64_t{ag} * g_.ag_blocks * g_.block_bytes; }
  uint64_t AgLength(uint32_t ag) const {
    return std::min<uint64_t>(g_.ag_blocks, g_.data_blocks - uint64_t{ag} * g_.ag_blocks);
  }

  /// The free extents [agbno, agbno + len) of AG `ag`, sorted and disjoint.
  Result<std::vector<std::pair<uint64_t, uint64_t>>> FreeExtents(uint32_t ag);
  /// nullopt when the log is clean; else why not (or why it cannot be told).
  std::optional<std::string> LogProblem();

 private:
  Result<std::vector<uint8_t>> ReadBlock(uint32_t ag, uint64_t agbno) const {
    return source_.Read(AgStart(ag) + agbno * g_.block_bytes, g_.block_bytes);
  }

  const ByteSource& source_;
  const XfsGeometry& g_;
};

Result<std::vector<std::pair<uint64_t, uint64_t>>> Parser::FreeExtents(uint32_t ag) {
  const uint64_t length = AgLength(ag);
  Result<std::vector<uint8_t>> agf = source_.Read(AgStart(ag) + g_.sector_bytes, g_.sector_bytes);
  if (!agf) return agf.error();
  const uint8_t* a = agf->data();
  if (Be32(a) != kAgfMagic) return MakeError(fmt::format("AG {}: no AGF magic", ag));
  if (g_.v5 && !XfsChecksumMatches(*agf, kAgfCrcAt)) {
    return MakeError(fmt::format("AG {}: the AGF checksum does not match", ag));
  }
  if (Be32(a + 8) != ag || Be32(a + 12) != length) {
    return MakeError(fmt::format("AG {}: the AGF says AG {} of {} blocks, expected {} blocks", ag,
                                 Be32(a + 8), Be32(a + 12), length));
  }
  const uint64_t root = Be32(a + 16);
  const uint32_t levels = Be32(a + 28);
  if (root == 0 || root >= length || levels == 0 || levels > kMaxBtreeLevels) {
    return MakeError(
        fmt::format("AG {}: bnobt root {} at {} levels is impossible", ag, root, levels));
  }
  const size_t header = g_.v5 ? kShortHeaderV5 : kShortHeaderV4;
  const uint64_t max_leaf = (g_.block_bytes - header) / 8;
  const uint64_t max_node = (g_.block_bytes - header) / 12;
  std::vector<std::pair<uint64_t, uint64_t>> free;
  std::set<uint64_t> seen;
  // Depth first, left to right: leaves come in key order, which is block order.
  std::vector<std::pair<uint64_t, uint32_t>> stack{{root, levels - 1}};
  while (!stack.empty()) {
    const auto [agbno, level] = stack.back();
    stack.pop_back();
    if (!seen.insert(agbno).second || seen.size() > length) {
      return MakeError(fmt::format("AG {}: the bnobt visits block {} twice", ag, agbno));
    }
    Result<std::vector<uint8_t>> block = ReadBlock(ag, agbno);
    if (!block) return block.error();
    const uint8_t* b = block->data();
    const uint32_t magic = Be32(b);
    if (magic != (g_.v5 ? kBnoMagicV5 : kBnoMagicV4)) {
      return MakeError(fmt::format("AG {}: block {} is not a bnobt block", ag, agbno));
    }
    if (g_.v5) {
      const uint64_t daddr = (AgStart(ag) + agbno * g_.block_bytes) / kBasicBlock;
      if (!XfsChecksumMatches(*block, kShortBlockCrcAt) || Be64(b + 16) != daddr ||
          Be32(b + 48) != ag) {
        return MakeError(
            fmt::format("AG {}: bnobt block {} fails its checksum or self-check", ag, agbno));
      }
    }
    const uint32_t block_level = Be16(b + 4);
    const uint64_t records = Be16(b + 6);
    if (block_level != level || records > (level == 0 ? max_leaf : max_node) ||
        (records == 0 && agbno != root)) {
      return MakeError(
          fmt::format("AG {}: bnobt block {} has level {} and {} records, expected "
                      "level {}",
                      ag, agbno, block_level, records, level));
    }
    if (level == 0) {
      for (uint64_t r = 0; r < records; ++r) {
        const uint64_t start = Be32(b + header + 8 * r);
        const uint64_t count = Be32(b + header + 8 * r + 4);
        if (count == 0 || start >= length || count > length - start ||
            (!free.empty() && start < free.back().first + free.back().second)) {
          return MakeError(fmt::format("AG {}: free extent {}+{} is impossible or out of order", ag,
                                       start, count));
        }
        free.emplace_back(start, count);
      }
      continue;
    }
    // Pointers follow the largest possible key array; pushed right to left, popped left first.
    const size_t pointers = header + max_node * 8;
    for (uint64_t r = records; r-- > 0;) {
      const uint64_t child = Be32(b + pointers + 4 * r);
      if (child == 0 || child >= length) {
        return MakeError(fmt::format("AG {}: bnobt pointer {} leaves the AG", ag, child));
      }
      stack.emplace_back(child, level - 1);
    }
  }
  return free;
}

std::optional<std::string> Parser::LogProblem() {
  if (g_.log_start_fsb == 0) return "the log is external (it cannot be checked)";
  const uint64_t ag = g_.log_start_fsb >> g_.ag_block_log;
  const uint64_t agbno = g_.log_start_fsb & ((uint64_t{1} << g_.ag_block_log) - 1);
  const uint64_t log_bytes = uint64_t{g_.log_blocks} * g_.block_bytes;
  if (ag >= g_.ag_count || agbno >= AgLength(static_cast<uint32_t>(ag)) ||
      g_.log_blocks > AgLength(static_cast<uint32_t>(ag)) - agbno) {
    return fmt::format("the log at block {} ({} blocks) is outside its AG", g_.log_start_fsb,
                       g_.log_blocks);
  }
  const uint64_t log_at = AgStart(static_cast<uint32_t>(ag)) + agbno * g_.block_bytes;
  const uint64_t blocks = log_bytes / kBasicBlock;
  // The cycle number of every basic block: a record header's h_cycle, else the first word,
  // which the log writer replaces with the cycle (xlog_pack_data).
  std::vector<uint32_t> cycle(blocks);
  std::vector<bool> is_header(blocks);
  for (uint64_t at = 0; at < log_bytes; at += kLogPieceBytes) {
    Result<std::vector<uint8_t>> piece =
        source_.Read(log_at + at, std::min(kLogPieceBytes, log_bytes - at));
    if (!piece) return "cannot read the log: " + piece.error().message;
    for (uint64_t off = 0; off + kBasicBlock <= piece->size(); off += kBasicBlock) {
      const uint64_t bb = (at + off) / kBasicBlock;
      const uint8_t* p = piece->data() + off;
      is_header[bb] = Be32(p) == kLogMagic;
      cycle[bb] = is_header[bb] ? Be32(p + 4) : Be32(p);
    }
  }
  // A log written in order holds [c ... c][c-1 ... c-1]: the head is the first block of the
  // older cycle (or block 0 when every block has cycle c). Anything else is a log that a crash
  // interrupted - or one this parser does not understand; either way, not known to be clean.
  uint64_t head = 0;
  while (head < blocks && cycle[head] == cycle[0]) ++head;
  for (uint64_t i = head; i < blocks; ++i) {
    if (cycle[0] == 0 || cycle[i] != cycle[0] - 1) {
      return fmt::format("the log's cycle numbers are not in order at block {}", i);
    }
  }
  if (head == blocks) head = 0;
  // The last record before the head.
  const uint32_t current = cycle[(head + blocks - 1) % blocks];
  std::optional<uint64_t> record;
  for (uint64_t back = 1; back <= std::min(kMaxRecordBlocks, blocks); ++back) {
    const uint64_t bb = (head + blocks - back) % blocks;
    if (is_header[bb] && cycle[bb] == current) {
      record = bb;
      break;
    }
  }
  if (!record) return "no log record header precedes the log's head";
  Result<std::vector<uint8_t>> header_block =
      source_.Read(log_at + *record * kBasicBlock, kBasicBlock);
  if (!header_block) return "cannot read the log: " + header_block.error().message;
  const uint8_t* h = header_block->data();
  const uint32_t version = Be32(h + 8);
  const uint64_t data_bytes = Be32(h + 12);
  const uint32_t ops = Be32(h + kLogOpsAt);
  const uint32_t size = Be32(h + kLogSizeAt);
  if ((version != 1 && version != 2) || data_bytes == 0 || data_bytes > 256 * 1024 ||
      (version == 2 && size > 256 * 1024)) {
    return "the last log record header is not valid";
  }
  const uint64_t header_blocks =
      version == 2 && size > kLogCycleSize ? (size + kLogCycleSize - 1) / kLogCycleSize : 1;
  const uint64_t end = (*record + header_blocks + (data_bytes + kBasicBlock - 1) / kBasicBlock);
  if (end % blocks != head) return "the last log record does not end at the log's head";
  if (ops != 1)
    return "the log was not cleanly unmounted (its last record is not an unmount record)";
  Result<std::vector<uint8_t>> op =
      source_.Read(log_at + ((*record + header_blocks) % blocks) * kBasicBlock, kBasicBlock);
  if (!op) return "cannot read the log: " + op.error().message;
  if (((*op)[9] & kUnmountTransFlag) == 0) {
    return "the log was not cleanly unmounted (its last record is not an unmount record)";
  }
  return std::nullopt;
}

}  // namespace

bool XfsChecksumMatches(std::span<const uint8_t> bytes, size_t crc_offset) {
  if (crc_offset + 4 > bytes.size()) return false;
  constexpr uint8_t kZero[4] = {};
  uint32_t crc = Crc32cUpdate(0xffffffffu, bytes.first(crc_offset));
  crc = Crc32cUpdate(crc, kZero);
  crc = Crc32cUpdate(crc, bytes.subspan(crc_offset + 4));
  return Le32(&bytes[crc_offset]) == ~crc;
}

Result<XfsGeometry> ParseXfsSuperblock(std::span<const uint8_t> s, uint64_t partition_bytes) {
  if (s.size() < 512) return MakeError("the superblock is shorter than 512 bytes");
  if (Be32(&s[0]) != kSuperMagic) return MakeError("no XFS superblock magic");
  XfsGeometry g;
  g.block_bytes = Be32(&s[4]);
  g.data_blocks = Be64(&s[8]);
  g.log_start_fsb = Be64(&s[48]);
  g.ag_blocks = Be32(&s[84]);
  g.ag_count = Be32(&s[88]);
  g.log_blocks = Be32(&s[96]);
  const uint32_t version = Be16(&s[100]) & 0xf;
  g.sector_bytes = Be16(&s[102]);
  g.ag_block_log = s[124];
  g.v5 = version == 5;
  if (version != 4 && version != 5) {
    return MakeError(fmt::format("superblock version {} is not 4 or 5", version));
  }
  if (!IsPowerOfTwo(g.block_bytes) || g.block_bytes < 512 || g.block_bytes > 65536) {
    return MakeError(
        fmt::format("block size {} is not a power of two of 512..65536", g.block_bytes));
  }
  if (!IsPowerOfTwo(g.sector_bytes) || g.sector_bytes < 512 || g.sector_bytes > 32768 ||
      g.sector_bytes > g.block_bytes || g.sector_bytes > s.size()) {
    return MakeError(fmt::format("sector size {} is not valid", g.sector_bytes));
  }
  if (g.v5 && !XfsChecksumMatches(s.first(g.sector_bytes), kSuperCrcAt)) {
    return MakeError("the superblock checksum does not match");
  }
  if (s[126] != 0) return MakeError("mkfs.xfs did not finish (sb_inprogress)");
  if (g.v5 && (Be32(&s[216]) & ~kXfsKnownIncompat) != 0) {
    return MakeError(fmt::format("incompatible features {:#x} (needs repair, or unknown)",
                                 Be32(&s[216]) & ~kXfsKnownIncompat));
  }
  if (g.ag_blocks < 8 || g.ag_count == 0 || g.ag_block_log != Log2(g.ag_blocks) ||
      g.data_blocks <= uint64_t{g.ag_count - 1} * g.ag_blocks ||
      g.data_blocks > uint64_t{g.ag_count} * g.ag_blocks) {
    return MakeError(fmt::format("{} AGs of {} blocks do not make {} blocks", g.ag_count,
                                 g.ag_blocks, g.data_blocks));
  }
  if (g.data_blocks > partition_bytes / g.block_bytes) {
    return MakeError(
        fmt::format("the filesystem's {} blocks of {} bytes do not fit the {}-byte "
                    "partition",
                    g.data_blocks, g.block_bytes, partition_bytes));
  }
  return g;
}

UsedMap XfsUsedMap(const ByteSource& source) {
  const uint64_t length = source.size_bytes();
  // Enough for the largest sector size; the checksum covers one sector.
  Result<std::vector<uint8_t>> sb = source.Read(0, std::min<uint64_t>(32768, length));
  if (!sb)
    return UsedMap::WholeBecause(length, "xfs",
                                 "cannot read the superblock (" + sb.error().message + ")");
  Result<XfsGeometry> parsed = ParseXfsSuperblock(*sb, length);
  if (!parsed)
    return UsedMap::WholeBecause(length, "xfs",
                                 "the superblock is not usable: " + parsed.error().message);
  const XfsGeometry& g = *parsed;
  Parser parser(source, g);
  if (std::optional<std::string> problem = parser.LogProblem()) {
    return UsedMap::WholeBecause(length, "xfs", *problem + " (mount it once, or run xfs_repair)");
  }
  UsedMap map(length);
  map.source = "xfs: free-space B+trees (bnobt)";
  map.Add(0, kUsedHeadBytes, UsedReason::kHead);
  const uint64_t fs_bytes = g.data_blocks * g.block_bytes;
  map.Add(fs_bytes, length - fs_bytes, UsedReason::kBeyondFilesystem);
  for (uint32_t ag = 0; ag < g.ag_count; ++ag) {
    Result<std::vector<std::pair<uint64_t, uint64_t>>> free = parser.FreeExtents(ag);
    if (!free) return UsedMap::WholeBecause(length, "xfs", free.error().message);
    const uint64_t start = parser.AgStart(ag);
    // The AG headers: superblock (copy), AGF, AGI, AGFL - one sector each.
    map.Add(start, 4 * uint64_t{g.sector_bytes}, UsedReason::kSuperblock);
    uint64_t used_from = 0;
    for (const auto& [agbno, count] : *free) {
      map.Add(start + used_from * g.block_bytes, (agbno - used_from) * g.block_bytes,
              UsedReason::kAllocated);
      used_from = agbno + count;
    }
    map.Add(start + used_from * g.block_bytes, (parser.AgLength(ag) - used_from) * g.block_bytes,
            UsedReason::kAllocated);
  }
  const uint64_t log_ag = g.log_start_fsb >> g.ag_block_log;
  const uint64_t log_agbno = g.log_start_fsb & ((uint64_t{1} << g.ag_block_log) - 1);
  map.Add(parser.AgStart(static_cast<uint32_t>(log_ag)) + log_agbno * g.block_bytes,
          uint64_t{g.log_blocks} * g.block_bytes, UsedReason::kJournal);
  return map;
}

}  // namespace partalign
