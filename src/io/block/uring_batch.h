// SPDX-License-Identifier: GPL-3.0-or-later
// Batched reads and writes through io_uring (liburing): every request of a batch is in flight
// at once (up to the ring's depth), which is what lets one thread keep a disk busy. Falls back to
// pread/pwrite when io_uring is unavailable (old kernel, disabled by sysctl, seccomp).
#pragma once

#include <span>
#include <string>

#include "io/block/block_io.h"
#include "partalign/util/result.h"

namespace partalign {

enum class TransferKind { kRead, kWrite };

/// Transfers every request completely, finishing short transfers; retries EINTR/EAGAIN. On an
/// error, waits for the requests still in flight (their buffers belong to the caller), then
/// returns the first error, naming `name` and the byte offset. A read that hits the end of the
/// file is an error: the mover never reads past what it validated.
Status TransferAll(int fd, TransferKind kind, std::span<const IoSpan> requests,
                   const std::string& name);

}  // namespace partalign
