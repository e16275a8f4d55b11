// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/util/sfdisk_size.h"

#include <cctype>
#include <limits>

#include <fmt/format.h>

#include "partalign/util/checked_math.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

// util-linux's suffix letters, in order of their power of the base (K = 1 ... E = 6; Z and Y
// do not fit in 64 bits).
constexpr std::string_view kSfdiskSuffixLetters = "KMGTPEZY";
// More fraction digits than this are refused: sfdisk drops digits of such a fraction, and the
// arithmetic below stays within 64 bits (10^18 < 2^63).
constexpr size_t kMaxFractionDigits = 18;
constexpr uint64_t kDecimalBase = 10;

uint64_t PowerOf(uint64_t base, size_t exponent) {
  uint64_t v = 1;
  for (size_t i = 0; i < exponent; ++i) v *= base;
  return v;
}

// What util-linux's parse_size() adds for the fraction `digits` (the digits after the decimal
// point) of a `unit`: it drops the leading zeros (counting them), reads the rest as one number,
// takes the smallest power of ten not below it (at least 10, times ten per leading zero) as the
// divisor, and for each digit from the last one adds unit / (divisor / place / digit), every
// division in whole numbers. "5" gives unit / 2; "3" gives unit / 3, not unit * 3 / 10.
uint64_t SfdiskFractionBytes(std::string_view digits, uint64_t unit) {
  size_t zeros = 0;
  while (zeros < digits.size() && digits[zeros] == '0') ++zeros;
  uint64_t frac = 0;
  for (char c : digits.substr(zeros)) frac = frac * kDecimalBase + static_cast<uint64_t>(c - '0');
  uint64_t divisor = kDecimalBase;
  while (divisor < frac) divisor *= kDecimalBase;
  for (size_t i = 0; i < zeros; ++i) divisor *= kDecimalBase;
  uint64_t added = 0;
  uint64_t place = 1;
  do {
    const uint64_t digit = frac % kDecimalBase;
    const uint64_t segment = divisor / place;
    frac /= kDecimalBase;
    place *= kDecimalBase;
    if (digit != 0 && segment / digit != 0) added += unit / (segment / digit);
  } while (frac != 0);
  return added;
}

Error SizeError(std::string_view text, std::string_view why) {
  return Error{fmt::format("'{}': {}", text, why)};
}

}  // namespace

std::optional<uint64_t> SfdiskSize::Bytes(uint64_t sector_size) const {
  if (!sectors) return value;
  return CheckedMul(value, sector_size);
}

std::string SfdiskSize::Text() const {
  return sectors ? fmt::format("{} sector{}", value, value == 1 ? "" : "s") : FormatSize(value);
}

