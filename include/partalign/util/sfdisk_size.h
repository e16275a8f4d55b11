// SPDX-License-Identifier: GPL-3.0-or-later
// A size as sfdisk reads the `size=` of a script (libfdisk's script.c, through util-linux's
// parse_size()), so that `plan --layout` and the planner's prompts mean by a size exactly what
// sfdisk means by it:
//   - a bare number counts sectors ("size=100000" is 100000 sectors, 48.83 MiB with 512-byte
//     ones), decimal or 0x hexadecimal;
//   - a number with a suffix counts bytes: K, M, G, T, P, E and KiB..EiB are powers of 1024,
//     KB..EB powers of 1000 (the letter in either case);
//   - a decimal point before a suffix ("1.5G", "1.25G"), its value rounded down to whole
//     bytes. sfdisk adds the k-th digit d after the point as unit / (10^k / d), each division
//     in whole numbers, so it may fall a byte per digit short of that (1.25G is 1342177279
//     bytes to it, 1342177280 here: the same once rounded up to whole sectors, as every size
//     is).
// Refused, with what sfdisk would make of it: a bare number with a leading 0 (sfdisk reads it
// as octal: "010" is 8 sectors), and a decimal sfdisk reads as another number (where 10^k / d
// is not whole: "1.3G" is 1.33 GiB to sfdisk, "1.4G" 1.5 GiB; or after a power of ten: "1.10G"
// is 2 GiB).
// One extension sfdisk refuses: a "B" suffix for bytes ("4096B").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "partalign/util/result.h"

namespace partalign {

struct SfdiskSize {
  uint64_t value = 0;    ///< sectors when `sectors`, else bytes
  bool sectors = false;  ///< a bare number
  bool operator==(const SfdiskSize&) const = default;

  /// In bytes on a disk of `sector_size`-byte sectors; nullopt when that overflows.
  std::optional<uint64_t> Bytes(uint64_t sector_size) const;
  /// "100000 sectors" or "1.50 GiB".
  std::string Text() const;
};

/// Parses `text` (surrounding spaces ignored) as sfdisk's `size=` does; the error says why in
/// one line, naming sfdisk's reading where sfdisk would accept it.
Result<SfdiskSize> ParseSfdiskSize(std::string_view text);

}  // namespace partalign
