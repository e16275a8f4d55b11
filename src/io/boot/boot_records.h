// SPDX-License-Identifier: GPL-3.0-or-later
// The boot domain on an open disk (docs/boot-records.md): every record that names a
// partition's place - the core's FindBootRecords through the disk's fd, and Windows' BCD
// stores and MountedDevices found in each NTFS partition through libntfs-3g and libhivex - in
// one report; and the writing of its byte edits, each checked against the bytes it expects.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>

#include "partalign/boot/boot_scan.h"
#include "partalign/boot/windows_store.h"
#include "partalign/util/result.h"

namespace partalign {

/// The Windows stores partalign looks for in every NTFS partition.
inline constexpr const char* kBcdPaths[] = {"/Boot/BCD", "/EFI/Microsoft/Boot/BCD"};
inline constexpr const char* kSystemHivePath = "/Windows/System32/config/SYSTEM";

/// The BCD stores and SYSTEM hives of the NTFS partitions of `table` on the disk `fd` (`path`
/// for messages, `size_bytes` long), read without mounting anything. An NTFS volume
/// libntfs-3g cannot open, or a hive libhivex cannot read, is a store marked unlocatable, not
/// an error.
Result<std::vector<WindowsStore>> FindWindowsStores(int fd, const std::string& path,
                                                    uint64_t size_bytes, const BootDisk& table);

/// FindBootRecords on the disk `fd`, with the Windows stores' findings appended.
Result<BootReport> ScanBootRecords(int fd, const std::string& path, uint64_t size_bytes,
                                   const BootDisk& table, std::span<const PartitionMove> moves,
                                   const BootScanOptions& options = {});

/// Which bytes an edit finds on the disk.
enum class EditState { kOld, kNew, kNeither };

/// The state of `edit` on `fd` when its partition starts at `partition_start_bytes` (ignored
/// for partition 0): for resume (kNew: already written) and restore (kOld: already undone).
Result<EditState> ReadEditState(int fd, const std::string& path, const ByteEdit& edit,
                                uint64_t partition_start_bytes);

/// Writes `edits` on `fd`, each partition's at the byte offset `partition_starts` gives
/// (where its bytes are now: the new place once the data moved). Every edit's old bytes are
/// checked before the first write (an edit already written is skipped, so a repeated call
/// completes an interrupted one); any other bytes refuse all. fdatasync after the writes.
Status WriteByteEdits(int fd, const std::string& path, std::span<const ByteEdit> edits,
                      const std::map<uint32_t, uint64_t>& partition_starts);

}  // namespace partalign
