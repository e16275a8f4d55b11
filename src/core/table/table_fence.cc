// SPDX-License-Identifier: GPL-3.0-or-later
// The fence (table_fence.h; docs/at-boot.md, "The fence").
#include "partalign/table/table_fence.h"

#include <algorithm>
#include <cstdint>
#include <span>

#include <fmt/format.h>

#include "partalign/util/byte_order.h"
#include "partalign/util/crc32.h"

namespace partalign {
namespace {

// The range of `role` in the old table, or nullptr.
TableRange* Find(std::vector<TableRange>& ranges, TableAreaRole role) {
  auto it = std::find_if(ranges.begin(), ranges.end(),
                         [&](const TableRange& r) { return r.role == role && r.old_index; });
  return it == ranges.end() ? nullptr : &*it;
}

// Zeroes entry `number` of one GPT (its header and entries ranges, new bytes) and puts the
// header's two CRCs right.
Status FenceGpt(TableRange* header, TableRange* entries, uint64_t sector_size, uint32_t number,
                const char* which) {
  if (!header || !entries) {
    return MakeError(
        fmt::format("the {} GPT has no header or no entries among the table's ranges", which));
  }
  std::vector<uint8_t>& h = header->new_bytes;
  if (h.size() < 92 || !HasMagic(h, 0, "EFI PART")) {
    return MakeError(
        fmt::format("the {} GPT header at byte {} has no signature", which, header->offset_bytes));
  }
  const uint32_t header_size = Le<uint32_t>(h, 12).value_or(0);
  const uint64_t entries_lba = Le<uint64_t>(h, 72).value_or(0);
  const uint32_t count = Le<uint32_t>(h, 80).value_or(0);
  const uint32_t entry_size = Le<uint32_t>(h, 84).value_or(0);
  if (header_size < 92 || header_size > h.size() || entry_size < 128 || entry_size % 8 != 0) {
    return MakeError(
        fmt::format("the {} GPT header at byte {} has header size {} and entry "
                    "size {}",
                    which, header->offset_bytes, header_size, entry_size));
  }
  if (Le<uint64_t>(h, 24).value_or(0) * sector_size != header->offset_bytes ||
      entries_lba * sector_size != entries->offset_bytes ||
      static_cast<uint64_t>(count) * entry_size > entries->new_bytes.size()) {
    return MakeError(
        fmt::format("the {} GPT header at byte {} does not name the places its "
                    "ranges have (itself at LBA {}, {} entries of {} bytes at LBA {})",
                    which, header->offset_bytes, Le<uint64_t>(h, 24).value_or(0), count, entry_size,
                    entries_lba));
  }
  if (number == 0 || number > count) {
    return MakeError(
        fmt::format("the GPT has {} entries: there is no partition {}", count, number));
  }
  std::vector<uint8_t>& e = entries->new_bytes;
  const size_t at = static_cast<size_t>(number - 1) * entry_size;
  if (std::all_of(e.begin() + static_cast<ptrdiff_t>(at),
                  e.begin() + static_cast<ptrdiff_t>(at + 16), [](uint8_t b) { return b == 0; })) {
    return MakeError(fmt::format("the {} GPT has no partition {}", which, number));
  }
  std::fill_n(e.begin() + static_cast<ptrdiff_t>(at), entry_size, uint8_t{0});
  PutLe<uint32_t>(
      h, 88, Crc32(std::span<const uint8_t>(e.data(), static_cast<size_t>(count) * entry_size)));
  PutLe<uint32_t>(h, 16, 0);
  PutLe<uint32_t>(h, 16, Crc32(std::span<const uint8_t>(h.data(), header_size)));
  return {};
}

// A logical partition keeps its entry (taking it out would renumber those after it), pointed at
// one sector `placeholder` sectors after its EBR.
Status FenceLogical(std::vector<TableRange>& ranges, uint32_t number, uint64_t placeholder) {
  auto it = std::find_if(ranges.begin(), ranges.end(), [&](const TableRange& r) {
    return r.role == TableAreaRole::kEbr && r.old_index && *r.old_index == number - 5;
  });
  if (it == ranges.end()) {
    return MakeError(fmt::format("the table's ranges hold no EBR of partition {}", number));
  }
  std::vector<uint8_t>& b = it->new_bytes;
  if (b.size() < 512 || b[510] != 0x55 || b[511] != 0xAA) {
    return MakeError(fmt::format("the EBR of partition {} at byte {} has no signature", number,
                                 it->offset_bytes));
  }
  const uint8_t type = b[446 + 4];
  const uint64_t start = Le<uint32_t>(b, 446 + 8).value_or(0);
  const uint64_t size = Le<uint32_t>(b, 446 + 12).value_or(0);
  if (size == 0 || type == 0x05 || type == 0x0f || type == 0x85) {
    return MakeError(
        fmt::format("the EBR of partition {} at byte {} has no partition in its "
                    "first entry",
                    number, it->offset_bytes));
  }
  if (placeholder == 0 || placeholder > UINT32_MAX ||
      (placeholder >= start && placeholder < start + size)) {
    return MakeError(
        fmt::format("the placeholder of partition {}'s fence, {} sector(s) after "
                    "its EBR, is not outside the partition",
                    number, placeholder));
  }
  PutLe<uint32_t>(b, 446 + 8, static_cast<uint32_t>(placeholder));
  PutLe<uint32_t>(b, 446 + 12, 1);
  return {};
}

Status FenceDos(std::vector<TableRange>& ranges, uint32_t number, uint64_t placeholder) {
  if (number > 4) return FenceLogical(ranges, number, placeholder);
  TableRange* mbr = Find(ranges, TableAreaRole::kMbr);
  if (!mbr || mbr->offset_bytes != 0 || mbr->new_bytes.size() < 512 ||
      mbr->new_bytes[510] != 0x55 || mbr->new_bytes[511] != 0xAA) {
    return MakeError("the table's ranges hold no MBR with its signature at byte 0");
  }
  if (number == 0) return MakeError("there is no partition 0");
  std::vector<uint8_t>& b = mbr->new_bytes;
  const size_t at = 446 + 16 * static_cast<size_t>(number - 1);
  const uint8_t type = b[at + 4];
  if (Le<uint32_t>(b, at + 12).value_or(0) == 0) {
    return MakeError(fmt::format("the MBR has no partition {}", number));
  }
  if (type == 0x05 || type == 0x0f || type == 0x85) {
    return MakeError(
        fmt::format("partition {} is the extended partition: it holds the logical "
                    "ones",
                    number));
  }
  std::fill_n(b.begin() + static_cast<ptrdiff_t>(at), 16, uint8_t{0});
  return {};
}

}  // namespace

Result<TableTransition> FenceTransition(const TableTransition& step, uint32_t number,
                                        uint64_t placeholder_after_ebr) {
  TableTransition fence;
  fence.label = step.label;
  fence.sector_size = step.sector_size;
  fence.disk_size_bytes = step.disk_size_bytes;
  for (const TableRange& r : step.ranges) {
    if (!r.old_index) continue;  // a place only the step's new table uses
    TableRange kept = r;
    kept.new_index = r.old_index;
    kept.new_bytes = r.old_bytes;
    fence.ranges.push_back(std::move(kept));
  }
  Status fenced = MakeError(fmt::format("a '{}' table cannot be fenced", ToString(step.label)));
  if (step.label == LabelType::kGpt) {
    fenced = FenceGpt(Find(fence.ranges, TableAreaRole::kGptHeader),
                      Find(fence.ranges, TableAreaRole::kGptEntries), step.sector_size, number,
                      "primary");
    if (fenced) {
      fenced = FenceGpt(Find(fence.ranges, TableAreaRole::kGptBackupHeader),
                        Find(fence.ranges, TableAreaRole::kGptBackupEntries), step.sector_size,
                        number, "backup");
    }
  } else if (step.label == LabelType::kDos) {
    fenced = FenceDos(fence.ranges, number, placeholder_after_ebr);
  }
  if (!fenced) return fenced.error();
  SortForWrite(&fence);
  if (Status valid = ValidateTransition(fence); !valid) return valid.error();
  return fence;
}

}  // namespace partalign
