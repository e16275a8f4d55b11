// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/resize/swap_header.h"

#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "partalign/used/swap_signature.h"
#include "partalign/util/byte_order.h"

namespace partalign {
namespace {

constexpr std::string_view kSwapHeaderMagic = "SWAPSPACE2";
// swap_header_v1_2 after the 1024 boot bytes: version, last_page, nr_badpages, uuid[16],
// volume_name[16].
constexpr size_t kSwapVersionAt = 1024;
constexpr size_t kSwapLastPageAt = 1028;
constexpr size_t kSwapUuidAt = 1036;
constexpr size_t kSwapLabelAt = 1052;
constexpr size_t kSwapLabelBytes = 16;

}  // namespace

std::optional<SwapHeader> ParseSwapHeader(std::span<const uint8_t> head) {
  // The one reader of swap signatures: a hibernation image (or TuxOnIce's magic) is no header.
  const SwapSignature signature = ReadSwapSignature(head);
  if (signature.kind != SwapAreaKind::kPlainSwap) return std::nullopt;
  const uint64_t page = signature.page_bytes;
  if (!HasMagic(head, page - kSwapHeaderMagic.size(), kSwapHeaderMagic)) return std::nullopt;
  SwapHeader header;
  header.page_bytes = page;
  std::optional<uint32_t> version = Le<uint32_t>(head, kSwapVersionAt);
  std::optional<uint32_t> last_page = Le<uint32_t>(head, kSwapLastPageAt);
  if (version != 1u) {
    header.big_endian = true;
    version = Be<uint32_t>(head, kSwapVersionAt);
    last_page = Be<uint32_t>(head, kSwapLastPageAt);
  }
  if (version != 1u || !last_page) return std::nullopt;
  header.last_page = *last_page;
  std::memcpy(header.uuid.data(), &head[kSwapUuidAt], header.uuid.size());
  const char* label = reinterpret_cast<const char*>(&head[kSwapLabelAt]);
  header.label.assign(label, strnlen(label, kSwapLabelBytes));
  return header;
}

std::string FormatUuid(const std::array<uint8_t, 16>& u) {
  std::string out;
  for (size_t i = 0; i < u.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += fmt::format("{:02x}", u[i]);
  }
  return out;
}

}  // namespace partalign
