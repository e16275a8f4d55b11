// SPDX-License-Identifier: GPL-3.0-or-later
// CRC-32C (Castagnoli polynomial 0x1EDC6F41, reflected), the metadata checksum of XFS version 5
// and of btrfs (its default checksum type). Table-driven; metadata blocks are small.
#pragma once

#include <cstdint>
#include <span>

namespace partalign {

/// Feeds `data` into the CRC register `state` (start from 0xffffffff).
uint32_t Crc32cUpdate(uint32_t state, std::span<const uint8_t> data);

/// The standard CRC-32C of `data` (initial value ~0, final inversion): what XFS and btrfs store,
/// little-endian.
inline uint32_t Crc32c(std::span<const uint8_t> data) { return ~Crc32cUpdate(0xffffffffu, data); }

}  // namespace partalign
