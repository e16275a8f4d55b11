// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer harness: the swap header a shrink re-creates from and the FAT boot sector whose
// type bounds a shrink (docs/resize.md), on any bytes.
// Any input: no crash, no sanitizer report; an accepted header keeps its promises (a page size
// Linux uses, found where the signature is; a label of at most 16 bytes without NULs; the UUID
// printed as mkswap reads it).
#include <cstddef>
#include <cstdint>
#include <span>

#include "fuzz/fuzz_check.h"
#include "partalign/resize/shrink_way.h"
#include "partalign/resize/swap_header.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace partalign;
  const std::span<const uint8_t> bytes(data, size);
  // A FAT boot sector's floor is whole sectors of 512 bytes or more.
  if (const std::optional<uint64_t> floor = FatTypeFloorBytes(bytes)) {
    FUZZ_CHECK(*floor % 512 == 0);
  }
  const std::optional<SwapHeader> header = ParseSwapHeader(bytes);
  if (!header) return 0;
  const uint64_t page = header->page_bytes;
  FUZZ_CHECK(page == 4096 || page == 8192 || page == 16384 || page == 32768 || page == 65536);
  FUZZ_CHECK(page <= size);
  FUZZ_CHECK(header->label.size() <= 16);
  FUZZ_CHECK(header->label.find('\0') == std::string::npos);
  const std::string uuid = FormatUuid(header->uuid);
  FUZZ_CHECK(uuid.size() == 36 && uuid[8] == '-' && uuid[13] == '-' && uuid[18] == '-' &&
             uuid[23] == '-');
  return 0;
}
