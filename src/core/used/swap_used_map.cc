// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/used/swap_used_map.h"

#include <algorithm>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

namespace partalign {
namespace {

/// The signature sits in the last 10 bytes of the first page; page sizes Linux uses.
constexpr uint64_t kPageSizes[] = {4096, 8192, 16384, 32768, 65536};
constexpr size_t kSignatureBytes = 10;
constexpr std::string_view kSwapSignatures[] = {"SWAPSPACE2", "SWAP-SPACE"};
/// libblkid's swsuspend prober (libblkid/src/superblocks/swap.c): hibernation images replace
/// the swap signature with one of these.
constexpr std::string_view kSuspendSignatures[] = {
    "S1SUSPEND", "S2SUSPEND", "ULSUSPEND", "\xed\xc3\x02\xe9\x98\x56\xe5\x0c", "LINHIB0001"};

bool StartsWith(const uint8_t* p, std::string_view s) {
  return std::memcmp(p, s.data(), s.size()) == 0;
}

}  // namespace

Result<UsedMap> SwapUsedMap(const ByteSource& source) {
  const uint64_t length = source.size_bytes();
  Result<std::vector<uint8_t>> head = source.Read(0, std::min(kUsedHeadBytes, length));
  if (!head) return head.error();
  for (uint64_t page : kPageSizes) {
    if (page > head->size()) break;
    const uint8_t* signature = head->data() + page - kSignatureBytes;
    for (std::string_view suspend : kSuspendSignatures) {
      if (StartsWith(signature, suspend)) {
        return MakeError(fmt::format(
            "the swap area holds a hibernation image ('{}' signature); resume from it, or "
            "remove it (mkswap), before moving the partition",
            suspend == kSuspendSignatures[3] ? "TuxOnIce" : std::string(suspend)));
      }
    }
    for (std::string_view swap : kSwapSignatures) {
      if (!StartsWith(signature, swap)) continue;
      UsedMap map(length);
      map.source = fmt::format("swap: the header page ({} bytes)", page);
      map.Add(0, page, UsedReason::kSwapHeader);
      map.Add(0, kUsedHeadBytes, UsedReason::kHead);
      return map;
    }
  }
  return UsedMap::WholeBecause(length, "swap", "no swap signature was found");
}

}  // namespace partalign
