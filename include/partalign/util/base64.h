// SPDX-License-Identifier: GPL-3.0-or-later
// Base64 (RFC 4648, standard alphabet, with padding): raw sector images inside JSON documents
// (table backups, apply --dry-run --json).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace partalign {

std::string Base64Encode(std::span<const uint8_t> bytes);

/// Strict: nullopt on any character outside the alphabet, a wrong length or bad padding.
std::optional<std::vector<uint8_t>> Base64Decode(std::string_view text);

}  // namespace partalign
