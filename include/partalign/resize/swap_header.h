// SPDX-License-Identifier: GPL-3.0-or-later
// What a Linux swap area's header page says about it (util-linux disk-utils/swapheader.h,
// struct swap_header_v1_2): what mkswap needs to re-create it smaller and the same otherwise.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace partalign {

struct SwapHeader {
  uint64_t page_bytes = 0;  ///< where the SWAPSPACE2 signature is: the last 10 bytes of the page
  uint32_t last_page = 0;
  std::array<uint8_t, 16> uuid{};
  std::string label;  ///< up to 16 bytes, without the trailing NULs
  bool big_endian = false;
  bool operator==(const SwapHeader&) const = default;
};

/// The header of the swap area whose first bytes are `head` (at least its first page); nullopt
/// without a SWAPSPACE2 signature (a hibernation image replaces it) or with a version other
/// than 1.
std::optional<SwapHeader> ParseSwapHeader(std::span<const uint8_t> head);

/// "2a7f...-..." as mkswap -U reads it (lower case, dashes after 4, 6, 8 and 10 bytes).
std::string FormatUuid(const std::array<uint8_t, 16>& uuid);

}  // namespace partalign
