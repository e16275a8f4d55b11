// SPDX-License-Identifier: GPL-3.0-or-later
// Byte units, size parsing and formatting. The core counts bytes in uint64_t (mold: "wide
// integers by default"; systemd: never off_t); sectors appear only where a tool talks in LBAs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "partalign/util/result.h"

namespace partalign {

inline constexpr uint64_t kKiB = 1024;
inline constexpr uint64_t kMiB = 1024 * kKiB;
inline constexpr uint64_t kGiB = 1024 * kMiB;
inline constexpr uint64_t kTiB = 1024 * kGiB;

/// 1 MiB: the libfdisk grain default and parted's PED_DEFAULT_ALIGNMENT (include/parted/parted.h).
inline constexpr uint64_t kDefaultGrainBytes = kMiB;

/// Parses a size the way util-linux's strtosize() does: a plain number is bytes; "K", "M", "G",
/// "T", "P" and "KiB".."PiB" are powers of 1024; "KB".."PB" are powers of 1000. A trailing "B"
/// alone means bytes. Case-insensitive suffixes, no fractions, no overflow.
Result<uint64_t> ParseSize(std::string_view text);

/// Parses a plain non-negative decimal (or 0x-prefixed hexadecimal) integer.
Result<uint64_t> ParseUint(std::string_view text);

/// "8 GiB", "31.99 MiB": binary units; exact multiples print without decimals.
std::string FormatSize(uint64_t bytes);

/// True when `value` is a power of two (0 is not).
constexpr bool IsPowerOfTwo(uint64_t value) { return value != 0 && (value & (value - 1)) == 0; }

}  // namespace partalign
