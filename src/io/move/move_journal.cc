// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/move/move_journal.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "partalign/topology/alignment.h"

namespace partalign {
namespace {

Result<AlignedBuffer> ReadRegion(BlockIo& io, uint64_t offset, uint64_t length) {
  AlignedBuffer buffer(AlignUp(length, kJournalBlockBytes));
  if (buffer.size() == 0) return buffer;
  IoSpan span{buffer.data(), buffer.size(), offset};
  if (Status read = io.Read({&span, 1}); !read) return read.error();
  return buffer;
}

// Regions of the journal written together, every write in flight at once (a journal of a move
// of used chunks is initialized with tens of them: one at a time, each waited for, they cost a
// round trip to the disk each). Each region is padded with zeros to whole journal blocks. Writes in
// flight together may reach the disk in any order, as any writes between two flushes may.
class RegionWrites {
  static constexpr size_t kPopulateFromBytes = 64 * 1024;

 public:
  void Add(uint64_t offset, std::span<const uint8_t> bytes) {
    if (bytes.empty()) return;
    AddBuffer(bytes);
    places_.push_back({buffers_.size() - 1, offset});
  }
  // Version 3 keeps a mirror copy of the table data, the copy map, the digest table and the
  // state blocks `layout.mirror_bytes` after each (docs/mover.md §3): written with it, read
  // when it fails its check.
  void AddMirrored(const JournalLayout& layout, uint64_t offset, std::span<const uint8_t> bytes) {
    if (bytes.empty()) return;
    AddBuffer(bytes);
    PlaceLastMirrored(layout, offset);
  }
  // The same bytes at two places and their mirrors, from one buffer: a restore-only table
  // update's old and new bytes (docs/mover.md §4): up to the shift, or up to 64 MiB for a move
  // beyond its source.
  void AddMirroredTwice(const JournalLayout& layout, uint64_t offset, uint64_t other_offset,
                        std::span<const uint8_t> bytes) {
    if (bytes.empty()) return;
    AddBuffer(bytes);
    PlaceLastMirrored(layout, offset);
    PlaceLastMirrored(layout, other_offset);
  }
  Status WriteTo(BlockIo& io) {
    if (places_.empty()) return {};
    std::vector<IoSpan> spans;
    spans.reserve(places_.size());
    for (const Place& p : places_) {
      AlignedBuffer& b = buffers_[p.buffer];
      spans.push_back({b.data(), b.size(), p.offset});
    }
    return io.Write(spans);
  }

