// SPDX-License-Identifier: GPL-3.0-or-later
// What the modules that call libfdisk share: its context handle, and the callback through which
// it talks to a user (fdisk_set_ask), which partalign never lets it do.
#pragma once

#include <libfdisk.h>

#include "io/util/c_handle.h"

namespace partalign {

using FdiskContext = CHandle<fdisk_unref_context, fdisk_context*>;

/// The callback for fdisk_set_ask(): appends each info and warning message to the
/// std::vector<std::string> `messages` points to (null: dropped) and refuses every question
/// (-EINVAL), so that nothing interactive can happen. noexcept: it is called from C frames; a
/// message it cannot store (out of memory) is dropped.
int RecordFdiskMessages(fdisk_context* cxt, fdisk_ask* ask, void* messages) noexcept;

}  // namespace partalign
