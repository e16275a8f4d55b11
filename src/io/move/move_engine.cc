// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/move/move_engine.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>
#include <span>

#include <fmt/format.h>

#include "partalign/topology/alignment.h"

#include "io/move/pipeline.h"
#include "io/util/elapsed.h"

namespace partalign {
namespace {

// At most this many chunks of each region a resume reads before it writes anything: enough to
// tell a disk that holds the journal's state from one restored from a copy, without reading a
// large move again (docs/mover.md §7).
constexpr uint64_t kProofSamples = 16;

/// Batches in flight in the move pipeline: one per stage (read, journal, write, commit) plus
/// one being read ahead.
constexpr uint64_t kMoveDepth = 5;
/// Bytes read per batch in the scan and verify passes: reads are faster the more are in flight
/// (on the loop device here, 8-64 MiB in flight reach the device's rate).
constexpr uint64_t kHashBatchBytes = 32 * kMiB;
/// Batches in flight in the scan and verify passes (read, hash, one read ahead).
constexpr uint64_t kHashDepth = 3;
/// Piece size when narrowing a read error down to its sector: first this, then sector by sector.
constexpr uint64_t kLocatePieceBytes = 64 * kKiB;
/// A run of DriveJournal takes at most about ten steps (scan, move, verify, table, finish; or
/// settle, rollback table, move back, verify, finish). More means the state does not advance.
constexpr int kMaxRecoverySteps = 32;

using Clock = std::chrono::steady_clock;

class Engine {
 public:
  Engine(BlockIo& device, MoveJournal& journal, const MoverHooks& hooks)
      : device_(device),
        journal_(journal),
        hooks_(hooks),
        hasher_(journal.hasher()),
        move_(journal.move()),
        version_(journal.header().version),
        chunk_count_(ChunkCount(move_)),
        regions_(journal.header().layout.slot_count / move_.chunks_per_batch),
        sector_(journal.header().device.logical_sector_size),
        forward_(ForwardSegment(move_)) {}

  Result<MoveOutcome> Drive(ResumeMode mode);
  /// The journal's table updates and digests read, and CheckDiskState: nothing written.
  Result<std::optional<std::string>> Prove();

 private:
  void Phase(const char* name) const {
    if (hooks_.on_phase) hooks_.on_phase(name);
  }
  void Report(const char* phase, uint64_t done, uint64_t total) const {
    if (hooks_.progress) hooks_.progress(MoveProgress{phase, done, total});
  }
  /// Bytes of steps [begin, end) of `segment` (every chunk is full except the range's last).
  uint64_t StepBytes(const Segment& segment, uint64_t begin, uint64_t end) const;
  /// Bytes of copied chunks [first, end).
  uint64_t ChunkBytes(uint64_t first, uint64_t end) const {
    if (end <= first) return 0;
    const uint64_t last = chunk_count_ - 1;
    const uint64_t short_by = first <= last && last < end
                                  ? move_.chunk_bytes - ChunkExtentOf(move_, last).length_bytes
                                  : 0;
    return (end - first) * move_.chunk_bytes - short_by;
  }
  uint64_t DataOffset(const Segment& s, uint64_t step, bool dest) const {
    return (dest ? s.dest_base : s.source_base) +
           ChunkExtentOf(move_, ChunkAt(s, step)).position_bytes;
  }

  /// The forward step that copies copied chunk `chunk` (the digest chain's order).
  uint64_t ForwardStep(uint64_t chunk) const {
    return Descending(forward_) ? chunk_count_ - 1 - chunk : chunk;
  }
  /// The pre-move digest of `chunk` when a durable state vouches for it (its forward step is
  /// below digests_known; version 1: every chunk, once the pre-scan is done), else nullopt: the
  /// copy pass learns it from what it reads.
  std::optional<Digest128> KnownDigest(uint64_t chunk) const {
    if (ForwardStep(chunk) < known_at_start_) return digests_[chunk];
    return std::nullopt;
  }

  Status LoadDigests();
  /// Before a resume writes anything: whether the disk holds the state the journal describes
  /// (docs/mover.md §7, "What resume checks first"): sampled chunks where the state says they
  /// are; no state only when the digest table is empty too. nullopt when it does, else what
  /// was found; an error when something cannot be read.
  Result<std::optional<std::string>> CheckDiskState();
  /// Whether copied chunk `chunk` read at `base` matches its digest.
  Result<bool> ChunkMatches(uint64_t base, uint64_t chunk);
  /// Whether a record update (TableUpdate::in_data) lies in `chunk`'s destination.
  bool HoldsRecord(uint64_t chunk) const;
  /// Whether any entry of the digest table is written (version 2: the copy pass had begun).
  Result<bool> DigestTableHasEntries();
  Status CheckOldTable();
  /// Version 1: reads the whole source, stores every digest, then the first state.
  Status ScanAndStart();
  /// Version 2: the first state, with no digest known; the copy pass learns them.
  Status Start();
  /// Reads copied chunks [first, end) at `base` and compares each with its digest.
  Status VerifyAt(uint64_t base, uint64_t first, uint64_t end, const char* phase);
  Status HashPass(uint64_t base, uint64_t first, uint64_t end, const char* phase,
                  const std::function<Status(uint64_t chunk, const Digest128&)>& on_digest);
  /// The sector that fails among `spans` (a read of them failed with `original`).
  Error LocateReadError(std::span<const IoSpan> spans, Error original);
  /// Runs steps [begin, end) of `segment`; false when stopped on request before the end.
  Result<bool> RunSegment(const Segment& segment, bool rollback, uint64_t begin, uint64_t end,
                          bool look_for_copies);
  Result<std::vector<bool>> ValidCopies(const Segment& segment, uint64_t begin, uint64_t end);
  /// The journal spans of the ring slot of `step` held at `slot` (a slot_bytes buffer): the
  /// record header and the data, and (version 3) the repair trailer.
  void AddRecordSpans(uint8_t* slot, uint64_t step, uint64_t length,
                      std::vector<IoSpan>& spans) const;
  /// The digest of the saved copy read into `slot` when it is a valid one of `chunk`, repaired
  /// in place from its trailer if one block is damaged (version 3); nullopt otherwise.
  std::optional<Digest128> RecordDigest(uint8_t* slot, uint64_t chunk, uint64_t length);
  /// Whether the ring slot read into `slot` shows that a saved copy of `chunk` was written
  /// there (its record header, or bytes that are neither a record header nor zero: a damaged
  /// one), as opposed to an empty slot or another chunk's record.
  bool SlotWasWritten(const uint8_t* slot, uint64_t chunk) const;
  /// The stop when the saved copy of `chunk` is damaged beyond repair while its source (at
  /// byte `source`) was overwritten: the journal, not the disk, is what failed.
  Error JournalDamaged(uint64_t chunk, uint64_t length, uint64_t source);
  Result<bool> BeginRollback();
  /// Reads back the source of the forward steps a rollback moved back (of every chunk when
  /// each digest is known) and compares.
  Status VerifyRollback();
  Status WriteTable(bool new_bytes);
  /// Rolling back, once every chunk is back: writes the old bytes of the restore_only updates
  /// (the destination outside the source as it was before the move), then flushes.
  Status RestorePreimage();
  /// In rollback-table: whether the rollback splits the move after its last chunk (it began
  /// at data-moved or later), so that records inside the moved data may have been written.
  bool DataComplete() const;

