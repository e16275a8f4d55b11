// SPDX-License-Identifier: GPL-3.0-or-later
// Fixed-width integers and magic strings at a byte offset of an on-disk structure, read (and
// written) without trusting the buffer's length: every access past the end gives std::nullopt
// (or false) instead of touching memory. Superblocks, PV labels and MD superblocks are read this
// way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace partalign {

/// The little-endian T at `offset` of `bytes`; nullopt when it does not fit.
template <typename T>
std::optional<T> Le(std::span<const uint8_t> bytes, size_t offset) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return std::nullopt;
  T value = 0;
  for (size_t i = 0; i < sizeof(T); ++i) value |= static_cast<T>(bytes[offset + i]) << (8 * i);
  return value;
}

/// The big-endian T at `offset` of `bytes`; nullopt when it does not fit.
template <typename T>
std::optional<T> Be(std::span<const uint8_t> bytes, size_t offset) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return std::nullopt;
  T value = 0;
  for (size_t i = 0; i < sizeof(T); ++i) value = static_cast<T>(value << 8) | bytes[offset + i];
  return value;
}

/// Writes `value` little-endian at `offset` of `bytes`; false, with nothing written, when it
/// does not fit.
template <typename T>
bool PutLe(std::span<uint8_t> bytes, size_t offset, T value) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return false;
  for (size_t i = 0; i < sizeof(T); ++i) {
    bytes[offset + i] = static_cast<uint8_t>(static_cast<uint64_t>(value) >> (8 * i));
  }
  return true;
}

/// True when `bytes` holds `magic` at `offset`.
inline bool HasMagic(std::span<const uint8_t> bytes, size_t offset, std::string_view magic) {
  if (offset > bytes.size() || bytes.size() - offset < magic.size()) return false;
  for (size_t i = 0; i < magic.size(); ++i) {
    if (bytes[offset + i] != static_cast<uint8_t>(magic[i])) return false;
  }
  return true;
}

}  // namespace partalign
