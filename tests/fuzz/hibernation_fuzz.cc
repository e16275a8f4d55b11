// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer harness: what says a system sleeps on a disk (docs/used-map.md, "Hibernation is a
// refusal"): the swap-area signatures, a hiberfil.sys's first bytes and an fstab's swap files,
// on any bytes.
// Any input: no crash, no sanitizer report; a verdict keeps its promises (a page size Linux uses,
// the signature found where it says; a hibernation image is named; an active hiberfil.sys is
// one of its four signatures; fstab swap files are absolute paths outside /dev, no duplicates).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "partalign/used/hibernation.h"
#include "partalign/used/swap_signature.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace partalign;
  const std::span<const uint8_t> bytes(data, size);
  const SwapSignature s = ReadSwapSignature(bytes);
  switch (s.kind) {
    case SwapAreaKind::kNotSwap:
      FUZZ_CHECK(s.page_bytes == 0 && s.image.empty());
      break;
    case SwapAreaKind::kPlainSwap:
      FUZZ_CHECK(std::find(std::begin(kSwapPageSizes), std::end(kSwapPageSizes), s.page_bytes) !=
                 std::end(kSwapPageSizes));
      FUZZ_CHECK(s.page_bytes <= size && s.image.empty());
      break;
    case SwapAreaKind::kHibernation:
      FUZZ_CHECK(!s.image.empty());
      FUZZ_CHECK(s.page_bytes <= size);
      FUZZ_CHECK(s.page_bytes != 0 || s.image == "TuxOnIce");
      break;
  }
  if (const std::optional<std::string> magic = ActiveHiberfilSignature(bytes)) {
    FUZZ_CHECK(*magic == "HIBR" || *magic == "hibr" || *magic == "wake" || *magic == "RSTR");
    FUZZ_CHECK(size >= 4 && std::equal(magic->begin(), magic->end(), data));
  }
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::vector<std::string> files = SwapFilesOfFstab(text);
  FUZZ_CHECK(files.size() <= 8);
  for (size_t i = 0; i < files.size(); ++i) {
    FUZZ_CHECK(files[i].size() >= 2 && files[i][0] == '/' && !files[i].starts_with("/dev/"));
    FUZZ_CHECK(std::count(files.begin(), files.end(), files[i]) == 1);
  }
  return 0;
}