 private:
  struct Place {
    size_t buffer = 0;
    uint64_t offset = 0;
  };
  // The buffer added last, at `offset` and (version 3) at its mirror.
  void PlaceLastMirrored(const JournalLayout& layout, uint64_t offset) {
    places_.push_back({buffers_.size() - 1, offset});
    if (layout.mirror_bytes != 0) {
      places_.push_back({buffers_.size() - 1, offset + layout.mirror_bytes});
    }
  }
  void AddBuffer(std::span<const uint8_t> bytes) {
    // The table data of a move may be megabytes (a preimage): populated at once, not a page
    // fault per 4 KiB as the copy below writes them. A state block is not worth the call.
    const size_t size = static_cast<size_t>(AlignUp(bytes.size(), kJournalBlockBytes));
    AlignedBuffer buffer =
        size >= kPopulateFromBytes ? AlignedBuffer::Populated(size) : AlignedBuffer(size);
    std::memcpy(buffer.data(), bytes.data(), bytes.size());
    std::memset(buffer.data() + bytes.size(), 0, buffer.size() - bytes.size());
    buffers_.push_back(std::move(buffer));
  }
  std::vector<AlignedBuffer> buffers_;
  std::vector<Place> places_;
};

Status WriteRegion(BlockIo& io, uint64_t offset, std::span<const uint8_t> bytes) {
  RegionWrites writes;
  writes.Add(offset, bytes);
  return writes.WriteTo(io);
}

Status WriteMirrored(BlockIo& io, const JournalLayout& layout, uint64_t offset,
                     std::span<const uint8_t> bytes) {
  RegionWrites writes;
  writes.AddMirrored(layout, offset, bytes);
  return writes.WriteTo(io);
}

// `first`, the first copy of the region at `offset`, when `check` passes it; else (version 3)
// the mirror's, read now; the first copy's error when neither passes.
template <typename T, typename Check>
Result<T> CheckMirrored(BlockIo& io, const JournalLayout& layout, uint64_t offset, uint64_t length,
                        std::span<const uint8_t> first, Check check) {
  Result<T> result = check(first);
  if (result || layout.mirror_bytes == 0) return result;
  Result<AlignedBuffer> mirror = ReadRegion(io, offset + layout.mirror_bytes, length);
  if (!mirror) return result;
  Result<T> mirrored = check(mirror->span());
  return mirrored ? mirrored : result;
}

// The region at `offset` for which `check` succeeds: the first copy, else (version 3) the
// mirror's; the first copy's error when neither passes.
template <typename T, typename Check>
Result<T> ReadMirrored(BlockIo& io, const JournalLayout& layout, uint64_t offset, uint64_t length,
                       Check check) {
  Result<AlignedBuffer> first = ReadRegion(io, offset, length);
  if (!first) return first.error();
  return CheckMirrored<T>(io, layout, offset, length, first->span(), check);
}

}  // namespace

MoveJournal::MoveJournal(MoveJournal&& other) noexcept
    : io_(other.io_),
      header_(std::move(other.header_)),
      hasher_(other.hasher_),
      state_(std::move(other.state_)) {}

Result<MoveJournal> MoveJournal::Initialize(BlockIo& io, const JournalHeader& header,
                                            std::span<const TableUpdate> table,
                                            const Hasher& hasher) {
  if (io.size_bytes() < header.layout.file_bytes) {
    return MakeError(fmt::format("the journal '{}' has {} bytes, the move needs {}", io.name(),
                                 io.size_bytes(), header.layout.file_bytes));
  }
  Result<std::vector<uint8_t>> encoded = EncodeJournalHeader(header, hasher);
  if (!encoded) return encoded.error();
  // The header goes last, after a flush: a journal with a valid header has every byte the
  // header describes (table data, empty state blocks) on durable storage.
  const JournalLayout& l = header.layout;
  RegionWrites body;
  for (size_t i = 0; i < table.size(); ++i) {
    const uint64_t old_offset = TableDataOffset(l, header.table, i, false);
    const uint64_t new_offset = TableDataOffset(l, header.table, i, true);
    if (table[i].new_bytes == table[i].old_bytes) {
      body.AddMirroredTwice(l, old_offset, new_offset, table[i].old_bytes);
    } else {
      body.AddMirrored(l, old_offset, table[i].old_bytes);
      body.AddMirrored(l, new_offset, table[i].new_bytes);
    }
  }
  if (l.copy_map_bytes > 0) body.AddMirrored(l, l.copy_map_offset, EncodeCopyMap(header.move.copy));
  // A journal file is new and zero, but a reused or simulated one may not be: no stale state.
  const std::vector<uint8_t> zero(2 * kJournalBlockBytes, 0);
  body.AddMirrored(l, l.state_offset, zero);
  if (Status w = body.WriteTo(io); !w) return w.error();
  if (Status f = io.Flush(); !f) return f.error();
  RegionWrites head;
  head.Add(0, *encoded);
  if (l.header_copy_offset != 0) head.Add(l.header_copy_offset, *encoded);
  if (Status w = head.WriteTo(io); !w) return w.error();
  if (Status f = io.Flush(); !f) return f.error();
  return MoveJournal(io, header, hasher);
}

Result<MoveJournal> MoveJournal::Load(BlockIo& io, const Hasher& hasher) {
  if (io.size_bytes() < kJournalHeaderBytes) {
    return MakeError(fmt::format("'{}' is too short to be a move journal ({} bytes)", io.name(),
                                 io.size_bytes()));
  }
  Result<AlignedBuffer> bytes = ReadRegion(io, 0, kJournalHeaderBytes);
  if (!bytes) return bytes.error();
  Result<JournalHeader> header = DecodeJournalHeader(bytes->span(), hasher);
  if (!header && io.size_bytes() >= 2 * kJournalHeaderBytes) {
    // Version 3: the second copy, right after the first (any other version's file holds its
    // table data there, which is no header).
    Result<AlignedBuffer> copy = ReadRegion(io, kJournalHeaderBytes, kJournalHeaderBytes);
    if (!copy) return copy.error();
    Result<JournalHeader> second = DecodeJournalHeader(copy->span(), hasher);
    if (second && second->layout.header_copy_offset == kJournalHeaderBytes) header = second;
  }
  if (!header) return MakeError(fmt::format("'{}': {}", io.name(), header.error().message));
  if (io.size_bytes() < header->layout.file_bytes) {
    return MakeError(fmt::format("the journal '{}' is truncated ({} of {} bytes)", io.name(),
                                 io.size_bytes(), header->layout.file_bytes));
  }
  const JournalLayout layout = header->layout;
  Result<JournalHeader> attached =
      ReadMirrored<JournalHeader>(io, layout, layout.copy_map_offset, layout.copy_map_bytes,
                                  [&](std::span<const uint8_t> region) -> Result<JournalHeader> {
                                    JournalHeader with_map = *header;
                                    if (Status a = AttachCopyMap(with_map, region, hasher); !a)
                                      return a.error();
                                    return with_map;
                                  });
  if (!attached) return MakeError(fmt::format("'{}': {}", io.name(), attached.error().message));
  MoveJournal journal(io, std::move(*attached), hasher);
  // The valid state with the highest sequence number among both copies of both blocks.
  for (uint64_t at : {layout.state_offset, layout.state_offset + layout.mirror_bytes}) {
    if (at != layout.state_offset && layout.mirror_bytes == 0) break;
    Result<AlignedBuffer> states = ReadRegion(io, at, 2 * kJournalBlockBytes);
    if (!states) return states.error();
    std::span<const uint8_t> all(states->data(), states->size());
    std::optional<JournalState> state =
        LatestState(all.first(kJournalBlockBytes), all.subspan(kJournalBlockBytes),
                    journal.header_.uuid, hasher, journal.header_.version);
    if (state && (!journal.state_ || state->sequence > journal.state_->sequence)) {
      journal.state_ = state;
    }
  }
  if (journal.state_ && journal.header_.version != kJournalVersionV1) {
    const JournalState& st = *journal.state_;
    if (st.digests_known > ChunkCount(journal.header_.move) || st.forward_done > st.digests_known) {
      return MakeError(fmt::format(
          "'{}': the journal state is inconsistent ({} of {} chunks moved, {} digests known)",
          io.name(), st.forward_done, ChunkCount(journal.header_.move), st.digests_known));
    }
  }
  return journal;
}

Status MoveJournal::WriteState(JournalState state) {
  std::lock_guard lock(state_mutex_);
  state.sequence = state_ ? state_->sequence + 1 : 1;
  const std::vector<uint8_t> block =
      EncodeStateBlock(state, header_.uuid, *hasher_, header_.version);
  const uint64_t at = header_.layout.state_offset + StateBlockOffset(state.sequence);
  if (Status w = WriteMirrored(*io_, header_.layout, at, block); !w) return w;
  if (Status f = io_->Flush(); !f) return f;
  state_ = state;
  return {};
}

Status MoveJournal::WriteDigests(std::span<const Digest128> digests) {
  if (Status w = WriteRegion(*io_, header_.layout.digest_table_offset, EncodeDigestTable(digests));
      !w) {
    return w;
  }
  return io_->Flush();
}

Result<std::vector<Digest128>> MoveJournal::ReadDigests() {
  if (!state_) return MakeError("the journal holds no digests yet (the move never started)");
  const uint64_t count = ChunkCount(header_.move);
  const JournalState state = *state_;
  return ReadMirrored<std::vector<Digest128>>(
      *io_, header_.layout, header_.layout.digest_table_offset, header_.layout.digest_table_bytes,
      [&](std::span<const uint8_t> bytes) -> Result<std::vector<Digest128>> {
        if (header_.version == kJournalVersionV1) {
          return DecodeDigestTable(bytes, count, state.digest_table_checksum, *hasher_);
        }
        Result<std::vector<Digest128>> digests = ReadDigestEntries(bytes, count);
        if (!digests) return digests;
        const Segment forward = ForwardSegment(header_.move);
        uint64_t chain = 0;
        for (uint64_t step = 0; step < state.digests_known; ++step) {
          chain = ChainDigest(chain, (*digests)[ChunkAt(forward, step)], *hasher_);
        }
        if (chain != state.digest_table_checksum) {
          return MakeError("the journal's digest table is corrupt (checksum mismatch)");
        }
        return digests;
      });
}

uint64_t MoveJournal::KnownDigestSteps() const {
  if (!state_) return 0;
  if (header_.version == kJournalVersionV1) return ChunkCount(header_.move);
  return state_->digests_known;
}

Result<std::vector<TableUpdate>> MoveJournal::ReadTableUpdates() {
  // Every first copy read together (a move of used chunks keeps tens of regions: one at a
  // time, each waited for, they cost a round trip each); a mirror only where a first copy fails
  // its check. The destination's preimage (restore_only) has the same old and new bytes: its
  // old bytes are read and stand for both, where its two checksums say they are the same.
  const size_t count = header_.table.size();
  auto one_copy = [&](const TableUpdateInfo& info) {
    return info.restore_only && info.old_checksum == info.new_checksum;
  };
  std::vector<ByteRange> ranges;  // old (and new) bytes of each region, whole journal blocks
  std::vector<size_t> first_range;
  for (size_t i = 0; i < count; ++i) {
    const TableUpdateInfo& info = header_.table[i];
    first_range.push_back(ranges.size());
    for (bool is_new : {false, true}) {
      if (is_new && one_copy(info)) continue;
      ranges.push_back({TableDataOffset(header_.layout, header_.table, i, is_new),
                        AlignUp(info.length_bytes, kJournalBlockBytes)});
    }
  }
  Result<std::vector<AlignedBuffer>> first = ReadEach(*io_, ranges);
  if (!first) return first.error();
  std::vector<TableUpdate> updates;
  for (size_t i = 0; i < count; ++i) {
    const TableUpdateInfo& info = header_.table[i];
    TableUpdate update;
    update.offset_bytes = info.offset_bytes;
    update.in_data = info.in_data;
    update.restore_only = info.restore_only;
    for (bool is_new : {false, true}) {
      if (is_new && one_copy(info)) {
        update.new_bytes = update.old_bytes;
        continue;
      }
      auto check = [&](std::span<const uint8_t> region) -> Result<std::vector<uint8_t>> {
        std::span<const uint8_t> data = region.first(info.length_bytes);
        if (hasher_->Hash64(data) != (is_new ? info.new_checksum : info.old_checksum)) {
          return MakeError(
              fmt::format("the journal's copy of the {} table bytes at device byte {} is corrupt",
                          is_new ? "new" : "old", info.offset_bytes));
        }
        return std::vector<uint8_t>(data.begin(), data.end());
      };
      const size_t k = first_range[i] + (is_new ? 1 : 0);
      Result<std::vector<uint8_t>> bytes = CheckMirrored<std::vector<uint8_t>>(
          *io_, header_.layout, ranges[k].offset, info.length_bytes, (*first)[k].span(), check);
      if (!bytes) return bytes.error();
      (is_new ? update.new_bytes : update.old_bytes) = std::move(*bytes);
    }
    updates.push_back(std::move(update));
  }
  return updates;
}

uint64_t MoveJournal::SlotOffset(uint64_t index) const {
  return partalign::SlotOffset(header_.layout, header_.move, index);
}

}  // namespace partalign
