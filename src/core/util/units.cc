// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/util/units.h"

#include <array>
#include <cctype>
#include <limits>

#include <fmt/format.h>

namespace partalign {
namespace {

struct Suffix {
  std::string_view name;
  uint64_t base;
  int exponent;
};

// Longest names first so that "KiB" is not read as "K" followed by garbage.
constexpr std::array<Suffix, 16> kSuffixes{{
    {"kib", 1024, 1},
    {"mib", 1024, 2},
    {"gib", 1024, 3},
    {"tib", 1024, 4},
    {"pib", 1024, 5},
    {"kb", 1000, 1},
    {"mb", 1000, 2},
    {"gb", 1000, 3},
    {"tb", 1000, 4},
    {"pb", 1000, 5},
    {"k", 1024, 1},
    {"m", 1024, 2},
    {"g", 1024, 3},
    {"t", 1024, 4},
    {"p", 1024, 5},
    {"b", 1, 0},
}};

bool MultiplyChecked(uint64_t a, uint64_t b, uint64_t* out) {
  if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a) return false;
  *out = a * b;
  return true;
}

}  // namespace

Result<uint64_t> ParseUint(std::string_view text) {
  if (text.empty()) return MakeError("empty number");
  int base = 10;
  std::string_view digits = text;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    base = 16;
    digits.remove_prefix(2);
  }
  uint64_t value = 0;
  for (char c : digits) {
    int digit;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (base == 16 && std::isxdigit(static_cast<unsigned char>(c))) {
      digit = std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
    } else {
      return MakeError(fmt::format("'{}' is not a number", text));
    }
    uint64_t next;
    if (!MultiplyChecked(value, base, &next) ||
        next > std::numeric_limits<uint64_t>::max() - digit) {
      return MakeError(fmt::format("'{}' is too large", text));
    }
    value = next + digit;
  }
  return value;
}

Result<uint64_t> ParseSize(std::string_view text) {
  size_t split = 0;
  while (split < text.size() && (std::isxdigit(static_cast<unsigned char>(text[split])) ||
                                 text[split] == 'x' || text[split] == 'X')) {
    ++split;
  }
  // Hex digits include 'b'; only treat the number as hex when it starts with 0x.
  if (!(text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))) {
    split = 0;
    while (split < text.size() && std::isdigit(static_cast<unsigned char>(text[split]))) ++split;
  }
  if (split == 0) return MakeError(fmt::format("'{}' is not a size", text));
  Result<uint64_t> number = ParseUint(text.substr(0, split));
  if (!number) return MakeError(fmt::format("'{}' is not a size", text));
  std::string suffix;
  for (char c : text.substr(split)) suffix += static_cast<char>(std::tolower(c));
  if (suffix.empty()) return *number;
  for (const Suffix& s : kSuffixes) {
    if (suffix != s.name) continue;
    uint64_t value = *number;
    for (int i = 0; i < s.exponent; ++i) {
      if (!MultiplyChecked(value, s.base, &value)) {
        return MakeError(fmt::format("size '{}' is too large", text));
      }
    }
    return value;
  }
  return MakeError(
      fmt::format("'{}' has an unknown unit '{}' (use KiB, MiB, GiB, TiB, KB, MB, GB, TB)", text,
                  text.substr(split)));
}

std::string FormatSize(uint64_t bytes) {
  static constexpr std::array<std::string_view, 6> kNames{"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  size_t unit = 0;
  uint64_t divisor = 1;
  while (unit + 1 < kNames.size() && bytes >= divisor * 1024) {
    divisor *= 1024;
    ++unit;
  }
  if (bytes % divisor == 0) return fmt::format("{} {}", bytes / divisor, kNames[unit]);
  // Not exact in the largest unit: two decimals are enough for a person; JSON carries bytes.
  return fmt::format("{:.2f} {}", static_cast<double>(bytes) / static_cast<double>(divisor),
                     kNames[unit]);
}

}  // namespace partalign
