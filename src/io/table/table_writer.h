// SPDX-License-Identifier: GPL-3.0-or-later
// Writing table sectors to a disk in a given order, durably: each range is written, then
// fdatasync'd before the next one starts, so that the device never sees a later range before an
// earlier one (the crash-safety argument of TableTransition's write order depends on it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "partalign/table/table_transition.h"
#include "partalign/util/result.h"

namespace partalign {

/// Test-only hooks (docs/apply.md, "Testing crash safety"); both off in normal use.
struct TableWriteHooks {
  /// PARTALIGN_TEST_KILL_AFTER_SECTORS=N: write one sector per pwrite and SIGKILL this
  /// process right after the N-th sector (N = 0: before the first), so that a test can stop
  /// the write between any two sectors, as a torn multi-sector write or a crash would.
  std::optional<uint64_t> kill_after_sectors;
  /// PARTALIGN_TEST_SLOW_WRITES_US=N: sleep N microseconds before each sector (sector by
  /// sector), so that an external kill at a random time lands inside the write.
  uint64_t sector_delay_us = 0;
  /// PARTALIGN_TEST_FAIL_AFTER_SECTORS=N: write one sector per pwrite and fail the write after
  /// the N-th sector with EIO, as a disk that stops taking writes does: the command's error
  /// path (and the advice it prints) runs with the table part-written.
  std::optional<uint64_t> fail_after_sectors;
};

/// Writes the new bytes of every range of `ranges`, in order, at its offset. `sector_size`
/// is the unit of the per-sector test hooks.
Status WriteTableRanges(int fd, const std::string& path, uint64_t sector_size,
                        const std::vector<TableRange>& ranges, const TableWriteHooks& hooks = {});

/// Exactly `length` bytes at `offset`; a short read (end of the disk) is an error.
Result<std::vector<uint8_t>> ReadExactly(int fd, const std::string& path, uint64_t offset,
                                         uint64_t length);

/// Ranges (in `ranges` order) whose bytes on disk now differ from `expected(range)`.
template <typename Expected>
Result<std::vector<size_t>> DifferingRanges(int fd, const std::string& path,
                                            const std::vector<TableRange>& ranges,
                                            Expected expected) {
  std::vector<size_t> differing;
  for (size_t i = 0; i < ranges.size(); ++i) {
    Result<std::vector<uint8_t>> now =
        ReadExactly(fd, path, ranges[i].offset_bytes, ranges[i].length_bytes);
    if (!now) return now.error();
    if (*now != expected(ranges[i])) differing.push_back(i);
  }
  return differing;
}

}  // namespace partalign