  BlockIo& device_;
  MoveJournal& journal_;
  const MoverHooks& hooks_;
  const Hasher& hasher_;
  const MoveGeometry move_;
  const uint32_t version_;
  const uint64_t chunk_count_;
  const uint64_t regions_;
  const uint64_t sector_;
  const Segment forward_;
  /// By copied chunk: the durable ones (below known_at_start_ in forward-step order), and those
  /// this run read (the read stage fills them before any later stage looks).
  std::vector<Digest128> digests_;
  /// Forward steps whose digests a durable state vouched for when the current pass began.
  uint64_t known_at_start_ = 0;
  /// The digest table as this run last made it durable (version 2), for whole-block writes.
  std::optional<AlignedBuffer> digest_image_;
  std::vector<TableUpdate> table_;
  MoveStats stats_;
  std::mutex stats_mutex_;
  /// Set by the start: the ring holds no saved copies of this move yet.
  bool fresh_start_ = false;
  /// This run moved every chunk of the forward pass and read each one back after its commit.
  bool forward_verified_inline_ = false;
  /// The forward pass stopped because the source could not be read (not a mismatch, not a
  /// write or journal error): the journal allows undoing what was moved.
  std::atomic<bool> source_unreadable_{false};
  std::atomic<bool> journal_damaged_{false};
  /// Saved copies read back damaged and repaired from their trailer (version 3).
  std::atomic<uint64_t> repaired_copies_{0};
  /// The note that says so, once, in `outcome`.
  void NoteRepairs(MoveOutcome& outcome) const;
};

uint64_t Engine::StepBytes(const Segment& segment, uint64_t begin, uint64_t end) const {
  if (end <= begin) return 0;
  uint64_t bytes = (end - begin) * move_.chunk_bytes;
  const uint64_t last = chunk_count_ - 1;
  const uint64_t last_step = Descending(segment)
                                 ? segment.first_chunk + segment.chunk_count - 1 - last
                                 : last - segment.first_chunk;
  const bool has_last = last >= segment.first_chunk &&
                        last < segment.first_chunk + segment.chunk_count && last_step >= begin &&
                        last_step < end;
  if (has_last) bytes -= move_.chunk_bytes - ChunkExtentOf(move_, last).length_bytes;
  return bytes;
}

Status Engine::LoadDigests() {
  Result<std::vector<Digest128>> digests = journal_.ReadDigests();
  if (!digests) return digests.error();
  digests_ = std::move(*digests);
  known_at_start_ = journal_.KnownDigestSteps();
  if (version_ != kJournalVersionV1) {
    digest_image_.emplace(journal_.header().layout.digest_table_bytes);
    std::vector<uint8_t> table = EncodeDigestTable(digests_);
    if (digest_image_->size() != 0) {
      std::memcpy(digest_image_->data(), table.data(), digest_image_->size());
    }
  }
  if (known_at_start_ == chunk_count_) stats_.range_digest = RangeDigest(digests_, hasher_);
  return {};
}

Error Engine::LocateReadError(std::span<const IoSpan> spans, Error original) {
  AlignedBuffer piece(kLocatePieceBytes);
  for (const IoSpan& failed : spans) {
    const uint64_t offset = failed.offset;
    const uint64_t length = failed.length;
    for (uint64_t at = offset; at < offset + length; at += kLocatePieceBytes) {
      const uint64_t n = std::min(kLocatePieceBytes, offset + length - at);
      IoSpan span{piece.data(), n, at};
      if (device_.Read({&span, 1})) continue;
      for (uint64_t s = at; s < at + n; s += sector_) {
        IoSpan one{piece.data(), sector_, s};
        if (Status read = device_.Read({&one, 1}); !read) {
          return MakeError(fmt::format("{} (sector {})", read.error().message, s / sector_));
        }
      }
    }
  }
  return original;  // the error did not repeat: report it as it came
}

Status Engine::HashPass(uint64_t base, uint64_t first_chunk, uint64_t end_chunk, const char* phase,
                        const std::function<Status(uint64_t chunk, const Digest128&)>& on_digest) {
  if (end_chunk <= first_chunk) return {};
  // Larger batches than the move's: these passes only read, and reads go faster the more of
  // them are in flight.
  const uint64_t cpb =
      std::max<uint64_t>(move_.chunks_per_batch, kHashBatchBytes / move_.chunk_bytes);
  const uint64_t batches = (end_chunk - first_chunk + cpb - 1) / cpb;
  std::vector<AlignedBuffer> buffers;
  for (uint64_t i = 0; i < kHashDepth; ++i) buffers.emplace_back(cpb * move_.chunk_bytes);
  auto chunks_of = [&](uint64_t batch) {
    return std::pair(first_chunk + batch * cpb,
                     std::min<uint64_t>(first_chunk + (batch + 1) * cpb, end_chunk));
  };
  Pipeline pipeline(batches, kHashDepth);
  std::vector<Pipeline::Stage> stages;
  stages.push_back([&](uint64_t batch) -> Status {
    auto [first, end] = chunks_of(batch);
    std::vector<IoSpan> spans;
    for (uint64_t c = first; c < end; ++c) {
      const ChunkExtent e = ChunkExtentOf(move_, c);
      spans.push_back({buffers[batch % kHashDepth].data() + (c - first) * move_.chunk_bytes,
                       e.length_bytes, base + e.position_bytes});
    }
    if (Status read = device_.Read(spans); !read) return LocateReadError(spans, read.error());
    return {};
  });
  stages.push_back([&](uint64_t batch) -> Status {
    auto [first, end] = chunks_of(batch);
    for (uint64_t c = first; c < end; ++c) {
      const ChunkExtent e = ChunkExtentOf(move_, c);
      const uint8_t* data = buffers[batch % kHashDepth].data() + (c - first) * move_.chunk_bytes;
      if (Status s = on_digest(c, hasher_.Hash128({data, e.length_bytes})); !s) return s;
    }
    Report(phase, ChunkBytes(first_chunk, end), ChunkBytes(first_chunk, end_chunk));
    return {};
  });
  Result<uint64_t> ran = pipeline.Run(stages, nullptr);
  if (!ran) return ran.error();
  return {};
}

std::vector<uint64_t> SampleSteps(uint64_t begin, uint64_t end) {
  std::vector<uint64_t> out;
  if (end <= begin) return out;
  const uint64_t n = end - begin;
  if (n <= kProofSamples) {
    for (uint64_t s = begin; s < end; ++s) out.push_back(s);
    return out;
  }
  for (uint64_t i = 0; i < kProofSamples; ++i) {
    out.push_back(begin + i * (n - 1) / (kProofSamples - 1));
  }
  return out;
}

Result<bool> Engine::ChunkMatches(uint64_t base, uint64_t chunk) {
  const ChunkExtent e = ChunkExtentOf(move_, chunk);
  AlignedBuffer buffer(AlignUp(e.length_bytes, AlignedBuffer::kAlignment));
  IoSpan span{buffer.data(), e.length_bytes, base + e.position_bytes};
  if (Status read = device_.Read({&span, 1}); !read) return read.error();
  return hasher_.Hash128({buffer.data(), e.length_bytes}) == digests_[chunk];
}

bool Engine::HoldsRecord(uint64_t chunk) const {
  const ChunkExtent e = ChunkExtentOf(move_, chunk);
  const uint64_t first = move_.dest_bytes + e.position_bytes;
  return std::any_of(table_.begin(), table_.end(), [&](const TableUpdate& u) {
    return u.in_data && u.offset_bytes < first + e.length_bytes &&
           first < u.offset_bytes + u.old_bytes.size();
  });
}

Result<bool> Engine::DigestTableHasEntries() {
  // Version 3: both copies (the copy pass writes them together), so that one damaged block of
  // one copy is not taken for a copy pass that began.
  const JournalLayout& layout = journal_.header().layout;
  for (uint64_t at :
       {layout.digest_table_offset, layout.digest_table_offset + layout.mirror_bytes}) {
    if (at != layout.digest_table_offset && layout.mirror_bytes == 0) break;
    AlignedBuffer buffer(layout.digest_table_bytes);
    IoSpan span{buffer.data(), layout.digest_table_bytes, at};
    if (Status read = journal_.io().Read({&span, 1}); !read) return read.error();
    if (std::all_of(buffer.data(), buffer.data() + layout.digest_table_bytes,
                    [](uint8_t b) { return b == 0; })) {
      return false;
    }
  }
  return true;
}

Result<std::optional<std::string>> Engine::CheckDiskState() {
  const std::optional<JournalState>& state = journal_.state();
  if (!state) {
    // No state: the device was never written (I8) - which a version 2 digest table contradicts
    // once the copy pass has begun (it fills the table only after moving(0) is durable).
    if (version_ == kJournalVersionV1 || journal_.header().layout.digest_table_bytes == 0) {
      return std::optional<std::string>();
    }
    Result<bool> begun = DigestTableHasEntries();
    if (!begun) return begun.error();
    if (!*begun) return std::optional<std::string>();
    return std::optional<std::string>(
        "the journal has no valid state block, but its digest table shows that the copy had "
        "begun: the journal is damaged and cannot say where the move stopped (it is not read as "
        "'never started', which would copy over half-moved data); nothing was written");
  }
  // The table first: every sector the move rewrites holds the bytes the state says - the table
  // the move started from until its table is being written (old or new sector by sector while
  // it is being written or rolled back). A disk put back from a copy taken before an earlier
  // step holds another table, and nothing of it may be written: the data the journal would copy
  // could land on a partition that table has where this move's destination is.
  if (state->phase != JournalPhase::kDone) {
    const bool either =
        state->phase == JournalPhase::kTableWriting || state->phase == JournalPhase::kRollbackTable;
    for (const TableUpdate& update : table_) {
      if (update.in_data) continue;  // inside the moved data: the chunks' digests vouch for it
      // Where the move writes its data: the rollback puts these bytes back last.
      if (update.restore_only) continue;
      AlignedBuffer on_disk(AlignUp(update.old_bytes.size(), AlignedBuffer::kAlignment));
      IoSpan span{on_disk.data(), update.old_bytes.size(), update.offset_bytes};
      if (Status read = device_.Read({&span, 1}); !read) return read.error();
      // Sector by sector (I7: a torn table write leaves each sector old or new).
      const TableBytesState now = ClassifyTableBytes({on_disk.data(), update.old_bytes.size()},
                                                     update.old_bytes, update.new_bytes, sector_);
      if (now == TableBytesState::kOld || (either && now != TableBytesState::kForeign)) continue;
      return std::optional<std::string>(fmt::format(
          "the disk no longer holds the interrupted move: the partition-table bytes at byte {} "
          "are not {} (journal state: {}) - the table changed since (the disk restored from a "
          "copy?); nothing was written",
          update.offset_bytes,
          either ? "the table the move started from nor the one it was writing"
                 : "the table the move started from",
          ToString(state->phase)));
    }
  }
  // The regions to check: which steps of which segment, and where their data must be.
  struct Region {
    Segment segment;
    uint64_t begin = 0;
    uint64_t end = 0;
    bool at_dest = true;  // in the segment's terms: written at its destination
    bool skip_records = false;
  };
  std::vector<Region> regions;
  const Segment forward = ForwardSegment(move_);
  switch (state->phase) {
    case JournalPhase::kMoving:
      regions.push_back({forward, 0, state->forward_done, true, false});
      break;
    case JournalPhase::kDataMoved:
      regions.push_back({forward, 0, chunk_count_, true, false});
      break;
    case JournalPhase::kTableWriting:
      regions.push_back({forward, 0, chunk_count_, true, true});
      break;
    case JournalPhase::kRollbackTable:
      regions.push_back({forward, 0, state->rollback_split, true, true});
      break;
    case JournalPhase::kRollingBack:
      regions.push_back(
          {RollbackSegment(move_, state->rollback_split), 0, state->rollback_done, true, false});
      break;
    case JournalPhase::kRolledBack:
      regions.push_back(
          {RollbackSegment(move_, state->rollback_split), 0, state->rollback_split, true, false});
      break;
    case JournalPhase::kDone:
      break;  // nothing is left to write but the journal's removal
  }
  uint64_t checked = 0, wrong = 0, where_it_came_from = 0;
  for (const Region& r : regions) {
    for (uint64_t step : SampleSteps(r.begin, r.end)) {
      const uint64_t chunk = ChunkAt(r.segment, step);
      if (ForwardStep(chunk) >= known_at_start_) continue;  // no digest vouched for
      if (r.skip_records && HoldsRecord(chunk)) continue;   // may hold its new bytes
      Result<bool> there = ChunkMatches(r.segment.dest_base, chunk);
      if (!there) return there.error();
      ++checked;
      if (*there) continue;
      ++wrong;
      Result<bool> back = ChunkMatches(r.segment.source_base, chunk);
      if (!back) return back.error();
      where_it_came_from += *back;
    }
  }
  if (wrong == 0) return std::optional<std::string>();
  return std::optional<std::string>(fmt::format(
      "the disk no longer holds the interrupted move: {} of {} chunks checked do not hold, where "
      "the journal (state: {}) says the move put them, what it moved{}; nothing was written",
      wrong, checked, ToString(state->phase),
      where_it_came_from == wrong
          ? " - they hold it where it came from: the disk looks like the state before the move "
            "began (restored from a copy?)"
          : ""));
}

Status Engine::CheckOldTable() {
  // Read together (a move beyond its source keeps a range for each run of used chunks), then
  // compared in the table's order.
  std::vector<const TableUpdate*> checked;
  std::vector<ByteRange> ranges;
  for (const TableUpdate& update : table_) {
    if (update.in_data) continue;  // at the new place, where the data is not yet
    checked.push_back(&update);
    ranges.push_back({update.offset_bytes, update.old_bytes.size()});
  }
  Result<std::vector<AlignedBuffer>> on_disk = ReadEach(device_, ranges);
  if (!on_disk) return on_disk.error();
  for (size_t i = 0; i < checked.size(); ++i) {
    const TableUpdate& update = *checked[i];
    if (std::memcmp((*on_disk)[i].data(), update.old_bytes.data(), update.old_bytes.size()) != 0) {
      return MakeError(fmt::format(
          "the partition-table bytes at byte {} of '{}' are not the ones the move was planned "
          "with; nothing was written",
          update.offset_bytes, device_.name()));
    }
  }
  return {};
}

Status Engine::Start() {
  Phase("start");
  if (Status table = CheckOldTable(); !table) return table;
  digests_.assign(chunk_count_, Digest128{});
  digest_image_.emplace(journal_.header().layout.digest_table_bytes);
  // Empty for a step that moves no data: memset may not be given its null pointer.
  if (digest_image_->size() != 0) std::memset(digest_image_->data(), 0, digest_image_->size());
  known_at_start_ = 0;
  JournalState state;
  state.phase = JournalPhase::kMoving;
  state.digests_known = 0;
  state.digest_table_checksum = 0;  // the chain of no digest
  // From here on the device may be written: the copy pass makes each chunk's digest durable
  // (with its saved copy) before any write can reach its source.
  if (Status w = journal_.WriteState(state); !w) return w;
  fresh_start_ = true;
  return {};
}

Status Engine::ScanAndStart() {
  Phase("scan");
  const auto start = Clock::now();
  if (Status table = CheckOldTable(); !table) return table;
  std::vector<Digest128> digests(chunk_count_);
  Status scanned = HashPass(move_.source_bytes, 0, chunk_count_, "scanning",
                            [&](uint64_t chunk, const Digest128& digest) -> Status {
                              digests[chunk] = digest;
                              return {};
                            });
  if (!scanned) {
    return MakeError(fmt::format("pre-scan of the source failed, nothing was written: {}",
                                 scanned.error().message));
  }
  stats_.scan_seconds += SecondsSince(start);
  if (Status w = journal_.WriteDigests(digests); !w) return w;
  JournalState state;
  state.phase = JournalPhase::kMoving;
  state.digest_table_checksum = DigestTableChecksum(digests, hasher_);
  // From here on the device may be written: the digests and the first state are durable.
  if (Status w = journal_.WriteState(state); !w) return w;
  digests_ = std::move(digests);
  known_at_start_ = chunk_count_;
  stats_.range_digest = RangeDigest(digests_, hasher_);
  fresh_start_ = true;
  return {};
}

Status Engine::VerifyAt(uint64_t base, uint64_t first, uint64_t end, const char* phase) {
  const auto start = Clock::now();
  Status verified =
      HashPass(base, first, end, phase, [&](uint64_t chunk, const Digest128& digest) -> Status {
        if (digest == digests_[chunk]) return {};
        const ChunkExtent e = ChunkExtentOf(move_, chunk);
        return MakeError(fmt::format(
            "verification failed: the {} bytes at byte {} of '{}' differ from what was read at "
            "the source (chunk {}); the journal is kept",
            e.length_bytes, base + e.position_bytes, device_.name(), chunk));
      });
  stats_.verify_seconds += SecondsSince(start);
  return verified;
}

Result<std::vector<bool>> Engine::ValidCopies(const Segment& segment, uint64_t begin,
                                              uint64_t end) {
  std::vector<bool> valid;
  const uint64_t slot = journal_.header().layout.slot_bytes;
  AlignedBuffer buffer(slot);
  for (uint64_t step = begin; step < end; ++step) {
    const uint64_t chunk = ChunkAt(segment, step);
    const uint64_t length = ChunkExtentOf(move_, chunk).length_bytes;
    std::vector<IoSpan> spans;
    AddRecordSpans(buffer.data(), step, length, spans);
    if (Status read = journal_.io().Read(spans); !read) return read.error();
    valid.push_back(RecordDigest(buffer.data(), chunk, length).has_value());
  }
  return valid;
}

bool Engine::SlotWasWritten(const uint8_t* slot, uint64_t chunk) const {
  const JournalUuid& uuid = journal_.header().uuid;
  const uint64_t repair = journal_.header().layout.repair_bytes;
  std::vector<const uint8_t*> headers = {slot};
  if (repair != 0) headers.push_back(slot + kJournalBlockBytes + move_.chunk_bytes);
  bool written = false;
  for (const uint8_t* h : headers) {
    std::span<const uint8_t> block(h, kJournalBlockBytes);
    std::optional<RecordHeader> record = DecodeRecordHeader(block, uuid, hasher_, version_);
    if (record) {
      written = written || record->chunk == chunk;
    } else {
      // Neither a record nor an empty slot: bytes no record write leaves behind.
      written = written || std::any_of(block.begin(), block.end(), [](uint8_t b) { return b; });
    }
  }
  return written;
}

Error Engine::JournalDamaged(uint64_t chunk, uint64_t length, uint64_t source) {
  journal_damaged_ = true;
  return MakeError(fmt::format(
      "the journal is damaged: its saved copy of chunk {} fails its checksum, and the source of "
      "that chunk (the {} bytes at byte {} of '{}') no longer holds what was copied - the move had "
      "begun to overwrite it; stopped before writing it",
      chunk, length, source, device_.name()));
}

void Engine::AddRecordSpans(uint8_t* slot, uint64_t step, uint64_t length,
                            std::vector<IoSpan>& spans) const {
  const uint64_t at = journal_.SlotOffset(step);
  spans.push_back({slot, kJournalBlockBytes + AlignUp(length, kJournalBlockBytes), at});
  const uint64_t repair = journal_.header().layout.repair_bytes;
  if (repair == 0) return;
  const uint64_t trailer = kJournalBlockBytes + move_.chunk_bytes;
  spans.push_back({slot + trailer, repair, at + trailer});
}

std::optional<Digest128> Engine::RecordDigest(uint8_t* slot, uint64_t chunk, uint64_t length) {
  const uint64_t repair = journal_.header().layout.repair_bytes;
  if (repair != 0 &&
      !ValidRecordDigest({slot, kJournalBlockBytes}, {slot + kJournalBlockBytes, length}, chunk,
                         KnownDigest(chunk), journal_.header().uuid, hasher_, version_)) {
    std::optional<Digest128> repaired =
        RepairedRecordDigest({slot, kJournalBlockBytes},
                             {slot + kJournalBlockBytes, AlignUp(length, kJournalBlockBytes)},
                             length, {slot + kJournalBlockBytes + move_.chunk_bytes, repair}, chunk,
                             KnownDigest(chunk), journal_.header().uuid, hasher_, version_);
    if (repaired) ++repaired_copies_;
    return repaired;
  }
  return RepairedRecordDigest({slot, kJournalBlockBytes},
                              {slot + kJournalBlockBytes, AlignUp(length, kJournalBlockBytes)},
                              length, {slot + kJournalBlockBytes + move_.chunk_bytes, repair},
                              chunk, KnownDigest(chunk), journal_.header().uuid, hasher_, version_);
}

Result<bool> Engine::RunSegment(const Segment& segment, bool rollback, uint64_t begin, uint64_t end,
                                bool look_for_copies) {
  const uint32_t cpb = move_.chunks_per_batch;
  const uint64_t slot = journal_.header().layout.slot_bytes;
  const uint64_t first_batch = begin / cpb;
  const uint64_t items = (end + cpb - 1) / cpb - first_batch;
  const JournalUuid& uuid = journal_.header().uuid;
  const char* label = rollback ? "moving back" : "moving";
  const uint64_t segment_bytes = StepBytes(segment, 0, segment.chunk_count);
  // Version 2 forward passes learn the digests as they read, and make them durable with the
  // saved copies; version 1 and rollbacks know every digest they need.
  const bool learns_digests = !rollback && version_ != kJournalVersionV1;
  known_at_start_ = journal_.KnownDigestSteps();
  // The pipeline's stages are the profile's, in the same order.
  constexpr size_t kReadStage = IndexOf(MoveStage::kRead);
  constexpr size_t kJournalStage = IndexOf(MoveStage::kJournal);
  constexpr size_t kWriteStage = IndexOf(MoveStage::kWrite);
  constexpr size_t kCommitStage = IndexOf(MoveStage::kCommit);
  constexpr size_t kVerifyStage = IndexOf(MoveStage::kReadBack);
  // Flushes cost milliseconds while a batch of data costs about as much to move, so the journal
  // and commit stages each cover every batch that is ready when they start (one flush for all),
  // and mark the batches they covered as done. A batch counts as journaled (or committed) only
  // after the flush: coalescing never claims durability early.
  uint64_t journaled_through = 0;  // items [0, journaled_through) have durable saved copies
  uint64_t committed_through = 0;  // items [0, committed_through) are committed
  // The digest chain of the known forward steps, extended by each commit (learns_digests).
  uint64_t chain = 0;
  uint64_t chained = 0;
  if (learns_digests) {
    chain = journal_.state()->digest_table_checksum;
    chained = journal_.state()->digests_known;
  }

  // Each stage's own entry, written by its thread only; added to stats_ once the pass ends.
  std::array<StageProfile, kMoveStageCount> profile{};
  auto flush_timed = [](BlockIo& io, StageProfile& p) -> Status {
    const auto start = Clock::now();
    Status f = io.Flush();
    p.flush_seconds += SecondsSince(start);
    ++p.flushes;
    return f;
  };

  // The buffers the pass fills in full, in memory before the first read (docs/mover.md §10): a
  // pass of one batch, which may use a slot of it, is left to fault in what it uses.
  const bool populate = items > 1;
  std::vector<AlignedBuffer> buffers;
  for (uint64_t i = 0; i < kMoveDepth; ++i) {
    buffers.push_back(populate && i < items ? AlignedBuffer::Populated(cpb * slot)
                                            : AlignedBuffer(cpb * slot));
  }
  std::vector<std::vector<bool>> from_copy(kMoveDepth, std::vector<bool>(cpb, false));
  auto steps_of = [&](uint64_t item) {
    const uint64_t batch = first_batch + item;
    return std::pair(std::max<uint64_t>(batch * cpb, begin),
                     std::min<uint64_t>((batch + 1) * cpb, end));
  };
  auto header_at = [&](uint64_t item, uint64_t step) {
    return buffers[item % kMoveDepth].data() + (step % cpb) * slot;
  };
  auto length_of = [&](uint64_t step) {
    return ChunkExtentOf(move_, ChunkAt(segment, step)).length_bytes;
  };

  // A batch's buffer is free once the batch is written; commits lag without holding memory.
  Pipeline pipeline(items, kMoveDepth, kWriteStage);
  std::vector<Pipeline::Stage> stages;
  // 1. Read: a saved copy left by an interrupted run when there is a valid one (its source may
  //    be overwritten), else the source. Each must match the chunk's digest when a durable
  //    state vouches for one; otherwise what is read is the chunk's digest from now on.
  stages.push_back([&](uint64_t item) -> Status {
    auto [first, last] = steps_of(item);
    std::vector<bool>& copied = from_copy[item % kMoveDepth];
    std::fill(copied.begin(), copied.end(), false);
    if (look_for_copies && item < regions_) {
      std::vector<IoSpan> spans;
      for (uint64_t step = first; step < last; ++step) {
        AddRecordSpans(header_at(item, step), step, length_of(step), spans);
      }
      if (Status read = journal_.io().Read(spans); !read) return read;
      for (const IoSpan& span : spans) profile[kReadStage].bytes += span.length;
      for (uint64_t step = first; step < last; ++step) {
        const uint64_t chunk = ChunkAt(segment, step);
        // A damaged block of the copy is repaired here (version 3), in the batch's buffer.
        std::optional<Digest128> digest =
            RecordDigest(header_at(item, step), chunk, length_of(step));
        copied[step % cpb] = digest.has_value();
        if (digest) digests_[chunk] = *digest;
      }
    }
    std::vector<IoSpan> spans;
    for (uint64_t step = first; step < last; ++step) {
      if (copied[step % cpb]) continue;
      spans.push_back({header_at(item, step) + kJournalBlockBytes, length_of(step),
                       DataOffset(segment, step, /*dest=*/false)});
    }
    if (Status read = device_.Read(spans); !read) {
      if (!rollback) source_unreadable_ = true;
      return LocateReadError(spans, read.error());
    }
    for (const IoSpan& span : spans) profile[kReadStage].bytes += span.length;
    for (uint64_t step = first; step < last; ++step) {
      if (copied[step % cpb]) continue;
      const uint64_t chunk = ChunkAt(segment, step);
      const Digest128 digest =
          hasher_.Hash128({header_at(item, step) + kJournalBlockBytes, length_of(step)});
      const std::optional<Digest128> known = KnownDigest(chunk);
      if (!known && look_for_copies && item < regions_) {
        // A saved copy whose data is damaged while its header is intact: the header still says
        // what the source held when the copy was taken, and the source, read instead, must
        // hold it (it may have been overwritten after the copy was made durable).
        // (Version 3: either copy of the header.)
        std::optional<RecordHeader> record = DecodeRecordHeader(
            {header_at(item, step), kJournalBlockBytes}, uuid, hasher_, version_);
        if (!record && journal_.header().layout.repair_bytes != 0) {
          record = DecodeRecordHeader(
              {header_at(item, step) + kJournalBlockBytes + move_.chunk_bytes, kJournalBlockBytes},
              uuid, hasher_, version_);
        }
        if (record && record->chunk == chunk && record->length_bytes == length_of(step)) {
          if (digest != record->digest) {
            return JournalDamaged(chunk, length_of(step), DataOffset(segment, step, false));
          }
        }
      }
      if (!known) {
        digests_[chunk] = digest;
      } else if (digest != *known) {
        // The saved copy this step needed is there but unreadable: the journal was damaged
        // after it was written, not the disk (which a torn copy, never flushed, cannot explain:
        // no write that overwrites the source was issued before its flush).
        if (look_for_copies && item < regions_ && NeedsSavedCopy(move_, segment, step) &&
            SlotWasWritten(header_at(item, step), chunk)) {
          return JournalDamaged(chunk, length_of(step), DataOffset(segment, step, false));
        }
        return MakeError(fmt::format(
            "the {} bytes at byte {} of '{}' are not what was read before (chunk {}): the disk "
            "changed under the move; stopped before writing them",
            length_of(step), DataOffset(segment, step, false), device_.name(), chunk));
      }
    }
    return {};
  });
  // 2. Journal: saved copies of the chunks whose source a write can reach before their batch is
  //    committed, and (version 2) the digests of the batches, durable before any of those
  //    writes. Ring space is reused only once the batch that used it last is committed.
  stages.push_back([&](uint64_t item) -> Status {
    if (item < journaled_through) return {};
    if (item >= regions_ && !pipeline.WaitFinished(kCommitStage, item - regions_)) {
      return MakeError("the move stopped while waiting for a commit");
    }
    // Take the batches already read whose ring space is already free, without waiting.
    uint64_t last = item;
    const uint64_t read = pipeline.Finished(kReadStage);
    const uint64_t committed = pipeline.Finished(kCommitStage);
    while (last + 1 < read && (last + 1 < regions_ || committed > last + 1 - regions_) &&
           last + 1 - item < kMoveDepth - 1) {
      ++last;
    }
    std::vector<IoSpan> spans;
    uint64_t bytes = 0;
    uint64_t low_chunk = UINT64_MAX;
    uint64_t high_chunk = 0;
    for (uint64_t covered = item; covered <= last; ++covered) {
      auto [first, end_step] = steps_of(covered);
      for (uint64_t step = first; step < end_step; ++step) {
        const uint64_t chunk = ChunkAt(segment, step);
        if (learns_digests) {
          std::vector<uint8_t> entry = EncodeDigestTable({&digests_[chunk], 1});
          std::memcpy(digest_image_->data() + chunk * 16, entry.data(), 16);
          low_chunk = std::min(low_chunk, chunk);
          high_chunk = std::max(high_chunk, chunk);
        }
        if (!NeedsSavedCopy(move_, segment, step)) continue;
        uint8_t* h = header_at(covered, step);
        EncodeRecordHeader({chunk, length_of(step), digests_[chunk], rollback}, uuid, hasher_,
                           {h, kJournalBlockBytes}, version_);
        if (const uint64_t repair = journal_.header().layout.repair_bytes; repair != 0) {
          EncodeRecordRepair({h, kJournalBlockBytes},
                             {h + kJournalBlockBytes, AlignUp(length_of(step), kJournalBlockBytes)},
                             {h + kJournalBlockBytes + move_.chunk_bytes, repair}, hasher_);
        }
        AddRecordSpans(h, step, length_of(step), spans);
        bytes += length_of(step);
      }
    }
    if (learns_digests && low_chunk <= high_chunk) {
      // Whole 4 KiB blocks of the table: the entries around the batch's are the ones already
      // durable (or not yet vouched for), so a torn block write loses nothing.
      const uint64_t from = AlignDown(low_chunk * 16, kJournalBlockBytes);
      const uint64_t to = AlignUp((high_chunk + 1) * 16, kJournalBlockBytes);
      const JournalLayout& layout = journal_.header().layout;
      spans.push_back({digest_image_->data() + from, to - from, layout.digest_table_offset + from});
      if (layout.mirror_bytes != 0) {
        spans.push_back({digest_image_->data() + from, to - from,
                         layout.digest_table_offset + layout.mirror_bytes + from});
      }
    }
    if (!spans.empty()) {
      if (Status w = journal_.io().Write(spans); !w) return w;
      for (const IoSpan& span : spans) profile[kJournalStage].bytes += span.length;
      if (Status f = flush_timed(journal_.io(), profile[kJournalStage]); !f) return f;
    }
    journaled_through = last + 1;
    std::lock_guard lock(stats_mutex_);
    stats_.saved_copy_bytes += bytes;
    return {};
  });
  // 3. Write the batch to its destination.
  stages.push_back([&](uint64_t item) -> Status {
    auto [first, last] = steps_of(item);
    std::vector<IoSpan> spans;
    for (uint64_t step = first; step < last; ++step) {
      spans.push_back({header_at(item, step) + kJournalBlockBytes, length_of(step),
                       DataOffset(segment, step, /*dest=*/true)});
      profile[kWriteStage].bytes += length_of(step);
    }
    return device_.Write(spans);
  });
  // 4. Commit: every batch written so far is flushed to its destination, then the state says
  //    so (and, version 2, vouches for the digests journaled so far).
  stages.push_back([&](uint64_t item) -> Status {
    if (item < committed_through) return {};
    const uint64_t written = pipeline.Finished(kWriteStage);  // > item: stages run in order
    if (Status f = flush_timed(device_, profile[kCommitStage]); !f) return f;
    const uint64_t first = steps_of(item).first;
    const uint64_t last = steps_of(written - 1).second;
    JournalState state = *journal_.state();
    (rollback ? state.rollback_done : state.forward_done) = last;
    if (learns_digests) {
      // Journaled items are at least the written ones; their digests are durable.
      const uint64_t known = steps_of(pipeline.Finished(kJournalStage) - 1).second;
      for (; chained < known; ++chained) {
        chain = ChainDigest(chain, digests_[ChunkAt(forward_, chained)], hasher_);
      }
      state.digests_known = std::max(state.digests_known, chained);
      state.digest_table_checksum = chain;
    }
    const auto state_start = Clock::now();
    if (Status w = journal_.WriteState(state); !w) return w;
    // A state block and the journal's flush: counted as the commit's second flush.
    profile[kCommitStage].flush_seconds += SecondsSince(state_start);
    ++profile[kCommitStage].flushes;
    committed_through = written;
    {
      std::lock_guard lock(stats_mutex_);
      stats_.moved_bytes += StepBytes(segment, first, last);
    }
    Report(label, StepBytes(segment, 0, last), segment_bytes);
    return {};
  });
  // 5. Verify: read each committed batch back from its destination and compare it with the
  //    digest read from the source. Destinations are disjoint and written once, so nothing can
  //    change a verified batch afterwards: this is the verification pass, overlapped with the
  //    move.
  AlignedBuffer verify_buffer = populate ? AlignedBuffer::Populated(cpb * move_.chunk_bytes)
                                         : AlignedBuffer(cpb * move_.chunk_bytes);
  stages.push_back([&](uint64_t item) -> Status {
    auto [first, last] = steps_of(item);
    std::vector<IoSpan> spans;
    for (uint64_t step = first; step < last; ++step) {
      spans.push_back({verify_buffer.data() + (step - first) * move_.chunk_bytes, length_of(step),
                       DataOffset(segment, step, /*dest=*/true)});
    }
    if (Status read = device_.Read(spans); !read) return LocateReadError(spans, read.error());
    for (const IoSpan& span : spans) profile[kVerifyStage].bytes += span.length;
    for (uint64_t step = first; step < last; ++step) {
      const uint64_t chunk = ChunkAt(segment, step);
      if (hasher_.Hash128({spans[step - first].data, length_of(step)}) != digests_[chunk]) {
        return MakeError(fmt::format(
            "verification failed: the {} bytes written at byte {} of '{}' read back different "
            "from what was read at the source (chunk {}); the journal is kept",
            length_of(step), DataOffset(segment, step, true), device_.name(), chunk));
      }
    }
    return {};
  });
  // Every stage timed as a whole, in its own thread.
  for (size_t k = 0; k < stages.size(); ++k) {
    stages[k] = [&profile, k, run = std::move(stages[k])](uint64_t item) -> Status {
      const auto start = Clock::now();
      Status status = run(item);
      profile[k].seconds += SecondsSince(start);
      ++profile[k].batches;
      return status;
    };
  }
  Result<uint64_t> ran = pipeline.Run(stages, hooks_.stop_requested);
  {
    std::lock_guard lock(stats_mutex_);
    for (size_t k = 0; k < kMoveStageCount; ++k) {
      StageProfile& total = stats_.stages[k];
      total.seconds += profile[k].seconds;
      total.bytes += profile[k].bytes;
      total.batches += profile[k].batches;
      total.flushes += profile[k].flushes;
      total.flush_seconds += profile[k].flush_seconds;
    }
  }
  if (!ran) return ran.error();
  return *ran == items;
}

Result<bool> Engine::BeginRollback() {
  Phase("rollback");
  JournalState state = *journal_.state();
  uint64_t split = chunk_count_;
  if (state.phase == JournalPhase::kMoving) {
    // Batches after the last commit may be half written, their sources overwritten and their
    // data only in the journal's saved copies: finish them before anything reuses the ring.
    const uint64_t window_end =
        std::min(state.forward_done + regions_ * move_.chunks_per_batch, chunk_count_);
    Result<std::vector<bool>> valid = ValidCopies(forward_, state.forward_done, window_end);
    if (!valid) return valid.error();
    const uint64_t settle = ForwardStepsToSettle(move_, state.forward_done, *valid);
    if (settle > state.forward_done) {
      Result<bool> ran = RunSegment(forward_, false, state.forward_done, settle, true);
      if (!ran || !*ran) return ran;
    }
    split = journal_.state()->forward_done;
  }
  state = *journal_.state();
  state.phase = JournalPhase::kRollbackTable;
  state.forward_done = split;
  state.rollback_split = split;
  state.rollback_done = 0;
  if (Status w = journal_.WriteState(state); !w) return w.error();
  return true;
}

Status Engine::VerifyRollback() {
  const uint64_t known = journal_.KnownDigestSteps();
  if (known >= chunk_count_) return VerifyAt(move_.source_bytes, 0, chunk_count_, "verifying");
  const uint64_t split = journal_.state()->rollback_split;
  // The forward steps [0, split) are copied chunks [n - split, n) moving up, [0, split) down.
  const uint64_t first = Descending(forward_) ? chunk_count_ - split : 0;
  return VerifyAt(move_.source_bytes, first, first + split, "verifying");
}

bool Engine::DataComplete() const {
  const std::optional<JournalState>& state = journal_.state();
  return state && state->rollback_split >= chunk_count_;
}

Status Engine::WriteTable(bool new_bytes) {
  // All ranges are checked before any is written: someone else's bytes anywhere stop the write.
  std::vector<AlignedBuffer> on_disk;
  std::vector<TableBytesState> states;
  for (const TableUpdate& update : table_) {
    const uint64_t length = update.old_bytes.size();
    if (update.restore_only) {  // not a table: RestorePreimage puts it back after the data
      states.push_back(TableBytesState::kOld);
      on_disk.emplace_back();
      continue;
    }
    AlignedBuffer buffer(AlignUp(length, AlignedBuffer::kAlignment));
    IoSpan span{buffer.data(), length, update.offset_bytes};
    if (Status read = device_.Read({&span, 1}); !read) return read;
    // A record inside the moved data is written only once every chunk is moved: a rollback
    // that splits the move earlier finds other data at its place, and has nothing of it to undo.
    if (update.in_data && !new_bytes && !DataComplete()) {
      states.push_back(TableBytesState::kOld);
      on_disk.push_back(std::move(buffer));
      continue;
    }
    const TableBytesState now =
        ClassifyTableBytes({buffer.data(), length}, update.old_bytes, update.new_bytes, sector_);
    if (now == TableBytesState::kForeign) {
      return MakeError(fmt::format(
          "the partition-table bytes at byte {} of '{}' are neither the old nor the new table: "
          "someone changed them during the move; not overwriting them",
          update.offset_bytes, device_.name()));
    }
    states.push_back(now);
    on_disk.push_back(std::move(buffer));
  }
  // The caller's order (apply's TableTransition order), one flush after each range, so that a
  // reader that looks before resume finishes sees a valid table at every instant; the old bytes
  // go back in the reverse order.
  for (size_t n = 0; n < table_.size(); ++n) {
    const size_t i = new_bytes ? n : table_.size() - 1 - n;
    const TableUpdate& update = table_[i];
    if (update.restore_only) continue;
    if (states[i] == (new_bytes ? TableBytesState::kNew : TableBytesState::kOld)) continue;
    const std::vector<uint8_t>& bytes = new_bytes ? update.new_bytes : update.old_bytes;
    std::memcpy(on_disk[i].data(), bytes.data(), bytes.size());
    IoSpan span{on_disk[i].data(), bytes.size(), update.offset_bytes};
    if (Status w = device_.Write({&span, 1}); !w) return w;
    if (Status f = device_.Flush(); !f) return f;
  }
  return {};
}

Status Engine::RestorePreimage() {
  bool wrote = false;
  for (const TableUpdate& update : table_) {
    if (!update.restore_only) continue;
    AlignedBuffer buffer(AlignUp(update.old_bytes.size(), AlignedBuffer::kAlignment));
    std::memcpy(buffer.data(), update.old_bytes.data(), update.old_bytes.size());
    IoSpan span{buffer.data(), update.old_bytes.size(), update.offset_bytes};
    if (Status w = device_.Write({&span, 1}); !w) return w;
    wrote = true;
  }
  if (wrote) return device_.Flush();
  return {};
}

Result<std::optional<std::string>> Engine::Prove() {
  Result<std::vector<TableUpdate>> table = journal_.ReadTableUpdates();
  if (!table) return table.error();
  table_ = std::move(*table);
  if (journal_.state()) {
    if (Status loaded = LoadDigests(); !loaded) return loaded.error();
  }
  return CheckDiskState();
}

void Engine::NoteRepairs(MoveOutcome& outcome) const {
  if (repaired_copies_ == 0) return;
  outcome.notes.push_back(
      fmt::format("the journal had {} damaged saved cop{}, each repaired from its repair trailer "
                  "(docs/mover.md §3)",
                  repaired_copies_.load(), repaired_copies_ == 1 ? "y" : "ies"));
}

Result<MoveOutcome> Engine::Drive(ResumeMode mode) {
  Result<std::optional<std::string>> proven = Prove();
  if (!proven) return proven.error();
  if (*proven) return MakeError(**proven);
  MoveOutcome outcome;
  auto stopped = [&](const std::string& message) {
    outcome.status = MoveStatus::kStopped;
    outcome.message = message;
    outcome.source_unreadable = source_unreadable_;
    outcome.journal_damaged = journal_damaged_;
    outcome.stats = stats_;
    NoteRepairs(outcome);
    return outcome;
  };
  auto failed = [&](const Error& error) { return stopped(error.message); };
  auto advance = [&](JournalPhase phase) {
    JournalState state = *journal_.state();
    state.phase = phase;
    return journal_.WriteState(state);
  };
  const std::string interrupted = "interrupted; the journal holds a consistent state";
  // Runs a pass of the move; nullopt when it went through, else the outcome to return.
  auto run_pass = [&](const char* phase, const Segment& segment, bool rollback, uint64_t begin,
                      uint64_t end, bool look_for_copies) -> std::optional<MoveOutcome> {
    Phase(phase);
    const auto start = Clock::now();
    Result<bool> ran = RunSegment(segment, rollback, begin, end, look_for_copies);
    stats_.move_seconds += SecondsSince(start);
    if (!ran) return failed(ran.error());
    if (!*ran) return stopped(interrupted);
    return std::nullopt;
  };

  for (int round = 0; round < kMaxRecoverySteps; ++round) {
    Result<RecoveryStep> step = NextRecoveryStep(journal_.state(), chunk_count_, mode);
    if (!step) return step.error();
    if (!step->note.empty() &&
        std::find(outcome.notes.begin(), outcome.notes.end(), step->note) == outcome.notes.end()) {
      outcome.notes.push_back(step->note);
    }
    switch (step->action) {
      case RecoveryAction::kScanAndStart:
        if (Status s = version_ == kJournalVersionV1 ? ScanAndStart() : Start(); !s) {
          return failed(s.error());
        }
        break;
      case RecoveryAction::kDiscard:
        outcome.status = MoveStatus::kNothingWritten;
        outcome.stats = stats_;
        NoteRepairs(outcome);
        return outcome;
      case RecoveryAction::kContinueForward: {
        const uint64_t from = journal_.state()->forward_done;
        if (auto end =
                run_pass("move", ForwardSegment(move_), false, from, chunk_count_, !fresh_start_)) {
          return *end;
        }
        // Every chunk was read back after its commit in this run: the pass is done.
        forward_verified_inline_ = from == 0;
        break;
      }
      case RecoveryAction::kVerifyForward:
        Phase("verify");
        if (!forward_verified_inline_) {
          if (Status v = VerifyAt(move_.dest_bytes, 0, chunk_count_, "verifying"); !v) {
            return failed(v.error());
          }
        }
        stats_.range_digest = RangeDigest(digests_, hasher_);  // every digest is known now
        if (Status w = advance(JournalPhase::kDataMoved); !w) return failed(w.error());
        break;
      case RecoveryAction::kWriteNewTable:
        Phase("table");
        if (!table_.empty()) {
          if (journal_.state()->phase != JournalPhase::kTableWriting) {
            if (Status w = advance(JournalPhase::kTableWriting); !w) return failed(w.error());
          }
          if (Status t = WriteTable(/*new_bytes=*/true); !t) return failed(t.error());
        }
        if (Status w = advance(JournalPhase::kDone); !w) return failed(w.error());
        break;
      case RecoveryAction::kBeginRollback: {
        Result<bool> begun = BeginRollback();
        if (!begun) return failed(begun.error());
        if (!*begun) return stopped(interrupted);
        break;
      }
      case RecoveryAction::kRestoreOldTable: {
        Phase("rollback-table");
        if (Status t = WriteTable(/*new_bytes=*/false); !t) return failed(t.error());
        JournalState state = *journal_.state();
        state.phase = JournalPhase::kRollingBack;
        if (Status w = journal_.WriteState(state); !w) return failed(w.error());
        break;
      }
      case RecoveryAction::kContinueRollback: {
        const JournalState state = *journal_.state();
        if (auto end = run_pass("rollback", RollbackSegment(move_, state.rollback_split), true,
                                state.rollback_done, state.rollback_split, true)) {
          return *end;
        }
        break;
      }
      case RecoveryAction::kVerifyRollback:
        Phase("rollback-verify");
        // Every chunk moved back, and (when their digests are known, as after a version 1
        // pre-scan) the chunks never moved as well.
        if (Status v = VerifyRollback(); !v) return failed(v.error());
        // The destination outside the source as it was before the move: the rollback pass has
        // read the data there. Idempotent: a crash before rolled-back writes them again.
        if (Status r = RestorePreimage(); !r) return failed(r.error());
        if (Status w = advance(JournalPhase::kRolledBack); !w) return failed(w.error());
        break;
      case RecoveryAction::kFinishCompleted:
      case RecoveryAction::kFinishRolledBack:
        outcome.status = step->action == RecoveryAction::kFinishCompleted ? MoveStatus::kCompleted
                                                                          : MoveStatus::kRolledBack;
        outcome.stats = stats_;
        NoteRepairs(outcome);
        return outcome;
    }
  }
  return MakeError("the journal does not advance (internal error); it is kept as it is");
}

}  // namespace

const char* ToString(MoveStage stage) {
  switch (stage) {
    case MoveStage::kRead:
      return "read";
    case MoveStage::kJournal:
      return "journal";
    case MoveStage::kWrite:
      return "write";
    case MoveStage::kCommit:
      return "commit";
    case MoveStage::kReadBack:
      return "read-back";
  }
  return "?";
}

const char* ToString(MoveStatus status) {
  switch (status) {
    case MoveStatus::kCompleted:
      return "completed";
    case MoveStatus::kRolledBack:
      return "rolled-back";
    case MoveStatus::kNothingWritten:
      return "nothing-written";
    case MoveStatus::kStopped:
      return "stopped";
  }
  return "unknown";
}

Result<MoveOutcome> DriveJournal(BlockIo& device, MoveJournal& journal, ResumeMode mode,
                                 const MoverHooks& hooks) {
  Engine engine(device, journal, hooks);
  return engine.Drive(mode);
}

Result<std::optional<std::string>> ProveJournalState(BlockIo& device, MoveJournal& journal) {
  Engine engine(device, journal, {});
  return engine.Prove();
}

Result<std::vector<TableUpdate>> DestinationPreimage(BlockIo& device, const MoveGeometry& move) {
  Result<std::vector<ByteExtent>> kept = KeptDestinationOutsideSource(move);
  if (!kept) return kept.error();
  const std::vector<ByteExtent>& ranges = *kept;
  // Read together: a move beyond its source has a range for each run of used chunks.
  std::vector<ByteRange> where;
  for (const ByteExtent& r : ranges) where.push_back({r.offset_bytes, r.length_bytes});
  Result<std::vector<AlignedBuffer>> buffers = ReadEach(device, where);
  if (!buffers) return buffers.error();
  std::vector<TableUpdate> out;
  for (size_t i = 0; i < ranges.size(); ++i) {
    TableUpdate update;
    update.offset_bytes = ranges[i].offset_bytes;
    const std::span<const uint8_t> bytes((*buffers)[i].data(), ranges[i].length_bytes);
    update.old_bytes = PopulatedCopy(bytes);
    update.new_bytes = PopulatedCopy(bytes);
    update.restore_only = true;
    out.push_back(std::move(update));
  }
  return out;
}

}  // namespace partalign
