// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/simulated_move.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "io/move/move_engine.h"

namespace partalign::test {
namespace {

std::vector<uint8_t> RandomBytes(size_t n, std::mt19937_64& rng) {
  std::vector<uint8_t> bytes(n);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  return bytes;
}

/// Table updates are this long: a few sectors, like an MBR or a GPT header and entries.
constexpr uint64_t kTableBytes = 4 * kSimSector;

}  // namespace

SimulatedMove::SimulatedMove(uint64_t device_bytes, const MoveGeometry& move, bool with_table,
                             uint64_t seed, bool table_in_vacated_source, uint32_t version,
                             uint64_t patches)
    : rng_(seed) {
  original_ = RandomBytes(device_bytes, rng_);
  auto add = [&](uint64_t offset, uint64_t length) {
    TableUpdate update;
    update.offset_bytes = offset;
    update.old_bytes.assign(original_.begin() + static_cast<ptrdiff_t>(offset),
                            original_.begin() + static_cast<ptrdiff_t>(offset + length));
    update.new_bytes = RandomBytes(length, rng_);
    table_.push_back(update);
  };
  if (with_table) {
    for (uint64_t offset : {uint64_t{0}, device_bytes - kTableBytes}) add(offset, kTableBytes);
  }
  if (table_in_vacated_source) {
    // The sector of the source farthest from the destination: vacated by any shift.
    const bool up = move.dest_bytes > move.source_bytes;
    add(up ? move.source_bytes : move.source_bytes + move.length_bytes - kSimSector, kSimSector);
  }
  // The middle half of the device, cut into `patches` slots; one update of 1 to 16 sectors at
  // the start of each (so they never touch each other or the table at the ends).
  const uint64_t slot = patches == 0 ? 0 : device_bytes / 2 / patches / kSimSector * kSimSector;
  for (uint64_t i = 0; i < patches; ++i) {
    const uint64_t sectors = std::min<uint64_t>(1 + rng_() % 16, slot / kSimSector);
    add(device_bytes / 4 + i * slot, sectors * kSimSector);
  }
  if (version == kJournalVersion) {
    // What the destination outside the source holds, as StartMove records it (journals of
    // versions 1 and 2 were written without it).
    SimulatedDisk device = NewDevice();
    Result<std::vector<TableUpdate>> preimage = DestinationPreimage(device, move);
    if (preimage) table_.insert(table_.end(), preimage->begin(), preimage->end());
  }
  header_.version = version;
  header_.uuid = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  header_.created_by = "partalign tests";
  header_.device = {"simulated", false, device_bytes, kSimSector};
  header_.move = move;
  for (const TableUpdate& u : table_) {
    header_.table.push_back({u.offset_bytes, u.old_bytes.size(), hasher_.Hash64(u.old_bytes),
                             hasher_.Hash64(u.new_bytes), u.in_data, u.restore_only});
  }
  CompleteJournalHeader(header_, hasher_);
}

SimulatedDisk SimulatedMove::NewDevice(CrashClock* clock) const {
  return SimulatedDisk("device", original_, kSimSector, clock);
}

SimulatedDisk SimulatedMove::NewJournalDisk(CrashClock* clock) const {
  return SimulatedDisk("journal", std::vector<uint8_t>(header_.layout.file_bytes), kSimSector,
                       clock);
}

std::string SimulatedMove::Mismatch(MoveStatus status, const std::vector<uint8_t>& image) const {
  const MoveGeometry& m = header_.move;
  if (status == MoveStatus::kNothingWritten) {
    return image == original_ ? "" : "the device changed although nothing was to be written";
  }
  const bool moved = status == MoveStatus::kCompleted;
  const uint64_t data_at = moved ? m.dest_bytes : m.source_bytes;
  // 0: must be the original byte; 1: must be the moved data; 2: anything: the leftovers of a
  // rollback, where a copied chunk's destination is not written back - inside the source
  // range, bytes no copied chunk's source covers (unused by the partition: the copy set is the
  // used map's); anywhere for a journal that did not keep the destination outside the source
  // (versions 1, 2). Outside the source range, a current journal's rollback puts them back.
  std::vector<uint8_t> rule(image.size(), 0);
  const bool keeps_destination = header_.version == kJournalVersion;
  const uint64_t source_end = m.source_bytes + m.length_bytes;
  for (uint64_t c = 0; c < ChunkCount(m); ++c) {
    const ChunkExtent e = ChunkExtentOf(m, c);
    if (std::memcmp(image.data() + data_at + e.position_bytes,
                    original_.data() + m.source_bytes + e.position_bytes, e.length_bytes) != 0) {
      return fmt::format("the data of copied chunk {} is not intact at byte {} ({})", c,
                         data_at + e.position_bytes, ToString(status));
    }
    if (moved) continue;
    uint64_t begin = m.dest_bytes + e.position_bytes;
    uint64_t end = begin + e.length_bytes;
    if (keeps_destination) {
      begin = std::max(begin, m.source_bytes);
      end = std::min(end, source_end);
    }
    if (begin < end) std::fill_n(rule.begin() + begin, end - begin, 2);
  }
  for (uint64_t c = 0; c < ChunkCount(m); ++c) {
    const ChunkExtent e = ChunkExtentOf(m, c);
    std::fill_n(rule.begin() + data_at + e.position_bytes, e.length_bytes, 1);
  }
  for (const TableUpdate& u : table_) {
    if (u.restore_only) continue;  // the data or the original bytes: the rules above
    const std::vector<uint8_t>& want = moved ? u.new_bytes : u.old_bytes;
    if (std::memcmp(image.data() + u.offset_bytes, want.data(), want.size()) != 0) {
      return fmt::format("the table bytes at {} do not match the data ({})", u.offset_bytes,
                         ToString(status));
    }
    std::fill_n(rule.begin() + u.offset_bytes, want.size(), 1);
  }
  for (uint64_t at = 0; at < image.size(); ++at) {
    if (rule[at] == 0 && image[at] != original_[at]) {
      return fmt::format("byte {} changed, which the move does not write ({})", at,
                         ToString(status));
    }
  }
  return "";
}

}  // namespace partalign::test
