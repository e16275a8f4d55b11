// SPDX-License-Identifier: GPL-3.0-or-later
// What the first page of a Linux swap area says it holds: a swap area ready for use, a
// hibernation image written into it (by the kernel, uswsusp or TuxOnIce), or neither. The one
// reader of these signatures: the used map, the swap shrink and the hibernation scan ask it.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace partalign {

/// The page sizes Linux uses; a swap area's signature is in the last 10 bytes of its first page
/// (util-linux disk-utils/swapheader.h; the kernel's struct swsusp_header ends the same way).
inline constexpr uint64_t kSwapPageSizes[] = {4096, 8192, 16384, 32768, 65536};

/// The bytes to read from an area's start to see the signature of every page size.
inline constexpr uint64_t kSwapSignatureHeadBytes = 65536;

enum class SwapAreaKind : uint8_t {
  kNotSwap,      ///< no swap or hibernation signature
  kPlainSwap,    ///< SWAPSPACE2 (or the old SWAP-SPACE): a swap area, nothing to resume
  kHibernation,  ///< a hibernation image: a system sleeps in it and resumes from it
};

struct SwapSignature {
  SwapAreaKind kind = SwapAreaKind::kNotSwap;
  /// The page whose last 10 bytes hold the signature; 0 for TuxOnIce (its magic is at byte 0)
  /// and for kNotSwap.
  uint64_t page_bytes = 0;
  /// kHibernation: which image ("S1SUSPEND", "ULSUSPEND (uswsusp)", "TuxOnIce", ...).
  std::string image;
  bool operator==(const SwapSignature&) const = default;
};

/// What the first bytes `head` of an area hold (kSwapSignatureHeadBytes or fewer: a page size
/// larger than `head` is not looked at). The hibernation signatures are those libblkid's
/// swsuspend prober knows (libblkid/src/superblocks/swap.c): S1SUSPEND, S2SUSPEND, ULSUSPEND
/// (uswsusp), LINHIB0001 at the end of the first page, TuxOnIce's magic at byte 0.
SwapSignature ReadSwapSignature(std::span<const uint8_t> head);

/// "a hibernation image (S1SUSPEND)": what ReadSwapSignature found, for messages.
std::string HibernationImageText(const SwapSignature& signature);

}  // namespace partalign
