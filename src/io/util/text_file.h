// SPDX-License-Identifier: GPL-3.0-or-later
// Reading the files a user names (plan files, table backups, move journals, snapshots): every
// one is untrusted input. They are opened without blocking (a FIFO never waits for a writer),
// checked with fstat before a byte is read (regular files only: a FIFO, a device such as
// /dev/zero, a socket or a directory is refused at once), and read up to a size limit, so that
// no file makes partalign hang or read until memory runs out. Errors are one line that names
// the file and the problem. Files partalign writes (plans, exports) are written so that a reader
// never sees half of one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "io/util/unique_fd.h"
#include "partalign/util/result.h"
#include "partalign/util/units.h"

namespace partalign {

/// The largest file ReadWholeFile reads unless told otherwise. partalign's own files are far
/// smaller (a plan of 128 partitions is about 100 KiB, a backup of a GPT with 4096-byte sectors
/// about 60 KiB); anything larger is not one of them.
inline constexpr uint64_t kMaxReadFileBytes = 16 * kMiB;

/// Opens `path` with `flags` (O_RDONLY or O_RDWR, plus O_DIRECT or others) and returns the
/// descriptor only if it is a regular file. The open itself never blocks and never acquires a
/// controlling terminal; the returned descriptor has the caller's flags (O_NONBLOCK cleared).
/// `what` names the file in errors: "plan '/tmp/p' is a FIFO, not a regular file".
Result<UniqueFd> OpenRegularFile(const std::string& path, std::string_view what, int flags);

/// The whole content of the regular file `path`, refused when it is larger than `max_bytes`.
/// `what` names the file in the error ("cannot read plan 'p.json': No such file or directory").
Result<std::string> ReadWholeFile(const std::string& path, std::string_view what,
                                  uint64_t max_bytes = kMaxReadFileBytes);

/// Refuses `path` as a file for WriteFileAtomically to replace when it exists and is not a
/// regular file (the rename would replace a device node, a directory entry or a FIFO with a
/// file), or when it is the same file as `keep` (the image a report is about): "refusing to
/// write report to '/dev/loop0': it is a block device, not a regular file". `keep` may be
/// empty or name nothing.
Status CheckReplaceableFile(const std::string& path, std::string_view what,
                            const std::string& keep = "");

/// Writes `text` to `path` through a temporary file (PATH.tmp), fsynced and renamed into place.
Status WriteFileAtomically(const std::string& path, std::string_view text);

}  // namespace partalign