Result<SfdiskSize> ParseSfdiskSize(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  if (text.empty()) return Error{"an empty size"};
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  size_t split = hex ? 2 : 0;
  while (split < text.size() && (hex ? std::isxdigit(static_cast<unsigned char>(text[split]))
                                     : std::isdigit(static_cast<unsigned char>(text[split])))) {
    ++split;
  }
  if (split == (hex ? 2u : 0u)) {
    return SizeError(
        text, "not a size (a number of sectors, or of bytes with a unit: 512M, 1.5G, 20GiB)");
  }
  const std::string_view number = text.substr(0, split);
  Result<uint64_t> whole = ParseUint(number);
  if (!whole) return SizeError(text, "too large");
  std::string_view rest = text.substr(split);
  if (!hex && number.size() > 1 && number[0] == '0') {
    // strtoumax(..., 0), as util-linux calls it, reads a leading 0 as octal.
    uint64_t as_octal = 0;
    bool is_octal = true;
    for (char c : number) {
      if (c > '7') is_octal = false;
      as_octal = as_octal * 8 + static_cast<uint64_t>(c - '0');
    }
    if (is_octal && as_octal == *whole) {
      // "00": the same either way.
    } else {
      return SizeError(
          text, is_octal
                    ? fmt::format("sfdisk reads a number that starts with 0 as octal ({}, not "
                                  "{}); write it without the leading 0",
                                  as_octal, *whole)
                    : "sfdisk reads a number that starts with 0 as octal, and this one is not; "
                      "write it without the leading 0");
    }
  }
  if (rest.empty()) return SfdiskSize{*whole, /*sectors=*/true};
  std::string_view fraction;
  const bool has_point = rest.front() == '.';
  if (has_point) {
    if (hex) return SizeError(text, "a hexadecimal size has no decimal point");
    rest.remove_prefix(1);
    size_t digits = 0;
    while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) {
      ++digits;
    }
    fraction = rest.substr(0, digits);
    rest.remove_prefix(digits);
    if (fraction.size() > kMaxFractionDigits) {
      return SizeError(
          text, fmt::format("more than {} digits after the decimal point", kMaxFractionDigits));
    }
    if (rest.empty()) {
      return SizeError(text,
                       "a decimal point needs a unit after the number (1.5G); a number without "
                       "a unit counts whole sectors");
    }
  }
  if (!has_point && (rest == "B" || rest == "b")) return SfdiskSize{*whole, /*sectors=*/false};
  const size_t letter = kSfdiskSuffixLetters.find(
      static_cast<char>(std::toupper(static_cast<unsigned char>(rest.front()))));
  uint64_t base = 0;
  if (letter != std::string_view::npos) {
    const std::string_view tail = rest.substr(1);
    if (tail.empty() || tail == "iB" || tail == "ib") {
      base = kKiB;
    } else if (tail == "B" || tail == "b") {
      base = 1000;
    }
  }
  if (base == 0) {
    return SizeError(text, fmt::format("unknown unit '{}' (K, M, G, T, P, E, KiB..EiB, KB..EB; a "
                                       "number without a unit counts sectors, as in sfdisk)",
                                       rest));
  }
  const size_t power = letter + 1;
  std::optional<uint64_t> unit = 1;
  for (size_t i = 0; i < power && unit; ++i) unit = CheckedMul(*unit, base);
  std::optional<uint64_t> bytes = unit ? CheckedMul(*whole, *unit) : std::nullopt;
  if (!bytes) return SizeError(text, "too large");
  if (fraction.empty()) return SfdiskSize{*bytes, /*sectors=*/false};

  // The exact value of the fraction, in bytes (rounded down), against sfdisk's digit-by-digit
  // reading of it.
  uint64_t fraction_value = 0;
  for (char c : fraction) fraction_value = fraction_value * kDecimalBase + (c - '0');
  const unsigned __int128 scaled = static_cast<unsigned __int128>(fraction_value) * *unit;
  const uint64_t scale = PowerOf(kDecimalBase, fraction.size());
  const uint64_t exact = static_cast<uint64_t>(scaled / scale);
  const uint64_t sfdisk = SfdiskFractionBytes(fraction, *unit);
  std::optional<uint64_t> total = CheckedAdd(*bytes, sfdisk);
  std::optional<uint64_t> exact_total = CheckedAdd(*bytes, exact);
  if (!total || !exact_total) return SizeError(text, "too large");
  // Each digit's share is rounded down to whole bytes by sfdisk: up to a byte per digit short
  // of the exact value, less than the sector any size is rounded up to. More than that, or
  // above it, is another number.
  if (sfdisk > exact || exact - sfdisk > fraction.size()) {
    // The advice: a whole number of the next smaller unit, written as this one is ("M" for
    // "G", "MiB" for "GiB", "MB" for "GB"), or bytes below K.
    const uint64_t smaller = *unit / base;
    const unsigned __int128 in_smaller =
        (static_cast<unsigned __int128>(*whole) * *unit + scaled / scale) / smaller;
    std::string smaller_unit = "B";
    if (power > 1) {
      const bool upper = std::isupper(static_cast<unsigned char>(rest.front())) != 0;
      const char letter_below = kSfdiskSuffixLetters[power - 2];
      smaller_unit = std::string(1, upper ? letter_below
                                          : static_cast<char>(std::tolower(
                                                static_cast<unsigned char>(letter_below)))) +
                     std::string(rest.substr(1));
    }
    return SizeError(
        text, fmt::format("sfdisk reads it as {} bytes ({}), not as {} bytes: util-linux adds "
                          "each digit after the point as unit / (10^place / digit), in whole "
                          "numbers; write a whole number of a smaller unit ({}{})",
                          *total, FormatSize(*total), *exact_total,
                          static_cast<uint64_t>(in_smaller), smaller_unit));
  }
  return SfdiskSize{*exact_total, /*sectors=*/false};
}

}  // namespace partalign
