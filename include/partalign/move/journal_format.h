// SPDX-License-Identifier: GPL-3.0-or-later
// The on-disk format of a move journal (docs/mover.md, "Journal format"): encode and decode
// every part, with checksums, so that a torn or corrupt part is detected and never trusted.
//
//   [header region, 64 KiB]  preamble + JSON: device identity, move geometry, table updates,
//                            the used map's summary, layout of the rest of the file. Written
//                            once.
//   [table data]             old and new bytes of each table update, each padded to 4 KiB.
//   [copy map]               (version 2) the runs of chunks the move copies, when it copies
//                            only the used ones; checksum in the header.
//   [digest table]           XXH3-128 of every copied chunk of the source: version 2 fills it
//                            during the copy pass, version 1 in a pre-scan.
//   [state A][state B]       two 4 KiB state blocks written alternately (sequence number
//                            decides), so a torn state write leaves the previous state intact.
//   [ring]                   ring_batches x chunks_per_batch slots: a 4 KiB record header and
//                            the saved copy of one chunk.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "partalign/move/move_plan.h"
#include "partalign/util/hasher.h"
#include "partalign/util/result.h"

namespace partalign {

/// The first 8 bytes of every journal file: what tells a journal from a disk image.
inline constexpr std::string_view kJournalMagic = "PAJOURNL";
/// The name apply gives every journal file ends so (docs/mover.md).
inline constexpr std::string_view kJournalFileSuffix = ".partalign-journal";

/// Version 3: every part the recovery needs survives one damaged 4 KiB block of the file - a
/// second header, a mirror of the table data, copy map, digest table and state blocks, and in
/// each ring slot a repair trailer (a copy of the record header, the XOR of the data's blocks
/// and a checksum of each). Version 2: the copy map (only the used chunks are copied) and the
/// digest table filled by the copy pass (no pre-scan). Versions 1 and 2 are still resumed, with
/// their own state blocks and records (docs/mover.md §3).
inline constexpr uint32_t kJournalVersion = 3;
inline constexpr uint32_t kJournalVersionV2 = 2;
inline constexpr uint32_t kJournalVersionV1 = 1;
/// The versions this partalign reads.
inline bool IsSupportedJournalVersion(uint32_t version) {
  return version >= kJournalVersionV1 && version <= kJournalVersion;
}
/// Every region of the journal starts and ends on this boundary (O_DIRECT on the journal file).
inline constexpr uint64_t kJournalBlockBytes = 4096;
/// The header region: the preamble and the JSON text must fit.
inline constexpr uint64_t kJournalHeaderBytes = 64 * kKiB;

using JournalUuid = std::array<uint8_t, 16>;
std::string ToHex(const JournalUuid& uuid);

/// What the journal knows about the device, to refuse resuming on another one.
struct JournalDevice {
  std::string path;
  bool is_block_device = false;
  uint64_t size_bytes = 0;
  uint64_t logical_sector_size = 0;
  uint32_t major = 0;  ///< block devices
  uint32_t minor = 0;
  std::string serial;        ///< when the disk reports one
  std::string wwn;           ///< when the disk reports one
  std::string backing_file;  ///< loop devices: the file behind them
  /// st_dev/st_ino of the image file (image targets) or of a loop device's backing file: the
  /// identity that survives re-attaching a loop device under another number.
  uint64_t file_dev = 0;
  uint64_t file_ino = 0;
  bool operator==(const JournalDevice&) const = default;
};

/// Why `actual` is not the device `recorded` describes, or nullopt when it is. Size and sector
/// size must match; then serial and WWN when recorded, the backing file's inode for loop
/// devices, the inode for image files, and the path for other block devices.
std::optional<std::string> DeviceMismatch(const JournalDevice& recorded,
                                          const JournalDevice& actual);

struct TableUpdateInfo {
  uint64_t offset_bytes = 0;
  uint64_t length_bytes = 0;
  uint64_t old_checksum = 0;  ///< Hash64 of the old bytes
  uint64_t new_checksum = 0;
  bool in_data = false;  ///< TableUpdate::in_data (header key "in_data", absent = false)
  /// TableUpdate::restore_only (header key "restore_only", absent = false)
  bool restore_only = false;
  bool operator==(const TableUpdateInfo&) const = default;
};

/// Where each region of the journal file is; all offsets and sizes are multiples of 4 KiB.
struct JournalLayout {
  uint64_t table_data_offset = 0;
  uint64_t table_data_bytes = 0;
  uint64_t copy_map_offset = 0;  ///< right after the table data
  uint64_t copy_map_bytes = 0;   ///< 0 when every chunk is copied (and in version 1)
  uint64_t digest_table_offset = 0;
  uint64_t digest_table_bytes = 0;
  uint64_t state_offset = 0;  ///< two blocks
  uint64_t ring_offset = 0;
  uint64_t slot_bytes = 0;  ///< record header + chunk
  uint64_t slot_count = 0;
  uint64_t file_bytes = 0;
  /// Version 3 (0 before): the second copy of the header (right after the first), the distance
  /// from each of the table data, copy map, digest table and state blocks to its mirror copy,
  /// and the size of the repair trailer at the end of every ring slot (after chunk_bytes).
  uint64_t header_copy_offset = 0;
  uint64_t mirror_bytes = 0;
  uint64_t repair_bytes = 0;
  bool operator==(const JournalLayout&) const = default;
};

JournalLayout ComputeJournalLayout(const MoveGeometry& move, std::span<const TableUpdateInfo> table,
                                   uint32_t version = kJournalVersion);

/// Where the old (or new) bytes of table update `index` are stored in the journal.
uint64_t TableDataOffset(const JournalLayout& layout, std::span<const TableUpdateInfo> table,
                         size_t index, bool new_bytes);

/// Journal offset of the slot for step `index` of a segment.
uint64_t SlotOffset(const JournalLayout& layout, const MoveGeometry& move, uint64_t index);

/// What the used map said about the moved range, for the user (`resume` prints it) - the mover
/// itself uses only the copy map. Bounded: at most kMaxUsedNotes notes of kMaxUsedNoteBytes.
struct UsedSummary {
  std::string source;  ///< "ext4: libext2fs block bitmap"; empty: no used map (every chunk)
  uint64_t used_bytes = 0;
  /// Bytes per reason (UsedReason names), reasons with 0 bytes left out.
  std::vector<std::pair<std::string, uint64_t>> reasons;
  std::vector<std::string> notes;
  bool operator==(const UsedSummary&) const = default;
};
inline constexpr size_t kMaxUsedNotes = 8;
inline constexpr size_t kMaxStepBytes = 600;
inline constexpr size_t kMaxUsedNoteBytes = 300;

/// The summary of `map` for the journal header, notes cut to the bounds above.
UsedSummary SummarizeUsedMap(const UsedMap& map);

struct JournalHeader {
  uint32_t version = kJournalVersion;
  JournalUuid uuid{};
  std::string created_by;  ///< "partalign 0.1.0"
  JournalDevice device;
  /// move.copy is the copy map: DecodeJournalHeader leaves it "every chunk" until
  /// AttachCopyMap() has read the region.
  MoveGeometry move;
  std::vector<TableUpdateInfo> table;
  JournalLayout layout;
  /// Version 2: runs in the copy map region and their checksum (Hash64 of the encoded runs).
  uint64_t copy_run_count = 0;
  uint64_t copy_map_checksum = 0;
  /// Copied chunks, as recorded (checked against the copy map).
  uint64_t copied_chunks = 0;
  UsedSummary used;
  /// What a step that moves no data does, for the user ("shrink the ext4 of partition 5 ...";
  /// header key "step", version 2); empty for a move. At most kMaxStepBytes.
  std::string step;
  bool operator==(const JournalHeader&) const = default;
};

/// Fills copy_run_count, copy_map_checksum, copied_chunks and the layout from `header.move`
/// and `header.table`: what a new journal's header needs before it is encoded.
void CompleteJournalHeader(JournalHeader& header, const Hasher& hasher);

/// Exactly kJournalHeaderBytes: preamble (magic, version, JSON length, checksum) + JSON.
Result<std::vector<uint8_t>> EncodeJournalHeader(const JournalHeader& header, const Hasher& hasher);
/// Rejects a wrong magic, an unknown version, a bad checksum, truncation and inconsistent values.
/// The copy map is not read yet: call AttachCopyMap() with the region's bytes, which checks
/// the layout against the geometry.
Result<JournalHeader> DecodeJournalHeader(std::span<const uint8_t> bytes, const Hasher& hasher);

/// The copy map region: 16 bytes per run (first chunk, chunk count, little-endian), padded.
std::vector<uint8_t> EncodeCopyMap(const CopySet& copy);
/// Decodes the copy map region of `header` (its layout.copy_map_bytes bytes) into
/// header.move.copy, checking its checksum, the runs against the range, the copied chunk count,
/// and then the whole layout against the geometry.
Status AttachCopyMap(JournalHeader& header, std::span<const uint8_t> region, const Hasher& hasher);

/// Where the move stands; see journal_recovery.h for what each phase means to resume.
enum class JournalPhase : uint32_t {
  kMoving = 1,         ///< forward pass: forward_done steps are durably at their destination
  kDataMoved = 2,      ///< every chunk moved, flushed and verified against the pre-scan
  kTableWriting = 3,   ///< writing the new table bytes (may be torn)
  kDone = 4,           ///< new table written and flushed: the move is complete
  kRollbackTable = 5,  ///< rolling back: restoring the old table bytes
  kRollingBack = 6,    ///< rolling back: rollback_done steps of the rollback segment are back
  kRolledBack = 7,     ///< data back at its source and verified, old table in place
};

const char* ToString(JournalPhase phase);

struct JournalState {
  JournalPhase phase = JournalPhase::kMoving;
  uint64_t sequence = 0;
  uint64_t forward_done = 0;
  /// Rollback phases: how many forward steps are being moved back, and how many of those are.
  uint64_t rollback_split = 0;
  uint64_t rollback_done = 0;
  /// Version 1: Hash64 of the whole digest table (the pre-scan's). Version 2: the digest chain
  /// (ChainDigests) of the first `digests_known` forward steps' digests.
  uint64_t digest_table_checksum = 0;
  /// Version 2: the forward steps whose digests are durable in the digest table (never fewer
  /// than forward_done). Version 1 knows every digest once a state exists; this field is 0.
  uint64_t digests_known = 0;
  bool operator==(const JournalState&) const = default;
};

/// One 4 KiB block. Block A holds odd sequence numbers, block B even ones. `version` is the
/// journal's (version 1 blocks have no digests_known).
std::vector<uint8_t> EncodeStateBlock(const JournalState& state, const JournalUuid& uuid,
                                      const Hasher& hasher, uint32_t version = kJournalVersion);
/// nullopt for a zero, torn or foreign block (never an error: a torn block is expected).
std::optional<JournalState> DecodeStateBlock(std::span<const uint8_t> block,
                                             const JournalUuid& uuid, const Hasher& hasher,
                                             uint32_t version = kJournalVersion);
/// The valid state with the highest sequence number, or nullopt when neither block is valid
/// (the move never started).
std::optional<JournalState> LatestState(std::span<const uint8_t> block_a,
                                        std::span<const uint8_t> block_b, const JournalUuid& uuid,
                                        const Hasher& hasher, uint32_t version = kJournalVersion);
/// Offset (within the state region) of the block that holds `sequence`.
inline uint64_t StateBlockOffset(uint64_t sequence) {
  return sequence % 2 == 1 ? 0 : kJournalBlockBytes;
}

/// The header of a saved copy (one ring slot). The data follows in the next bytes of the slot.
struct RecordHeader {
  uint64_t chunk = 0;  ///< chunk index from the start of the range
  uint64_t length_bytes = 0;
  Digest128 digest;       ///< of the data, equal to the pre-scan digest of the chunk
  bool rollback = false;  ///< written by the rollback pass (informational)
  bool operator==(const RecordHeader&) const = default;
};

/// Writes the 4 KiB record header into `block` (which must be 4 KiB).
void EncodeRecordHeader(const RecordHeader& record, const JournalUuid& uuid, const Hasher& hasher,
                        std::span<uint8_t> block, uint32_t version = kJournalVersion);
std::optional<RecordHeader> DecodeRecordHeader(std::span<const uint8_t> block,
                                               const JournalUuid& uuid, const Hasher& hasher,
                                               uint32_t version = kJournalVersion);
/// The digest of the saved copy in a slot when it is a complete, untorn saved copy of `chunk`
/// (its data hashes to the digest its header records) whose digest is `expected` when one is
/// known: only then may resume write it to the device. nullopt otherwise.
std::optional<Digest128> ValidRecordDigest(std::span<const uint8_t> header_block,
                                           std::span<const uint8_t> data, uint64_t chunk,
                                           const std::optional<Digest128>& expected,
                                           const JournalUuid& uuid, const Hasher& hasher,
                                           uint32_t version = kJournalVersion);
/// Version 3: fills the repair trailer of a ring slot (layout.repair_bytes) for the record
/// header `header_block` and the chunk's data `blocks` (its length rounded up to 4 KiB, as
/// written): a copy of the header block, the XOR of the data's 4 KiB blocks, and the Hash64 of
/// each of those blocks.
void EncodeRecordRepair(std::span<const uint8_t> header_block, std::span<const uint8_t> blocks,
                        std::span<uint8_t> trailer, const Hasher& hasher);
/// ValidRecordDigest() of a slot read whole, `blocks` holding the data rounded up to 4 KiB;
/// with a repair trailer (version 3, else empty), one damaged 4 KiB block - of the header or of
/// the data - is repaired in place from it: the header from its copy, a data block (the one whose
/// checksum differs) from the XOR of the others. A repair counts only when the whole chunk then
/// hashes to the digest the header carries (and to `expected` when known).
std::optional<Digest128> RepairedRecordDigest(std::span<uint8_t> header_block,
                                              std::span<uint8_t> blocks, uint64_t length,
                                              std::span<const uint8_t> trailer, uint64_t chunk,
                                              const std::optional<Digest128>& expected,
                                              const JournalUuid& uuid, const Hasher& hasher,
                                              uint32_t version = kJournalVersion);
/// ValidRecordDigest() with a known digest, as a yes/no.
bool IsValidRecord(std::span<const uint8_t> header_block, std::span<const uint8_t> data,
                   uint64_t chunk, const Digest128& expected, const JournalUuid& uuid,
                   const Hasher& hasher, uint32_t version = kJournalVersion);

/// The digests, 16 bytes each, little-endian, padded to 4 KiB; entry k is copied chunk k's.
std::vector<uint8_t> EncodeDigestTable(std::span<const Digest128> digests);
/// Version 1: rejects a table whose checksum (Hash64 over the first count * 16 bytes) differs.
Result<std::vector<Digest128>> DecodeDigestTable(std::span<const uint8_t> bytes, uint64_t count,
                                                 uint64_t checksum, const Hasher& hasher);
/// Version 1: the checksum of a whole digest table.
uint64_t DigestTableChecksum(std::span<const Digest128> digests, const Hasher& hasher);
/// Version 2: the entries without a checksum check (ChainDigests checks the known ones).
Result<std::vector<Digest128>> ReadDigestEntries(std::span<const uint8_t> bytes, uint64_t count);
/// Version 2: the digest chain, extended by one digest: Hash64 of the chain (8 bytes) and the
/// digest (16 bytes), little-endian. The chain of no digest is 0. A state records the chain of
/// the known forward steps in step order, so extending it costs one short hash per step.
uint64_t ChainDigest(uint64_t chain, const Digest128& digest, const Hasher& hasher);

/// An entry of the journal registry (src/io/move/journal_registry.h): which journal belongs to
/// which device, so that a new move or an apply on that device finds it even when the journal file
/// is gone. One small JSON document per journal.
struct RegistryEntry {
  std::string journal_path;
  JournalUuid uuid{};
  JournalDevice device;
  /// Registered before the journal file is created ("state": "starting"), rewritten without it
  /// once the journal's header is durable, before the first write to the device: a starting
  /// registration means the move never wrote the device (docs/mover.md, I8).
  bool starting = false;
  bool operator==(const RegistryEntry&) const = default;
};

std::string EncodeRegistryEntry(const RegistryEntry& entry);
Result<RegistryEntry> DecodeRegistryEntry(std::string_view text);

/// The digest of a whole range, from its chunk digests (order-independent of how it was read):
/// Hash128 of the concatenated chunk digests.
Digest128 RangeDigest(std::span<const Digest128> digests, const Hasher& hasher);

}  // namespace partalign
