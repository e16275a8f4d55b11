// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/used/swap_used_map.h"

#include <algorithm>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "partalign/used/hibernation.h"
#include "partalign/used/swap_signature.h"

namespace partalign {
namespace {

// Where the swap area ends: (last_page + 1) pages (union swap_header, include/linux/swap.h:
// version 1 at byte 1024, last_page at 1028, in the writer's byte order); nullopt when the
// header does not say (then the whole partition counts as the area's).
std::optional<uint64_t> SwapAreaBytes(const std::vector<uint8_t>& head, uint64_t page) {
  if (head.size() < 1032) return std::nullopt;
  auto read32 = [&](size_t at, bool big) {
    uint32_t v = 0;
    for (size_t i = 0; i < 4; ++i) {
      v |= uint32_t{head[at + (big ? 3 - i : i)]} << (8 * i);
    }
    return v;
  };
  for (bool big : {false, true}) {
    if (read32(1024, big) != 1) continue;
    return (uint64_t{read32(1028, big)} + 1) * page;
  }
  return std::nullopt;
}

}  // namespace

Result<UsedMap> SwapUsedMap(const ByteSource& source) {
  const uint64_t length = source.size_bytes();
  Result<std::vector<uint8_t>> head = source.Read(0, std::min(kUsedHeadBytes, length));
  if (!head) return head.error();
  const SwapSignature signature = ReadSwapSignature(*head);
  if (signature.kind == SwapAreaKind::kHibernation) {
    return MakeError(
        fmt::format("the swap area holds {}; {}, or remove it (mkswap), before "
                    "moving the partition",
                    HibernationImageText(signature), WakeAdvice(SleepingOs::kLinux)));
  }
  if (signature.kind == SwapAreaKind::kPlainSwap) {
    const uint64_t page = signature.page_bytes;
    UsedMap map(length);
    map.source = fmt::format("swap: the header page ({} bytes)", page);
    map.Add(0, page, UsedReason::kSwapHeader);
    map.Add(0, kUsedHeadBytes, UsedReason::kHead);
    // Past the area the partition holds whatever it holds: data until proven otherwise.
    const uint64_t area = SwapAreaBytes(*head, page).value_or(page);
    if (area < length) map.Add(area, length - area, UsedReason::kBeyondFilesystem);
    return map;
  }
  return UsedMap::WholeBecause(length, "swap", "no swap signature was found");
}

}  // namespace partalign
