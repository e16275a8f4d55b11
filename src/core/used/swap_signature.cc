// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/used/swap_signature.h"

#include <string_view>

#include <fmt/format.h>

#include "partalign/util/byte_order.h"

namespace partalign {
namespace {

constexpr size_t kSignatureBytes = 10;

struct Known {
  std::string_view magic;
  std::string_view name;
};

// At the end of the first page. The kernel writes S1SUSPEND (HIBERNATE_SIG, kernel/power/swap.c;
// LINHIB0001 in some versions), uswsusp's s2disk ULSUSPEND (SWSUSP_SIG), old kernels S2SUSPEND.
constexpr Known kHibernationSignatures[] = {{"S1SUSPEND", "S1SUSPEND"},
                                            {"S2SUSPEND", "S2SUSPEND"},
                                            {"ULSUSPEND", "ULSUSPEND (uswsusp)"},
                                            {"LINHIB0001", "LINHIB0001"}};
constexpr std::string_view kSwapSignatures[] = {"SWAPSPACE2", "SWAP-SPACE"};
// TuxOnIce's header starts the area (TOI_MAGIC_STRING in libblkid).
constexpr std::string_view kTuxOnIceMagic = "\xed\xc3\x02\xe9\x98\x56\xe5\x0c";

}  // namespace

SwapSignature ReadSwapSignature(std::span<const uint8_t> head) {
  if (HasMagic(head, 0, kTuxOnIceMagic)) {
    return {SwapAreaKind::kHibernation, 0, "TuxOnIce"};
  }
  for (uint64_t page : kSwapPageSizes) {
    if (page > head.size()) break;
    const size_t at = page - kSignatureBytes;
    for (const Known& k : kHibernationSignatures) {
      if (HasMagic(head, at, k.magic))
        return {SwapAreaKind::kHibernation, page, std::string(k.name)};
    }
    for (std::string_view swap : kSwapSignatures) {
      if (HasMagic(head, at, swap)) return {SwapAreaKind::kPlainSwap, page, ""};
    }
  }
  return {};
}

std::string HibernationImageText(const SwapSignature& signature) {
  return fmt::format("a hibernation image ({})", signature.image);
}

}  // namespace partalign
